/*
 * test_codegen_graphs.h — hand-built graphs of kernel ops (what the passes
 * produce) for the codegen tests, and small process helpers.
 */
#ifndef CSTATIC_TEST_CODEGEN_GRAPHS_H
#define CSTATIC_TEST_CODEGEN_GRAPHS_H

#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir.h"

static inline void tg_set_io(cs_graph *g, int n_in, const int *in, int n_out, const int *out) {
  free(g->inputs);
  free(g->outputs);
  g->inputs = malloc(sizeof(int) * (size_t)(n_in + 1));
  g->outputs = malloc(sizeof(int) * (size_t)(n_out + 1));
  memcpy(g->inputs, in, sizeof(int) * (size_t)n_in);
  memcpy(g->outputs, out, sizeof(int) * (size_t)n_out);
  g->n_inputs = n_in;
  g->n_outputs = n_out;
}

static inline int tg_f32(cs_graph *g, const char *name, float v) {
  return cs_graph_add_const(g, name, CS_DTYPE_F32, 0, NULL, &v);
}

static inline int tg_i32(cs_graph *g, const char *name, int32_t v) {
  return cs_graph_add_const(g, name, CS_DTYPE_I32, 0, NULL, &v);
}

/* A one-output kernel node; returns its node id. */
static inline int tg_node(cs_graph *g, cs_op op, const char *name, const char *origin, int n_in,
                   const int *in, int y) {
  return cs_graph_add_node(g, op, name, origin, n_in, in, 1, &y);
}

/* y = quantize(x) per tensor. */
static inline int tg_quantize(cs_graph *g, const char *name, int x, int y, float scale, int32_t zp) {
  int64_t numel = cs_value_numel(cs_graph_value(g, x));
  char sn[128], zn[128];
  snprintf(sn, sizeof sn, "%s.scale", name);
  snprintf(zn, sizeof zn, "%s.zero_point", name);
  int in[3] = {tg_f32(g, sn, scale), tg_i32(g, zn, zp), x};
  int id = tg_node(g, CS_OP_K_QUANTIZE, name, name, 3, in, y);
  g->nodes[id].k.qdq = (tidsp_qdq_params){1, 1, (int32_t)numel, cs_dtype_to_tidsp(cs_graph_value(g, y)->dtype)};
  return id;
}

static inline int tg_dequantize(cs_graph *g, const char *name, int x, int y, float scale, int32_t zp) {
  int64_t numel = cs_value_numel(cs_graph_value(g, x));
  char sn[128], zn[128];
  snprintf(sn, sizeof sn, "%s.scale", name);
  snprintf(zn, sizeof zn, "%s.zero_point", name);
  int in[3] = {tg_f32(g, sn, scale), tg_i32(g, zn, zp), x};
  int id = tg_node(g, CS_OP_K_DEQUANTIZE, name, name, 3, in, y);
  g->nodes[id].k.qdq = (tidsp_qdq_params){1, 1, (int32_t)numel, cs_dtype_to_tidsp(cs_graph_value(g, x)->dtype)};
  return id;
}

static inline int tg_copy(cs_graph *g, const char *name, int x, int y) {
  int id = tg_node(g, CS_OP_K_COPY, name, name, 1, &x, y);
  g->nodes[id].k.copy_bytes = cs_value_nbytes(cs_graph_value(g, y));
  return id;
}

/* An int8 LUT y = lut[x + 128] with lut = clamp(2x + 3). */
static inline int tg_lut(cs_graph *g, const char *name, int x, int y) {
  int8_t table[256];
  for (int i = 0; i < 256; i++) {
    int v = 2 * (i - 128) + 3;
    table[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
  }
  char tn[128];
  snprintf(tn, sizeof tn, "%s.lut", name);
  int64_t shape[1] = {256};
  int in[2] = {cs_graph_add_const(g, tn, CS_DTYPE_I8, 1, shape, table), x};
  int id = tg_node(g, CS_OP_K_LUT_I8, name, name, 2, in, y);
  g->nodes[id].k.lut.n = (int32_t)cs_value_numel(cs_graph_value(g, x));
  return id;
}

/*
 * The test model:
 *   x f32[1,3,8,8] ─quantize─► xq ─conv2d_i8 3×3 pad 1 (+Relu)─► y i8[1,4,8,8]
 *   ─copy (Reshape)─► yf i8[1,256] ─lut─► z ─dequantize─► out f32[1,256]
 * Returns the graph; *conv_node receives the conv's node id.
 */
static inline cs_graph *tg_conv_model(int *conv_node) {
  cs_graph *g = cs_graph_new("tiny_conv");
  int64_t xs[4] = {1, 3, 8, 8}, ys[4] = {1, 4, 8, 8}, fs[2] = {1, 256};
  int x = cs_graph_add_value(g, "input", CS_DTYPE_F32, 4, xs);
  int xq = cs_graph_add_value(g, "input_quantized", CS_DTYPE_I8, 4, xs);
  int y = cs_graph_add_value(g, "/conv/Conv_output_0", CS_DTYPE_I8, 4, ys);
  int yf = cs_graph_add_value(g, "/Reshape_output_0", CS_DTYPE_I8, 2, fs);
  int z = cs_graph_add_value(g, "/lut_output_0", CS_DTYPE_I8, 2, fs);
  int out = cs_graph_add_value(g, "output", CS_DTYPE_F32, 2, fs);
  tg_quantize(g, "input_QuantizeLinear", x, xq, 0.03125f, -3);

  int8_t w[4 * 3 * 3 * 3];
  for (int i = 0; i < 108; i++) w[i] = (int8_t)((i * 37) % 19 - 9);
  int32_t bias[4] = {100, -250, 0, 37};
  float mult[4] = {0.0123f, 0.00987f, 0.02f, 0.015625f};
  int64_t ws[4] = {4, 3, 3, 3}, bs[1] = {4};
  int in[4] = {xq, cs_graph_add_const(g, "conv.weight", CS_DTYPE_I8, 4, ws, w),
               cs_graph_add_const(g, "conv.bias", CS_DTYPE_I32, 1, bs, bias),
               cs_graph_add_const(g, "conv.requant", CS_DTYPE_F32, 1, bs, mult)};
  int c = tg_node(g, CS_OP_K_CONV2D_I8, "/conv/Conv", "/conv/Conv, /relu/Relu", 4, in, y);
  g->nodes[c].k.conv = (tidsp_conv2d_params){
      .n = 1, .c_in = 3, .h_in = 8, .w_in = 8, .c_out = 4, .h_out = 8, .w_out = 8, .k_h = 3, .k_w = 3,
      .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1, .groups = 1,
      .x_zp = -3, .w_zp = 0,
      .rq = {.kind = TIDSP_REQUANT_FLOAT, .per_channel = 1, .out_zp = -5, .out_min = -5, .out_max = 127}};
  if (conv_node) *conv_node = c;
  tg_copy(g, "/Reshape", y, yf);
  tg_lut(g, "/lut", yf, z);
  tg_dequantize(g, "output_DequantizeLinear", z, out, 0.05f, 2);
  tg_set_io(g, 1, &x, 1, &out);
  return g;
}

/* ---- processes and files ---------------------------------------------- */

/* Run a shell command; its exit status (or -1). */
static inline int tg_system(const char *cmd) {
  int st = system(cmd);
  if (st == -1 || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

static inline char *tg_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = '\0';
  if (size) *size = (size_t)n;
  fclose(f);
  return buf;
}

static inline int tg_file_contains(const char *path, const char *needle) {
  char *s = tg_read_file(path, NULL);
  int found = s && strstr(s, needle) != NULL;
  free(s);
  return found;
}

/* The repository root, from this file's path (CMake passes absolute paths). */
static inline void tg_source_dir(char *buf, size_t n) {
  snprintf(buf, n, "%s", __FILE__);
  char *p = strstr(buf, "/tests/unit/");
  if (p) *p = '\0';
  else snprintf(buf, n, ".");
}

/* The runtime library next to this test binary (build/bin → build/lib). */
static inline void tg_tidsp_lib(char *buf, size_t n) {
  const char *env = getenv("CS_TIDSP_LIB");
  if (env && *env) {
    snprintf(buf, n, "%s", env);
    return;
  }
  char exe[3800];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) {
    snprintf(buf, n, "libtidsp.a");
    return;
  }
  exe[len] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  snprintf(buf, n, "%s/../lib/libtidsp.a", exe);
}

static inline char *tg_temp_dir(const char *tag) {
  char *d = malloc(256);
  snprintf(d, 256, "/tmp/cs_%s_XXXXXX", tag);
  if (!mkdtemp(d)) {
    free(d);
    return NULL;
  }
  return d;
}

/* CS_KEEP_TMP=1 keeps the generated files for a look. */
static inline void tg_remove_dir(const char *dir) {
  if (getenv("CS_KEEP_TMP")) {
    fprintf(stderr, "kept %s\n", dir);
    return;
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  (void)tg_system(cmd);
}

#endif
