#include "target.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Packed weight rows are for the host's fast kernels (kernels.h
 * w_row_stride): the DSP targets and the scalar baseline keep dense rows. */
static int pack_weights_default(const cs_target *t) {
  return t->mcpu == CS_MCPU_GENERIC && t->kernels == CS_KERNELS_FAST;
}

/* The spec runs InjectMMALIBDMA (-mmalib=1) and ScheduleC7xDMATiling in
 * the c7x pipeline only: the other targets have no L2 SRAM scratch to
 * stage into. */
int cs_target_stages_l2(const cs_target *t) {
  return t->mcpu == CS_MCPU_C7X && t->l2_budget > 0;
}

/* ---- one setter per attribute: value text → field, or an error naming
 * the attribute and what it accepts ------------------------------------ */

static int parse_bool(const char *v, int *out) {
  if (!strcmp(v, "1") || !strcmp(v, "true")) { *out = 1; return 1; }
  if (!strcmp(v, "0") || !strcmp(v, "false")) { *out = 0; return 1; }
  return 0;
}

static cs_status bad_value(const char *key, const char *val, const char *expected) {
  return cs_error(CS_ERR_USAGE, "target attribute -%s='%s': expected %s", key, val, expected);
}

/* The -mcpu values, by enum; the canonical text is the name. */
static const char *const mcpu_names[] = {
    [CS_MCPU_GENERIC] = "generic", [CS_MCPU_C66X] = "c66x", [CS_MCPU_C7X] = "c7x",
    [CS_MCPU_CORTEX_M] = "cortex-m"};

/* "cortex-m7", "cortex-m33", "cortex-m0plus": gcc's spellings of one
 * Cortex-M core all mean the preset (the C it gets does not differ). */
static int is_cortex_m_core(const char *v) {
  if (strncmp(v, "cortex-m", 8) != 0) return 0;
  return v[8] == '\0' || (v[8] >= '0' && v[8] <= '9');
}

static cs_status set_mcpu(cs_target *t, const char *key, const char *v) {
  if (!strcmp(v, "c7x")) t->mcpu = CS_MCPU_C7X;
  else if (!strcmp(v, "c66x")) t->mcpu = CS_MCPU_C66X;
  else if (!strcmp(v, "generic") || !strcmp(v, "host")) t->mcpu = CS_MCPU_GENERIC;
  else if (is_cortex_m_core(v)) t->mcpu = CS_MCPU_CORTEX_M;
  else return bad_value(key, v, "generic, c7x, c66x or cortex-m (cortex-m0 … cortex-m85 alike)");
  return CS_OK;
}

static cs_status set_requant(cs_target *t, const char *key, const char *v) {
  if (!strcmp(v, "float")) t->requant = CS_REQUANT_FLOAT;
  else if (!strcmp(v, "q31")) t->requant = CS_REQUANT_Q31;
  else return bad_value(key, v, "float or q31");
  return CS_OK;
}

static cs_status set_kernels(cs_target *t, const char *key, const char *v) {
  if (!strcmp(v, "fast")) t->kernels = CS_KERNELS_FAST;
  else if (!strcmp(v, "scalar")) t->kernels = CS_KERNELS_SCALAR;
  else return bad_value(key, v, "fast or scalar");
  return CS_OK;
}

static cs_status set_mmalib_exact(cs_target *t, const char *key, const char *v) {
  if (!strcmp(v, "none")) t->mmalib_exact = CS_MM_EXACT_NONE;
  else if (!strcmp(v, "worst")) t->mmalib_exact = CS_MM_EXACT_WORST;
  else if (!strcmp(v, "all")) t->mmalib_exact = CS_MM_EXACT_ALL;
  else if (!strcmp(v, "strict")) t->mmalib_exact = CS_MM_EXACT_STRICT;
  else return bad_value(key, v, "none, worst, all or strict");
  return CS_OK;
}

static cs_status set_alignment(cs_target *t, const char *key, const char *v) {
  char *end;
  long a = strtol(v, &end, 10);
  if (end == v || *end || a < 1 || a > 4096 || (a & (a - 1)))
    return bad_value(key, v, "a power of two in [1, 4096]");
  t->constants_byte_alignment = (int)a;
  return CS_OK;
}

static cs_status set_l2_budget(cs_target *t, const char *key, const char *v) {
  char *end;
  long a = strtol(v, &end, 10);
  if (end == v || *end || a < 0 || a > CS_L2_BUDGET_MAX)
    return cs_error(CS_ERR_USAGE, "target attribute -%s='%s': expected bytes in [0, %ld] (0: no L2 staging)",
                    key, v, CS_L2_BUDGET_MAX);
  t->l2_budget = a;
  return CS_OK;
}

static cs_status set_mmalib_pad_budget(cs_target *t, const char *key, const char *v) {
  char *end;
  double a = strtod(v, &end);
  if (end == v || *end || !(a >= 1.0 && a <= CS_MM_PAD_BUDGET_MAX))
    return cs_error(CS_ERR_USAGE,
                    "target attribute -%s='%s': expected a multiple of the model's MACs in [1, %g] (1: no "
                    "rewrite that adds MACs)",
                    key, v, CS_MM_PAD_BUDGET_MAX);
  t->mmalib_pad_budget = a;
  return CS_OK;
}

/* The 0/1 attributes, one setter each. */
#define BOOL_SETTER(fn, field)                                           \
  static cs_status fn(cs_target *t, const char *key, const char *v) {    \
    if (!parse_bool(v, &t->field)) return bad_value(key, v, "0 or 1"); \
    return CS_OK;                                                        \
  }
BOOL_SETTER(set_mmalib, mmalib)
BOOL_SETTER(set_tidl_kernels, tidl_kernels)
BOOL_SETTER(set_tidl_runtime, tidl_runtime)
BOOL_SETTER(set_profile_layers, profile_layers)
BOOL_SETTER(set_skip_runtime_checks, skip_runtime_checks)
BOOL_SETTER(set_pack_weights, pack_weights)
BOOL_SETTER(set_allow_float, allow_float)
BOOL_SETTER(set_ort_exact, ort_exact)
#undef BOOL_SETTER

/* The spec's C++ API mode replaces FFI dispatch sequences with direct
 * calls. cstatic's generated C has no FFI layer: every layer is already one
 * direct kernel call, so the mode is the only one there is, and 0 would
 * promise a dispatch path that does not exist. */
static cs_status set_use_cpp_api(cs_target *t, const char *key, const char *v) {
  int on;
  if (!parse_bool(v, &on)) return bad_value(key, v, "1");
  if (!on)
    return cs_error(CS_ERR_USAGE,
                    "target attribute -%s=0: cstatic has no FFI dispatch to fall back to: the generated C "
                    "calls every kernel directly, which is what the spec's C++ API mode (-%s=1) does; "
                    "leave the attribute out or give 1",
                    key, key);
  t->use_cpp_api = 1;
  return CS_OK;
}

/* ---- the table: every attribute once ---------------------------------
 *
 * `dflt` is the value the generic target starts from (cs_target_default
 * applies it through the setter, so the printed default is the real one);
 * `derived` says when the default follows other attributes instead (the
 * code that derives it is derive_defaults below). The order is the order
 * of `cstatic compile --help` and of the error listing the known names. */
typedef enum attr_id {
  A_MCPU, A_MMALIB, A_MMALIB_EXACT, A_TIDL_KERNELS, A_TIDL_RUNTIME, A_REQUANT, A_KERNELS, A_PROFILE_LAYERS,
  A_SKIP_RUNTIME_CHECKS, A_USE_CPP_API, A_CONSTANTS_BYTE_ALIGNMENT, A_PACK_WEIGHTS,
  A_L2_BUDGET, A_ALLOW_FLOAT, A_ORT_EXACT, A_MMALIB_PAD_BUDGET, N_ATTRS
} attr_id;

typedef struct attr {
  const char *name;
  const char *values;  /* what it accepts, for --help */
  const char *dflt;    /* default on the generic target */
  const char *derived; /* NULL, or how the default changes with other attributes */
  const char *help;    /* a printf format when help_kernels names the attribute */
  cs_status (*set)(cs_target *, const char *key, const char *value);
} attr;

static const attr attrs[N_ATTRS] = {
    [A_MCPU] = {"mcpu", "generic|c7x|c66x|cortex-m", "generic", NULL,
                "the CPU: any C99 target (the host), TI's C7x / C66x DSP flavour, or the "
                "microcontroller preset (cortex-m: the reference kernels called directly, "
                "integer requantization, integer kernels where ORT uses float, dense weights; "
                "any cortex-mN means the same)",
                set_mcpu},
    [A_MMALIB] = {"mmalib", "0|1", "0", NULL,
                  "offload eligible QDQ conv/depthwise/FC/add chains to MMALIB calls", set_mmalib},
    [A_MMALIB_EXACT] = {"mmalib-exact", "none|worst|all|strict", "all", NULL,
                        "with -mmalib=1: int8 convs and FCs that give ORT's bytes (MACs on MMALIB's int16 "
                        "kernels, 5x5/7x7 depthwise as 3x3 tiles, requantization on the core) instead "
                        "of the int8 kernel's 8-bit scale (<= 1 LSB off ORT on a few % of outputs): "
                        "none (the fast opt-out: int8 kernels, 8-bit scale); those whose scale error "
                        "can drift an output by half an LSB (worst); every conv, depthwise and FC "
                        "(all, the default); all, and the rest (grouped convs, batches) on the core's "
                        "exact conv instead of the MMA, int8 residual adds on the core's exact add "
                        "(strict)",
                        set_mmalib_exact},
    [A_TIDL_KERNELS] = {"tidl-kernels", "0|1", "1", NULL,
                        "with -mmalib=1: max pools call the TIDL-backed kernel "
                        "(%s) instead of %s",
                        set_tidl_kernels},
    [A_TIDL_RUNTIME] = {"tidl-runtime", "0|1", "0", NULL,
                        "with -mcpu=c7x: cg_main_dsp first calls tidl_bridge_init_all(), which only a "
                        "firmware built with TIDL exports (any other refuses the module, naming it)",
                        set_tidl_runtime},
    [A_REQUANT] = {"requant", "float|q31", "float", "q31 with -mcpu=cortex-m",
                   "requantization: ORT-exact float multiplier, or integer-only int32 multiplier "
                   "and shift (bit-identical results)",
                   set_requant},
    [A_KERNELS] = {"kernels", "fast|scalar", "fast", "scalar with -mcpu=cortex-m",
                   "dispatched fast kernels (AMX/AVX-512/AVX2/C picked at start-up), or the "
                   "portable reference loops",
                   set_kernels},
    [A_PROFILE_LAYERS] = {"profile-layers", "0|1", "0", NULL,
                          "time every kernel call (cstatic run --profile, model_desc.profile)",
                          set_profile_layers},
    [A_SKIP_RUNTIME_CHECKS] = {"skip-runtime-checks", "0|1", "0", "1 with -mcpu=c7x|c66x",
                               "leave out the entry points' argument checks (null pointers, "
                               "alignment, the DSP entry's tensor descriptors)",
                               set_skip_runtime_checks},
    [A_USE_CPP_API] = {"use-cpp-api", "1", "1", NULL,
                       "direct kernel calls instead of FFI dispatch: the only mode, since the "
                       "generated C has no FFI layer (0 is refused)",
                       set_use_cpp_api},
    [A_CONSTANTS_BYTE_ALIGNMENT] = {"constants-byte-alignment", "N", "64", NULL,
                                    "alignment of weight tensors and arena blocks (a power of "
                                    "two in [1, 4096]; at least 16 is used)",
                                    set_alignment},
    [A_PACK_WEIGHTS] = {"pack-weights", "0|1", "1", "0 with -mcpu=c7x|c66x|cortex-m or -kernels=scalar",
                        "pad int8 conv/matmul weight rows to 64 bytes for the host's fast kernels",
                        set_pack_weights},
    [A_L2_BUDGET] = {"l2-budget", "BYTES", "393216", NULL,
                     "with -mcpu=c7x: L2 SRAM bytes one staged MMALIB call or one DMA-tiled conv may "
                     "use (0: no staging or tiling)",
                     set_l2_budget},
    [A_ALLOW_FLOAT] = {"allow-float", "0|1", "0", NULL,
                       "1: a float model (no QuantizeLinear/DequantizeLinear) is intended; "
                       "compile it without the warning that every layer runs in float",
                       set_allow_float},
    [A_ORT_EXACT] = {"ort-exact", "0|1", "1", "0 with -mcpu=cortex-m",
                     "1: every layer gives ONNX Runtime's bytes (what ORT runs in float between DQ "
                     "and Q runs in float); 0: such a layer runs on an integer kernel where one is "
                     "within 1 LSB (ReduceMean over H, W: the integer global average pool)",
                     set_ort_exact},
    [A_MMALIB_PAD_BUDGET] = {"mmalib-pad-budget", "X", "1.6", NULL,
                             "with -mmalib=1: the MACs the offload's rewrites (channel padding, pixel "
                             "packing, output space-to-depth, dilation, asymmetric stride) may bring the "
                             "model to, as a multiple of its own; over it, those saving the fewest "
                             "estimated cycles per MAC added stay on the core (1: none that adds MACs)",
                             set_mmalib_pad_budget},
};

static int find_attr(const char *name) {
  for (int i = 0; i < N_ATTRS; i++)
    if (!strcmp(attrs[i].name, name)) return i;
  return -1;
}

/* The defaults that follow other attributes, wherever those appear in the
 * string (the table's `derived` column says the same in words). */
static void derive_defaults(cs_target *t, const int given[N_ATTRS]) {
  if (t->mcpu == CS_MCPU_C7X || t->mcpu == CS_MCPU_C66X) {
    /* DSP defaults (spec: "When mcpu=c7x is set, the following defaults apply"). */
    if (!given[A_SKIP_RUNTIME_CHECKS]) t->skip_runtime_checks = 1;
  }
  if (t->mcpu == CS_MCPU_CORTEX_M) {
    /* The microcontroller preset: the portable loops called by name (no
     * dispatch table, no getenv, no x86 rows linked) and integer-only
     * requantization (a Cortex-M0/M3 has no FPU; the bits are the same). */
    if (!given[A_KERNELS]) t->kernels = CS_KERNELS_SCALAR;
    if (!given[A_REQUANT]) t->requant = CS_REQUANT_Q31;
    /* ... and no float layer where an integer kernel is within 1 LSB */
    if (!given[A_ORT_EXACT]) t->ort_exact = 0;
  }
  if (!given[A_PACK_WEIGHTS]) t->pack_weights = pack_weights_default(t);
}

void cs_target_default(cs_target *t) {
  memset(t, 0, sizeof *t);
  /* The table's defaults are valid values (tests/unit/test_ir_target.c
   * checks each), so no setter fails here. */
  for (int i = 0; i < N_ATTRS; i++) attrs[i].set(t, attrs[i].name, attrs[i].dflt);
  static const int none[N_ATTRS];
  derive_defaults(t, none);
}

/* Edit distance (insert, delete, substitute, swap two neighbours: the
 * optimal string alignment) between two short names; capped at 99. */
static int edit_distance(const char *a, const char *b) {
  enum { MAXLEN = 48 };
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la >= MAXLEN || lb >= MAXLEN) return 99;
  int d[MAXLEN + 1][MAXLEN + 1];
  for (int i = 0; i <= la; i++) d[i][0] = i;
  for (int j = 0; j <= lb; j++) d[0][j] = j;
  for (int i = 1; i <= la; i++)
    for (int j = 1; j <= lb; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

/* The attribute a misspelled name most likely meant: the nearest by edit
 * distance when it is close (at most 2 edits, or a third of the name), or
 * the one attribute the name is a prefix of ("-profile" → profile-layers);
 * -1 when none is. */
static int nearest_attr(const char *name) {
  int best = -1, best_d = 99, prefix_of = -1, prefixes = 0;
  size_t len = strlen(name);
  for (int i = 0; i < N_ATTRS; i++) {
    int d = edit_distance(name, attrs[i].name);
    if (d < best_d) best_d = d, best = i;
    if (len >= 3 && !strncmp(attrs[i].name, name, len)) prefix_of = i, prefixes++;
  }
  int limit = (int)len / 3 > 2 ? (int)len / 3 : 2;
  if (best >= 0 && best_d <= limit) return best;
  return prefixes == 1 ? prefix_of : -1;
}

static void known_names(char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < N_ATTRS && len + 1 < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", attrs[i].name);
}

cs_status cs_target_parse(const char *s, cs_target *t) {
  cs_target_default(t);
  if (!s || !*s) return CS_OK;
  char *copy = strdup(s);
  if (!copy) return cs_error(CS_ERR_NOMEM, "out of memory");
  int given[N_ATTRS] = {0};
  cs_status st = CS_OK;
  int first = 1;
  for (char *tok = strtok(copy, " \t"); tok; tok = strtok(NULL, " \t")) {
    if (first) {
      first = 0;
      if (!strcmp(tok, "c_static_lib") || !strcmp(tok, "c_static")) continue;
      if (tok[0] != '-') {
        st = cs_error(CS_ERR_USAGE, "target '%s': kind '%s' is not c_static_lib", s, tok);
        break;
      }
    }
    if (tok[0] != '-') {
      st = cs_error(CS_ERR_USAGE, "target '%s': expected -key=value, got '%s'", s, tok);
      break;
    }
    char *key = tok + 1;
    char *val = strchr(key, '=');
    if (!val) {
      st = cs_error(CS_ERR_USAGE, "target attribute '%s' has no value (use -%s=VALUE)", key, key);
      break;
    }
    *val++ = '\0';
    int a = find_attr(key);
    if (a < 0) {
      char known[512];
      known_names(known, sizeof known);
      int near = nearest_attr(key);
      if (near >= 0)
        st = cs_error(CS_ERR_USAGE, "unknown target attribute -%s: did you mean -%s=%s? (known: %s)", key,
                      attrs[near].name, val, known);
      else
        st = cs_error(CS_ERR_USAGE, "unknown target attribute -%s (known: %s)", key, known);
      break;
    }
    if ((st = attrs[a].set(t, key, val)) != CS_OK) break;
    given[a] = 1;
  }
  if (st == CS_OK) derive_defaults(t, given);
  if (st == CS_OK && t->tidl_runtime && t->mcpu != CS_MCPU_C7X)
    st = cs_error(CS_ERR_USAGE, "target attribute -tidl-runtime=1 changes cg_main_dsp, the C7x firmware's entry: "
                                "it needs -mcpu=c7x");
  free(copy);
  return st;
}

/* Words of `text` on lines of at most `width` columns, each indented. */
static void print_wrapped(FILE *f, const char *text, int indent, int width) {
  const char *p = text;
  while (*p) {
    int room = width - indent, len = (int)strlen(p);
    if (len > room) {
      len = room;
      while (len > 0 && p[len] != ' ') len--;
      if (len == 0) len = room; /* one word longer than the line */
    }
    fprintf(f, "%*s%.*s\n", indent, "", len, p);
    p += len;
    while (*p == ' ') p++;
  }
}

/* The help that names kernels (the symbols a firmware must export) takes
 * them from the kernel table: its %s are these rows' C symbols, in order. */
static const struct {
  attr_id id;
  cs_op kernels[2];
} help_kernels[] = {
    {A_TIDL_KERNELS, {CS_OP_K_C7X_MAXPOOL_TIDL_I8, CS_OP_K_C7X_MAXPOOL_I8}},
};

static void help_text(const attr *a, char *buf, size_t size) {
  for (size_t i = 0; i < sizeof help_kernels / sizeof help_kernels[0]; i++)
    if (&attrs[help_kernels[i].id] == a) {
      snprintf(buf, size, a->help, cs_kernel_info_of(help_kernels[i].kernels[0])->fn,
               cs_kernel_info_of(help_kernels[i].kernels[1])->fn);
      return;
    }
  snprintf(buf, size, "%s", a->help);
}

void cs_target_print_attributes(FILE *f) {
  for (int i = 0; i < N_ATTRS; i++) {
    const attr *a = &attrs[i];
    fprintf(f, "  -%s=%s  (default: %s%s%s)\n", a->name, a->values, a->dflt, a->derived ? "; " : "",
            a->derived ? a->derived : "");
    char help[1024];
    help_text(a, help, sizeof help);
    print_wrapped(f, help, 6, 78);
  }
}

int cs_target_attribute_count(void) { return N_ATTRS; }

const char *cs_target_attribute_name(int i) { return i >= 0 && i < N_ATTRS ? attrs[i].name : NULL; }

const char *cs_target_attribute_default(int i) { return i >= 0 && i < N_ATTRS ? attrs[i].dflt : NULL; }

void cs_target_format(const cs_target *t, char *buf, size_t size) {
  const char *cpu = mcpu_names[t->mcpu];
  snprintf(buf, size,
           "c_static_lib -mcpu=%s -mmalib=%d -tidl-kernels=%d -requant=%s -profile-layers=%d "
           "-skip-runtime-checks=%d -use-cpp-api=%d -constants-byte-alignment=%d",
           cpu, t->mmalib, t->tidl_kernels, t->requant == CS_REQUANT_Q31 ? "q31" : "float",
           t->profile_layers, t->skip_runtime_checks, t->use_cpp_api, t->constants_byte_alignment);
  size_t len = size ? strlen(buf) : 0;
  if (t->kernels == CS_KERNELS_SCALAR && len + 1 < size)
    snprintf(buf + len, size - len, " -kernels=scalar");
  len = size ? strlen(buf) : 0;
  if ((t->pack_weights != 0) != pack_weights_default(t) && len + 1 < size)
    snprintf(buf + len, size - len, " -pack-weights=%d", t->pack_weights != 0);
  len = size ? strlen(buf) : 0;
  if (t->l2_budget != CS_L2_BUDGET_DEFAULT && len + 1 < size)
    snprintf(buf + len, size - len, " -l2-budget=%ld", t->l2_budget);
  len = size ? strlen(buf) : 0;
  if (t->tidl_runtime && len + 1 < size) snprintf(buf + len, size - len, " -tidl-runtime=1");
  if (t->allow_float && len + 1 < size) snprintf(buf + len, size - len, " -allow-float=1");
  len = size ? strlen(buf) : 0;
  if (!t->ort_exact && len + 1 < size) snprintf(buf + len, size - len, " -ort-exact=0");
  static const char *const exact_names[] = {"none", "worst", "all", "strict"};
  len = size ? strlen(buf) : 0;
  if (t->mmalib_exact != CS_MM_EXACT_ALL && len + 1 < size)
    snprintf(buf + len, size - len, " -mmalib-exact=%s", exact_names[t->mmalib_exact]);
  len = size ? strlen(buf) : 0;
  if (t->mmalib_pad_budget != CS_MM_PAD_BUDGET_DEFAULT && len + 1 < size)
    snprintf(buf + len, size - len, " -mmalib-pad-budget=%g", t->mmalib_pad_budget);
}
