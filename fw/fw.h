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

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cstatic/c7x_protocol.h"
#include "cstatic/model.h"
#include "cstatic/platform/tidsp_dsp.h"
#include "cstatic/profile.h"
#include "pool.h"

enum { FW_MAX_MODULES = 16, FW_MAX_TENSORS = 64 };

typedef int32_t (*fw_dsp_entry)(const void *weights, void *arena, const tidsp_dsp_tensor *inputs,
                                int32_t num_inputs, const tidsp_dsp_tensor *outputs,
                                int32_t num_outputs);

enum { FW_NAME_MAX = 64 };

/* A loaded module. Everything the firmware reads about it after DYN_LOAD
 * is here, checked and copied at load (desc, names): module memory is the
 * module's to change, the firmware never trusts it twice. */
typedef struct fw_module {
  uint64_t handle; /* 0: free slot; else 64 random bits, the capability */
  tidsp_model_desc desc; /* inputs/outputs point at tensors[], name at name;
                            no entry points (the firmware calls only
                            cg_main_dsp); profile NULL (prof_* below) */
  tidsp_tensor_info tensors[2 * FW_MAX_TENSORS]; /* inputs, then outputs */
  char name[FW_NAME_MAX];
  char tensor_names[2 * FW_MAX_TENSORS][FW_NAME_MAX];
  fw_dsp_entry entry;  /* cg_main_dsp in the module's executable pages */
  const void *weights; /* NULL: the module's own (--weights=c) */
  size_t weights_size;
  void *arena;         /* DDR heap */
  void *l2;            /* the shared L2 region (fw_state.l2_region, at least
                          desc.l2_size bytes, TIDSP_L2_ALIGN aligned), its
                          first desc.l2_size bytes bound for each of its
                          inferences; NULL when the model stages nothing */
  uint8_t *image;      /* DDR heap: the placed segments, image_span bytes */
  size_t image_span;
  uint32_t text_size, data_size;
  /* -profile-layers=1 (PROFILE): the module's layer table, checked at
   * load. The firmware reads and clears only the counters of prof_layers
   * (inside a writable segment); names, modules, outputs, kernels and
   * MACs were copied out at load into prof_rows. */
  int has_profile;
  int32_t prof_n;
  tidsp_layer_stat *prof_layers;
  c7x_profile_row *prof_rows; /* DDR heap, prof_n rows (cycles unused) */
  char prof_unit[8];          /* "cycles" or "ns" */
  uint64_t prof_hz;           /* clock units per second */
  uint32_t prof_runs;         /* inferences the last INFER ran; 0: none yet */
  uint64_t prof_infer;        /* the last inference, clock units */
} fw_module;

/* Most layers a module's profile table may have. */
enum { FW_MAX_PROFILE_LAYERS = 1 << 16 };

/* What the firmware is running, in memory its supervisor shares: when the
 * firmware dies, the supervisor names the request that killed it, and the
 * next firmware tells clients (GET_FAULT). */
typedef struct fw_run_state {
  volatile uint64_t running_handle; /* 0: idle */
  char running_model[64];
  uint32_t timeout_ms;              /* per request; 0: none */
  volatile uint32_t reset_requested;
  uint32_t restarts;
  int32_t last_kind;                /* C7X_FAULT_* */
  uint64_t last_handle;
  char last_fault[400];
} fw_run_state;

typedef struct fw_state {
  fw_pool ddr, l2;
  /* The L2 scratch all loaded modules share (l2_share.c): the L2 pool's
   * one block, sized for the largest loaded module's l2_size; NULL / 0
   * when no loaded module stages anything. */
  void *l2_region;
  size_t l2_region_size;
  uint8_t *shared; /* staging window, then result window */
  size_t staging_size, result_size;
  int shared_fd;   /* handed to clients by SHM_ATTACH */
  fw_module modules[FW_MAX_MODULES];
  /* Held while a handle is given to or taken from a slot, and by RESET's
   * check, which runs beside a request that may never end. */
  pthread_mutex_t table_lock;
  uint64_t start_us, completed, failed; /* counters: atomic adds */
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
 * error response. A RESET that is granted is answered C7X_OK with no body:
 * the transport ends the firmware instead of sending it (fw_main.c asks
 * fw_handle_reset first, without waiting for a running request). */
size_t fw_handle_message(fw_state *st, const uint8_t *req, size_t n, uint8_t *resp, int *send_fd);

/* A request of type C7X_MSG_RESET: 1 when the firmware may be reset (the
 * sender holds every loaded module's handle); else 0 and the error
 * response in resp, *resp_len bytes. Takes only st->table_lock. */
int fw_handle_reset(fw_state *st, const uint8_t *req, size_t n, uint8_t *resp, size_t *resp_len);

/* Loader (loader.c): status C7X_OK or C7X_ERR_*, message in err. The
 * image is copied before it is read (it may be client-writable memory). */
int fw_module_load(fw_state *st, const void *image, size_t size, fw_module **out, char *err,
                   size_t n_err);
int fw_module_unload(fw_state *st, uint64_t handle, char *err, size_t n_err);
fw_module *fw_module_find(fw_state *st, uint64_t handle);

uint64_t fw_now_us(void);

/* The shared L2 scratch (l2_share.c). Reserve: m (desc checked, handle
 * still 0) gets the region, grown to its l2_size if that is larger;
 * C7X_OK, or C7X_ERR_NOMEM with a message naming the model, its need and
 * the pool's size when even it alone does not fit. Release: m (handle
 * already 0) lets go; the region shrinks to the largest remaining need. */
int fw_l2_reserve(fw_state *st, fw_module *m, char *err, size_t n_err);
void fw_l2_release(fw_state *st, fw_module *m);

#endif
