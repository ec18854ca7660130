/*
 * fw.h — the firmware emulator's state and its request handler.
 *
 * c7x_fw owns, from start to exit: the DDR heap and L2 SRAM pools, the
 * shared region (staging + result windows of the DDR carve-out, mapped by
 * clients too) and the table of loaded modules. Handles live here, so they
 * outlive the client connections that created them.
 *
 * fw_handle_message is the whole protocol (c7x_protocol.h) as a function
 * of bytes: one request in, one response out. The transport (fw_main.c)
 * only moves bytes, so the framing and every check are testable without a
 * socket.
 */
#ifndef CSTATIC_FW_H
#define CSTATIC_FW_H

#include <stddef.h>
#include <stdint.h>

#include "c7x_protocol.h"
#include "cstatic/model.h"
#include "cstatic/platform/tidsp_dsp.h"
#include "pool.h"

enum { FW_MAX_MODULES = 16, FW_MAX_TENSORS = 64 };

typedef int32_t (*fw_dsp_entry)(const void *weights, void *arena, const tidsp_dsp_tensor *inputs,
                                int32_t num_inputs, const tidsp_dsp_tensor *outputs,
                                int32_t num_outputs);

typedef struct fw_module {
  uint32_t handle; /* 0: free slot */
  void *dl;
  const tidsp_model_desc *desc;
  fw_dsp_entry entry;
  const void *weights; /* NULL: the module's own (--weights=c) */
  size_t weights_size;
  void *arena;         /* DDR heap */
  void *l2;            /* L2 SRAM pool: desc->l2_size bytes, TIDSP_L2_ALIGN
                          aligned, bound for each of its inferences; NULL
                          when the model stages nothing in L2 */
  void *image;         /* DDR heap: the module's loadable span */
  int image_fd;        /* the memfd dlopen read, open while loaded: dlopen
                          matches loaded objects by path, and a reused
                          /proc/self/fd/N would hand back another module */
  uint32_t text_size, data_size;
} fw_module;

/* What the firmware is running, in memory its supervisor shares: when the
 * firmware dies, the supervisor names the request that killed it, and the
 * next firmware tells clients (GET_FAULT). */
typedef struct fw_run_state {
  volatile uint32_t running_handle; /* 0: idle */
  char running_model[64];
  uint32_t timeout_ms;              /* per request; 0: none */
  volatile uint32_t reset_requested;
  uint32_t restarts;
  int32_t last_kind;                /* C7X_FAULT_* */
  uint32_t last_handle;
  char last_fault[400];
} fw_run_state;

typedef struct fw_state {
  fw_pool ddr, l2;
  uint8_t *shared; /* staging window, then result window */
  size_t staging_size, result_size;
  int shared_fd;   /* handed to clients by SHM_ATTACH */
  fw_module modules[FW_MAX_MODULES];
  uint32_t next_handle;
  uint64_t start_us, completed, failed;
  fw_run_state *run; /* NULL: unsupervised, no request timeout */
} fw_state;

/* ddr/l2: the pools' memory; shared: staging_size + result_size bytes. */
void fw_state_init(fw_state *st, void *ddr, size_t ddr_size, void *l2, size_t l2_size,
                   void *shared, size_t staging_size, size_t result_size, int shared_fd);
/* Unload every module. */
void fw_state_shutdown(fw_state *st);

/* Handle one request of n bytes (n may exceed C7X_MSG_MAX: the transport
 * reports a truncated message so). Writes the response into resp
 * (C7X_MSG_MAX bytes) and returns its length; *send_fd is set to a file
 * descriptor to pass with it, or -1. Never fails: a bad request gets an
 * error response. */
size_t fw_handle_message(fw_state *st, const uint8_t *req, size_t n, uint8_t *resp, int *send_fd);

/* Loader (loader.c): status C7X_OK or C7X_ERR_*, message in err. */
int fw_module_load(fw_state *st, const void *image, size_t size, fw_module **out, char *err,
                   size_t n_err);
int fw_module_unload(fw_state *st, uint32_t handle, char *err, size_t n_err);
fw_module *fw_module_find(fw_state *st, uint32_t handle);

uint64_t fw_now_us(void);

#endif
