/*
 * c7x_protocol.h — the wire format between the host client (client/,
 * libc7x_arm_runtime) and the C7x firmware (fw/, c7x_fw).
 *
 * It lives with the runtime's public headers because both sides depend on
 * those and on nothing of each other (DESIGN.md §2): the firmware and the
 * client each include it, and so may a user's own host side. Python reads
 * the status codes from the client library (c7x_status_table), never from
 * a copy.
 *
 * On the board the messages travel over the RPMsg channel "c7x-compute";
 * the emulator carries the same bytes over a Unix-domain SOCK_SEQPACKET
 * socket, which keeps message boundaries as RPMsg does. Every message is
 * at most C7X_MSG_MAX bytes: a 16-byte header, then a body whose layout the
 * type decides. All structs are packed and little-endian; the response to
 * request type T has type T | C7X_MSG_RESPONSE and the request's seq.
 *
 * A response whose status is not C7X_OK carries, instead of its body, a
 * NUL-terminated message naming what failed (e.g. the symbol a module
 * needs and the firmware does not export).
 *
 * Bulk data never travels in messages: the shared DDR carve-out holds the
 * staging buffer (module images, inputs) and the result buffer (outputs).
 * Tensors in messages are 80-byte descriptors whose data_addr is a DSP
 * virtual address inside one of those windows (C7X_STAGING_ADDR,
 * C7X_RESULT_ADDR, as on the AM67A memory map).
 *
 * Module handles are capabilities: 64 random bits (0 is never one). The
 * firmware serves a request on a module to whoever presents its handle, so
 * a handle passed to another process works there, and nobody else can
 * name the module (the firmware never lists handles).
 *
 * C99, no allocation.
 */
#ifndef CSTATIC_C7X_PROTOCOL_H
#define CSTATIC_C7X_PROTOCOL_H

#include <stdint.h>

/* 2: 64-bit handles, RESET carries the sender's handles, REFUSED.
 * 3: PROFILE.
 * 4: PROFILE rows carry the layer's PyTorch module and output tensor. */
#define C7X_PROTOCOL_VERSION 4u
#define C7X_MSG_MAX 512u
#define C7X_MSG_RESPONSE 0x1000u

/* Message types (request; the response is type | C7X_MSG_RESPONSE). */
#define C7X_MSG_PING 0x0001u
#define C7X_MSG_GET_STATUS 0x0003u
/* Emulator only: the stand-in for mapping the carve-out from /dev/mem.
 * The response carries the windows and, as SCM_RIGHTS ancillary data, the
 * file descriptor of the shared region. */
#define C7X_MSG_SHM_ATTACH 0x0005u
/* Emulator only: why the firmware last restarted (c7x_fault_resp, then
 * a NUL-terminated text; kind C7X_FAULT_NONE and "" if it never did). */
#define C7X_MSG_GET_FAULT 0x0007u
/* Emulator only: the host's recovery (remoteproc stop/start on the
 * board): the firmware dies at once, unanswered, and its supervisor
 * restarts it. A client sends it after its own request timeout. Every
 * loaded module dies with the firmware, so the sender must hold them all:
 * the body (c7x_reset_req) lists its handles, and unless they cover every
 * loaded module the answer is C7X_ERR_DENIED and nothing happens. A bare
 * header is a RESET that holds no handle (granted when nothing is
 * loaded). */
#define C7X_MSG_RESET 0x0009u
/* Never a request: the firmware's only word on a connection it does not
 * serve (more clients than it takes). REFUSED | C7X_MSG_RESPONSE, seq 0,
 * status C7X_ERR_BUSY and the reason; then it closes the connection. */
#define C7X_MSG_REFUSED 0x000Bu
#define C7X_MSG_DYN_LOAD 0x0010u
#define C7X_MSG_DYN_UNLOAD 0x0012u
/* A loaded module's input and output tensors (dtype and shape). */
#define C7X_MSG_DYN_INFO 0x0014u
/* A loaded module's per-layer profile of its last inference (a module
 * compiled with -profile-layers=1): c7x_handle_req, c7x_profile_resp. */
#define C7X_MSG_PROFILE 0x0016u
#define C7X_MSG_MODEL_LOAD 0x0020u   /* not served yet: weights travel in modules */
#define C7X_MSG_INFER 0x0021u
#define C7X_MSG_MODEL_UNLOAD 0x0022u /* not served yet */
/* INFER with the input descriptors in the staging buffer (more than fit a
 * message: a decode step with many KV-cache tensors). */
#define C7X_MSG_INFER_LARGE 0x0023u

/* Header status / client return codes: one list, name, value and text;
 * the enum below and the client's c7x_strerror / c7x_status_table come
 * from it. -1 .. -14 are the board firmware's. */
#define C7X_STATUS_LIST(X)                                                 \
  X(C7X_OK, 0, "ok")                                                       \
  X(C7X_ERR_GENERIC, -1, "generic error")                                  \
  X(C7X_ERR_INVALID, -2, "invalid argument")                               \
  X(C7X_ERR_NOMEM, -3, "out of memory")                                    \
  X(C7X_ERR_BUSY, -4, "busy")                                              \
  X(C7X_ERR_TIMEOUT, -5, "timeout")                                        \
  X(C7X_ERR_ADDR, -6, "bad address")                                       \
  X(C7X_ERR_SIZE, -7, "bad size")                                          \
  X(C7X_ERR_OP, -8, "unsupported operation")                               \
  X(C7X_ERR_LOAD, -9, "module load failed")                                \
  X(C7X_ERR_SYMBOL, -10, "unresolved symbol")                              \
  X(C7X_ERR_CALL, -11, "model call failed")                                \
  X(C7X_ERR_HANDLE, -12, "bad handle")                                     \
  X(C7X_ERR_WEIGHTS, -13, "bad weights")                                   \
  X(C7X_ERR_TENSOR, -14, "bad tensor")                                     \
  /* Client side only: the transport (socket, shared memory) failed. */    \
  X(C7X_ERR_IO, -15, "firmware connection failed")                         \
  /* Client side only: the firmware died (crashed, was reset) during the   \
   * request; every handle died with it. */                                \
  X(C7X_ERR_FAULT, -16, "firmware fault")                                  \
  /* The sender may not do that (RESET without every loaded module's      \
   * handle). */                                                           \
  X(C7X_ERR_DENIED, -17, "not permitted")

enum c7x_status {
#define C7X_STATUS_ENUM(name, value, text) name = value,
  C7X_STATUS_LIST(C7X_STATUS_ENUM)
#undef C7X_STATUS_ENUM
};

/* The DSP memory map of the shared DDR carve-out. */
#define C7X_STAGING_ADDR UINT64_C(0xC0000000)
#define C7X_STAGING_SIZE_DEFAULT (468u << 20)
#define C7X_RESULT_ADDR UINT64_C(0xDE000000)
#define C7X_RESULT_SIZE_DEFAULT (32u << 20)

#define C7X_MAX_NDIM 6
/* Descriptors that fit a message after the INFER fields / response. */
#define C7X_INFER_MAX_INLINE_INPUTS 5
#define C7X_INFER_MAX_INLINE_OUTPUTS 5
#define C7X_INFO_MAX_TENSORS 6
/* Tensors a module may have on each side (INFER_LARGE, paged DYN_INFO). */
#define C7X_MAX_TENSORS 64

#if defined(__GNUC__) || defined(__clang__)
#define C7X_PACKED __attribute__((packed))
#else
#error "c7x_protocol.h needs packed structs (GCC or Clang)"
#endif

typedef struct C7X_PACKED c7x_msg_header {
  uint32_t type;
  uint32_t seq;
  uint32_t len;   /* the whole message, header included */
  int32_t status; /* requests: 0; responses: C7X_OK or C7X_ERR_* */
} c7x_msg_header;

/* The firmware's tensor_desc (same layout as tidsp_dsp_tensor). */
typedef struct C7X_PACKED c7x_wire_tensor {
  uint64_t data_addr; /* DSP virtual address */
  uint64_t size;      /* bytes at data_addr */
  int32_t ndim;
  int32_t dtype_code; /* 0 int, 1 uint, 2 float */
  int32_t dtype_bits;
  int32_t reserved;
  int64_t shape[C7X_MAX_NDIM];
} c7x_wire_tensor;

typedef struct C7X_PACKED c7x_ping_resp {
  uint32_t version;
  uint32_t reserved;
  uint64_t uptime_us;
} c7x_ping_resp;

typedef struct C7X_PACKED c7x_status_resp {
  uint32_t version;
  uint32_t loaded_modules;
  uint64_t uptime_us;
  uint64_t completed; /* requests answered with C7X_OK */
  uint64_t failed;    /* requests answered with an error */
  uint64_t ddr_heap_size, ddr_heap_free;
  uint64_t l2_size, l2_free;
} c7x_status_resp;

typedef struct C7X_PACKED c7x_shm_attach_resp {
  uint64_t staging_addr, staging_size;
  uint64_t result_addr, result_size;
} c7x_shm_attach_resp;

/* GET_FAULT kinds. */
#define C7X_FAULT_NONE 0
#define C7X_FAULT_CRASH 1   /* killed by a signal (SIGSEGV, SIGBUS, ...) */
#define C7X_FAULT_TIMEOUT 2 /* ran past c7x_fw --timeout-ms */
#define C7X_FAULT_RESET 3   /* reset by a client (C7X_MSG_RESET) */
#define C7X_FAULT_EXIT 4    /* exited on its own */
typedef struct C7X_PACKED c7x_fault_resp {
  uint32_t restarts; /* since the supervisor started */
  int32_t kind;      /* C7X_FAULT_* of the last restart */
  uint64_t handle;   /* the module that was running (dead now), 0: none */
} c7x_fault_resp;

/* RESET: the handles the sender holds, num_handles of them after this. */
#define C7X_RESET_MAX_HANDLES 60
typedef struct C7X_PACKED c7x_reset_req {
  uint32_t num_handles;
  uint32_t reserved;
  /* then num_handles uint64_t */
} c7x_reset_req;

/* The module image is at the start of the staging buffer. */
typedef struct C7X_PACKED c7x_dyn_load_req {
  uint32_t elf_size;
  uint32_t flags; /* 0 */
  uint32_t reserved[2];
} c7x_dyn_load_req;

typedef struct C7X_PACKED c7x_dyn_load_resp {
  uint64_t handle;
  uint32_t text_size; /* executable segments */
  uint32_t data_size; /* the other loadable segments (weights included) */
  uint32_t arena_size;
} c7x_dyn_load_resp;

/* DYN_UNLOAD; DYN_INFO, whose `first` pages through the tensors. */
typedef struct C7X_PACKED c7x_handle_req {
  uint64_t handle;
  uint32_t first; /* DYN_INFO: index of the first tensor wanted (inputs, then outputs); else 0 */
  uint32_t reserved;
} c7x_handle_req;

/* DYN_INFO response: the totals, then the descriptors (data_addr 0) of
 * tensors first, first + 1, … — as many as fit (C7X_INFO_MAX_TENSORS); a
 * client asks again from the next index until it has them all. */
typedef struct C7X_PACKED c7x_dyn_info_resp {
  uint32_t num_inputs;
  uint32_t num_outputs;
} c7x_dyn_info_resp;

/* PROFILE response: the totals, then the rows first, first + 1, … — as
 * many as fit (C7X_PROFILE_MAX_ROWS); a client asks again from the next
 * index until it has them all. The counters are those of the module's
 * last inference (with INFER's repeat count R, the last of the R); the
 * firmware clears them before each INFER. */
#define C7X_PROFILE_NAME_MAX 72
#define C7X_PROFILE_MODULE_MAX 64
#define C7X_PROFILE_OUTPUT_MAX 40
#define C7X_PROFILE_KERNEL_MAX 40
#define C7X_PROFILE_MAX_ROWS 2
typedef struct C7X_PACKED c7x_profile_resp {
  uint32_t num_layers;
  uint32_t runs;         /* inferences the last INFER ran (its repeat); 0: none yet */
  uint64_t clock_hz;     /* clock units per second */
  uint64_t infer_cycles; /* the last inference as a whole (cg_main_dsp), in clock units */
  char clock_unit[8];    /* "cycles": the C7x time-stamp counter; "ns" */
} c7x_profile_resp;

/* The strings are NUL-terminated, cut to fit. */
typedef struct C7X_PACKED c7x_profile_row {
  char name[C7X_PROFILE_NAME_MAX];     /* the layer: the ONNX node it computes */
  char module[C7X_PROFILE_MODULE_MAX]; /* its PyTorch module path, or "" */
  char output[C7X_PROFILE_OUTPUT_MAX]; /* its output tensor, "i8[1,64,56,56]" */
  char kernel[C7X_PROFILE_KERNEL_MAX]; /* the runtime function it calls */
  int64_t macs;                        /* multiply-accumulates per inference */
  uint64_t cycles;                     /* the layer in the last inference, clock units */
} c7x_profile_row;

/* flags: bits 0-15 repeat count (0 = 1); bit 16 reserved (KV-resident). */
#define C7X_INFER_REPEAT_MASK 0xFFFFu
typedef struct C7X_PACKED c7x_infer_req {
  uint64_t handle;
  uint32_t model_id; /* 0: the module's embedded weights */
  uint32_t num_inputs;
  uint32_t flags;
  uint32_t reserved;
  /* then num_inputs c7x_wire_tensor */
} c7x_infer_req;

/* INFER_LARGE: the INFER fields, then where the num_inputs descriptors lie
 * in the staging buffer (descs_size = num_inputs · 80 bytes). */
typedef struct C7X_PACKED c7x_infer_large_req {
  c7x_infer_req infer;
  uint64_t descs_addr;
  uint32_t descs_size;
  uint32_t reserved;
} c7x_infer_large_req;

/* Then num_outputs descriptors inline when num_outputs <=
 * C7X_INFER_MAX_INLINE_OUTPUTS; otherwise they are in the result buffer
 * at descs_addr (descs_size bytes) and none follow. */
typedef struct C7X_PACKED c7x_infer_resp {
  int32_t return_value; /* cg_main_dsp's tidsp_status */
  uint32_t num_outputs;
  uint64_t cycles;      /* emulated: nanoseconds of the whole run (1 GHz) */
  uint64_t descs_addr;  /* 0 when inline */
  uint32_t descs_size;
  uint32_t reserved;
} c7x_infer_resp;

#define C7X_STATIC_ASSERT(name, cond) typedef char c7x_assert_##name[(cond) ? 1 : -1]
C7X_STATIC_ASSERT(header_16, sizeof(c7x_msg_header) == 16);
C7X_STATIC_ASSERT(tensor_80, sizeof(c7x_wire_tensor) == 80);
C7X_STATIC_ASSERT(infer_large_40, sizeof(c7x_infer_large_req) == 40);
C7X_STATIC_ASSERT(infer_req_fits,
                  sizeof(c7x_msg_header) + sizeof(c7x_infer_req) +
                          C7X_INFER_MAX_INLINE_INPUTS * sizeof(c7x_wire_tensor) <= C7X_MSG_MAX);
C7X_STATIC_ASSERT(infer_resp_fits,
                  sizeof(c7x_msg_header) + sizeof(c7x_infer_resp) +
                          C7X_INFER_MAX_INLINE_OUTPUTS * sizeof(c7x_wire_tensor) <= C7X_MSG_MAX);
C7X_STATIC_ASSERT(reset_fits, sizeof(c7x_msg_header) + sizeof(c7x_reset_req) +
                                      C7X_RESET_MAX_HANDLES * sizeof(uint64_t) <= C7X_MSG_MAX);
/* How many of `total` items (tensors, profile rows) the page that starts
 * at item `first` (<= total) holds, at most `page` (C7X_INFO_MAX_TENSORS,
 * C7X_PROFILE_MAX_ROWS): the firmware writes that many, and the client
 * expects exactly that many. */
static inline uint32_t c7x_page_rows(uint32_t first, uint32_t total, uint32_t page) {
  return total - first > page ? page : total - first;
}

C7X_STATIC_ASSERT(profile_row_232, sizeof(c7x_profile_row) == 232);
C7X_STATIC_ASSERT(profile_fits, sizeof(c7x_msg_header) + sizeof(c7x_profile_resp) +
                                        C7X_PROFILE_MAX_ROWS * sizeof(c7x_profile_row) <= C7X_MSG_MAX);
C7X_STATIC_ASSERT(info_fits, sizeof(c7x_msg_header) + sizeof(c7x_dyn_info_resp) +
                                     C7X_INFO_MAX_TENSORS * sizeof(c7x_wire_tensor) <= C7X_MSG_MAX);

#endif /* CSTATIC_C7X_PROTOCOL_H */
