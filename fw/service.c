/*
 * The compute service: one request in, one response out (c7x_protocol.h).
 *
 * Every request is checked before it is used: its length against the
 * header and against what its type needs, its handle against the module
 * table, its descriptors against the shared windows and the model's
 * tensors. A failed check is an error response naming the thing.
 */
#define _GNU_SOURCE /* setitimer */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "cstatic/dma.h"
#include "fw.h"

typedef struct reply {
  uint8_t *buf;
  size_t len;
} reply;

static size_t finish(fw_state *st, reply *r, const c7x_msg_header *rq, int32_t status) {
  c7x_msg_header h;
  h.type = (rq ? rq->type : 0) | C7X_MSG_RESPONSE;
  h.seq = rq ? rq->seq : 0;
  h.len = (uint32_t)r->len;
  h.status = status;
  memcpy(r->buf, &h, sizeof h);
  /* RESET's refusals are counted beside a running request */
  __atomic_add_fetch(status == C7X_OK ? &st->completed : &st->failed, 1, __ATOMIC_RELAXED);
  return r->len;
}

/* An error response: the header and a NUL-terminated message. */
static size_t error_reply(fw_state *st, reply *r, const c7x_msg_header *rq, int32_t status,
                          const char *fmt, ...) {
  va_list ap;
  char *text = (char *)r->buf + sizeof(c7x_msg_header);
  size_t room = C7X_MSG_MAX - sizeof(c7x_msg_header);
  va_start(ap, fmt);
  int w = vsnprintf(text, room, fmt, ap);
  va_end(ap);
  if (w < 0) w = 0;
  size_t used = (size_t)w < room - 1 ? (size_t)w : room - 1;
  r->len = sizeof(c7x_msg_header) + used + 1;
  return finish(st, r, rq, status);
}

static void put(reply *r, const void *p, size_t n) {
  memcpy(r->buf + r->len, p, n);
  r->len += n;
}

/* ---- tensors -------------------------------------------------------------- */

static int wire_dtype(int32_t dtype, int32_t *code, int32_t *bits) {
  switch (dtype) {
    case TIDSP_DTYPE_F32: *code = TIDSP_DSP_CODE_FLOAT; *bits = 32; return 1;
    case TIDSP_DTYPE_I8: *code = TIDSP_DSP_CODE_INT; *bits = 8; return 1;
    case TIDSP_DTYPE_U8: *code = TIDSP_DSP_CODE_UINT; *bits = 8; return 1;
    case TIDSP_DTYPE_I16: *code = TIDSP_DSP_CODE_INT; *bits = 16; return 1;
    case TIDSP_DTYPE_U16: *code = TIDSP_DSP_CODE_UINT; *bits = 16; return 1;
    case TIDSP_DTYPE_I32: *code = TIDSP_DSP_CODE_INT; *bits = 32; return 1;
    case TIDSP_DTYPE_I64: *code = TIDSP_DSP_CODE_INT; *bits = 64; return 1;
    default: return 0;
  }
}

static void dtype_text(char *b, size_t n, int32_t code, int32_t bits) {
  const char *k = code == TIDSP_DSP_CODE_FLOAT ? "float" : code == TIDSP_DSP_CODE_UINT ? "uint"
                  : code == TIDSP_DSP_CODE_INT ? "int" : "code?";
  snprintf(b, n, "%s%d", k, (int)bits);
}

static void shape_text(char *b, size_t n, int32_t rank, const int64_t *shape) {
  size_t len = (size_t)snprintf(b, n, "[");
  for (int32_t i = 0; i < rank && i < C7X_MAX_NDIM && len < n; i++)
    len += (size_t)snprintf(b + len, n - len, "%s%lld", i ? "," : "", (long long)shape[i]);
  if (len < n) snprintf(b + len, n - len, "]");
}

static void info_to_wire(const tidsp_tensor_info *t, uint64_t addr, c7x_wire_tensor *w) {
  memset(w, 0, sizeof *w);
  w->data_addr = addr;
  w->size = t->nbytes;
  w->ndim = t->rank;
  int32_t code = -1, bits = 0;
  wire_dtype(t->dtype, &code, &bits);
  w->dtype_code = code;
  w->dtype_bits = bits;
  for (int32_t i = 0; i < t->rank && i < C7X_MAX_NDIM; i++) w->shape[i] = t->shape[i];
}

/* The firmware pointer of [addr, addr + size) in the staging window, or
 * NULL. */
static uint8_t *staging_ptr(const fw_state *st, uint64_t addr, uint64_t size) {
  if (addr < C7X_STAGING_ADDR) return NULL;
  uint64_t off = addr - C7X_STAGING_ADDR;
  if (off > st->staging_size || size > st->staging_size - off) return NULL;
  return st->shared + off;
}

/* ---- running a module ------------------------------------------------------- */

/* repeat inferences of m with its L2 scratch bound (NULL, 0 when it has
 * none: unbound, so a model that asks anyway gets TIDSP_ERR_L2). Before
 * the region is unbound every DMA queue is drained: the host engine defers
 * copies, and one a module left pending would otherwise run at the next
 * request's first wait, from and into buffers this module may have
 * released by then (on the board, the DSP's DMA finishes before the
 * firmware replies). */
static int32_t run_bound(fw_module *m, const tidsp_dsp_tensor *in, const tidsp_dsp_tensor *out,
                         unsigned repeat) {
  const tidsp_model_desc *d = &m->desc;
  /* m->l2 comes from the pool aligned to TIDSP_L2_ALIGN: the bind holds. */
  int32_t rv = tidsp_l2_bind(m->l2, m->l2 ? d->l2_size : 0);
  /* PROFILE reports this request's last inference: counters cleared now,
   * each inference timed on the clock the module counts in (the C7x
   * time-stamp counter; emulated: tidsp_profile_clock's nanoseconds, one
   * cycle each at TIDSP_C7X_CLOCK_HZ). */
  for (int32_t i = 0; i < m->prof_n; i++) {
    m->prof_layers[i].calls = 0;
    m->prof_layers[i].total = 0;
    m->prof_layers[i].last = 0;
  }
  m->prof_runs = 0;
  m->prof_infer = 0;
  for (unsigned k = 0; k < repeat && rv == TIDSP_OK; k++) {
    uint64_t t0 = tidsp_profile_clock();
    rv = m->entry(m->weights, m->arena, in, d->n_inputs, out, d->n_outputs);
    uint64_t ns = tidsp_profile_clock() - t0;
    m->prof_infer = m->prof_hz == 1000000000u ? ns : (uint64_t)((double)ns * 1e-9 * (double)m->prof_hz + 0.5);
    m->prof_runs = k + 1;
  }
  for (int32_t q = 0; q < TIDSP_DMA_QUEUES; q++) tidsp_dma_wait(q, 0);
  tidsp_l2_bind(NULL, 0);
  return rv;
}

/* ---- requests ------------------------------------------------------------- */

static size_t do_ping(fw_state *st, reply *r, const c7x_msg_header *h) {
  c7x_ping_resp p;
  memset(&p, 0, sizeof p);
  p.version = C7X_PROTOCOL_VERSION;
  p.uptime_us = fw_now_us() - st->start_us;
  put(r, &p, sizeof p);
  return finish(st, r, h, C7X_OK);
}

static size_t do_status(fw_state *st, reply *r, const c7x_msg_header *h) {
  c7x_status_resp p;
  memset(&p, 0, sizeof p);
  p.version = C7X_PROTOCOL_VERSION;
  for (int i = 0; i < FW_MAX_MODULES; i++) p.loaded_modules += st->modules[i].handle != 0;
  p.uptime_us = fw_now_us() - st->start_us;
  p.completed = __atomic_load_n(&st->completed, __ATOMIC_RELAXED);
  p.failed = __atomic_load_n(&st->failed, __ATOMIC_RELAXED);
  p.ddr_heap_size = st->ddr.size;
  p.ddr_heap_free = fw_pool_free_bytes(&st->ddr);
  p.l2_size = st->l2.size;
  p.l2_free = fw_pool_free_bytes(&st->l2);
  put(r, &p, sizeof p);
  return finish(st, r, h, C7X_OK);
}

static size_t do_attach(fw_state *st, reply *r, const c7x_msg_header *h, int *send_fd) {
  if (st->shared_fd < 0)
    return error_reply(st, r, h, C7X_ERR_OP, "this firmware has no shared region to attach");
  c7x_shm_attach_resp p;
  p.staging_addr = C7X_STAGING_ADDR;
  p.staging_size = st->staging_size;
  p.result_addr = C7X_RESULT_ADDR;
  p.result_size = st->result_size;
  put(r, &p, sizeof p);
  *send_fd = st->shared_fd;
  return finish(st, r, h, C7X_OK);
}

static size_t do_load(fw_state *st, reply *r, const c7x_msg_header *h, const uint8_t *body) {
  c7x_dyn_load_req q;
  memcpy(&q, body, sizeof q);
  if (q.elf_size == 0 || q.elf_size > st->staging_size)
    return error_reply(st, r, h, C7X_ERR_SIZE, "DYN_LOAD: elf_size %u outside (0, %zu] (the staging buffer)",
                       q.elf_size, st->staging_size);
  if (q.flags != 0) return error_reply(st, r, h, C7X_ERR_INVALID, "DYN_LOAD: unknown flags 0x%x", q.flags);
  char err[C7X_MSG_MAX];
  fw_module *m = NULL;
  int s = fw_module_load(st, st->shared, q.elf_size, &m, err, sizeof err);
  if (s != C7X_OK) return error_reply(st, r, h, s, "DYN_LOAD: %s", err);
  c7x_dyn_load_resp p;
  p.handle = m->handle;
  p.text_size = m->text_size;
  p.data_size = m->data_size;
  p.arena_size = (uint32_t)(m->desc.arena_size > UINT32_MAX ? UINT32_MAX : m->desc.arena_size);
  put(r, &p, sizeof p);
  return finish(st, r, h, C7X_OK);
}

/* The loaded module a request names; NULL once *len holds the error reply
 * that names the request and the handle. */
static fw_module *module_or_reply(fw_state *st, reply *r, const c7x_msg_header *h, uint64_t handle,
                                  const char *request, size_t *len) {
  fw_module *m = fw_module_find(st, handle);
  if (!m)
    *len = error_reply(st, r, h, C7X_ERR_HANDLE, "%s: no module with handle %llu is loaded", request,
                       (unsigned long long)handle);
  return m;
}

/* A paged request (DYN_INFO, PROFILE: a c7x_handle_req whose page starts
 * at q->first) read from body, and its module; NULL once *len holds the
 * error reply. */
static fw_module *paged_request(fw_state *st, reply *r, const c7x_msg_header *h, const uint8_t *body,
                                const char *request, c7x_handle_req *q, size_t *len) {
  memcpy(q, body, sizeof *q);
  return module_or_reply(st, r, h, q->handle, request, len);
}

/* The page of a paged request that starts at item `first` of `total`
 * (tensors, layers): one past its last item in *end (at most `page`
 * items, c7x_page_rows), and 1; or 0 once *len holds the error reply for a
 * first past the total. */
static int page_or_reply(fw_state *st, reply *r, const c7x_msg_header *h, const char *request, const char *item,
                         uint32_t first, uint32_t total, uint32_t page, uint32_t *end, size_t *len) {
  if (first > total) {
    *len = error_reply(st, r, h, C7X_ERR_INVALID, "%s: first %s %u, the module has %u %ss", request, item, first,
                       total, item);
    return 0;
  }
  *end = first + c7x_page_rows(first, total, page);
  return 1;
}

static size_t do_unload(fw_state *st, reply *r, const c7x_msg_header *h, const uint8_t *body) {
  c7x_handle_req q;
  memcpy(&q, body, sizeof q);
  char err[256];
  int s = fw_module_unload(st, q.handle, err, sizeof err);
  if (s != C7X_OK) return error_reply(st, r, h, s, "DYN_UNLOAD: %s", err);
  return finish(st, r, h, C7X_OK);
}

static size_t do_info(fw_state *st, reply *r, const c7x_msg_header *h, const uint8_t *body) {
  c7x_handle_req q;
  size_t len = 0;
  fw_module *m = paged_request(st, r, h, body, "DYN_INFO", &q, &len);
  if (!m) return len;
  const tidsp_model_desc *d = &m->desc;
  uint32_t total = (uint32_t)(d->n_inputs + d->n_outputs);
  uint32_t end;
  if (!page_or_reply(st, r, h, "DYN_INFO", "tensor", q.first, total, C7X_INFO_MAX_TENSORS, &end, &len)) return len;
  c7x_dyn_info_resp p = {(uint32_t)d->n_inputs, (uint32_t)d->n_outputs};
  put(r, &p, sizeof p);
  for (int32_t i = (int32_t)q.first; i < (int32_t)end; i++) {
    c7x_wire_tensor w;
    info_to_wire(i < d->n_inputs ? &d->inputs[i] : &d->outputs[i - d->n_inputs], 0, &w);
    put(r, &w, sizeof w);
  }
  return finish(st, r, h, C7X_OK);
}

static size_t do_profile(fw_state *st, reply *r, const c7x_msg_header *h, const uint8_t *body) {
  c7x_handle_req q;
  size_t len = 0;
  fw_module *m = paged_request(st, r, h, body, "PROFILE", &q, &len);
  if (!m) return len;
  if (!m->has_profile)
    return error_reply(st, r, h, C7X_ERR_OP, "PROFILE: model '%s' was not compiled with per-layer profiling "
                       "(compile it with -t \"c_static_lib -mcpu=c7x -profile-layers=1\")", m->desc.name);
  uint32_t end;
  if (!page_or_reply(st, r, h, "PROFILE", "layer", q.first, (uint32_t)m->prof_n, C7X_PROFILE_MAX_ROWS, &end, &len))
    return len;
  c7x_profile_resp p;
  memset(&p, 0, sizeof p);
  p.num_layers = (uint32_t)m->prof_n;
  p.runs = m->prof_runs;
  p.clock_hz = m->prof_hz;
  p.infer_cycles = m->prof_infer;
  memcpy(p.clock_unit, m->prof_unit, sizeof p.clock_unit);
  put(r, &p, sizeof p);
  for (uint32_t i = q.first; i < end; i++) {
    c7x_profile_row row = m->prof_rows[i];
    /* the module's own counter, in its writable segment (checked at load) */
    row.cycles = m->prof_runs ? m->prof_layers[i].last : 0;
    put(r, &row, sizeof row);
  }
  return finish(st, r, h, C7X_OK);
}

/* An input descriptor against the model's tensor; C7X_OK or an error
 * message in err. */
static int check_input(const fw_state *st, const c7x_wire_tensor *w, const tidsp_tensor_info *t,
                       int i, tidsp_dsp_tensor *out, char *err, size_t n_err) {
  char want_dt[16], got_dt[16], want_sh[160], got_sh[160];
  int32_t code = -1, bits = 0;
  wire_dtype(t->dtype, &code, &bits);
  dtype_text(want_dt, sizeof want_dt, code, bits);
  dtype_text(got_dt, sizeof got_dt, w->dtype_code, w->dtype_bits);
  shape_text(want_sh, sizeof want_sh, t->rank, t->shape);
  int64_t got_shape[C7X_MAX_NDIM];
  memcpy(got_shape, w->shape, sizeof got_shape);
  shape_text(got_sh, sizeof got_sh, w->ndim, got_shape);
  uint8_t *p = staging_ptr(st, w->data_addr, w->size);
  if (!p) {
    snprintf(err, n_err, "input %d '%s': data 0x%llx (+%llu bytes) is not inside the staging buffer "
             "[0x%llx, 0x%llx)", i, t->name, (unsigned long long)w->data_addr,
             (unsigned long long)w->size, (unsigned long long)C7X_STAGING_ADDR,
             (unsigned long long)(C7X_STAGING_ADDR + st->staging_size));
    return C7X_ERR_ADDR;
  }
  if (w->ndim < 0 || w->ndim > C7X_MAX_NDIM) {
    snprintf(err, n_err, "input %d '%s': ndim %d outside [0, %d]", i, t->name, w->ndim, C7X_MAX_NDIM);
    return C7X_ERR_TENSOR;
  }
  memcpy(out, w, sizeof *out);
  out->data_addr = (uint64_t)(uintptr_t)p;
  int32_t s = tidsp_dsp_tensor_check(out, t);
  if (s == TIDSP_ERR_DTYPE) {
    snprintf(err, n_err, "input %d '%s': dtype %s, the model takes %s", i, t->name, got_dt, want_dt);
    return C7X_ERR_TENSOR;
  }
  if (s != TIDSP_OK) {
    snprintf(err, n_err, "input %d '%s': %s%s, %llu bytes; the model takes %s%s, %zu bytes", i, t->name,
             got_dt, got_sh, (unsigned long long)w->size, want_dt, want_sh, t->nbytes);
    return C7X_ERR_TENSOR;
  }
  return C7X_OK;
}

/* INFER and INFER_LARGE once their input descriptors are found (`descs`:
 * num_inputs packed c7x_wire_tensor, in the message or the staging
 * buffer). */
static size_t run_infer(fw_state *st, reply *r, const c7x_msg_header *h, c7x_infer_req q,
                        const uint8_t *descs) {
  size_t len = 0;
  fw_module *m = module_or_reply(st, r, h, q.handle, "INFER", &len);
  if (!m) return len;
  if (q.model_id != 0)
    return error_reply(st, r, h, C7X_ERR_INVALID,
                       "INFER: model_id %u: only 0 (the module's embedded weights) is served", q.model_id);
  if (q.flags & ~C7X_INFER_REPEAT_MASK)
    return error_reply(st, r, h, C7X_ERR_INVALID, "INFER: unsupported flags 0x%x", q.flags & ~C7X_INFER_REPEAT_MASK);
  const tidsp_model_desc *d = &m->desc;
  if ((int32_t)q.num_inputs != d->n_inputs)
    return error_reply(st, r, h, C7X_ERR_TENSOR, "INFER: model '%s' takes %d input%s, got %u", d->name,
                       d->n_inputs, d->n_inputs == 1 ? "" : "s", q.num_inputs);

  tidsp_dsp_tensor in[FW_MAX_TENSORS], out[FW_MAX_TENSORS];
  c7x_wire_tensor wout[FW_MAX_TENSORS];
  char err[400];
  for (uint32_t i = 0; i < q.num_inputs; i++) {
    c7x_wire_tensor w;
    memcpy(&w, descs + i * sizeof w, sizeof w);
    int s = check_input(st, &w, &d->inputs[i], (int)i, &in[i], err, sizeof err);
    if (s != C7X_OK) return error_reply(st, r, h, s, "INFER: %s", err);
  }
  /* Outputs: consecutive in the result window, 64-byte aligned; with more
   * than fit inline, their descriptors follow them there. */
  size_t off = 0;
  for (int32_t j = 0; j < d->n_outputs; j++) {
    const tidsp_tensor_info *t = &d->outputs[j];
    off = (off + 63) & ~(size_t)63;
    if (t->nbytes > st->result_size || off > st->result_size - t->nbytes)
      return error_reply(st, r, h, C7X_ERR_SIZE, "INFER: outputs need more than the %zu-byte result buffer",
                         st->result_size);
    info_to_wire(t, C7X_RESULT_ADDR + off, &wout[j]);
    memcpy(&out[j], &wout[j], sizeof out[j]);
    out[j].data_addr = (uint64_t)(uintptr_t)(st->shared + st->staging_size + off);
    off += t->nbytes;
  }
  int inline_outs = d->n_outputs <= C7X_INFER_MAX_INLINE_OUTPUTS;
  size_t descs_off = (off + 63) & ~(size_t)63, descs_size = (size_t)d->n_outputs * sizeof(c7x_wire_tensor);
  if (!inline_outs && (descs_off > st->result_size || descs_size > st->result_size - descs_off))
    return error_reply(st, r, h, C7X_ERR_SIZE, "INFER: output descriptors do not fit the result buffer");

  unsigned repeat = q.flags & C7X_INFER_REPEAT_MASK;
  if (repeat == 0) repeat = 1;
  /* Name the request for the supervisor, should the module crash, and arm
   * the request timeout: SIGALRM's default action ends the firmware, as a
   * watchdog resets a hung DSP. */
  fw_run_state *run = st->run;
  if (run) {
    snprintf(run->running_model, sizeof run->running_model, "%s", d->name);
    run->running_handle = m->handle;
    if (run->timeout_ms) {
      struct itimerval it = {{0, 0}, {(time_t)(run->timeout_ms / 1000), (suseconds_t)(run->timeout_ms % 1000) * 1000}};
      setitimer(ITIMER_REAL, &it, NULL);
    }
  }
  uint64_t t0 = fw_now_us();
  int32_t rv = run_bound(m, in, out, repeat);
  uint64_t t1 = fw_now_us();
  if (run) {
    if (run->timeout_ms) {
      struct itimerval disarm;
      memset(&disarm, 0, sizeof disarm);
      setitimer(ITIMER_REAL, &disarm, NULL);
    }
    run->running_handle = 0;
  }
  if (rv != TIDSP_OK)
    return error_reply(st, r, h, C7X_ERR_CALL, "INFER: model '%s': cg_main_dsp returned %d (%s)", d->name,
                       (int)rv, tidsp_status_str(rv));

  c7x_infer_resp p;
  memset(&p, 0, sizeof p);
  p.return_value = rv;
  p.num_outputs = (uint32_t)d->n_outputs;
  p.cycles = (t1 - t0) * 1000u; /* 1 GHz */
  if (!inline_outs) {
    memcpy(st->shared + st->staging_size + descs_off, wout, descs_size);
    p.descs_addr = C7X_RESULT_ADDR + descs_off;
    p.descs_size = (uint32_t)descs_size;
  }
  put(r, &p, sizeof p);
  if (inline_outs) put(r, wout, descs_size);
  return finish(st, r, h, C7X_OK);
}

static size_t do_infer(fw_state *st, reply *r, const c7x_msg_header *h, const uint8_t *body,
                       size_t body_len) {
  c7x_infer_req q;
  memcpy(&q, body, sizeof q);
  if (q.num_inputs > C7X_INFER_MAX_INLINE_INPUTS)
    return error_reply(st, r, h, C7X_ERR_INVALID, "INFER: %u inputs, at most %d travel inline (more: INFER_LARGE)",
                       q.num_inputs, C7X_INFER_MAX_INLINE_INPUTS);
  if (body_len != sizeof q + q.num_inputs * sizeof(c7x_wire_tensor))
    return error_reply(st, r, h, C7X_ERR_SIZE, "INFER: %zu body bytes for %u inputs (expected %zu)",
                       body_len, q.num_inputs, sizeof q + q.num_inputs * sizeof(c7x_wire_tensor));
  return run_infer(st, r, h, q, body + sizeof q);
}

static size_t do_infer_large(fw_state *st, reply *r, const c7x_msg_header *h, const uint8_t *body) {
  c7x_infer_large_req q;
  memcpy(&q, body, sizeof q);
  if (q.infer.num_inputs > FW_MAX_TENSORS)
    return error_reply(st, r, h, C7X_ERR_INVALID, "INFER_LARGE: %u inputs, at most %d", q.infer.num_inputs,
                       FW_MAX_TENSORS);
  if (q.descs_size != q.infer.num_inputs * sizeof(c7x_wire_tensor))
    return error_reply(st, r, h, C7X_ERR_SIZE, "INFER_LARGE: %u descriptor bytes for %u inputs (expected %zu)",
                       q.descs_size, q.infer.num_inputs, q.infer.num_inputs * sizeof(c7x_wire_tensor));
  const uint8_t *descs = staging_ptr(st, q.descs_addr, q.descs_size);
  if (!descs && q.descs_size)
    return error_reply(st, r, h, C7X_ERR_ADDR,
                       "INFER_LARGE: descriptors 0x%llx (+%u bytes) are not inside the staging buffer",
                       (unsigned long long)q.descs_addr, q.descs_size);
  /* the descriptors are copied out as they are read: staging is the
   * client's, the run must not depend on it changing underneath */
  return run_infer(st, r, h, q.infer, descs ? descs : body);
}

static size_t do_fault(fw_state *st, reply *r, const c7x_msg_header *h) {
  c7x_fault_resp p;
  memset(&p, 0, sizeof p);
  const char *text = "";
  size_t text_cap = 1;
  if (st->run) {
    text_cap = sizeof st->run->last_fault;
    p.restarts = st->run->restarts;
    p.kind = st->run->last_kind;
    p.handle = st->run->last_handle;
    text = st->run->last_fault;
  }
  put(r, &p, sizeof p);
  size_t room = C7X_MSG_MAX - r->len - 1, n = strnlen(text, text_cap);
  if (n > room) n = room;
  put(r, text, n);
  r->buf[r->len++] = '\0';
  return finish(st, r, h, C7X_OK);
}

/* ---- RESET ---------------------------------------------------------------- */

/* Whether the RESET whose body is body (body_len bytes) may end the
 * firmware: a reset kills every loaded module, so the sender must hold the
 * handle of each (it could unload them all just the same). C7X_OK, or an
 * error status and its reason in err. */
static int reset_check(fw_state *st, const uint8_t *body, size_t body_len, char *err, size_t n_err) {
  c7x_reset_req q = {0, 0};
  if (body_len) {
    if (body_len >= sizeof q) memcpy(&q, body, sizeof q);
    if (body_len < sizeof q || q.num_handles > C7X_RESET_MAX_HANDLES ||
        body_len != sizeof q + (size_t)q.num_handles * sizeof(uint64_t)) {
      snprintf(err, n_err, "RESET: a body of %zu bytes is not a c7x_reset_req and its handles (at most %d)",
               body_len, C7X_RESET_MAX_HANDLES);
      return C7X_ERR_OP;
    }
  }
  int loaded = 0, not_held = 0;
  pthread_mutex_lock(&st->table_lock);
  for (int i = 0; i < FW_MAX_MODULES; i++) {
    uint64_t h = st->modules[i].handle;
    if (!h) continue;
    loaded++;
    int held = 0;
    for (uint32_t k = 0; k < q.num_handles && !held; k++) {
      uint64_t g;
      memcpy(&g, body + sizeof q + k * sizeof g, sizeof g);
      held = g == h;
    }
    not_held += !held;
  }
  pthread_mutex_unlock(&st->table_lock);
  if (not_held) {
    snprintf(err, n_err, "RESET refused: %d of the %d loaded modules are not among the %u handle%s presented; a "
             "reset kills every module, so it takes the handle of each (a firmware started with --timeout-ms "
             "ends a runaway request itself)", not_held, loaded, q.num_handles, q.num_handles == 1 ? "" : "s");
    return C7X_ERR_DENIED;
  }
  return C7X_OK;
}

/* Body bytes each request type needs (exactly, or at least for INFER). */
static int body_size(uint32_t type, size_t *need, int *at_least) {
  *at_least = 0;
  switch (type) {
    case C7X_MSG_PING: case C7X_MSG_GET_STATUS: case C7X_MSG_SHM_ATTACH: case C7X_MSG_GET_FAULT:
      *need = 0; return 1;
    case C7X_MSG_RESET: *need = 0; *at_least = 1; return 1;
    case C7X_MSG_DYN_LOAD: *need = sizeof(c7x_dyn_load_req); return 1;
    case C7X_MSG_DYN_UNLOAD: case C7X_MSG_DYN_INFO: case C7X_MSG_PROFILE:
      *need = sizeof(c7x_handle_req); return 1;
    case C7X_MSG_INFER: *need = sizeof(c7x_infer_req); *at_least = 1; return 1;
    case C7X_MSG_INFER_LARGE: *need = sizeof(c7x_infer_large_req); return 1;
    case C7X_MSG_MODEL_LOAD: case C7X_MSG_MODEL_UNLOAD:
      *need = 0; *at_least = 1; return 1;
    default: return 0;
  }
}

/* The framing of every request: 0 and the header, body and body length
 * when it is well formed, else the length of the error response in r. */
static size_t check_frame(fw_state *st, reply *r, const uint8_t *req, size_t n, c7x_msg_header *h,
                          const uint8_t **body, size_t *body_len) {
  if (n < sizeof(c7x_msg_header))
    return error_reply(st, r, NULL, C7X_ERR_SIZE, "message of %zu bytes is shorter than its %zu-byte header",
                       n, sizeof(c7x_msg_header));
  memcpy(h, req, sizeof *h);
  if (h->type & C7X_MSG_RESPONSE)
    return error_reply(st, r, h, C7X_ERR_OP, "message type 0x%x is a response, not a request", h->type);
  if (n > C7X_MSG_MAX)
    return error_reply(st, r, h, C7X_ERR_SIZE, "message of more than %u bytes", C7X_MSG_MAX);
  if (h->len != n)
    return error_reply(st, r, h, C7X_ERR_SIZE, "header says %u bytes, the message has %zu", h->len, n);
  size_t need;
  int at_least;
  if (!body_size(h->type, &need, &at_least))
    return error_reply(st, r, h, C7X_ERR_OP, "unknown message type 0x%x", h->type);
  *body_len = n - sizeof *h;
  if (at_least ? *body_len < need : *body_len != need)
    return error_reply(st, r, h, C7X_ERR_SIZE, "message type 0x%x: body of %zu bytes, expected %s%zu",
                       h->type, *body_len, at_least ? "at least " : "", need);
  *body = req + sizeof *h;
  return 0;
}

int fw_handle_reset(fw_state *st, const uint8_t *req, size_t n, uint8_t *resp, size_t *resp_len) {
  reply r = {resp, sizeof(c7x_msg_header)};
  c7x_msg_header h;
  const uint8_t *body = NULL;
  size_t body_len = 0;
  *resp_len = check_frame(st, &r, req, n, &h, &body, &body_len);
  if (*resp_len) return 0;
  char err[C7X_MSG_MAX];
  int s = reset_check(st, body, body_len, err, sizeof err);
  if (s == C7X_OK) return 1;
  *resp_len = error_reply(st, &r, &h, s, "%s", err);
  return 0;
}

size_t fw_handle_message(fw_state *st, const uint8_t *req, size_t n, uint8_t *resp, int *send_fd) {
  reply r = {resp, sizeof(c7x_msg_header)};
  *send_fd = -1;
  c7x_msg_header h;
  const uint8_t *body = NULL;
  size_t body_len = 0;
  size_t framing_error = check_frame(st, &r, req, n, &h, &body, &body_len);
  if (framing_error) return framing_error;
  switch (h.type) {
    case C7X_MSG_PING: return do_ping(st, &r, &h);
    case C7X_MSG_GET_STATUS: return do_status(st, &r, &h);
    case C7X_MSG_SHM_ATTACH: return do_attach(st, &r, &h, send_fd);
    case C7X_MSG_GET_FAULT: return do_fault(st, &r, &h);
    case C7X_MSG_DYN_LOAD: return do_load(st, &r, &h, body);
    case C7X_MSG_DYN_UNLOAD: return do_unload(st, &r, &h, body);
    case C7X_MSG_DYN_INFO: return do_info(st, &r, &h, body);
    case C7X_MSG_PROFILE: return do_profile(st, &r, &h, body);
    case C7X_MSG_INFER: return do_infer(st, &r, &h, body, body_len);
    case C7X_MSG_INFER_LARGE: return do_infer_large(st, &r, &h, body);
    case C7X_MSG_RESET: {
      char err[C7X_MSG_MAX];
      int s = reset_check(st, body, body_len, err, sizeof err);
      return s == C7X_OK ? finish(st, &r, &h, C7X_OK) : error_reply(st, &r, &h, s, "%s", err);
    }
    default:
      return error_reply(st, &r, &h, C7X_ERR_OP,
                         "message type 0x%x is not served by this firmware (weights travel in "
                         "modules)",
                         h.type);
  }
}
