/*
 * cg.h — internals shared by the code generator's files (not a public API).
 *
 * One cs_cg context is built by cs_codegen_emit: the schedule, the C names
 * of every tensor, the layer → file split. Each writer (lib0.h, lib*.c,
 * weights, manifest) only reads it.
 */
#ifndef CSTATIC_CODEGEN_CG_H
#define CSTATIC_CODEGEN_CG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "codegen.h"
#include "schedule/schedule.h"

/* ---- growable string ------------------------------------------------ */

typedef struct cs_sbuf {
  char *s;
  size_t len, cap;
  int oom;
} cs_sbuf;

void cs_sbuf_printf(cs_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cs_sbuf_vprintf(cs_sbuf *b, const char *fmt, va_list ap);
void cs_sbuf_puts(cs_sbuf *b, const char *s);
/* Append each of the strings in turn: cs_sbuf_cat(b, "(", type, " *)") is
 * cs_sbuf_puts three times (no format to parse: the hot paths of a large
 * model's text use it). */
#define cs_sbuf_cat(b, ...) cs_sbuf_cat_((b), __VA_ARGS__, (const char *)NULL)
void cs_sbuf_cat_(cs_sbuf *b, ...) __attribute__((sentinel));
/* "%lld" and "0x%llx", by hand: a model of many layers writes millions. */
void cs_sbuf_int(cs_sbuf *b, int64_t v);
void cs_sbuf_hex(cs_sbuf *b, uint64_t v);
void cs_sbuf_free(cs_sbuf *b);
/* A scratch buffer's text went into b: if the scratch ran out of memory,
 * so did b (its text is cut short), and the file it goes to fails. */
static inline void cs_sbuf_taint(cs_sbuf *b, const cs_sbuf *scratch) {
  if (scratch->oom) b->oom = 1;
}

/* ---- C text helpers ------------------------------------------------- */

/* Exact float literal: hex float with f suffix ("0x1.8p+1f"), INFINITY,
 * -INFINITY or NAN (those need <math.h>). buf holds >= 40 bytes. */
const char *cs_c_float(float f, char *buf);
/* int32 literal; INT32_MIN as (-2147483647 - 1). buf >= 24 bytes. */
const char *cs_c_int32(int32_t v, char *buf);
/* Append s as the inside of a C comment (no comment terminator, no
 * newlines, printable ASCII only). */
void cs_c_comment_text(cs_sbuf *b, const char *s);
/* Append s as a C string literal with quotes and escapes. */
void cs_c_string(cs_sbuf *b, const char *s);
/* "i8[1,3,224,224]" */
void cs_c_shape_text(cs_sbuf *b, const cs_value *v);

/* ---- kernels -------------------------------------------------------- */

/* The function a call of this kernel names under target t: fn, or
 * scalar_fn with -kernels=scalar. */
const char *cs_kernel_fn(const cs_kernel_info *ki, const cs_target *t);
/* Append ",\n<indent>[comment: name] value" for each int32 argument of an
 * extern kernel node (its "mm_args"); CS_ERR_INTERNAL naming the node if
 * their count does not match. */
cs_status cs_kernel_extern_call_args(const cs_node *n, const char *indent, cs_sbuf *b);
/* The same with argument i printed as the C expression expr[i] where that
 * is not NULL (expr: one entry per argument): a tile's H_in or C_out. */
cs_status cs_kernel_extern_call_args_with(const cs_node *n, const char *indent, const char *const *expr,
                                          cs_sbuf *b);
/* Multiply-accumulates of a conv/matmul node, 0 for other ops. */
int64_t cs_kernel_macs(const cs_node *n);
/* Append the designated initializer of the node's param struct: "{.n = 1}"
 * on one line when it fits after column col0, else "{" and the fields on
 * lines indented by `indent`. Sets *needs_math when a literal needs
 * <math.h>. `name` names the static array some params point to (concat's
 * axis_len), whose definition is appended to `pre`. */
cs_status cs_kernel_params(const cs_graph *g, const cs_node *n, const char *indent, size_t col0,
                           const char *name, cs_sbuf *pre, cs_sbuf *b, int *needs_math);

/* ---- lib*.c files written on a second thread (file_writer.c) --------- */

struct cs_cg;
typedef struct cs_file_writer cs_file_writer;
/* NULL: out of memory. The writer marks cg->runtime_used from each text
 * (cs_runtime_files_mark) and, with cg->manifest_layers, makes each lib
 * file's manifest records; read them after cs_file_writer_finish. */
cs_file_writer *cs_file_writer_start(struct cs_cg *cg);
/* Queues dir/name with text (taken over: *text is emptied), the file of
 * steps [first, end) (file < 0: no manifest records); an error of an
 * earlier file, or text's own out-of-memory, is returned here. */
cs_status cs_file_writer_put(cs_file_writer *w, const char *dir, const char *name, cs_sbuf *text, int file,
                             int first, int end);
/* Waits for every queued file; the first failure, if any. Frees w. */
cs_status cs_file_writer_finish(cs_file_writer *w);

/* ---- the generation context ----------------------------------------- */

/* A lib*.c file takes layers until their text reaches this many bytes
 * (emit_sources.c): gcc -O2 compiles such a file in a fraction of a second,
 * and a model of 100 000 small layers makes a few hundred files, not
 * thousands. */
enum { CS_FILE_LAYER_BYTES = 128 * 1024 };

typedef struct cs_cg {
  cs_graph *g;
  const cs_target *t;
  const cs_codegen_options *opt;
  cs_schedule s;
  char target_str[256];
  char *model_name;     /* graph name or "model" */
  char **macro;         /* [n_values]: W_… / A_… for weight and arena tensors */
  int n_files;          /* lib0.c … lib{n_files-1}.c */
  int *file_first_step; /* [n_files + 1]; set by cs_cg_write_sources */
  uint64_t weights_checksum;
  int64_t total_macs;
  /* The runtime files the written lib*.c call into (cs_runtime_files_mark). */
  unsigned char runtime_used[CS_RUNTIME_FILES_MAX];
  const cs_source_node **sources; /* the graph's ONNX nodes sorted by name */
  int n_sources;
  struct cs_layer_source *layer_src; /* per node: cs_cg_layer_source, looked up once */
  /* [n_steps + 1]: file f's records of manifest.json's "layers", made by
   * the file writer (cs_cg_manifest_layers) */
  cs_sbuf *manifest_layers;
} cs_cg;

/* The MACs of the scheduled mmalib_* calls: the work on the MMA (manifest.c). */
int64_t cs_cg_mma_macs(const cs_cg *cg);

/* ---- the C7x cycle estimate (c7x_estimate.c) ------------------------ */

/* Where a step's cycles go: the MMA, the core's conv/matmul kernels, the
 * core's other kernels. */
typedef enum cs_c7x_part { CS_C7X_MMA = 0, CS_C7X_CORE_MACS, CS_C7X_CORE_OTHER, CS_C7X_PARTS } cs_c7x_part;

/* Step k's estimated C7x cycles (ir/c7x_cost.h's model), and its part. */
double cs_cg_step_c7x_cycles(const cs_cg *cg, int k, cs_c7x_part *part);
/* The sums over the scheduled steps, per part. */
void cs_cg_c7x_estimate(const cs_cg *cg, double cycles[CS_C7X_PARTS]);

/* ---- layer names (layer_names.c) ------------------------------------ */

/* What a layer is called in reports: the ONNX node it stands for and the
 * PyTorch module path recorded for it ("" when none). Strings owned by
 * the graph. */
typedef struct cs_layer_source {
  const char *name;
  const char *module;
} cs_layer_source;
/* Sort the graph's ONNX nodes (cg->sources) and look up every node's
 * cs_cg_layer_source once (cg->layer_src: the lib*.c comments, the
 * manifest and the profile table each ask for every layer's). */
cs_status cs_cg_index_sources(cs_cg *cg);
cs_layer_source cs_cg_layer_source(const cs_cg *cg, const cs_node *n);

/* Names every weight (W_…) and arena (A_…) tensor in cg->macro. */
cs_status cs_cg_assign_names(cs_cg *cg);

/* Rows of the -profile-layers=1 table: every kernel call of model_run
 * (boundary conversions and cg_main's non-elided layers). */
int cs_cg_profile_rows(const cs_cg *cg);

/* Writers; each returns CS_ERR_IO naming the file on failure. */
cs_status cs_cg_write_header(cs_cg *cg, const char *path);
cs_status cs_cg_write_sources(cs_cg *cg, const char *out_dir);
cs_status cs_cg_write_weights(cs_cg *cg, const char *out_dir);
cs_status cs_cg_write_manifest(cs_cg *cg, const char *path);
/* The "layers" records of steps [first, end) of file lib<file>.c, into out. */
void cs_cg_manifest_layers(const cs_cg *cg, int file, int first, int end, cs_sbuf *out);

/* Weights blob (docs/weights-format.md). */
enum { CS_WEIGHTS_HEADER_BYTES = 64, CS_WEIGHTS_VERSION = 1 };
uint64_t cs_fnv1a64(uint64_t h, const void *data, size_t n);
#define CS_FNV1A64_INIT 0xcbf29ce484222325ull
/* The checksum of the payload as laid out by the schedule. */
uint64_t cs_cg_weights_checksum(const cs_cg *cg);

/* The values one source file refers to, whose offset macros open it: a
 * mark per value and the list of marked ids (a file of a large model uses
 * a few of the graph's values; scanning them all per file was quadratic). */
typedef struct cs_cg_used {
  char *mark; /* [n_values] */
  int *ids;   /* [n_values] */
  int n;
} cs_cg_used;
static inline void cs_cg_use(cs_cg_used *u, int v) {
  if (u && !u->mark[v]) {
    u->mark[v] = 1;
    u->ids[u->n++] = v;
  }
}

/* Expression for the pointer to value v inside generated code (W, A,
 * inputs, outputs in scope), cast to the kernel argument type (`void` for
 * CS_DTYPE_UNDEF). Marks the macro it uses in used (used may be NULL). */
void cs_cg_pointer(const cs_cg *cg, cs_sbuf *b, int v, cs_dtype want, int writable,
                   cs_cg_used *used);

/* ---- InjectMMALIBDMA's C (emit_l2.c; the plan: schedule l2) ---------- */

/* 1 when the step's MMALIB call is staged through L2 / file f has one. */
int cs_cg_step_staged(const cs_cg *cg, int step);
int cs_cg_part_staged(const cs_cg *cg, int f);
/* The kernel's pointer to the L2 copy of input i (0 data, 1 weights). */
void cs_cg_l2_pointer(const cs_cg *cg, int step, int i, cs_dtype dtype, char *buf, size_t size);
/* The pointer a step writes its output through when the plan places that
 * output in L2 for the next step (schedule/dma_tiling_resident.c), in buf;
 * NULL when the output goes to its storage. */
const char *cs_cg_l2_output(const cs_cg *cg, int step, cs_dtype dtype, char *buf, size_t size);
/* Inside a call's block: the DMA copies and the wait before the call. */
void cs_cg_emit_l2_copies(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used);
/* The manifest's per-layer "dma" object of a step with an L2 plan. */
struct cs_json;
void cs_cg_manifest_dma(const cs_cg *cg, struct cs_json *j, int step);
/* Before a traced call: the begin of its compute in the DMA trace (const
 * int32_t tr); after it, the end (emit_l2.c). */
void cs_cg_emit_trace_begin(const cs_cg *cg, cs_sbuf *b, const cs_node *n, const char *indent);
void cs_cg_emit_l2_trace_end(cs_sbuf *b);
/* The opening of a layer's block: "{" and the kernel's `static const T p`
 * (emit_sources.c; the staged layers' emitters use it too). */
cs_status cs_cg_open_call_block(const cs_cg *cg, cs_sbuf *b, const cs_node *n, const cs_kernel_info *ki,
                                int *needs_math);
/* A whole sliced conv layer: the block with its output-channel loop. */
cs_status cs_cg_emit_sliced_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row);
/* Before step `step` computes, the next layer's prefetch it issues (if any). */
void cs_cg_emit_prefetch(const cs_cg *cg, cs_sbuf *b, int step, const char *indent, cs_cg_used *used);
/* A whole OC-tiled k_conv2d_i8 (ScheduleC7xDMATiling): its params, the
 * pipeline over output-channel tiles. */
cs_status cs_cg_emit_oc_tiled_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row,
                                    int *needs_math);
/* A whole N-tiled c7x_dequantize_vecmatmul: the L2 copy of its weights
 * and one call, or the pipeline over weight-row tiles. */
cs_status cs_cg_emit_n_tiled_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row);
/* A whole H-tiled k_conv2d_i8: its params, the tile table, the pipeline
 * over output-row tiles. */
cs_status cs_cg_emit_h_tiled_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row,
                                   int *needs_math);
/* A whole H-tiled MMALIB conv (its input over the L2 budget): the tile
 * table, the pipeline over output-row tiles, one MMALIB call a tile. */
cs_status cs_cg_emit_mmalib_h_tiled_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row);

/* TIDSP_DTYPE_* macro name for a value's dtype, or "0". */
const char *cs_cg_tidsp_dtype_name(cs_dtype t);

/* ---- flavours: -mcpu=c7x / c66x (flavour.c) -------------------------- */

/* 1 for c7x and c66x: TI headers, TVM_DSP_EXPORT on the entry points. */
int cs_cg_is_dsp(const cs_cg *cg);
/* 1 when lib0.c defines cg_main_dsp (c7x). */
int cs_cg_has_dsp_entry(const cs_cg *cg);
/* What goes before an exported definition or declaration: "TVM_DSP_EXPORT\n"
 * on the DSP flavours, "" on the generic target. */
const char *cs_cg_export(const cs_cg *cg);
/* lib*.c: the TI intrinsics header (its host stand-in off the TI compiler). */
void cs_cg_flavour_includes(const cs_cg *cg, cs_sbuf *b);
/* lib0.h: cg_main_dsp's contract and declaration. */
void cs_cg_flavour_header_decl(const cs_cg *cg, cs_sbuf *b);
/* lib0.c: cg_main_dsp, after the descriptor. */
void cs_cg_flavour_dsp_entry(const cs_cg *cg, cs_sbuf *b);

#endif
