/*
 * test_frontend_errors.c — every way a model file can be wrong gives a
 * non-OK status and a one-line message naming the file and the problem,
 * never a crash: missing/empty/directory/truncated/random files, invalid
 * graphs, refused dtypes and opsets, unsupported ops (all listed in one
 * message), external data escaping its directory. Also `inspect`, which
 * must describe models the compiler refuses. Run from the repository root.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, open_memstream */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/onnx.h"
#include "unit.h"

#define DATA "tests/unit/data/"

static char tmpdir[] = "/tmp/cs_test_frontend_XXXXXX";

/* Load `path`; expect status `want` and a one-line message that names the
 * file and contains `needle`. */
static void expect_fail(const char *path, cs_status want, const char *needle,
                        int line) {
  cs_graph *g = (cs_graph *)0x1;
  cs_status st = cs_onnx_load(path, NULL, &g);
  const char *msg = cs_error_message();
  int ok = st == want && g == NULL && strstr(msg, path) == msg &&
           strstr(msg, needle) && !strchr(msg, '\n');
  if (ok) {
    unit_passed++;
  } else {
    unit_failed++;
    fprintf(stderr, "%s:%d: %s: expected %s with '%s', got %s: '%s'\n",
            __FILE__, line, path, cs_status_str(want), needle,
            cs_status_str(st), msg);
  }
  if (st == CS_OK) cs_graph_free(g);
}
#define EXPECT_FAIL(path, st, needle) expect_fail(path, st, needle, __LINE__)

static char *tmp_path(const char *name) {
  static char buf[4][256];
  static int k;
  char *b = buf[k++ & 3];
  snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
  return b;
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  if (n) fwrite(data, 1, n, f);
  fclose(f);
}

static unsigned char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)len);
  *n = fread(buf, 1, (size_t)len, f);
  fclose(f);
  return buf;
}

static void test_bad_files(void) {
  EXPECT_FAIL(DATA "no_such_model.onnx", CS_ERR_IO, "No such file");
  EXPECT_FAIL(DATA, CS_ERR_IO, "is a directory");
  char *empty = tmp_path("empty.onnx");
  write_file(empty, "", 0);
  EXPECT_FAIL(empty, CS_ERR_PARSE, "empty file");

  /* Random bytes, several sizes (a fixed LCG: reproducible). */
  uint32_t seed = 12345;
  for (int size = 1; size <= 4096; size *= 4) {
    unsigned char *b = malloc((size_t)size);
    for (int i = 0; i < size; i++) {
      seed = seed * 1664525u + 1013904223u;
      b[i] = (unsigned char)(seed >> 24);
    }
    char *p = tmp_path("random.onnx");
    write_file(p, b, (size_t)size);
    EXPECT_FAIL(p, CS_ERR_PARSE, "not a valid ONNX model");
    free(b);
  }

  /* Well-formed protobuf that is not a model: an unknown field only, and
   * an ir_version without a graph. */
  char *p = tmp_path("nomodel.onnx");
  write_file(p, "\x50\x01", 2);
  EXPECT_FAIL(p, CS_ERR_PARSE, "missing or invalid ir_version");
  write_file(p, "\x08\x08", 2);
  EXPECT_FAIL(p, CS_ERR_PARSE, "no graph");

  /* Every proper prefix of a valid model is refused, never a crash. */
  size_t n = 0;
  unsigned char *model = read_all(DATA "m_conv_qdq.onnx", &n);
  CHECK(model && n > 100);
  int refused = 0;
  char *tp = tmp_path("truncated.onnx");
  for (size_t len = 1; model && len < n; len++) {
    write_file(tp, model, len);
    cs_graph *g = NULL;
    cs_status st = cs_onnx_load(tp, NULL, &g);
    const char *msg = cs_error_message();
    if (st != CS_OK && !g && strstr(msg, tp) == msg && !strchr(msg, '\n'))
      refused++;
    else if (st == CS_OK)
      cs_graph_free(g);
  }
  CHECK_MSG(refused == (int)n - 1, "%d of %zu prefixes refused", refused, n - 1);
  /* Truncated in the middle of a tensor: the parser's own message. */
  write_file(tp, model, n / 2);
  EXPECT_FAIL(tp, CS_ERR_PARSE, "truncated or corrupt");
  /* The whole file loads (the loop above did not just fail everything). */
  write_file(tp, model, n);
  cs_graph *g = NULL;
  CHECK(cs_onnx_load(tp, NULL, &g) == CS_OK);
  cs_graph_free(g);
  free(model);
}

static void test_bad_graphs(void) {
  EXPECT_FAIL(DATA "m_bad_dangling.onnx", CS_ERR_INVALID,
              "node 'r1' (Relu): input 'nowhere' is not produced by any node");
  EXPECT_FAIL(DATA "m_bad_cycle.onnx", CS_ERR_INVALID,
              "the graph has a cycle through node 'r");
  EXPECT_FAIL(DATA "m_bad_dup_output.onnx", CS_ERR_INVALID,
              "tensor 'y' is produced by two nodes: 'r1' (Relu) and 'r2' (Relu)");
  EXPECT_FAIL(DATA "m_bad_opset.onnx", CS_ERR_UNSUPPORTED,
              "opset 26 of the default ONNX domain is not supported (supported: 1 to 25); convert the model "
              "with ONNX's version converter: python -c \"import onnx; from onnx import version_converter; "
              "onnx.save(version_converter.convert_version(onnx.load('" DATA "m_bad_opset.onnx'), 25), "
              "'model_opset25.onnx')\"");
  EXPECT_FAIL(DATA "m_bad_out_shape.onnx", CS_ERR_INVALID,
              "graph output 'y' is declared with shape [1,5] but its inferred shape is [1,4]");
  EXPECT_FAIL(DATA "m_bad_float16.onnx", CS_ERR_UNSUPPORTED,
              "node 'r1' (Relu): input 'x' has dtype f16, which this op does not take");
  EXPECT_FAIL(DATA "m_bad_double.onnx", CS_ERR_INVALID,
              "node 'add' (Add): inputs 'x' (f32) and 'w' (f64) must have the same dtype");
  EXPECT_FAIL(DATA "m_bad_reshape_runtime.onnx", CS_ERR_UNSUPPORTED,
              "node 'reshape_rt' (Reshape): input 1 's' (shape) must be a constant");
  EXPECT_FAIL(DATA "m_bad_reshape_computed.onnx", CS_ERR_UNSUPPORTED,
              "computed at runtime by node 'id_shape' (Identity)");
  EXPECT_FAIL(DATA "m_bad_raw_size.onnx", CS_ERR_INVALID,
              "tensor 'w': raw_data has 10 bytes but f32[4] needs 16");
  EXPECT_FAIL(DATA "m_bad_neg_dim.onnx", CS_ERR_INVALID, "tensor 'w': dim 0 is -3");
  EXPECT_FAIL(DATA "m_bad_rank.onnx", CS_ERR_UNSUPPORTED,
              "graph input 'x': rank 9 exceeds 6");
  EXPECT_FAIL(DATA "m_bad_conv_group.onnx", CS_ERR_INVALID,
              "node 'conv_bad_group' (Conv): group 3 does not fit input channels 4");
  EXPECT_FAIL(DATA "m_bad_pool_pad.onnx", CS_ERR_INVALID,
              "node 'pool_pad' (MaxPool): pad 2 on spatial axis 0 is not smaller than the kernel");
  EXPECT_FAIL(DATA "m_bad_attr_graph.onnx", CS_ERR_UNSUPPORTED,
              "attribute 'body' has type GRAPH");
  EXPECT_FAIL(DATA "m_bad_float_axis.onnx", CS_ERR_INVALID,
              "node 'cat_float_axis' (Concat): attribute 'axis' has type FLOAT; ONNX defines it as integers");
  EXPECT_FAIL(DATA "m_bad_axes_attr18.onnx", CS_ERR_INVALID,
              "'axes' is an input since opset 18");
  EXPECT_FAIL(DATA "m_bad_int32_range.onnx", CS_ERR_INVALID,
              "tensor 'w': int32_data[1] = 300 is out of range for i8");
  EXPECT_FAIL(DATA "m_bad_scale_zero.onnx", CS_ERR_INVALID,
              "scale 's'[0] = 0; a scale must be positive and finite");
  EXPECT_FAIL(DATA "m_bad_split18.onnx", CS_ERR_INVALID,
              "node 'split18' (Split): needs a 'split' input or the num_outputs attribute");
  EXPECT_FAIL(DATA "m_bad_ms_domain.onnx", CS_ERR_UNSUPPORTED,
              "unsupported op: QuantizeLinear [domain com.microsoft] (node 'q_ms')");
}

static void test_external_data(void) {
  EXPECT_FAIL(DATA "m_bad_external_abs.onnx", CS_ERR_INVALID,
              "external data location '/etc/passwd' is an absolute path");
  EXPECT_FAIL(DATA "m_bad_external_escape.onnx", CS_ERR_INVALID,
              "external data location '../data/external.bin' leaves the model's directory");
  EXPECT_FAIL(DATA "m_bad_external_short.onnx", CS_ERR_INVALID,
              "has 32 bytes, too short for 16 bytes at offset 24");
  EXPECT_FAIL(DATA "m_bad_external_missing.onnx", CS_ERR_IO,
              "missing.bin': No such file or directory");
  /* The model's directory, not the working directory, anchors the path. */
  size_t n = 0;
  unsigned char *m = read_all(DATA "m_external.onnx", &n);
  char *moved = tmp_path("m_external.onnx");
  write_file(moved, m, n);
  EXPECT_FAIL(moved, CS_ERR_IO, "/external.bin': No such file");
  size_t nb = 0;
  unsigned char *bin = read_all(DATA "external.bin", &nb);
  write_file(tmp_path("external.bin"), bin, nb);
  cs_graph *g = NULL;
  CHECK_MSG(cs_onnx_load(moved, NULL, &g) == CS_OK, "%s", cs_error_message());
  cs_graph_free(g);
  unlink(tmp_path("external.bin"));
  unlink(moved);
  free(m);
  free(bin);
}

static void test_unsupported(void) {
  /* One message lists every unsupported node, by name (or index). */
  EXPECT_FAIL(DATA "m_unsupported.onnx", CS_ERR_UNSUPPORTED,
              ": unsupported ops: LSTM (node 'lstm_1'), Foo [domain com.x] "
              "(node 'n7'), Det (node '#3')");
}

static char *inspect_to_string(const char *path, cs_status *st) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  *st = cs_onnx_inspect(path, NULL, f);
  fclose(f);
  return buf;
}

static void test_inspect(void) {
  cs_status st;
  char *s = inspect_to_string(DATA "m_unsupported.onnx", &st);
  CHECK(st == CS_OK);
  CHECK_MSG(strstr(s, "opset: 17") != NULL, "%s", s);
  CHECK(strstr(s, "unsupported ops: LSTM (node 'lstm_1'), Foo [domain com.x] (node 'n7')"));
  CHECK(strstr(s, "ops: Det 1, LSTM 1, Relu 1, com.x:Foo 1"));
  CHECK(strstr(s, "inputs: 3") && strstr(s, "  x : f32[1,2,4]"));
  CHECK(strstr(s, "frontend: refused (unsupported ops)"));
  CHECK(strstr(s, "  d : f32 (unknown shape)"));
  free(s);

  s = inspect_to_string(DATA "m_conv_qdq.onnx", &st);
  CHECK(st == CS_OK);
  CHECK_MSG(strstr(s, "quantization: QDQ, 2 QuantizeLinear, 5 DequantizeLinear") != NULL, "%s", s);
  CHECK(strstr(s, "activations: u8"));
  CHECK(strstr(s, "weights: i8; per-axis: yes; int32 bias: yes"));
  CHECK(strstr(s, "  input : f32[N,3,9,9]"));
  CHECK(strstr(s, "  prob : f32[?,10]"));
  CHECK(strstr(s, "initializers: 14 ("));
  CHECK(strstr(s, "producer: make_models.py"));
  CHECK(strstr(s, "frontend: ok (14 nodes, all shapes inferred)"));
  CHECK(strstr(s, "unsupported ops: none"));
  free(s);

  s = inspect_to_string(DATA "m_qdq21.onnx", &st);
  CHECK(strstr(s, "activations: u8, i16") || strstr(s, "activations: i8, u8, i16"));
  free(s);

  s = inspect_to_string(DATA "m_bad_opset.onnx", &st);
  CHECK(st == CS_OK);
  CHECK(strstr(s, "opset: 26 (not supported: 1 to 25 are)"));
  CHECK(strstr(s, "frontend: refused: opset 26"));
  CHECK(strstr(s, "quantization: none (float model)"));
  free(s);

  s = inspect_to_string(DATA "no_such_model.onnx", &st);
  CHECK(st == CS_ERR_IO && strstr(cs_error_message(), "no_such_model.onnx: cannot open"));
  free(s);
}

int main(void) {
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_bad_files();
  test_bad_graphs();
  test_external_data();
  test_unsupported();
  test_inspect();
  unlink(tmp_path("empty.onnx"));
  unlink(tmp_path("random.onnx"));
  unlink(tmp_path("nomodel.onnx"));
  unlink(tmp_path("truncated.onnx"));
  rmdir(tmpdir);
  UNIT_MAIN_END();
}
