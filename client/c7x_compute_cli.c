/*
 * c7x_compute — the host CLI of the C7x firmware (links libc7x_arm_runtime).
 *
 *   c7x_compute ping | status
 *   c7x_compute load FILE                 prints "handle N" (64 bits, decimal)
 *   c7x_compute info HANDLE
 *   c7x_compute infer HANDLE MODEL_ID --input in.bin [--input ...]
 *                     --output out.bin [--output ...] [--dtype T] [--shape S]
 *                     [--repeat N] [--profile] [--profile-csv F]
 *   c7x_compute profile HANDLE [--profile-csv F]
 *   c7x_compute unload HANDLE
 *   c7x_compute fault                     why the firmware last restarted
 *
 * Handles live in the firmware, so load, infer and unload may be separate
 * invocations (a handle is a capability: whoever has the number may use
 * the module). Inputs and outputs are raw little-endian bytes; an input's
 * shape and dtype default to the module's (DYN_INFO), --shape
 * "1,3,224,224" (inputs separated by ';') and --dtype override them and the
 * firmware checks what is sent.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c7x_client.h"

enum { MAX_IO = C7X_MAX_TENSORS, MAX_OUT = C7X_MAX_TENSORS };

static const char usage[] =
    "usage: c7x_compute COMMAND ...\n"
    "  ping                      check the firmware answers\n"
    "  status                    firmware counters and memory\n"
    "  load FILE                 load a module ('cstatic compile --emit=module'); prints its handle\n"
    "  info HANDLE               the module's input and output tensors\n"
    "  infer HANDLE MODEL_ID -i in.bin [-i ...] -o out.bin [-o ...]\n"
    "        [-d|--dtype float32|float16|int64|int32|int16|int8|uint16|uint8]\n"
    "        [-s|--shape 1,3,224,224[;...]] [--repeat N] [--profile] [--profile-csv F]\n"
    "                            --profile: per-layer times of the (last) inference, in C7x\n"
    "                            cycles and ms, the table of 'cstatic run --profile' (compile\n"
    "                            with -profile-layers=1); --profile-csv F: the same as CSV\n"
    "  profile HANDLE [--profile-csv F]\n"
    "                            the per-layer table of the module's last inference\n"
    "  unload HANDLE             unload a module\n"
    "  fault                     why the firmware last restarted (crash, timeout, reset)\n"
    "The firmware's socket is $C7X_FW_SOCKET (default /tmp/c7x_fw.sock); a request\n"
    "unanswered after $C7X_TIMEOUT_MS ms (default: no limit) resets the firmware.\n";

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("c7x_compute: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

static int fw_fail(c7x_client *c, const char *what, int s) {
  return fail("%s: %s (%s, status %d)", what, c7x_client_last_error(c), c7x_strerror(s), s);
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  if (!s || !*s || *s == '-' || *s == '+') return -1;
  int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  unsigned long long v = strtoull(s, &end, hex ? 16 : 10);
  if (errno || *end) return -1;
  *out = (uint64_t)v;
  return 0;
}

static int parse_u32(const char *s, uint32_t *out) {
  uint64_t v;
  if (parse_u64(s, &v) || v > UINT32_MAX) return -1;
  *out = (uint32_t)v;
  return 0;
}

/* A handle: decimal as `load` prints it, or 0x-prefixed hexadecimal. */
static int parse_handle(const char *s, uint64_t *out) { return parse_u64(s, out); }

static const struct {
  const char *name;
  int32_t code, bits;
} dtypes[] = {{"float32", 2, 32}, {"float16", 2, 16}, {"int64", 0, 64}, {"int32", 0, 32},
              {"int16", 0, 16},   {"int8", 0, 8},     {"uint16", 1, 16}, {"uint8", 1, 8}};

static const char *dtype_name(int32_t code, int32_t bits) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (dtypes[i].code == code && dtypes[i].bits == bits) return dtypes[i].name;
  return "?";
}

static void print_tensor(const char *kind, int i, const c7x_tensor_desc *d) {
  printf("%s %d: %s[", kind, i, dtype_name(d->dtype_code, d->dtype_bits));
  for (int k = 0; k < d->ndim; k++) printf("%s%lld", k ? "," : "", (long long)d->shape[k]);
  printf("] %zu bytes\n", d->data_size);
}

/* "1,3,224,224" → d->ndim, d->shape */
static int parse_shape(const char *s, size_t len, c7x_tensor_desc *d) {
  d->ndim = 0;
  const char *p = s, *end = s + len;
  while (p < end) {
    char *e;
    errno = 0;
    long long v = strtoll(p, &e, 10);
    if (e == p || errno || v < 0 || d->ndim == C7X_MAX_NDIM || e > end) return -1;
    d->shape[d->ndim++] = v;
    p = e;
    if (p < end && *p == ',') p++;
    else if (p < end) return -1;
  }
  return 0;
}

static int read_file_into(const char *path, void *dst, size_t want) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail("cannot read %s: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (sz < 0 || (size_t)sz != want) {
    fclose(f);
    return fail("%s holds %ld bytes, the input needs %zu", path, sz, want);
  }
  size_t got = fread(dst, 1, want, f);
  fclose(f);
  if (got != want) return fail("reading %s: short read", path);
  return 0;
}

/* The module's last inference, per layer: the table on stdout (table)
 * and/or CSV into csv_path. */
static int report_profile(c7x_client *c, uint64_t handle, int table, const char *csv_path) {
  c7x_profile info;
  int n = 0;
  int s = c7x_client_profile(c, handle, &info, NULL, &n); /* the count first */
  if (s != C7X_OK) return fw_fail(c, "profile", s);
  if (info.runs == 0) return fail("profile: handle %llu has not run an inference yet", (unsigned long long)handle);
  c7x_profile_row *rows = calloc(info.num_layers ? info.num_layers : 1, sizeof *rows);
  if (!rows) return fail("out of memory for %u profile rows", info.num_layers);
  n = (int)info.num_layers;
  int rc = 0;
  s = c7x_client_profile(c, handle, &info, rows, &n);
  if (s != C7X_OK) rc = fw_fail(c, "profile", s);
  for (int csv = 0; csv < 2 && rc == 0; csv++) {
    if (csv ? !csv_path : !table) continue;
    size_t need = c7x_profile_format(&info, rows, n, csv, NULL, 0);
    char *text = malloc(need + 1);
    if (!text) {
      rc = fail("out of memory for the profile text");
      break;
    }
    c7x_profile_format(&info, rows, n, csv, text, need + 1);
    if (!csv) {
      fputs(text, stdout);
    } else {
      FILE *f = fopen(csv_path, "wb");
      int bad = !f || fputs(text, f) < 0;
      if (f && fclose(f) != 0) bad = 1;
      if (bad) rc = fail("cannot write %s: %s", csv_path, strerror(errno));
    }
    free(text);
  }
  free(rows);
  return rc;
}

static int cmd_profile(c7x_client *c, int argc, char **argv) {
  uint64_t handle;
  const char *csv = NULL;
  if (argc < 3 || parse_handle(argv[2], &handle)) return fail("usage: c7x_compute profile HANDLE [--profile-csv F]");
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--profile-csv") && i + 1 < argc) csv = argv[++i];
    else return fail("profile: unknown option %s", argv[i]);
  }
  return report_profile(c, handle, 1, csv);
}

static int cmd_infer(c7x_client *c, int argc, char **argv) {
  uint64_t handle;
  uint32_t model_id;
  if (argc < 4 || parse_handle(argv[2], &handle) || parse_u32(argv[3], &model_id))
    return fail("usage: c7x_compute infer HANDLE MODEL_ID --input in.bin --output out.bin");
  const char *in_paths[MAX_IO], *out_paths[MAX_OUT], *dtype = NULL, *shape = NULL;
  int n_in = 0, n_outp = 0, profile = 0;
  const char *profile_csv = NULL;
  uint32_t repeat = 0;
  for (int i = 4; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--profile")) {
      profile = 1;
      continue;
    }
    if (!v) return fail("%s needs a value", a);
    if (!strcmp(a, "-i") || !strcmp(a, "--input")) {
      if (n_in == MAX_IO) return fail("more than %d inputs", MAX_IO);
      in_paths[n_in++] = v;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (n_outp == MAX_OUT) return fail("more than %d outputs", MAX_OUT);
      out_paths[n_outp++] = v;
    } else if (!strcmp(a, "-d") || !strcmp(a, "--dtype")) {
      dtype = v;
    } else if (!strcmp(a, "-s") || !strcmp(a, "--shape")) {
      shape = v;
    } else if (!strcmp(a, "--profile-csv")) {
      profile_csv = v;
    } else if (!strcmp(a, "--repeat")) {
      if (parse_u32(v, &repeat) || repeat < 1 || repeat > C7X_INFER_REPEAT_MASK)
        return fail("--repeat needs a count in [1, %u]", C7X_INFER_REPEAT_MASK);
    } else {
      return fail("unknown option %s", a);
    }
    i++;
  }
  c7x_tensor_desc want_in[MAX_IO], want_out[MAX_OUT], in[MAX_IO], out[MAX_OUT];
  int wn_in = MAX_IO, wn_out = MAX_OUT;
  int s = c7x_client_dyn_info(c, handle, want_in, &wn_in, want_out, &wn_out);
  if (s != C7X_OK) return fw_fail(c, "info", s);
  if (n_in != wn_in)
    return fail("module %llu takes %d input%s, got %d --input", (unsigned long long)handle, wn_in, wn_in == 1 ? "" : "s",
                n_in);
  if (n_outp != wn_out)
    return fail("module %llu has %d output%s, got %d --output", (unsigned long long)handle, wn_out,
                wn_out == 1 ? "" : "s", n_outp);
  const char *sh = shape;
  for (int i = 0; i < n_in; i++) {
    in[i] = want_in[i];
    if (dtype) {
      size_t k = 0;
      while (k < sizeof dtypes / sizeof dtypes[0] && strcmp(dtypes[k].name, dtype)) k++;
      if (k == sizeof dtypes / sizeof dtypes[0]) return fail("unknown --dtype %s", dtype);
      in[i].dtype_code = dtypes[k].code;
      in[i].dtype_bits = dtypes[k].bits;
    }
    if (sh) {
      const char *semi = strchr(sh, ';');
      size_t len = semi ? (size_t)(semi - sh) : strlen(sh);
      if (parse_shape(sh, len, &in[i]) != 0) return fail("--shape: cannot read the shape of input %d", i);
      sh = semi ? semi + 1 : NULL;
    } else if (shape) {
      return fail("--shape gives fewer shapes than the %d inputs", n_in);
    }
    size_t bytes = (size_t)in[i].dtype_bits / 8;
    for (int k = 0; k < in[i].ndim; k++) bytes *= (size_t)in[i].shape[k];
    in[i].data_size = bytes;
    /* Read straight into the staging buffer: the client sends it as is. */
    in[i].data = c7x_client_create_input(c, bytes);
    if (!in[i].data) return fail("input %d: %s", i, c7x_client_last_error(c));
    if (read_file_into(in_paths[i], in[i].data, bytes)) return 1;
  }
  int n_out = MAX_OUT;
  uint64_t cycles = 0;
  s = c7x_client_infer_flags(c, handle, model_id, in, n_in, out, &n_out, &cycles, repeat);
  if (s != C7X_OK) return fw_fail(c, "infer", s);
  for (int j = 0; j < n_out; j++) {
    FILE *f = fopen(out_paths[j], "wb");
    if (!f || fwrite(out[j].data, 1, out[j].data_size, f) != out[j].data_size) {
      if (f) fclose(f);
      return fail("cannot write %s: %s", out_paths[j], strerror(errno));
    }
    if (fclose(f) != 0) return fail("cannot write %s: %s", out_paths[j], strerror(errno));
    print_tensor("output", j, &out[j]);
  }
  printf("cycles: %llu\n", (unsigned long long)cycles);
  if (profile || profile_csv) return report_profile(c, handle, profile, profile_csv);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "ping") && strcmp(cmd, "status") && strcmp(cmd, "load") && strcmp(cmd, "info") &&
      strcmp(cmd, "infer") && strcmp(cmd, "unload") && strcmp(cmd, "fault") && strcmp(cmd, "profile")) {
    fprintf(stderr, "c7x_compute: error: unknown command %s\n%s", cmd, usage);
    return 2;
  }
  c7x_client *c = c7x_client_open();
  if (!c) {
    int os = c7x_client_open_status();
    return fail("%s (%s, status %d)", c7x_client_open_error(), c7x_strerror(os), os);
  }
  int rc = 0, s;
  uint64_t handle;
  if (!strcmp(cmd, "ping")) {
    uint32_t version;
    uint64_t up;
    s = c7x_client_ping(c, &version, &up);
    rc = s != C7X_OK ? fw_fail(c, "ping", s) : (printf("pong: protocol %u, uptime %.3f s\n", version, (double)up * 1e-6), 0);
  } else if (!strcmp(cmd, "status")) {
    c7x_fw_status st;
    s = c7x_client_get_status(c, &st);
    if (s != C7X_OK) rc = fw_fail(c, "status", s);
    else
      printf("protocol %u, uptime %.3f s, %u modules loaded, %llu requests ok, %llu failed\n"
             "DDR heap %llu of %llu bytes free, L2 %llu of %llu bytes free\n",
             st.version, (double)st.uptime_us * 1e-6, st.loaded_modules, (unsigned long long)st.completed,
             (unsigned long long)st.failed, (unsigned long long)st.ddr_heap_free,
             (unsigned long long)st.ddr_heap_size, (unsigned long long)st.l2_free, (unsigned long long)st.l2_size);
  } else if (!strcmp(cmd, "load")) {
    if (argc != 3) rc = fail("usage: c7x_compute load FILE");
    else if ((s = c7x_client_dyn_load(c, argv[2], &handle)) != C7X_OK) rc = fw_fail(c, argv[2], s);
    else printf("handle %llu\n", (unsigned long long)handle);
  } else if (!strcmp(cmd, "unload")) {
    if (argc != 3 || parse_handle(argv[2], &handle)) rc = fail("usage: c7x_compute unload HANDLE");
    else if ((s = c7x_client_dyn_unload(c, handle)) != C7X_OK) rc = fw_fail(c, "unload", s);
    else printf("unloaded %llu\n", (unsigned long long)handle);
  } else if (!strcmp(cmd, "fault")) {
    uint32_t restarts;
    int32_t kind;
    char text[C7X_MSG_MAX];
    s = c7x_client_get_fault(c, &restarts, &kind, text, sizeof text);
    if (s != C7X_OK) rc = fw_fail(c, "fault", s);
    else if (restarts == 0) printf("restarts 0\n");
    else printf("restarts %u: %s\n", restarts, text);
  } else if (!strcmp(cmd, "info")) {
    c7x_tensor_desc in[MAX_IO], out[MAX_OUT];
    int ni = MAX_IO, no = MAX_OUT;
    if (argc != 3 || parse_handle(argv[2], &handle)) rc = fail("usage: c7x_compute info HANDLE");
    else if ((s = c7x_client_dyn_info(c, handle, in, &ni, out, &no)) != C7X_OK) rc = fw_fail(c, "info", s);
    else {
      for (int i = 0; i < ni; i++) print_tensor("input", i, &in[i]);
      for (int j = 0; j < no; j++) print_tensor("output", j, &out[j]);
    }
  } else if (!strcmp(cmd, "profile")) {
    rc = cmd_profile(c, argc, argv);
  } else {
    rc = cmd_infer(c, argc, argv);
  }
  c7x_client_close(c);
  return rc;
}
