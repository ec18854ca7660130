/*
 * .npy reader and writer. The header is a Python dict literal, e.g.
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }
 * parsed here by a small tokenizer that accepts exactly that grammar:
 *   dict  := '{' (key ':' value ',')* [key ':' value] '}'
 *   value := string | True | False | '(' [int (',' int)* [',']] ')'
 */
#define _POSIX_C_SOURCE 200809L

#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cstatic/tidsp.h"

/* Little-endian numeric dtypes a .npy may hold. dtype 0: readable, but no
 * model tensor has it (the caller reports the mismatch by name). */
static const struct {
  const char *descr;
  int32_t dtype;
  size_t size;
  const char *name;
} descrs[] = {
    /* numpy has no bfloat16: its 16 bits as uint16, as onnx.numpy_helper
     * gives them (written so; a '<u2' file reads as uint16, the last row
     * of its descr, and cmd_run.c lets a bf16 input take it). */
    {"<u2", TIDSP_DTYPE_BF16, 2, "uint16 (bfloat16 bits)"},
    {"<f4", TIDSP_DTYPE_F32, 4, "float32"}, {"|i1", TIDSP_DTYPE_I8, 1, "int8"},
    {"<i1", TIDSP_DTYPE_I8, 1, "int8"},     {"|u1", TIDSP_DTYPE_U8, 1, "uint8"},
    {"<u1", TIDSP_DTYPE_U8, 1, "uint8"},    {"<i2", TIDSP_DTYPE_I16, 2, "int16"},
    {"<i4", TIDSP_DTYPE_I32, 4, "int32"},   {"<i8", TIDSP_DTYPE_I64, 8, "int64"},
    {"<f2", TIDSP_DTYPE_F16, 2, "float16"}, {"<f8", TIDSP_DTYPE_F64, 8, "float64"},
    {"<u2", TIDSP_DTYPE_U16, 2, "uint16"},  {"<u4", TIDSP_DTYPE_U32, 4, "uint32"},
    {"<u8", TIDSP_DTYPE_U64, 8, "uint64"},  {"|b1", TIDSP_DTYPE_BOOL, 1, "bool"},
};

const char *cs_npy_dtype_name(int32_t dtype) {
  switch (dtype) {
    case TIDSP_DTYPE_F32: return "float32";
    case TIDSP_DTYPE_BOOL: return "bool";
    case TIDSP_DTYPE_I8: return "int8";
    case TIDSP_DTYPE_U8: return "uint8";
    case TIDSP_DTYPE_I16: return "int16";
    case TIDSP_DTYPE_U16: return "uint16";
    case TIDSP_DTYPE_I32: return "int32";
    case TIDSP_DTYPE_I64: return "int64";
    case TIDSP_DTYPE_F16: return "float16";
    case TIDSP_DTYPE_BF16: return "uint16 (bfloat16 bits)";
    case TIDSP_DTYPE_F64: return "float64";
    case TIDSP_DTYPE_U32: return "uint32";
    case TIDSP_DTYPE_U64: return "uint64";
    default: return "?";
  }
}

static size_t dtype_size(int32_t dtype) {
  for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
    if (descrs[i].dtype == dtype && dtype) return descrs[i].size;
  return 0;
}

/* ---- header tokenizer ------------------------------------------------ */

typedef struct hdr {
  const char *p, *end;
  const char *path;
} hdr;

static void skip_ws(hdr *h) {
  while (h->p < h->end && isspace((unsigned char)*h->p)) h->p++;
}

static int accept(hdr *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return 1;
  }
  return 0;
}

static cs_status bad_header(hdr *h, const char *what) {
  return cs_error(CS_ERR_PARSE, "%s: bad .npy header: %s", h->path, what);
}

/* A quoted string into buf (no escapes: npy headers never need them). */
static int string(hdr *h, char *buf, size_t n) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return 0;
  char q = *h->p++;
  size_t len = 0;
  while (h->p < h->end && *h->p != q) {
    if (len + 1 < n) buf[len++] = *h->p;
    h->p++;
  }
  if (h->p >= h->end) return 0;
  h->p++;
  buf[len] = '\0';
  return 1;
}

static int word(hdr *h, const char *w) {
  skip_ws(h);
  size_t n = strlen(w);
  if ((size_t)(h->end - h->p) >= n && !strncmp(h->p, w, n)) {
    h->p += n;
    return 1;
  }
  return 0;
}

static cs_status parse_shape(hdr *h, cs_npy *a) {
  if (!accept(h, '(')) return bad_header(h, "'shape' is not a tuple");
  a->rank = 0;
  for (;;) {
    if (accept(h, ')')) return CS_OK;
    skip_ws(h);
    if (h->p >= h->end || !isdigit((unsigned char)*h->p))
      return bad_header(h, "'shape' has a non-integer entry");
    errno = 0;
    char *endp;
    long long v = strtoll(h->p, &endp, 10);
    if (errno || endp > h->end) return bad_header(h, "'shape' entry out of range");
    h->p = endp;
    if (a->rank >= CS_NPY_MAX_RANK) return bad_header(h, "'shape' has too many dimensions");
    a->shape[a->rank++] = v;
    if (!accept(h, ',')) {
      if (accept(h, ')')) return CS_OK;
      return bad_header(h, "'shape' tuple is not closed");
    }
  }
}

static cs_status parse_header(hdr *h, cs_npy *a, size_t *item) {
  int have_descr = 0, have_order = 0, have_shape = 0;
  if (!accept(h, '{')) return bad_header(h, "no '{'");
  for (;;) {
    if (accept(h, '}')) break;
    char key[32];
    if (!string(h, key, sizeof key)) return bad_header(h, "expected a quoted key");
    if (!accept(h, ':')) return bad_header(h, "expected ':'");
    if (!strcmp(key, "descr")) {
      char d[64];
      skip_ws(h);
      if (h->p < h->end && *h->p == '[')
        return cs_error(CS_ERR_UNSUPPORTED, "%s: structured arrays are not supported", h->path);
      if (!string(h, d, sizeof d)) return bad_header(h, "'descr' is not a string");
      if (d[0] == '>' || (d[0] == '!' ))
        return cs_error(CS_ERR_UNSUPPORTED, "%s: big-endian data ('%s') is not supported", h->path, d);
      if (!strcmp(d, "|O") || !strcmp(d, "O") || !strcmp(d, "<O"))
        return cs_error(CS_ERR_UNSUPPORTED, "%s: object arrays are not supported", h->path);
      a->dtype = 0;
      *item = 0;
      for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
        if (!strcmp(d, descrs[i].descr)) {
          a->dtype = descrs[i].dtype;
          *item = descrs[i].size;
          a->dtype_name = descrs[i].name;
        }
      if (!*item)
        return cs_error(CS_ERR_UNSUPPORTED,
                        "%s: dtype '%s' is not supported (float32, int8, uint8, int16, int32, int64)",
                        h->path, d);
      have_descr = 1;
    } else if (!strcmp(key, "fortran_order")) {
      if (word(h, "True"))
        return cs_error(CS_ERR_UNSUPPORTED, "%s: Fortran-order arrays are not supported (save with C order)",
                        h->path);
      if (!word(h, "False")) return bad_header(h, "'fortran_order' is not True or False");
      have_order = 1;
    } else if (!strcmp(key, "shape")) {
      cs_status st = parse_shape(h, a);
      if (st != CS_OK) return st;
      have_shape = 1;
    } else {
      return bad_header(h, "unknown key");
    }
    if (!accept(h, ',')) {
      if (accept(h, '}')) break;
      return bad_header(h, "expected ',' or '}'");
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return bad_header(h, "missing 'descr', 'fortran_order' or 'shape'");
  return CS_OK;
}

static uint32_t le(const unsigned char *p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static const char *human(uint64_t n, char *buf, size_t size) { return cs_bytes_text(n, buf, size); }

cs_status cs_npy_read_stream(FILE *f, const char *path, uint64_t file_size, size_t max_bytes, cs_npy *out) {
  memset(out, 0, sizeof *out);
  unsigned char pre[12];
  size_t got = fread(pre, 1, sizeof pre, f);
  cs_status st = CS_OK;
  char *text = NULL;
  char a[32], b[32];
  if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    st = cs_error(CS_ERR_PARSE, "%s: not a .npy file (bad magic)", path);
    goto done;
  }
  int major = pre[6];
  if (major < 1 || major > 3) {
    st = cs_error(CS_ERR_UNSUPPORTED, "%s: .npy format version %d.%d is not supported", path, major, pre[7]);
    goto done;
  }
  size_t prefix = major == 1 ? 10 : 12;
  if (got < prefix) {
    st = cs_error(CS_ERR_PARSE, "%s: truncated .npy header", path);
    goto done;
  }
  size_t hlen = major == 1 ? le(pre + 8, 2) : le(pre + 8, 4);
  /* The header must be in the file before it is read into memory. */
  if (hlen > (1u << 24) || file_size < prefix || hlen > file_size - prefix) {
    st = cs_error(CS_ERR_PARSE, "%s: .npy header length %zu does not fit in the file (%llu bytes)", path, hlen,
                  (unsigned long long)file_size);
    goto done;
  }
  text = malloc(hlen + 1);
  if (!text) {
    st = cs_error(CS_ERR_NOMEM, "out of memory reading %s", path);
    goto done;
  }
  if (fseek(f, (long)prefix, SEEK_SET) != 0 || fread(text, 1, hlen, f) != hlen) {
    st = cs_error(CS_ERR_PARSE, "%s: truncated .npy header", path);
    goto done;
  }
  text[hlen] = '\0';
  hdr h = {text, text + hlen, path};
  size_t item = 0;
  st = parse_header(&h, out, &item);
  if (st != CS_OK) goto done;
  int64_t numel = 1;
  for (int i = 0; i < out->rank; i++) {
    if (out->shape[i] < 0 || (out->shape[i] > 0 && numel > INT64_MAX / 16 / out->shape[i])) {
      st = cs_error(CS_ERR_PARSE, "%s: the header's shape holds more than 2^59 elements (dim %d is %lld)", path, i,
                    (long long)out->shape[i]);
      goto done;
    }
    numel *= out->shape[i];
  }
  out->numel = numel;
  uint64_t nbytes = (uint64_t)numel * item, have = file_size - prefix - hlen;
  /* Sizes before memory: the data the header declares must be in the
   * file, and within the memory limit. */
  if (nbytes != have) {
    st = cs_error(CS_ERR_PARSE,
                  "%s: the header declares %s data of %lld elements (%s, %llu bytes) but the file holds %llu "
                  "bytes after the header",
                  path, out->dtype_name, (long long)numel, human(nbytes, a, sizeof a), (unsigned long long)nbytes,
                  (unsigned long long)have);
    goto done;
  }
  if (nbytes > max_bytes || nbytes > SIZE_MAX) {
    st = cs_error(CS_ERR_NOMEM, "%s: its %s of data exceed the memory limit of %s (--max-memory)", path,
                  human(nbytes, a, sizeof a), human(max_bytes, b, sizeof b));
    goto done;
  }
  out->nbytes = (size_t)nbytes;
  if (posix_memalign(&out->data, 64, out->nbytes ? out->nbytes : 1) != 0) {
    out->data = NULL;
    st = cs_error(CS_ERR_NOMEM, "out of memory reading %s (%zu bytes)", path, out->nbytes);
    goto done;
  }
  size_t n = fread(out->data, 1, out->nbytes, f);
  if (n != out->nbytes) {
    st = cs_error(CS_ERR_PARSE, "%s: truncated data: expected %zu bytes for shape, found %zu", path,
                  out->nbytes, n);
    goto done;
  }
  if (fgetc(f) != EOF) {
    st = cs_error(CS_ERR_PARSE, "%s: unexpected bytes after the array data", path);
    goto done;
  }
done:
  free(text);
  if (st != CS_OK) cs_npy_free(out);
  return st;
}

cs_status cs_npy_read(const char *path, size_t max_bytes, cs_npy *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) return cs_error(CS_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return cs_error(CS_ERR_IO, "%s: not a regular file", path);
  }
  cs_status s = cs_npy_read_stream(f, path, (uint64_t)st.st_size, max_bytes, out);
  fclose(f);
  return s;
}

void cs_npy_free(cs_npy *a) {
  free(a->data);
  a->data = NULL;
}

cs_status cs_npy_write(const char *path, int32_t dtype, int rank, const int64_t *shape,
                       const void *data) {
  const char *descr = NULL;
  for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
    if (descrs[i].dtype == dtype && dtype && !descr) descr = descrs[i].descr;
  if (!descr) return cs_error(CS_ERR_UNSUPPORTED, "%s: cannot write dtype %d as .npy", path, dtype);
  char dict[1024];
  int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  int64_t numel = 1;
  for (int i = 0; i < rank; i++) {
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%lld%s", (long long)shape[i],
                    rank == 1 ? "," : i + 1 < rank ? ", " : "");
    numel *= shape[i];
    if ((size_t)len >= sizeof dict - 64) return cs_error(CS_ERR_UNSUPPORTED, "%s: rank too large", path);
  }
  len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
  /* Pad with spaces so that the data starts at a multiple of 64 bytes. */
  size_t total = 10 + (size_t)len + 1;
  size_t pad = (64 - total % 64) % 64;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  size_t hlen = (size_t)len + pad + 1;
  pre[8] = (unsigned char)(hlen & 0xff);
  pre[9] = (unsigned char)(hlen >> 8);
  FILE *f = fopen(path, "wb");
  if (!f) return cs_error(CS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  size_t nbytes = (size_t)numel * dtype_size(dtype);
  int bad = fwrite(pre, 1, 10, f) != 10 || fwrite(dict, 1, (size_t)len, f) != (size_t)len;
  for (size_t i = 0; i < pad && !bad; i++) bad = fputc(' ', f) == EOF;
  if (!bad) bad = fputc('\n', f) == EOF;
  if (!bad && nbytes) bad = fwrite(data, 1, nbytes, f) != nbytes;
  if (fclose(f) != 0) bad = 1;
  if (bad) return cs_error(CS_ERR_IO, "cannot write %s (disk full?)", path);
  return CS_OK;
}
