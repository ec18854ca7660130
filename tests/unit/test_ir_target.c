/*
 * test_ir_target.c — the target string and its one attribute table: every
 * default the table prints is the default the parser applies; the derived
 * defaults follow -mcpu and -kernels wherever they appear; errors name the
 * attribute; the canonical text of the default target does not change.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdlib.h>
#include <string.h>

#include "target.h"
#include "unit.h"

static int same(const cs_target *a, const cs_target *b) { return memcmp(a, b, sizeof *a) == 0; }

/* "-NAME=DEFAULT" for every attribute is the default target. */
static void test_table_defaults_are_the_real_defaults(void) {
  cs_target d, t;
  cs_target_default(&d);
  CHECK(cs_target_attribute_count() >= 11);
  for (int i = 0; i < cs_target_attribute_count(); i++) {
    char s[256];
    snprintf(s, sizeof s, "c_static_lib -%s=%s", cs_target_attribute_name(i), cs_target_attribute_default(i));
    CHECK_MSG(cs_target_parse(s, &t) == CS_OK, "%s: %s", s, cs_error_message());
    CHECK_MSG(same(&d, &t), "%s differs from the default target", s);
  }
  CHECK(cs_target_attribute_name(cs_target_attribute_count()) == NULL);
  CHECK(cs_target_attribute_name(-1) == NULL);
  cs_target e;
  CHECK(cs_target_parse(NULL, &e) == CS_OK && same(&d, &e));
  CHECK(cs_target_parse("", &e) == CS_OK && same(&d, &e));
  CHECK(cs_target_parse("c_static_lib", &e) == CS_OK && same(&d, &e));
}

static void test_canonical_text_of_the_default_target(void) {
  cs_target t;
  cs_target_default(&t);
  char buf[512];
  cs_target_format(&t, buf, sizeof buf);
  CHECK(!strcmp(buf, "c_static_lib -mcpu=generic -mmalib=0 -tidl-kernels=1 -requant=float -profile-layers=0 "
                     "-skip-runtime-checks=0 -use-cpp-api=1 -constants-byte-alignment=64"));
  CHECK(t.l2_budget == CS_L2_BUDGET_DEFAULT && t.pack_weights == 1 && t.kernels == CS_KERNELS_FAST);
}

static void test_derived_defaults(void) {
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x", &t) == CS_OK);
  CHECK(t.skip_runtime_checks == 1 && t.use_cpp_api == 1 && t.pack_weights == 0);
  CHECK(cs_target_parse("c_static_lib -mcpu=c66x -skip-runtime-checks=0", &t) == CS_OK);
  CHECK(t.skip_runtime_checks == 0 && t.use_cpp_api == 1);
  CHECK(cs_target_parse("c_static_lib -kernels=scalar", &t) == CS_OK);
  CHECK(t.pack_weights == 0 && t.skip_runtime_checks == 0);
  /* An explicit value wins wherever -mcpu stands. */
  CHECK(cs_target_parse("c_static_lib -pack-weights=1 -mcpu=c7x", &t) == CS_OK);
  CHECK(t.pack_weights == 1 && t.mcpu == CS_MCPU_C7X);
  CHECK(cs_target_parse("c_static_lib -use-cpp-api=1 -mcpu=c7x", &t) == CS_OK);
  CHECK(t.use_cpp_api == 1);
  CHECK(cs_target_parse("-mcpu=host -requant=q31 -l2-budget=0 -constants-byte-alignment=128", &t) == CS_OK);
  CHECK(t.mcpu == CS_MCPU_GENERIC && t.requant == CS_REQUANT_Q31 && t.l2_budget == 0 &&
        t.constants_byte_alignment == 128);
}

/* -mmalib-pad-budget: 1.6 by default and then not in the text; another
 * value is, and parses back. */
static void test_mmalib_pad_budget(void) {
  cs_target t, back;
  char buf[512];
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x -mmalib=1", &t) == CS_OK);
  CHECK(t.mmalib_pad_budget == CS_MM_PAD_BUDGET_DEFAULT && t.mm_refused == NULL && t.n_mm_refused == 0);
  cs_target_format(&t, buf, sizeof buf);
  CHECK_MSG(!strstr(buf, "pad-budget"), "%s", buf);
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x -mmalib=1 -mmalib-pad-budget=1.25", &t) == CS_OK);
  CHECK(t.mmalib_pad_budget == 1.25);
  cs_target_format(&t, buf, sizeof buf);
  CHECK_MSG(strstr(buf, " -mmalib-pad-budget=1.25"), "%s", buf);
  CHECK(cs_target_parse(buf, &back) == CS_OK && back.mmalib_pad_budget == 1.25);
  CHECK(cs_target_parse("-mmalib-pad-budget=1", &t) == CS_OK && t.mmalib_pad_budget == 1.0);
  CHECK(cs_target_parse("-mmalib-pad-budget=64", &t) == CS_OK && t.mmalib_pad_budget == 64.0);
}

/* -tidl-runtime=1 is recorded in the text only when set, so every other
 * target keeps its text. */
static void test_tidl_runtime(void) {
  cs_target t;
  char buf[512];
  CHECK(cs_target_parse("c_static_lib -tidl-runtime=1 -mcpu=c7x", &t) == CS_OK);
  CHECK(t.tidl_runtime == 1);
  cs_target_format(&t, buf, sizeof buf);
  CHECK_MSG(strstr(buf, " -tidl-runtime=1") != NULL, "%s", buf);
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x", &t) == CS_OK);
  CHECK(t.tidl_runtime == 0);
  cs_target_format(&t, buf, sizeof buf);
  CHECK_MSG(strstr(buf, "tidl-runtime") == NULL, "%s", buf);
}

/* The microcontroller preset: scalar kernels called directly, q31, dense
 * weights, the generic flavour's checks kept; each explicit value wins;
 * gcc's core names mean the same preset; the canonical text says so. */
static void test_cortex_m_preset(void) {
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mcpu=cortex-m", &t) == CS_OK);
  CHECK(t.mcpu == CS_MCPU_CORTEX_M && t.kernels == CS_KERNELS_SCALAR && t.requant == CS_REQUANT_Q31 &&
        t.pack_weights == 0 && t.skip_runtime_checks == 0 && t.use_cpp_api == 1 && t.ort_exact == 0);
  char buf[512];
  cs_target_format(&t, buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "c_static_lib -mcpu=cortex-m -mmalib=0 -tidl-kernels=1 -requant=q31 -profile-layers=0 "
                         "-skip-runtime-checks=0 -use-cpp-api=1 -constants-byte-alignment=64 -kernels=scalar "
                         "-ort-exact=0"),
            "%s", buf);
  cs_target u;
  CHECK(cs_target_parse(buf, &u) == CS_OK && same(&t, &u));
  const char *cores[] = {"cortex-m0", "cortex-m7", "cortex-m33", "cortex-m0plus", "cortex-m55"};
  for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++) {
    char s[64];
    snprintf(s, sizeof s, "-mcpu=%s", cores[i]);
    CHECK_MSG(cs_target_parse(s, &u) == CS_OK && same(&t, &u), "%s", s);
  }
  CHECK(cs_target_parse("-requant=float -mcpu=cortex-m -kernels=fast", &t) == CS_OK);
  CHECK(t.requant == CS_REQUANT_FLOAT && t.kernels == CS_KERNELS_FAST && t.pack_weights == 0);
  CHECK(cs_target_parse("-mcpu=cortex-m -pack-weights=1", &t) == CS_OK && t.pack_weights == 1);
  CHECK(cs_target_parse("-ort-exact=1 -mcpu=cortex-m7", &t) == CS_OK && t.ort_exact == 1);
  CHECK(cs_target_parse("-mcpu=c7x", &t) == CS_OK && t.ort_exact == 1);
  CHECK(cs_target_parse("-ort-exact=0", &t) == CS_OK && t.ort_exact == 0 && t.mcpu == CS_MCPU_GENERIC);
  cs_target_format(&t, buf, sizeof buf);
  CHECK_MSG(strstr(buf, " -ort-exact=0") != NULL, "%s", buf);
  CHECK(cs_target_parse("-ort-exact=2", &t) == CS_ERR_USAGE);
  CHECK(cs_target_parse("-mcpu=cortex-a53", &t) == CS_ERR_USAGE);
  CHECK(cs_target_parse("-mcpu=cortex-mx", &t) == CS_ERR_USAGE);
}

/* -allow-float: off by default, kept in the canonical text when on. */
static void test_allow_float(void) {
  cs_target t;
  CHECK(cs_target_parse("c_static_lib", &t) == CS_OK && t.allow_float == 0);
  CHECK(cs_target_parse("c_static_lib -allow-float=1", &t) == CS_OK && t.allow_float == 1);
  char buf[512];
  cs_target_format(&t, buf, sizeof buf);
  CHECK_MSG(strstr(buf, " -allow-float=1") != NULL, "%s", buf);
}

static void check_error(const char *s, const char *needle) {
  cs_target t;
  CHECK_MSG(cs_target_parse(s, &t) == CS_ERR_USAGE, "%s parsed", s);
  CHECK_MSG(strstr(cs_error_message(), needle) != NULL, "%s: '%s' lacks '%s'", s, cs_error_message(), needle);
}

static void test_errors_name_the_attribute(void) {
  check_error("c_static_lib -mcpu=z80", "-mcpu='z80': expected generic, c7x, c66x or cortex-m");
  check_error("c_static_lib -mmalib=2", "-mmalib='2': expected 0 or 1");
  check_error("c_static_lib -constants-byte-alignment=48", "power of two");
  check_error("c_static_lib -constants-byte-alignment=", "power of two");
  check_error("c_static_lib -l2-budget=-1", "expected bytes in [0, 16777216]");
  check_error("c_static_lib -mmalib-pad-budget=0.9", "-mmalib-pad-budget='0.9': expected a multiple");
  check_error("c_static_lib -mmalib-pad-budget=nan", "expected a multiple of the model's MACs in [1, 64]");
  check_error("c_static_lib -mmalib-pad-budget=1.5x", "expected a multiple");
  check_error("c_static_lib -kernels", "has no value");
  check_error("tvm -mcpu=c7x", "kind 'tvm' is not c_static_lib");
  check_error("c_static_lib mcpu=c7x", "expected -key=value");
  /* -use-cpp-api has one mode; 0 is refused saying why. */
  check_error("c_static_lib -mcpu=c7x -use-cpp-api=0", "no FFI dispatch to fall back to");
  check_error("c_static_lib -use-cpp-api=2", "-use-cpp-api='2': expected 1");
  /* -tidl-runtime changes cg_main_dsp, which only -mcpu=c7x has. */
  check_error("c_static_lib -tidl-runtime=1", "-tidl-runtime=1 changes cg_main_dsp");
  check_error("c_static_lib -mcpu=c66x -tidl-runtime=1", "it needs -mcpu=c7x");
  /* An unknown name lists every known one, from the table. */
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mcpus=c7x", &t) == CS_ERR_USAGE);
  const char *msg = cs_error_message();
  CHECK(strstr(msg, "unknown target attribute -mcpus") != NULL);
  for (int i = 0; i < cs_target_attribute_count(); i++)
    CHECK_MSG(strstr(msg, cs_target_attribute_name(i)) != NULL, "%s not listed", cs_target_attribute_name(i));
  /* A near miss gets the name it most likely meant, with the value given. */
  check_error("c_static_lib -mcpus=c7x", "unknown target attribute -mcpus: did you mean -mcpu=c7x?");
  check_error("-kernel=scalar", "did you mean -kernels=scalar?");
  check_error("-pack_weights=0", "did you mean -pack-weights=0?");
  check_error("-reqaunt=q31", "did you mean -requant=q31?");
  check_error("-profile=1", "did you mean -profile-layers=1?");
  check_error("-l2budget=0", "did you mean -l2-budget=0?");
  check_error("-allowfloat=1", "did you mean -allow-float=1?");
  /* Far from every name: no guess, only the list. */
  CHECK(cs_target_parse("-optimize=3", &t) == CS_ERR_USAGE);
  CHECK_MSG(strstr(cs_error_message(), "did you mean") == NULL, "%s", cs_error_message());
  CHECK(cs_target_parse("-m=1", &t) == CS_ERR_USAGE);
  CHECK_MSG(strstr(cs_error_message(), "did you mean") == NULL, "%s", cs_error_message());
}

/* --help prints each attribute with "default: <the table's default>". */
static void test_help_lists_every_attribute_with_its_default(void) {
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  cs_target_print_attributes(f);
  fclose(f);
  for (int i = 0; i < cs_target_attribute_count(); i++) {
    char head[128];
    snprintf(head, sizeof head, "  -%s=", cs_target_attribute_name(i));
    const char *p = strstr(text, head);
    CHECK_MSG(p != NULL, "%s missing from the help", head);
    if (!p) continue;
    char want[128];
    snprintf(want, sizeof want, "default: %s", cs_target_attribute_default(i));
    const char *d = strstr(p, "default: ");
    CHECK_MSG(d && !strncmp(d, want, strlen(want)), "%s: no '%s' after it", head, want);
  }
  CHECK(strstr(text, "-use-cpp-api=1  (default: 1)\n") != NULL);
  CHECK(strstr(text, "-tidl-runtime=0|1  (default: 0)\n") != NULL);
  free(text);
}

int main(void) {
  test_table_defaults_are_the_real_defaults();
  test_canonical_text_of_the_default_target();
  test_derived_defaults();
  test_tidl_runtime();
  test_mmalib_pad_budget();
  test_cortex_m_preset();
  test_allow_float();
  test_errors_name_the_attribute();
  test_help_lists_every_attribute_with_its_default();
  UNIT_MAIN_END();
}
