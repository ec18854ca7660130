/*
 * Code generation end to end on hand-built kernel graphs: the files, the
 * header's contract, warning-free C99, the weights blob and its check, and
 * the generated model run by a harness (linked with the runtime, malloc
 * wrapped and counted) against the same kernels called directly.
 */
#include "test_codegen_graphs.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "codegen/cg.h"
#include "codegen/codegen.h"
#include "cstatic/model.h"
#include "target.h"
#include "unit.h"

static char src_dir[4096], tidsp_lib[4096];

/* A generic host for any compiled model, driven by model_desc:
 *   harness WEIGHTS|- IN.bin OUT.bin [raw]
 * reads the inputs (concatenated raw bytes), runs model_run (or cg_main with
 * "raw"), writes the outputs, prints "mallocs N status S … threads T". malloc,
 * calloc, realloc, free and pthread_create (a thread's stack) are wrapped
 * (-Wl,--wrap) and counted around the calls; T counts every thread
 * started. A model with L2 staging gets its L2 bound first, as a platform
 * does at init (which starts the DMA engine's copy thread). */
static const char harness_c[] =
    "#include <pthread.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "#include \"cstatic/dma.h\"\n#include \"lib0.h\"\n"
    "void *__real_malloc(size_t); void *__real_calloc(size_t, size_t);\n"
    "void *__real_realloc(void *, size_t); void __real_free(void *);\n"
    "int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);\n"
    "static long counting, calls, threads;\n"
    "int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg) {\n"
    "  calls += counting; threads++; return __real_pthread_create(t, a, f, arg);\n}\n"
    "void *__wrap_malloc(size_t n) { calls += counting; return __real_malloc(n); }\n"
    "void *__wrap_calloc(size_t a, size_t b) { calls += counting; return __real_calloc(a, b); }\n"
    "void *__wrap_realloc(void *p, size_t n) { calls += counting; return __real_realloc(p, n); }\n"
    "void __wrap_free(void *p) { calls += counting; __real_free(p); }\n"
    "static void *slurp(const char *path, size_t align, size_t *n) {\n"
    "  FILE *f = fopen(path, \"rb\"); void *buf = NULL; long len;\n"
    "  if (!f) return NULL;\n"
    "  fseek(f, 0, SEEK_END); len = ftell(f); fseek(f, 0, SEEK_SET);\n"
    "  if (posix_memalign(&buf, align, (size_t)len + 1)) return NULL;\n"
    "  if (fread(buf, 1, (size_t)len, f) != (size_t)len) { fclose(f); free(buf); return NULL; }\n"
    "  fclose(f); *n = (size_t)len; return buf;\n}\n"
    "int main(int argc, char **argv) {\n"
    "  const tidsp_model_desc *m = &model_desc;\n"
    "  int raw = argc > 4 && !strcmp(argv[4], \"raw\");\n"
    "  const tidsp_tensor_info *ii = raw ? m->raw_inputs : m->inputs;\n"
    "  const tidsp_tensor_info *oi = raw ? m->raw_outputs : m->outputs;\n"
    "  size_t wn = 0, xn = 0, off = 0; int i; int32_t st, chk, mis;\n"
    "  void *w = strcmp(argv[1], \"-\") ? slurp(argv[1], m->weights_align, &wn) : NULL;\n"
    "  unsigned char *x = slurp(argv[2], 64, &xn), *y; void *arena;\n"
    "  const void *in[16]; void *out[16]; size_t out_bytes = 0; void *l2 = NULL;\n"
    "  if (!x) return 3;\n"
    "  if (m->l2_size && (posix_memalign(&l2, TIDSP_L2_ALIGN, m->l2_size) || tidsp_l2_bind(l2, m->l2_size)))\n"
    "    return 3;\n"
    "  if (posix_memalign(&arena, m->arena_align, m->arena_size + 1)) return 3;\n"
    "  for (i = 0; i < m->n_inputs; i++) { in[i] = x + off; off += ii[i].nbytes; }\n"
    "  if (off != xn) { printf(\"input size %zu, expected %zu\\n\", xn, off); return 4; }\n"
    "  for (i = 0; i < m->n_outputs; i++) out_bytes += oi[i].nbytes;\n"
    "  y = malloc(out_bytes + 1); off = 0;\n"
    "  for (i = 0; i < m->n_outputs; i++) { out[i] = y + off; off += oi[i].nbytes; }\n"
    "  counting = 1;\n"
    "  chk = model_check_weights(w, wn);\n"
    "  st = raw ? cg_main(w, arena, in, out) : model_run(w, arena, in, out);\n"
    "  if (st == TIDSP_OK) st = raw ? cg_main(w, arena, in, out) : model_run(w, arena, in, out);\n"
    "  mis = raw ? cg_main(w, (char *)arena + 1, in, out) : model_run(w, (char *)arena + 1, in, out);\n"
    "  counting = 0;\n"
    "  { FILE *f = fopen(argv[3], \"wb\"); fwrite(y, 1, out_bytes, f); fclose(f); }\n"
    "  printf(\"mallocs %ld check %d status %d misaligned %d threads %ld\\n\", calls, (int)chk, (int)st, (int)mis,\n"
    "         threads);\n"
    "  fflush(stdout);\n  tidsp_dma_shutdown();\n  tidsp_l2_bind(NULL, 0);\n"
    "  free(w); free(x); free(y); free(arena); free(l2);\n"
    "  return 0;\n}\n";

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  fputs(text, f);
  return fclose(f) == 0;
}

static int write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  size_t w = fwrite(p, 1, n, f);
  return fclose(f) == 0 && w == n;
}

/* Emit g into a fresh dir for target t (NULL: the default); returns the
 * dir (caller frees) or NULL. */
static char *emit_for(cs_graph *g, int weights_as_c, cs_codegen_stats *stats, const cs_target *target) {
  char *tmp = tg_temp_dir("codegen");
  if (!tmp) return NULL;
  char *dir = malloc(4200);
  snprintf(dir, 4200, "%s/out", tmp);
  free(tmp);
  mkdir(dir, 0777);
  cs_target t;
  cs_target_default(&t);
  if (target) t = *target;
  cs_codegen_options opt = {.model_path = "tests/tiny.onnx", .weights_as_c = weights_as_c, .stats = stats};
  cs_status st = cs_codegen_emit(g, &t, &opt, dir);
  CHECK_MSG(st == CS_OK, "emit: %s", cs_error_message());
  return dir;
}

static char *emit(cs_graph *g, int weights_as_c, cs_codegen_stats *stats) {
  return emit_for(g, weights_as_c, stats, NULL);
}

static void parent_remove(char *dir) {
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  tg_remove_dir(dir);
  free(dir);
}

/* Compile each generated .c strictly; returns 1 if all compile. */
static int compiles_strictly(const char *dir, const char *files) {
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && for f in %s; do cc -std=c99 -Wall -Wextra -Werror -pedantic -I'%s/include' "
           "-I. -c $f -o /dev/null || exit 1; done",
           dir, files, src_dir);
  return tg_system(cmd) == 0;
}

/* The runtime library was built like this test: with the sanitizers if
 * this is the ASAN build, so the harness needs them too. */
#if defined(__SANITIZE_ADDRESS__)
#define HARNESS_FLAGS "-fsanitize=address,undefined"
#else
#define HARNESS_FLAGS ""
#endif

/* Build the harness against the generated files; returns 1 on success. */
static int build_harness(const char *dir, const char *files) {
  char path[4400], cmd[12000];
  snprintf(path, sizeof path, "%s/harness.c", dir);
  if (!write_text(path, harness_c)) return 0;
  snprintf(cmd, sizeof cmd,
           "cd '%s' && cc -std=c99 -D_POSIX_C_SOURCE=200112L -O1 " HARNESS_FLAGS " -I'%s/include' -I. harness.c %s "
           "'%s' -lm -lpthread -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=pthread_create "
           "-o harness",
           dir, src_dir, files, tidsp_lib);
  return tg_system(cmd) == 0;
}

/* Run the harness; returns malloc count (or -1) and fills out (and
 * *threads, when not NULL: threads started in the whole run). */
static long run_harness_threads(const char *dir, const char *weights, const void *in, size_t in_n, void *out,
                                size_t out_n, int raw, int *status, long *threads) {
  char path[4400], cmd[9000], line[256] = "";
  snprintf(path, sizeof path, "%s/in.bin", dir);
  if (!write_bytes(path, in, in_n)) return -1;
  snprintf(cmd, sizeof cmd, "cd '%s' && ./harness %s in.bin out.bin %s", dir, weights, raw ? "raw" : "");
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  if (!fgets(line, sizeof line, p)) line[0] = '\0';
  pclose(p);
  long mallocs = -1, started = -1;
  int check = -99, misaligned = -99;
  *status = -99;
  if (sscanf(line, "mallocs %ld check %d status %d misaligned %d threads %ld", &mallocs, &check, status,
             &misaligned, &started) != 5) {
    fprintf(stderr, "harness said: %s\n", line);
    return -1;
  }
  CHECK_MSG(check == TIDSP_OK, "model_check_weights returned %d", check);
  CHECK_MSG(misaligned == TIDSP_ERR_ALIGN, "a misaligned arena gave status %d", misaligned);
  snprintf(path, sizeof path, "%s/out.bin", dir);
  size_t n = 0;
  char *data = tg_read_file(path, &n);
  CHECK_MSG(data && n == out_n, "harness wrote %zu bytes, expected %zu", n, out_n);
  if (data && n == out_n) memcpy(out, data, n);
  free(data);
  if (threads) *threads = started;
  return mallocs;
}

static long run_harness(const char *dir, const char *weights, const void *in, size_t in_n, void *out,
                        size_t out_n, int raw, int *status) {
  return run_harness_threads(dir, weights, in, in_n, out, out_n, raw, status, NULL);
}

/* The model of tg_conv_model, computed with the kernels directly. */
static void reference_conv_model(cs_graph *g, int conv, const float *x, int8_t *z_raw, float *out) {
  const cs_node *qn = NULL, *cn = &g->nodes[conv], *ln = NULL, *dn = NULL;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].op == CS_OP_K_QUANTIZE) qn = &g->nodes[i];
    if (g->nodes[i].op == CS_OP_K_LUT_I8) ln = &g->nodes[i];
    if (g->nodes[i].op == CS_OP_K_DEQUANTIZE) dn = &g->nodes[i];
  }
  int8_t xq[192], y[256];
  CHECK(tidsp_quantize(&qn->k.qdq, cs_graph_value(g, qn->inputs[0])->data, cs_graph_value(g, qn->inputs[1])->data,
                       x, xq) == 0);
  CHECK(tidsp_conv2d_i8(&cn->k.conv, xq, cs_graph_value(g, cn->inputs[1])->data, cs_graph_value(g, cn->inputs[2])->data,
                        cs_graph_value(g, cn->inputs[3])->data, y) == 0);
  CHECK(tidsp_lut_i8(&ln->k.lut, cs_graph_value(g, ln->inputs[0])->data, y, z_raw) == 0);
  CHECK(tidsp_dequantize(&dn->k.qdq, cs_graph_value(g, dn->inputs[0])->data, cs_graph_value(g, dn->inputs[1])->data,
                         z_raw, out) == 0);
}

static void emitted_files_and_header_contract(void) {
  int conv;
  cs_graph *g = tg_conv_model(&conv);
  cs_codegen_stats stats;
  char *dir = emit(g, 0, &stats);
  char p[4400];
  const char *files[] = {"lib0.c", "lib0.h", "weights.bin", "manifest.json"};
  for (int i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    CHECK_MSG(access(p, R_OK) == 0, "%s missing", files[i]);
  }
  snprintf(p, sizeof p, "%s/lib1.c", dir);
  CHECK(access(p, F_OK) != 0);

  snprintf(p, sizeof p, "%s/lib0.h", dir);
  char want[256];
  snprintf(want, sizeof want, "#define MODEL_ARENA_SIZE %zuu\n", stats.arena_bytes);
  CHECK(tg_file_contains(p, want));
  snprintf(want, sizeof want, "#define MODEL_LIVE_BYTES_LOWER_BOUND %zuu\n", stats.live_bytes_lower_bound);
  CHECK(tg_file_contains(p, want));
  snprintf(want, sizeof want, "#define MODEL_WEIGHTS_SIZE %zuu\n", stats.weights_bytes);
  CHECK(tg_file_contains(p, want));
  CHECK(tg_file_contains(p, "#include \"cstatic/kernels.h\""));
  CHECK(tg_file_contains(p, "#ifndef CSTATIC_MODEL_LIB0_H"));
  CHECK(tg_file_contains(p, "#define MODEL_NUM_INPUTS 1\n"));
  CHECK(tg_file_contains(p, "#define MODEL_NUM_OUTPUTS 1\n"));
  CHECK(tg_file_contains(p, "#define MODEL_INPUT0_NAME \"input\"\n"));
  CHECK(tg_file_contains(p, "#define MODEL_INPUT0_DTYPE TIDSP_DTYPE_F32\n"));
  CHECK(tg_file_contains(p, "#define MODEL_INPUT0_SHAPE {1, 3, 8, 8}\n"));
  CHECK(tg_file_contains(p, "#define MODEL_INPUT0_NUMEL 192\n"));
  CHECK(tg_file_contains(p, "#define MODEL_INPUT0_RAW_DTYPE TIDSP_DTYPE_I8\n"));
  CHECK(tg_file_contains(p, "#define MODEL_INPUT0_SCALE 0x1p-5f"));
  CHECK(tg_file_contains(p, "#define MODEL_INPUT0_ZERO_POINT -3\n"));
  CHECK(tg_file_contains(p, "#define MODEL_OUTPUT0_RAW_DTYPE TIDSP_DTYPE_I8\n"));
  CHECK(tg_file_contains(p, "#define MODEL_OUTPUT0_ZERO_POINT 2\n"));
  CHECK(tg_file_contains(p, "int32_t model_run(const void *weights, void *arena, const void *const inputs[],"));
  CHECK(tg_file_contains(p, "int32_t cg_main(const void *weights, void *arena, const void *const inputs[],"));
  CHECK(tg_file_contains(p, "int32_t model_check_weights(const void *weights, size_t size);"));
  CHECK(tg_file_contains(p, "extern const tidsp_model_desc model_desc;"));

  snprintf(p, sizeof p, "%s/lib0.c", dir);
  CHECK(tg_file_contains(p, "/* layer 0: k_conv2d_i8 from ONNX /conv/Conv, /relu/Relu"));
  CHECK(tg_file_contains(p, "#define W_CONV_WEIGHT 0x"));
  CHECK(tg_file_contains(p, "i8[4,3,3,3] conv.weight */"));
  CHECK(tg_file_contains(p, "st = tidsp_conv2d_i8(&p,"));
  CHECK(tg_file_contains(p, "if (st != TIDSP_OK) return st;"));
  CHECK(tg_file_contains(p, ".rq = {.kind = TIDSP_REQUANT_FLOAT, .per_channel = 1, .out_zp = -5"));
  /* The reshape copy's input dies there: it becomes a view, no call. */
  CHECK(tg_file_contains(p, "/* elided: A_RESHAPE_OUTPUT_0 is A_CONV_CONV_OUTPUT_0's memory"));
  CHECK(!tg_file_contains(p, "tidsp_copy("));
  CHECK(stats.layers == 3 && stats.kernel_calls == 2);
  CHECK(stats.macs == 4 * 8 * 8 * 27);
  CHECK(stats.arena_bytes >= stats.live_bytes_lower_bound);

  snprintf(p, sizeof p, "%s/manifest.json", dir);
  CHECK(tg_file_contains(p, "\"arena_bytes\": "));
  CHECK(tg_file_contains(p, "\"kernel\": \"tidsp_conv2d_i8\""));
  CHECK(tg_file_contains(p, "\"onnx_nodes\": [\n"));
  CHECK(tg_file_contains(p, "\"macs\": 6912"));

  CHECK_MSG(compiles_strictly(dir, "lib0.c"), "lib0.c does not compile warning-free as C99");
  /* The output directory must be empty: a second emit into it fails. */
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_codegen_emit(g, &t, NULL, dir) == CS_ERR_IO);
  parent_remove(dir);
  cs_graph_free(g);
}

/* lib0.h is the contract with the code that uses a model: any change to it
 * must be deliberate, so it is compared with this text whole. */
static const char golden_lib0_h[] =
    "/*\n"
    " * lib0.h — a compiled model's interface.\n"
    " *\n"
    " * Generated by cstatic from tests/tiny.onnx; do not edit.\n"
    " *\n"
    " * Use: check the weights once (model_check_weights), then call model_run\n"
    " * (the model's own dtypes) or cg_main (the raw integer tensors) with a\n"
    " * MODEL_ARENA_SIZE-byte arena aligned to MODEL_ARENA_ALIGN. Neither entry\n"
    " * allocates; the arena is scratch, reused by every call; weights must be\n"
    " * aligned to MODEL_WEIGHTS_ALIGN. Calls are not reentrant on one arena.\n"
    " */\n"
    "#ifndef CSTATIC_MODEL_LIB0_H\n"
    "#define CSTATIC_MODEL_LIB0_H\n"
    "\n"
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "\n"
    "#include \"cstatic/kernels.h\"\n"
    "#include \"cstatic/model.h\"\n"
    "\n"
    "#ifdef __cplusplus\n"
    "extern \"C\" {\n"
    "#endif\n"
    "\n"
    "#define MODEL_NAME \"tiny_conv\"\n"
    "#define MODEL_TARGET \"c_static_lib -mcpu=generic -mmalib=0 -tidl-kernels=1 -requant=float -profile-layers=0 -skip-runtime-checks=0 -use-cpp-api=1 -constants-byte-alignment=64\"\n"
    "\n"
    "/* Arena: scratch for every intermediate tensor (1.000x the lower bound). */\n"
    "#define MODEL_ARENA_SIZE 512u\n"
    "#define MODEL_ARENA_ALIGN 64u\n"
    "/* Max over layers of the bytes live at once: no plan can use less. */\n"
    "#define MODEL_LIVE_BYTES_LOWER_BOUND 512u\n"
    "/* L2 SRAM scratch the staged MMALIB calls use (0: none); bind at least\n"
    " * this many bytes with tidsp_l2_bind (cstatic/dma.h) before a call. */\n"
    "#define MODEL_L2_SIZE 0u\n"
    "\n"
    "/* Weights blob (docs/weights-format.md): header + 8 tensors. */\n"
    "#define MODEL_WEIGHTS_SIZE 772u\n"
    "#define MODEL_WEIGHTS_ALIGN 64u\n"
    "#define MODEL_WEIGHTS_COUNT 8u\n"
    "#define MODEL_WEIGHTS_CHECKSUM UINT64_C(0x82d0d2e53b9470d8)\n"
    "#define MODEL_WEIGHTS_EMBEDDED 0\n"
    "\n"
    "#define MODEL_NUM_INPUTS 1\n"
    "#define MODEL_NUM_OUTPUTS 1\n"
    "\n"
    "/* input 0: input f32[1,3,8,8]; cg_main: input_quantized i8[1,3,8,8], real = scale * (q - zero_point) */\n"
    "#define MODEL_INPUT0_NAME \"input\"\n"
    "#define MODEL_INPUT0_DTYPE TIDSP_DTYPE_F32\n"
    "#define MODEL_INPUT0_RANK 4\n"
    "#define MODEL_INPUT0_SHAPE {1, 3, 8, 8}\n"
    "#define MODEL_INPUT0_NUMEL 192\n"
    "#define MODEL_INPUT0_RAW_DTYPE TIDSP_DTYPE_I8\n"
    "#define MODEL_INPUT0_QUANTIZED 1\n"
    "#define MODEL_INPUT0_SCALE 0x1p-5f /* 0.03125 */\n"
    "#define MODEL_INPUT0_ZERO_POINT -3\n"
    "\n"
    "/* output 0: output f32[1,256]; cg_main: /lut_output_0 i8[1,256], real = scale * (q - zero_point) */\n"
    "#define MODEL_OUTPUT0_NAME \"output\"\n"
    "#define MODEL_OUTPUT0_DTYPE TIDSP_DTYPE_F32\n"
    "#define MODEL_OUTPUT0_RANK 2\n"
    "#define MODEL_OUTPUT0_SHAPE {1, 256}\n"
    "#define MODEL_OUTPUT0_NUMEL 256\n"
    "#define MODEL_OUTPUT0_RAW_DTYPE TIDSP_DTYPE_I8\n"
    "#define MODEL_OUTPUT0_QUANTIZED 1\n"
    "#define MODEL_OUTPUT0_SCALE 0x1.99999ap-5f /* 0.0500000007 */\n"
    "#define MODEL_OUTPUT0_ZERO_POINT 2\n"
    "\n"
    "/* Run the model on its own dtypes (e.g. float32): quantizes the inputs,\n"
    " * runs cg_main, dequantizes the outputs. inputs[i] / outputs[j] point at\n"
    " * MODEL_INPUTi_NUMEL / MODEL_OUTPUTj_NUMEL elements of MODEL_*_DTYPE.\n"
    " * Returns TIDSP_OK or the first kernel's error status. */\n"
    "int32_t model_run(const void *weights, void *arena, const void *const inputs[],\n"
    "                  void *const outputs[]);\n"
    "\n"
    "/* The raw entry: the integer tensors after the boundary QuantizeLinear and\n"
    " * before the final DequantizeLinear (MODEL_*_RAW_DTYPE). */\n"
    "int32_t cg_main(const void *weights, void *arena, const void *const inputs[],\n"
    "                void *const outputs[]);\n"
    "\n"
    "/* TIDSP_OK if weights is this model's blob: size, magic, version, count,\n"
    " * checksum and alignment. The entries assume a checked blob. */\n"
    "int32_t model_check_weights(const void *weights, size_t size);\n"
    "\n"
    "/* The same facts as data, for generic hosts (cstatic run). */\n"
    "extern const tidsp_model_desc model_desc;\n"
    "\n"
    "#ifdef __cplusplus\n"
    "}\n"
    "#endif\n"
    "\n"
    "#endif /* CSTATIC_MODEL_LIB0_H */\n";

static void header_matches_the_golden_text(void) {
  cs_graph *g = tg_conv_model(NULL);
  char *dir = emit(g, 0, NULL);
  char p[4400];
  snprintf(p, sizeof p, "%s/lib0.h", dir);
  char *got = tg_read_file(p, NULL);
  CHECK(got != NULL);
  if (got && strcmp(got, golden_lib0_h) != 0) {
    const char *a = got, *b = golden_lib0_h;
    int line = 1;
    while (*a && *a == *b) line += *a++ == '\n', b++;
    CHECK_MSG(0, "lib0.h differs from the golden text at line %d:\n  got:  %.80s\n  want: %.80s", line, a, b);
  }
  free(got);
  parent_remove(dir);
  cs_graph_free(g);
}

static void weights_blob_is_checked(void) {
  cs_graph *g = tg_conv_model(NULL);
  cs_codegen_stats stats;
  char *dir = emit(g, 0, &stats);
  char p[4400];
  snprintf(p, sizeof p, "%s/weights.bin", dir);
  size_t n = 0;
  char *raw = tg_read_file(p, &n);
  CHECK(raw && n == stats.weights_bytes);
  void *blob = NULL;
  CHECK(posix_memalign(&blob, 64, n + 64) == 0);
  memcpy(blob, raw, n);
  unsigned char *b = blob;
  CHECK(memcmp(b, "CSWB", 4) == 0);
  CHECK(b[4] == 1 && b[5] == 0); /* version 1, little-endian */
  /* Header fields against the compile: count 8 = quantize scale/zp, weight,
   * bias, requant, lut, dequantize scale/zp. */
  CHECK(b[8] == 8);
  CHECK(b[12] == 64);
  uint64_t total = 0, payload = 0, sum = 0;
  for (int i = 7; i >= 0; i--) {
    total = total << 8 | b[16 + i];
    payload = payload << 8 | b[24 + i];
    sum = sum << 8 | b[32 + i];
  }
  CHECK(total == n && payload == 64);
  CHECK(sum == tidsp_fnv1a64(TIDSP_FNV1A64_INIT, b + 64, n - 64));
  CHECK(tidsp_weights_check(blob, n, n, 8, 64, sum) == TIDSP_OK);
  CHECK(tidsp_weights_check(blob, n - 1, n, 8, 64, sum) == TIDSP_ERR_WEIGHTS);
  CHECK(tidsp_weights_check(NULL, n, n, 8, 64, sum) == TIDSP_ERR_NULL);
  b[n - 1] ^= 1; /* payload corruption: the checksum says so */
  CHECK(tidsp_weights_check(blob, n, n, 8, 64, sum) == TIDSP_ERR_CHECKSUM);
  b[n - 1] ^= 1;
  /* a blob of another compile (its header's checksum is not the model's) */
  CHECK(tidsp_weights_check(blob, n, n, 8, 64, sum ^ 1) == TIDSP_ERR_CHECKSUM);
  CHECK(strstr(tidsp_status_str(TIDSP_ERR_CHECKSUM), "checksum mismatch") != NULL);
  b[0] = 'X'; /* magic */
  CHECK(tidsp_weights_check(blob, n, n, 8, 64, sum) == TIDSP_ERR_WEIGHTS);
  b[0] = 'C';
  CHECK(tidsp_weights_check(blob, n, n, 9, 64, sum) == TIDSP_ERR_WEIGHTS);
  /* Every header byte counts: any bit flipped in [0, payload) is refused,
   * the 24 reserved bytes included. */
  int accepted = 0;
  for (size_t i = 0; i < payload; i++)
    for (int bit = 0; bit < 8; bit++) {
      b[i] ^= (unsigned char)(1u << bit);
      accepted += tidsp_weights_check(blob, n, n, 8, 64, sum) == TIDSP_OK;
      b[i] ^= (unsigned char)(1u << bit);
    }
  CHECK_MSG(accepted == 0, "%d one-bit header corruptions accepted", accepted);
  CHECK(tidsp_weights_check(blob, n, n, 8, 64, sum) == TIDSP_OK);
  memmove(b + 1, b, n); /* misaligned copy */
  CHECK(tidsp_weights_check(b + 1, n, n, 8, 64, sum) == TIDSP_ERR_ALIGN);
  free(blob);
  free(raw);
  parent_remove(dir);
  cs_graph_free(g);
}

/* The weight-only linear layer N-tiled (-mcpu=c7x, L2 budget 600 B: its
 * 16 x 64 int8 weights, 1024 B, do not fit; tiles of 4 rows, 256 B, two
 * buffers): model_run gives the kernel's output on the whole matrix bit
 * for bit, with no allocator call, the DMA thread started at the bind. */
static void n_tiled_linear_matches_and_never_mallocs(void) {
  enum { K = 64, NN = 16 };
  cs_graph *g = cs_graph_new("linear");
  int64_t xs[2] = {1, K}, ws[2] = {NN, K}, ss[1] = {NN}, ys[2] = {1, NN};
  static int8_t w[NN * K];
  static float sc[NN], x[K], want[NN], got[NN];
  for (int i = 0; i < NN * K; i++) w[i] = (int8_t)((i * 53) % 255 - 127);
  for (int i = 0; i < NN; i++) sc[i] = 0.001f * (float)(i + 1);
  for (int i = 0; i < K; i++) x[i] = sinf((float)i * 0.61f) * 2.0f;
  int xv = cs_graph_add_value(g, "input", CS_DTYPE_F32, 2, xs);
  int in[3] = {xv, cs_graph_add_const(g, "fc.weight", CS_DTYPE_I8, 2, ws, w),
               cs_graph_add_const(g, "fc.scale", CS_DTYPE_F32, 1, ss, sc)};
  int yv = cs_graph_add_value(g, "output", CS_DTYPE_F32, 2, ys);
  int id = tg_node(g, CS_OP_K_DEQUANT_VECMATMUL, "/fc/MatMul", "/fc/MatMul", 3, in, yv);
  int64_t args[3] = {1, K, NN};
  CHECK(cs_node_set_attr_ints(&g->nodes[id], "mm_args", 3, args) == CS_OK);
  tg_set_io(g, 1, &xv, 1, &yv);
  cs_target t;
  cs_target_default(&t);
  t.mcpu = CS_MCPU_C7X;
  t.l2_budget = 600;
  char *dir = emit_for(g, 0, NULL, &t);
  char p[4400];
  snprintf(p, sizeof p, "%s/lib0.c", dir);
  CHECK(tg_file_contains(p, "N-tiled: weights 1024 B > L2 budget 600 B: 4 tiles of 4 output columns (256 B)"));
  CHECK(tg_file_contains(p, "st = tidsp_dma_wait(0, next < 16 ? 1 : 0);"));
  CHECK_MSG(compiles_strictly(dir, "lib0.c"), "lib0.c does not compile warning-free");
  if (!build_harness(dir, "lib0.c")) {
    CHECK_MSG(0, "harness does not build in %s", dir);
  } else {
    CHECK(c7x_dequantize_vecmatmul(x, w, sc, want, 1, K, NN) == TIDSP_OK);
    int status;
    long threads = -1;
    long mallocs = run_harness_threads(dir, "weights.bin", x, sizeof x, got, sizeof got, 0, &status, &threads);
    CHECK_MSG(mallocs == 0, "model_check_weights + 2x model_run made %ld allocator calls", mallocs);
    CHECK_MSG(threads == 1, "%ld threads started", threads);
    CHECK(status == TIDSP_OK);
    CHECK_MSG(memcmp(want, got, sizeof want) == 0, "the N-tiled layer differs from the kernel on the whole matrix");
  }
  parent_remove(dir);
  cs_graph_free(g);
}

/* staged: -mcpu=c7x with an L2 budget (440 B) that tiles the conv (3→4
 * on 8×8: input 192 B + weights 108 B > half of it). staged 1: with its
 * fused ReLU, H-tiled: one output row a tile (two 72 B strips and two
 * 32 B output rows on 128 B, 416 B; the weights do not fit beside them).
 * staged 2: without the ReLU, OC-tiled (input 192 B + one channel's
 * weights 27 B fit half the budget), one output channel a tile. The DMA
 * engine copies on its thread, started when the harness binds L2, never
 * during the runs. */
static void generated_model_matches_kernels_and_never_mallocs(int weights_as_c, int staged) {
  int conv;
  cs_graph *g = tg_conv_model(&conv);
  if (staged == 2) g->nodes[conv].k.conv.rq.out_min = -128; /* no ReLU */
  cs_target t;
  cs_target_default(&t);
  if (staged) {
    t.mcpu = CS_MCPU_C7X;
    t.l2_budget = 440;
  }
  char *dir = emit_for(g, weights_as_c, NULL, &t);
  if (staged) {
    char p[4400];
    snprintf(p, sizeof p, "%s/lib0.c", dir);
    if (staged == 2) {
      CHECK(tg_file_contains(p, "4 tiles of 1 output channels (27 B), double-buffered"));
      CHECK(tg_file_contains(p, "st = tidsp_dma_wait(0, next < 4 ? 1 : 0);"));
    } else {
      CHECK(tg_file_contains(p, "8 tiles of 1 output rows, input strips (72 B) and output rows (32 B) "
                                "double-buffered, weights read from DDR"));
      CHECK(tg_file_contains(p, "st = tidsp_dma_wait(0, t + 1 < 8 ? 1 : 0);"));
      CHECK(tg_file_contains(p, "st = tidsp_dma_wait(2, 1);"));
    }
  }
  const char *files = weights_as_c ? "lib0.c weights.c" : "lib0.c";
  CHECK_MSG(compiles_strictly(dir, files), "%s do not compile warning-free", files);
  if (!build_harness(dir, files)) {
    CHECK_MSG(0, "harness does not build in %s", dir);
    parent_remove(dir);
    cs_graph_free(g);
    return;
  }
  float x[192], want[256], got[256];
  int8_t want_raw[256], got_raw[256];
  for (int i = 0; i < 192; i++) x[i] = sinf((float)i * 0.37f) * 3.0f;
  reference_conv_model(g, conv, x, want_raw, want);
  int status;
  const char *w = weights_as_c ? "-" : "weights.bin";
  long threads = -1;
  long mallocs = run_harness_threads(dir, w, x, sizeof x, got, sizeof got, 0, &status, &threads);
  CHECK_MSG(mallocs == 0, "model_check_weights + 2x model_run made %ld allocator calls", mallocs);
  CHECK_MSG(threads == (staged != 0), "%ld threads started (staged %d)", threads, staged);
  CHECK(status == TIDSP_OK);
  CHECK_MSG(memcmp(want, got, sizeof want) == 0, "model_run output differs from the kernels");

  /* cg_main on the raw int8 input gives the raw int8 output. */
  int8_t xq[192];
  const cs_node *qn = NULL;
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].op == CS_OP_K_QUANTIZE) qn = &g->nodes[i];
  CHECK(tidsp_quantize(&qn->k.qdq, cs_graph_value(g, qn->inputs[0])->data, cs_graph_value(g, qn->inputs[1])->data,
                       x, xq) == 0);
  mallocs = run_harness(dir, w, xq, sizeof xq, got_raw, sizeof got_raw, 1, &status);
  CHECK(mallocs == 0);
  CHECK(status == TIDSP_OK);
  CHECK_MSG(memcmp(want_raw, got_raw, sizeof want_raw) == 0, "cg_main output differs from the kernels");
  parent_remove(dir);
  cs_graph_free(g);
}

/* 1000 LUT layers (about 300 KB of layer text): the layers spread over
 * lib0.c, lib1.c … by size: every file but the last holds at least
 * CS_FILE_LAYER_BYTES of layers and at most one layer more; each compiles
 * alone, and the chain still computes the same. */
/* Bytes of libF.c's cg_main_partF (its layers), -1 if none. */
static long part_bytes(const char *dir, int f) {
  char p[4400], head[64];
  snprintf(p, sizeof p, "%s/lib%d.c", dir, f);
  FILE *fp = fopen(p, "rb");
  if (!fp) return -1;
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text - 1, fp);
  fclose(fp);
  text[n] = '\0';
  snprintf(head, sizeof head, "int32_t cg_main_part%d(", f);
  const char *at = strstr(text, head);
  return at ? (long)(text + n - at) : -1;
}

static void large_models_split_into_files(void) {
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
  cs_codegen_stats stats;
  char *dir = emit(g, 0, &stats);
  CHECK(stats.files == 3 && stats.layers == LAYERS);
  char p[4400];
  snprintf(p, sizeof p, "%s/lib2.c", dir);
  CHECK(access(p, R_OK) == 0);
  CHECK(tg_file_contains(p, "int32_t cg_main_part2(const uint8_t *W, uint8_t *A"));
  snprintf(p, sizeof p, "%s/lib3.c", dir);
  CHECK(access(p, F_OK) != 0);
  /* lib1.c: its layers' text reaches the budget, one layer (under 1 KB
   * here) more at most; lib2.c has the rest. */
  long b1 = part_bytes(dir, 1), b2 = part_bytes(dir, 2);
  CHECK_MSG(b1 >= CS_FILE_LAYER_BYTES && b1 < CS_FILE_LAYER_BYTES + 1024, "lib1.c's layers: %ld bytes", b1);
  CHECK_MSG(b2 > 0 && b2 < b1, "lib2.c's layers: %ld bytes", b2);
  snprintf(p, sizeof p, "%s/lib0.h", dir);
  CHECK(tg_file_contains(p, "int32_t cg_main_part1("));
  /* Two live tensors at a time, whatever the depth. */
  CHECK(stats.live_bytes_lower_bound == 64 && stats.arena_bytes <= 128 + 64);
  const char *files = "lib0.c lib1.c lib2.c";
  CHECK(compiles_strictly(dir, files));
  if (build_harness(dir, files)) {
    float xin[32], got[32];
    for (int i = 0; i < 32; i++) xin[i] = (float)(i - 16) * 0.25f;
    int status;
    long mallocs = run_harness(dir, "weights.bin", xin, sizeof xin, got, sizeof got, 0, &status);
    CHECK(mallocs == 0 && status == TIDSP_OK);
    /* lut = clamp(2q + 3): q saturates after a few layers. */
    for (int i = 0; i < 32; i++) {
      int q = i - 16;
      for (int k = 0; k < LAYERS; k++) q = 2 * q + 3 < -128 ? -128 : 2 * q + 3 > 127 ? 127 : 2 * q + 3;
      CHECK_MSG(got[i] == (float)q * 0.25f, "element %d: %g, expected %g", i, (double)got[i],
                (double)((float)q * 0.25f));
    }
  } else {
    CHECK_MSG(0, "harness does not build");
  }
  parent_remove(dir);
  cs_graph_free(g);
}

/* Graph errors name the node: a non-kernel op, a dtype mismatch. */
static void unlowered_or_mistyped_nodes_are_errors(void) {
  cs_graph *g = cs_graph_new("bad");
  int64_t s[2] = {1, 4};
  int x = cs_graph_add_value(g, "x", CS_DTYPE_F32, 2, s);
  int y = cs_graph_add_value(g, "y", CS_DTYPE_F32, 2, s);
  cs_graph_add_node(g, CS_OP_RELU, "/relu/Relu", "/relu/Relu", 1, &x, 1, &y);
  tg_set_io(g, 1, &x, 1, &y);
  char *tmp = tg_temp_dir("codegen_bad");
  cs_target t;
  cs_target_default(&t);
  CHECK(cs_codegen_emit(g, &t, NULL, tmp) == CS_ERR_INTERNAL);
  CHECK(strstr(cs_error_message(), "/relu/Relu") != NULL);
  cs_graph_free(g);

  g = cs_graph_new("bad2");
  x = cs_graph_add_value(g, "x", CS_DTYPE_I8, 2, s);
  y = cs_graph_add_value(g, "y", CS_DTYPE_F32, 2, s); /* lut writes i8 */
  tg_lut(g, "/lut", x, y);
  tg_set_io(g, 1, &x, 1, &y);
  CHECK(cs_codegen_emit(g, &t, NULL, tmp) == CS_ERR_INTERNAL);
  CHECK_MSG(strstr(cs_error_message(), "'/lut'") && strstr(cs_error_message(), "i8"), "%s",
            cs_error_message());
  cs_graph_free(g);
  tg_remove_dir(tmp);
  free(tmp);
}

/* cs_c_float writes printf's "%af" of the widened float itself (speed);
 * it must be that text exactly, for every class of float. */
static void float_literals_are_printf_hex_floats(void) {
  const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 3.0f, 0.1f, -0.1f, 1e-45f, -1e-45f,
                           1.17549435e-38f, 3.40282347e+38f, -3.40282347e+38f, 1.5f, 1024.0f};
  char got[48], want[48];
  int bad = 0;
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
    cs_c_float(special[i], got);
    snprintf(want, sizeof want, "%af", (double)special[i]);
    if (strcmp(got, want)) bad++, fprintf(stderr, "cs_c_float(%g): %s, printf: %s\n", (double)special[i], got, want);
  }
  uint32_t bits = 1;
  for (int i = 0; i < 200000; i++) {
    bits = bits * 1664525u + 1013904223u;
    float f;
    memcpy(&f, &bits, sizeof f);
    if (isnan(f) || isinf(f)) continue;
    cs_c_float(f, got);
    snprintf(want, sizeof want, "%af", (double)f);
    if (strcmp(got, want) && bad++ < 5) fprintf(stderr, "cs_c_float(%a): %s, printf: %s\n", (double)f, got, want);
  }
  CHECK_MSG(bad == 0, "%d floats differ from printf's %%a", bad);
  CHECK(!strcmp(cs_c_float(NAN, got), "NAN") && !strcmp(cs_c_float(-INFINITY, got), "-INFINITY"));
}

int main(void) {
  float_literals_are_printf_hex_floats();
  tg_source_dir(src_dir, sizeof src_dir);
  tg_tidsp_lib(tidsp_lib, sizeof tidsp_lib);
  emitted_files_and_header_contract();
  header_matches_the_golden_text();
  weights_blob_is_checked();
  generated_model_matches_kernels_and_never_mallocs(0, 0);
  generated_model_matches_kernels_and_never_mallocs(1, 0);
  generated_model_matches_kernels_and_never_mallocs(0, 1);
  generated_model_matches_kernels_and_never_mallocs(0, 2);
  n_tiled_linear_matches_and_never_mallocs();
  large_models_split_into_files();
  unlowered_or_mistyped_nodes_are_errors();
  UNIT_MAIN_END();
}
