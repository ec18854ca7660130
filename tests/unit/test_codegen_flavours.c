/*
 * Code flavours (-mcpu=c7x / c66x) on hand-built kernel graphs: the TI
 * header block in every lib*.c, TVM_DSP_EXPORT on the entry points,
 * cg_main_dsp on c7x only, -skip-runtime-checks, warning-free C99 with the
 * host stand-in headers, and cg_main_dsp run by a harness against model_run.
 */
#include "test_codegen_graphs.h"

#include <stdint.h>
#include <sys/stat.h>

#include "codegen/codegen.h"
#include "cstatic/model.h"
#include "target.h"
#include "unit.h"

/* The runtime library was built like this test: with the sanitizers in
 * the ASan build, so the harness needs them too. */
#if defined(__SANITIZE_ADDRESS__)
#define HARNESS_FLAGS "-fsanitize=address,undefined"
#else
#define HARNESS_FLAGS ""
#endif

static char src_dir[4096], tidsp_lib[4096];

/* Emit g for `target` into a fresh dir; returns the dir (caller frees with
 * parent_remove) or NULL. */
static char *emit_for(cs_graph *g, const char *target, int weights_as_c) {
  cs_target t;
  cs_status st = cs_target_parse(target, &t);
  CHECK_MSG(st == CS_OK, "target '%s': %s", target, cs_error_message());
  if (st != CS_OK) return NULL;
  char *tmp = tg_temp_dir("flavours");
  if (!tmp) return NULL;
  char *dir = malloc(4200);
  snprintf(dir, 4200, "%s/out", tmp);
  free(tmp);
  mkdir(dir, 0777);
  cs_codegen_options opt = {.model_path = "tests/tiny.onnx", .weights_as_c = weights_as_c};
  st = cs_codegen_emit(g, &t, &opt, dir);
  CHECK_MSG(st == CS_OK, "emit for '%s': %s", target, cs_error_message());
  return dir;
}

static void parent_remove(char *dir) {
  if (!dir) return;
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  tg_remove_dir(dir);
  free(dir);
}

static int contains(const char *dir, const char *file, const char *needle) {
  char p[4400];
  snprintf(p, sizeof p, "%s/%s", dir, file);
  return tg_file_contains(p, needle);
}

/* Strict C99 with the stand-ins on the include path (they are reached
 * through cstatic/platform/ti_stub/ already; -I them as a TI-less build
 * that names them would). */
static int compiles_strictly(const char *dir, const char *files) {
  char cmd[16384];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && for f in %s; do cc -std=c99 -Wall -Wextra -Werror -pedantic -I'%s/include' "
           "-I'%s/include/cstatic/platform/ti_stub' -I. -c $f -o /dev/null || exit 1; done",
           dir, files, src_dir, src_dir);
  return tg_system(cmd) == 0;
}

static const char c7x_block[] =
    "#if defined(__TI_COMPILER_VERSION__)\n#include <c7x.h>\n#else\n"
    "#include \"cstatic/platform/ti_stub/c7x.h\"\n#endif\n";
static const char c6x_block[] =
    "#if defined(__TI_COMPILER_VERSION__)\n#include <c6x.h>\n#else\n"
    "#include \"cstatic/platform/ti_stub/c6x.h\"\n#endif\n";

static const char *const exported[] = {
    "TVM_DSP_EXPORT\nint32_t model_run(", "TVM_DSP_EXPORT\nint32_t cg_main(",
    "TVM_DSP_EXPORT\nint32_t model_check_weights(", "TVM_DSP_EXPORT\nint32_t cg_main_dsp("};

static void generic_target_emits_nothing_of_the_dsp_flavours(void) {
  cs_graph *g = tg_conv_model(NULL);
  char *dir = emit_for(g, "c_static_lib", 0);
  if (dir) {
    CHECK(!contains(dir, "lib0.h", "TVM_DSP_EXPORT"));
    CHECK(!contains(dir, "lib0.h", "cstatic/platform/"));
    CHECK(!contains(dir, "lib0.c", "TVM_DSP_EXPORT"));
    CHECK(!contains(dir, "lib0.c", "c7x.h"));
    CHECK(!contains(dir, "lib0.c", "cg_main_dsp"));
    CHECK(contains(dir, "lib0.c", "return TIDSP_ERR_NULL;"));
    CHECK(contains(dir, "lib0.c", "return TIDSP_ERR_ALIGN;"));
  }
  parent_remove(dir);
  cs_graph_free(g);
}

static void c7x_flavour_has_header_exports_and_dsp_entry(void) {
  cs_graph *g = tg_conv_model(NULL);
  char *dir = emit_for(g, "c_static_lib -mcpu=c7x", 0);
  if (dir) {
    CHECK(contains(dir, "lib0.c", c7x_block));
    CHECK(contains(dir, "lib0.h", "#include \"cstatic/platform/tidsp_dsp.h\"\n"));
    for (int i = 0; i < 4; i++) {
      CHECK_MSG(contains(dir, "lib0.h", exported[i]), "lib0.h lacks %s", exported[i]);
      CHECK_MSG(contains(dir, "lib0.c", exported[i]), "lib0.c lacks %s", exported[i]);
    }
    CHECK(contains(dir, "lib0.h", "TVM_DSP_EXPORT\nextern const tidsp_model_desc model_desc;"));
    CHECK(contains(dir, "lib0.c", "TVM_DSP_EXPORT\nconst tidsp_model_desc model_desc = {"));
    CHECK(contains(dir, "lib0.h", "const tidsp_dsp_tensor *inputs, int32_t num_inputs,"));
    /* -skip-runtime-checks=1 by default: no argument, alignment or
     * descriptor checks; no loops, so no loop pragmas. */
    CHECK(contains(dir, "lib0.c", "-skip-runtime-checks=1"));
    CHECK(!contains(dir, "lib0.c", "TIDSP_ERR_NULL"));
    CHECK(!contains(dir, "lib0.c", "TIDSP_ERR_ALIGN"));
    CHECK(!contains(dir, "lib0.c", "tidsp_dsp_tensor_check"));
    CHECK(!contains(dir, "lib0.c", "#pragma"));
    CHECK(!contains(dir, "lib0.c", "for ("));
    CHECK_MSG(compiles_strictly(dir, "lib0.c"), "c7x lib0.c does not compile warning-free as C99");
  }
  parent_remove(dir);
  cs_graph_free(g);
}

static void c66x_flavour_has_header_and_exports_only(void) {
  cs_graph *g = tg_conv_model(NULL);
  char *dir = emit_for(g, "c_static_lib -mcpu=c66x", 1);
  if (dir) {
    CHECK(contains(dir, "lib0.c", c6x_block));
    CHECK(!contains(dir, "lib0.c", "c7x.h"));
    for (int i = 0; i < 3; i++) CHECK(contains(dir, "lib0.h", exported[i]));
    CHECK(!contains(dir, "lib0.h", "cg_main_dsp"));
    CHECK(!contains(dir, "lib0.c", "cg_main_dsp"));
    CHECK_MSG(compiles_strictly(dir, "lib0.c weights.c"), "c66x sources do not compile warning-free");
  }
  parent_remove(dir);
  cs_graph_free(g);
}

/* 1000 LUT layers → lib0.c … lib2.c (files split by size, codegen/cg.h
 * CS_FILE_LAYER_BYTES): every file gets the header block; the parts stay
 * internal (not exported). */
static void every_file_of_a_split_model_includes_the_ti_header(void) {
  enum { LAYERS = 1000 };
  cs_graph *g = cs_graph_new("lut_chain");
  int64_t s[2] = {1, 32};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, s);
  int v = cs_graph_add_value(g, "xq", CS_DTYPE_I8, 2, s);
  tg_quantize(g, "q", x, v, 0.25f, 0);
  for (int i = 0; i < LAYERS; i++) {
    char name[32];
    snprintf(name, sizeof name, "lut%d", i);
    int y = cs_graph_add_value(g, name, CS_DTYPE_I8, 2, s);
    tg_lut(g, name, v, y);
    v = y;
  }
  int out = cs_graph_add_value(g, "out", CS_DTYPE_F32, 2, s);
  tg_dequantize(g, "dq", v, out, 0.25f, 0);
  tg_set_io(g, 1, &x, 1, &out);
  char *dir = emit_for(g, "c_static_lib -mcpu=c7x", 0);
  if (dir) {
    const char *files[] = {"lib0.c", "lib1.c", "lib2.c"};
    for (int i = 0; i < 3; i++) CHECK_MSG(contains(dir, files[i], c7x_block), "%s lacks <c7x.h>", files[i]);
    CHECK(contains(dir, "lib0.h", "\nint32_t cg_main_part1("));
    CHECK(!contains(dir, "lib0.h", "TVM_DSP_EXPORT\nint32_t cg_main_part"));
    CHECK(compiles_strictly(dir, "lib0.c lib1.c lib2.c"));
  }
  parent_remove(dir);
  cs_graph_free(g);
}

/* Calls model_run, then cg_main_dsp on the same tensors through
 * descriptors, then cg_main_dsp with bad descriptors; prints
 *   same S1 S2 shape S3 dtype S4 count S5 null S6 */
static const char harness_c[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"lib0.h\"\n"
    "static tidsp_dsp_tensor desc(void *p, size_t n, int code, int bits, int rank, const int64_t *shape) {\n"
    "  tidsp_dsp_tensor d; int i;\n  memset(&d, 0, sizeof d);\n"
    "  d.data_addr = (uint64_t)(uintptr_t)p; d.size = n; d.ndim = rank;\n"
    "  d.dtype_code = code; d.dtype_bits = bits;\n"
    "  for (i = 0; i < rank; i++) d.shape[i] = shape[i];\n  return d;\n}\n"
    "int main(int argc, char **argv) {\n"
    "  static float x[MODEL_INPUT0_NUMEL], y1[MODEL_OUTPUT0_NUMEL], y2[MODEL_OUTPUT0_NUMEL];\n"
    "  static const int64_t xs[] = MODEL_INPUT0_SHAPE, ys[] = MODEL_OUTPUT0_SHAPE;\n"
    "  int64_t bad[] = MODEL_INPUT0_SHAPE;\n"
    "  void *w = NULL, *arena = NULL; const void *in[1]; void *out[1]; long len; size_t i;\n"
    "  tidsp_dsp_tensor di, do_, db;\n  int32_t s1, s2, s3, s4, s5, s6;\n"
    "  FILE *f = argc > 1 ? fopen(argv[1], \"rb\") : NULL;\n  if (!f) return 3;\n"
    "  fseek(f, 0, SEEK_END); len = ftell(f); fseek(f, 0, SEEK_SET);\n"
    "  if (posix_memalign(&w, MODEL_WEIGHTS_ALIGN, (size_t)len)) return 3;\n"
    "  if (fread(w, 1, (size_t)len, f) != (size_t)len) return 3;\n  fclose(f);\n"
    "  if (posix_memalign(&arena, MODEL_ARENA_ALIGN, MODEL_ARENA_SIZE)) return 3;\n"
    "  for (i = 0; i < MODEL_INPUT0_NUMEL; i++) x[i] = (float)((int)(i * 7 % 23) - 11) * 0.3f;\n"
    "  in[0] = x; out[0] = y1;\n  s1 = model_run(w, arena, in, out);\n"
    "  di = desc(x, sizeof x, TIDSP_DSP_CODE_FLOAT, 32, MODEL_INPUT0_RANK, xs);\n"
    "  do_ = desc(y2, sizeof y2, TIDSP_DSP_CODE_FLOAT, 32, MODEL_OUTPUT0_RANK, ys);\n"
    "  s2 = cg_main_dsp(w, arena, &di, 1, &do_, 1);\n"
    "  bad[MODEL_INPUT0_RANK - 1]++;\n"
    "  db = desc(x, sizeof x, TIDSP_DSP_CODE_FLOAT, 32, MODEL_INPUT0_RANK, bad);\n"
    "  s3 = cg_main_dsp(w, arena, &db, 1, &do_, 1);\n"
    "  db = desc(x, sizeof x, TIDSP_DSP_CODE_INT, 8, MODEL_INPUT0_RANK, xs);\n"
    "  s4 = cg_main_dsp(w, arena, &db, 1, &do_, 1);\n"
    "  s5 = cg_main_dsp(w, arena, &di, 2, &do_, 1);\n"
    "  db = desc(NULL, sizeof x, TIDSP_DSP_CODE_FLOAT, 32, MODEL_INPUT0_RANK, xs);\n"
    "  s6 = cg_main_dsp(w, arena, &db, 1, &do_, 1);\n"
    "  printf(\"same %d %d %d shape %d dtype %d count %d null %d\\n\",\n"
    "         memcmp(y1, y2, sizeof y1) == 0, (int)s1, (int)s2, (int)s3, (int)s4, (int)s5, (int)s6);\n"
    "  free(w); free(arena);\n  return 0;\n}\n";

static void cg_main_dsp_matches_model_run_and_checks_descriptors(void) {
  cs_graph *g = tg_conv_model(NULL);
  char *dir = emit_for(g, "c_static_lib -mcpu=c7x -skip-runtime-checks=0", 0);
  if (!dir) {
    cs_graph_free(g);
    return;
  }
  CHECK(contains(dir, "lib0.c", "tidsp_dsp_tensor_check(&inputs[0], &model_inputs[0]);"));
  CHECK(contains(dir, "lib0.c", "return TIDSP_ERR_ALIGN;"));
  char path[4400], cmd[12000], line[256] = "";
  snprintf(path, sizeof path, "%s/harness.c", dir);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    fputs(harness_c, f);
    fclose(f);
  }
  snprintf(cmd, sizeof cmd,
           "cd '%s' && cc -std=c99 -D_POSIX_C_SOURCE=200112L -Wall -Wextra -Werror " HARNESS_FLAGS
           " -I'%s/include' -I. harness.c lib0.c '%s' -lm -o harness && ./harness weights.bin",
           dir, src_dir, tidsp_lib);
  FILE *p = popen(cmd, "r");
  if (p) {
    if (!fgets(line, sizeof line, p)) line[0] = '\0';
    pclose(p);
  }
  int same = -1, s1 = 99, s2 = 99, s3 = 99, s4 = 99, s5 = 99, s6 = 99;
  int n = sscanf(line, "same %d %d %d shape %d dtype %d count %d null %d", &same, &s1, &s2, &s3, &s4,
                 &s5, &s6);
  CHECK_MSG(n == 7, "harness said: %s", line);
  CHECK(s1 == TIDSP_OK && s2 == TIDSP_OK);
  CHECK_MSG(same == 1, "cg_main_dsp output differs from model_run");
  CHECK_MSG(s3 == TIDSP_ERR_SHAPE, "wrong shape gave %d", s3);
  CHECK_MSG(s4 == TIDSP_ERR_DTYPE, "wrong dtype gave %d", s4);
  CHECK_MSG(s5 == TIDSP_ERR_PARAM, "wrong count gave %d", s5);
  CHECK_MSG(s6 == TIDSP_ERR_NULL, "null data gave %d", s6);
  parent_remove(dir);
  cs_graph_free(g);
}

int main(void) {
  tg_source_dir(src_dir, sizeof src_dir);
  tg_tidsp_lib(tidsp_lib, sizeof tidsp_lib);
  generic_target_emits_nothing_of_the_dsp_flavours();
  c7x_flavour_has_header_exports_and_dsp_entry();
  c66x_flavour_has_header_and_exports_only();
  every_file_of_a_split_model_includes_the_ti_header();
  cg_main_dsp_matches_model_run_and_checks_descriptors();
  UNIT_MAIN_END();
}
