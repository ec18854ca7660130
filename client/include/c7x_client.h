/*
 * c7x_client.h — the host (ARM-side) client of the C7x firmware:
 * libc7x_arm_runtime's C API, used by the c7x_compute CLI (and, in a later
 * slice, the Python C7xVirtualMachine through ctypes).
 *
 * A client holds one connection to the firmware (the socket in
 * $C7X_FW_SOCKET, else /tmp/c7x_fw.sock) and maps the shared region:
 *
 *   staging (inputs, module images)            result (outputs)
 *   ┌──────────────┬─────────────────────────┐ ┌───────────────────────┐
 *   │ module image │ create_input() tensors… │ │ outputs of the last   │
 *   │ [0, elf_size)│ [input_data_offset, …)  │ │ infer                 │
 *   └──────────────┴─────────────────────────┘ └───────────────────────┘
 *
 * Zero copy: an input whose data already lies in the staging buffer (from
 * c7x_client_create_input) is passed as it is; any other input is copied
 * there first (c7x_client_get_stats counts both). Outputs are views of
 * the result buffer, valid until this client's next infer or close.
 *
 * Functions return C7X_OK or a C7X_ERR_* code (cstatic/c7x_protocol.h);
 * c7x_client_last_error gives the firmware's (or the client's) message.
 *
 * Handles are 64-bit capabilities: the firmware serves whoever presents
 * one, so a handle loaded by one process may be used by another (pass the
 * number on); without it, nobody can reach the module. A client remembers
 * the handles it loaded or used (up to C7X_RESET_MAX_HANDLES), which its
 * timeout recovery presents to RESET: the firmware resets only for a
 * client that holds every loaded module.
 * A client is not thread-safe; each client (connection) has its own
 * staging and result windows, so clients in other threads or processes
 * never see each other's tensors.
 *
 * Faults: a request during which the firmware dies (a module crashed, or
 * ran past c7x_fw --timeout-ms or the client's own timeout) returns
 * C7X_ERR_FAULT or C7X_ERR_TIMEOUT with the firmware supervisor's account
 * ("firmware fault while running handle N (model 'm'): killed by SIGSEGV
 * ..."). The client is then connected to the restarted firmware: every
 * handle is gone (load the module again); the shared region is mapped
 * again at the same address, with new (zeroed) contents.
 */
#ifndef CSTATIC_C7X_CLIENT_H
#define CSTATIC_C7X_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "cstatic/c7x_protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host descriptor: data is a pointer in this process. */
typedef struct c7x_tensor_desc {
  void *data;
  size_t data_size;
  int32_t ndim;
  int32_t dtype_code; /* 0 int, 1 uint, 2 float (DLPack) */
  int32_t dtype_bits;
  int32_t _pad;
  int64_t shape[C7X_MAX_NDIM];
} c7x_tensor_desc;

/* The Python ctypes struct (_C7xTensorDesc) relies on this layout. */
typedef char c7x_tensor_desc_is_80_bytes[sizeof(c7x_tensor_desc) == 80 ? 1 : -1];

typedef struct c7x_client c7x_client;

/* What the client did, for tests and tuning: inputs passed in place (they
 * were create_input tensors) or copied into the staging buffer. */
typedef struct c7x_client_stats {
  uint64_t infers;            /* answered INFERs */
  uint64_t inputs_zero_copy;  /* inputs already in the staging buffer */
  uint64_t inputs_copied;     /* inputs memcpy'd into it */
  uint64_t bytes_copied;
  uint64_t faults;            /* requests the firmware died under */
  uint64_t reconnects;
} c7x_client_stats;

typedef struct c7x_fw_status {
  uint32_t version, loaded_modules;
  uint64_t uptime_us, completed, failed;
  uint64_t ddr_heap_size, ddr_heap_free, l2_size, l2_free;
} c7x_fw_status;

/* Connect to the firmware and map the shared region; NULL on failure (the
 * reason is in c7x_client_open_error()). path NULL: $C7X_FW_SOCKET, else
 * /tmp/c7x_fw.sock. */
c7x_client *c7x_client_open(void);
c7x_client *c7x_client_open_path(const char *path);
const char *c7x_client_open_error(void);
/* The status of the last failed open (C7X_ERR_IO, C7X_ERR_BUSY when the
 * firmware refused the connection, ...). */
int c7x_client_open_status(void);
void c7x_client_close(c7x_client *c);

const char *c7x_client_last_error(const c7x_client *c);
/* The text of a status ("bad handle"); "unknown status" for others. */
const char *c7x_strerror(int status);

/* Every status of cstatic/c7x_protocol.h (name "C7X_ERR_HANDLE", value,
 * text), n of them: for bindings that must not copy the list (Python). */
typedef struct c7x_status_info {
  int32_t value;
  const char *name;
  const char *text;
} c7x_status_info;
const c7x_status_info *c7x_status_table(size_t *n);

/* A request that gets no answer in timeout_ms resets the firmware and
 * fails with C7X_ERR_TIMEOUT; 0 (the default, or $C7X_TIMEOUT_MS) waits. */
void c7x_client_set_timeout(c7x_client *c, int timeout_ms);
void c7x_client_get_stats(const c7x_client *c, c7x_client_stats *stats);
/* Why the firmware last restarted: restarts so far, kind C7X_FAULT_*,
 * text ("" when it never did). */
int c7x_client_get_fault(c7x_client *c, uint32_t *restarts, int32_t *kind, char *text, size_t n_text);

int c7x_client_ping(c7x_client *c, uint32_t *version, uint64_t *uptime_us);
int c7x_client_get_status(c7x_client *c, c7x_fw_status *st);

void *c7x_client_get_input_buffer(c7x_client *c, size_t *size);
void *c7x_client_get_output_buffer(c7x_client *c, size_t *size);
/* Where create_input allocations start: the size of the module image this
 * client loaded last (rounded up to 64), 0 before any load. */
size_t c7x_client_get_input_data_offset(const c7x_client *c);
/* nbytes in the staging buffer (64-byte aligned), after the module image
 * and earlier inputs; NULL when the staging buffer is full. */
void *c7x_client_create_input(c7x_client *c, size_t nbytes);
/* Forget every create_input allocation. */
void c7x_client_reset_inputs(c7x_client *c);

/* Load a module file (or image bytes) into the firmware. */
int c7x_client_dyn_load(c7x_client *c, const char *path, uint64_t *handle);
int c7x_client_dyn_load_mem(c7x_client *c, const void *image, size_t size, uint64_t *handle);
int c7x_client_dyn_unload(c7x_client *c, uint64_t handle);
/* A module's tensors (data NULL): *n_in / *n_out in = capacity, out = count. */
int c7x_client_dyn_info(c7x_client *c, uint64_t handle, c7x_tensor_desc *in, int *n_in,
                        c7x_tensor_desc *out, int *n_out);

/* Run a module: outputs[0 .. *n_out) become views of the result buffer
 * (*n_out in = capacity, out = count); cycles may be NULL. The input
 * count, dtypes and sizes are checked against the module (DYN_INFO,
 * cached per handle) before any input is copied. */
int c7x_client_infer(c7x_client *c, uint64_t handle, uint32_t model_id,
                     const c7x_tensor_desc *inputs, int n_in, c7x_tensor_desc *outputs,
                     int *n_out, uint64_t *cycles);
/* The same with INFER flags (bits 0-15: repeat count). */
int c7x_client_infer_flags(c7x_client *c, uint64_t handle, uint32_t model_id,
                           const c7x_tensor_desc *inputs, int n_in, c7x_tensor_desc *outputs,
                           int *n_out, uint64_t *cycles, uint32_t flags);

/* ---- per-layer profile (a module compiled with -profile-layers=1) ---- */

/* The totals of PROFILE (the rows are c7x_profile_row, c7x_protocol.h). */
typedef struct c7x_profile {
  uint32_t num_layers;   /* the module's layers */
  uint32_t runs;         /* inferences its last INFER ran; 0: not run yet */
  uint64_t clock_hz;     /* clock units per second */
  uint64_t infer_cycles; /* the last inference as a whole, clock units */
  char clock_unit[8];    /* "cycles" (the C7x time-stamp counter) or "ns" */
} c7x_profile;

/* The per-layer profile of handle's last inference (by any client):
 * *info, and layers[0 .. *n_layers) in execution order (*n_layers in =
 * capacity, out = how many were filled: min(capacity, info->num_layers)).
 * C7X_ERR_OP when the module was not compiled with -profile-layers=1. */
int c7x_client_profile(c7x_client *c, uint64_t handle, c7x_profile *info, c7x_profile_row *layers,
                       int *n_layers);

/* A profile as text: the table `cstatic run --profile` prints (csv 0; the
 * same formatter, cstatic/profile_report.h, with C7x cycles beside the
 * time) or its CSV (csv 1), into buf as snprintf does: NUL-terminated,
 * cut at size; returns the length the whole text needs. */
size_t c7x_profile_format(const c7x_profile *info, const c7x_profile_row *layers, int n_layers, int csv,
                          char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_C7X_CLIENT_H */
