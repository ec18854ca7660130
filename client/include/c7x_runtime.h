/*
 * c7x_runtime.h — the C++ API of the C7x host client: c7x::Module, a
 * header-only C++14 class over the C API (c7x_client.h,
 * libc7x_arm_runtime). Link libc7x_arm_runtime; nothing else.
 *
 *   c7x::Module m;
 *   if (m.Open() != C7X_OK || m.Load("lib0.out") != C7X_OK) { puts(m.LastError()); ... }
 *   DLTensor x;
 *   m.CreateInput(0, &x);                  // a tensor in the staging buffer
 *   fill((float *)x.data);                 // ... passed without a copy
 *   std::vector<c7x::OutputTensor> y;
 *   if (m.Run({x}, &y) != C7X_OK) { ... }
 *   use((const float *)y[0].dl.data);      // valid until the next Run or Close
 *
 * Tensors are DLPack DLTensors (dense: strides NULL or compact; dtype codes
 * kDLInt / kDLUInt / kDLFloat, lanes 1; device kDLCPU). Include
 * <dlpack/dlpack.h> before this header to use DLPack's own; otherwise the
 * definitions below (DLPack's layout, and its include guard) stand in.
 *
 * Lifetimes (spec/arm-host-client.txt): an input from CreateInput lies in
 * the staging buffer (Run passes it in place) and stays valid until Close;
 * an input elsewhere is copied there by Run. OutputTensor.dl.data is a view
 * of the result buffer, valid until the next Run() or Close() — copy what
 * must outlive that. dl.shape of inputs and outputs points into the
 * Module (valid until Load or Close).
 *
 * No exceptions: every call returns C7X_OK or a C7X_ERR_* status
 * (cstatic/c7x_protocol.h), with LastError() naming what failed. A Module
 * is movable, not copyable, and not thread-safe (one per thread, or a
 * lock); the destructor unloads the module and disconnects.
 */
#ifndef C7X_RUNTIME_H
#define C7X_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "c7x_client.h"

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
/* DLPack's structs (dmlc/dlpack, Apache-2.0 interface), as far as a host
 * tensor needs them. */
extern "C" {
typedef enum { kDLCPU = 1 } DLDeviceType;
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;
typedef enum { kDLInt = 0U, kDLUInt = 1U, kDLFloat = 2U } DLDataTypeCode;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;
}
#endif

namespace c7x {

/* An output of Run: dl describes it (data: a view of the result buffer);
 * nbytes its size. */
struct OutputTensor {
  DLTensor dl;
  size_t nbytes;
};

class Module {
 public:
  Module() = default;
  ~Module() { Close(); }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  Module(Module &&o) noexcept { *this = std::move(o); }
  Module &operator=(Module &&o) noexcept {
    if (this != &o) {
      Close();
      client_ = o.client_;
      handle_ = o.handle_;
      loaded_ = o.loaded_;
      in_ = std::move(o.in_);
      out_ = std::move(o.out_);
      in_shapes_ = std::move(o.in_shapes_);
      out_shapes_ = std::move(o.out_shapes_);
      outputs_ = std::move(o.outputs_);
      cycles_ = o.cycles_;
      error_ = std::move(o.error_);
      o.client_ = nullptr;
      o.loaded_ = false;
      Rewire();
    }
    return *this;
  }

  /* Connect to the firmware: socket NULL is $C7X_FW_SOCKET, else
   * /tmp/c7x_fw.sock. */
  int Open(const char *socket = nullptr) {
    Close();
    client_ = c7x_client_open_path(socket);
    if (!client_) return Fail(c7x_client_open_status(), c7x_client_open_error());
    return C7X_OK;
  }

  /* Load a module file (`cstatic compile -t "c_static_lib -mcpu=c7x"
   * --emit=module` → lib0.out) and learn its tensors; a module loaded
   * before is unloaded. */
  int Load(const char *path) {
    if (!client_) return Fail(C7X_ERR_INVALID, "Load before Open");
    Unload();
    uint64_t h = 0;
    int s = c7x_client_dyn_load(client_, path, &h);
    if (s != C7X_OK) return Fail(s);
    handle_ = h;
    loaded_ = true;
    in_.assign(C7X_MAX_TENSORS, c7x_tensor_desc());
    out_.assign(C7X_MAX_TENSORS, c7x_tensor_desc());
    int n_in = C7X_MAX_TENSORS, n_out = C7X_MAX_TENSORS;
    s = c7x_client_dyn_info(client_, h, in_.data(), &n_in, out_.data(), &n_out);
    if (s != C7X_OK) {
      Fail(s);
      Unload();
      return s;
    }
    in_.resize((size_t)n_in);
    out_.resize((size_t)n_out);
    in_shapes_.assign(in_.size() * C7X_MAX_NDIM, 0);
    out_shapes_.assign(out_.size() * C7X_MAX_NDIM, 0);
    for (size_t i = 0; i < in_.size(); i++)
      std::memcpy(&in_shapes_[i * C7X_MAX_NDIM], in_[i].shape, sizeof in_[i].shape);
    outputs_.assign(out_.size(), OutputTensor());
    Rewire();
    return C7X_OK;
  }

  bool IsLoaded() const { return loaded_; }
  uint64_t Handle() const { return handle_; }
  int NumInputs() const { return (int)in_.size(); }
  int NumOutputs() const { return (int)out_.size(); }

  /* What input i must be (data NULL). */
  DLTensor InputSpec(int i) const { return ToDL(in_.at((size_t)i), nullptr, InShape(i)); }
  /* What output j is (data NULL until a Run). */
  DLTensor OutputSpec(int j) const { return ToDL(out_.at((size_t)j), nullptr, OutShape(j)); }

  /* A zero-filled tensor for input index inside the staging buffer: Run
   * passes it without copying. Valid until Close (the contents until the
   * firmware restarts). */
  int CreateInput(int index, DLTensor *out) {
    if (!loaded_) return Fail(C7X_ERR_INVALID, "CreateInput before Load");
    if (index < 0 || index >= NumInputs()) return Fail(C7X_ERR_INVALID, "CreateInput: no input " + std::to_string(index));
    const c7x_tensor_desc &d = in_[(size_t)index];
    void *p = c7x_client_create_input(client_, d.data_size ? d.data_size : 1);
    if (!p) return Fail(C7X_ERR_NOMEM);
    std::memset(p, 0, d.data_size);
    *out = ToDL(d, p, InShape(index));
    return C7X_OK;
  }

  /* Run the module on inputs (one per model input, in order). outputs, if
   * given, receives a view of every output: valid until the next Run or
   * Close. repeat > 1 runs it that many times (the last run's outputs). */
  int Run(const DLTensor *inputs, int n_inputs, std::vector<OutputTensor> *outputs = nullptr,
          unsigned repeat = 1) {
    if (!loaded_) return Fail(C7X_ERR_INVALID, "Run before Load");
    if (n_inputs < 0 || n_inputs > C7X_MAX_TENSORS)
      return Fail(C7X_ERR_INVALID, "Run: " + std::to_string(n_inputs) + " inputs");
    if (repeat < 1 || repeat > C7X_INFER_REPEAT_MASK) return Fail(C7X_ERR_INVALID, "Run: repeat " + std::to_string(repeat));
    std::vector<c7x_tensor_desc> in((size_t)(n_inputs ? n_inputs : 1));
    for (int i = 0; i < n_inputs; i++) {
      int s = FromDL(inputs[i], i, &in[(size_t)i]);
      if (s != C7X_OK) return s;
    }
    std::vector<c7x_tensor_desc> out(out_.size() ? out_.size() : 1);
    int n_out = (int)out_.size();
    uint64_t cycles = 0;
    int s = c7x_client_infer_flags(client_, handle_, 0, in.data(), n_inputs, out.data(), &n_out, &cycles,
                                   repeat > 1 ? repeat : 0);
    if (s != C7X_OK) {
      if (IsFault(s)) loaded_ = false; /* the module died with the firmware */
      return Fail(s);
    }
    cycles_ = cycles;
    for (int j = 0; j < n_out && j < (int)outputs_.size(); j++) {
      outputs_[(size_t)j].dl = ToDL(out[(size_t)j], out[(size_t)j].data, OutShape(j));
      outputs_[(size_t)j].nbytes = out[(size_t)j].data_size;
    }
    if (outputs) *outputs = outputs_;
    return C7X_OK;
  }
  int Run(std::initializer_list<DLTensor> inputs, std::vector<OutputTensor> *outputs = nullptr,
          unsigned repeat = 1) {
    return Run(inputs.begin(), (int)inputs.size(), outputs, repeat);
  }
  int Run(const std::vector<DLTensor> &inputs, std::vector<OutputTensor> *outputs = nullptr,
          unsigned repeat = 1) {
    return Run(inputs.data(), (int)inputs.size(), outputs, repeat);
  }

  /* The firmware's cycle count of the last Run (all its repeats). */
  uint64_t LastCycles() const { return cycles_; }

  /* The per-layer profile of the module's last inference (compiled with
   * -profile-layers=1): the totals and one row per layer. */
  int Profile(c7x_profile *info, std::vector<c7x_profile_row> *layers) {
    if (!loaded_) return Fail(C7X_ERR_INVALID, "Profile before Load");
    int n = 0;
    int s = c7x_client_profile(client_, handle_, info, nullptr, &n);
    if (s != C7X_OK) return Fail(s);
    layers->assign(info->num_layers, c7x_profile_row());
    n = (int)layers->size();
    s = c7x_client_profile(client_, handle_, info, layers->data(), &n);
    if (s != C7X_OK) return Fail(s);
    layers->resize((size_t)n);
    return C7X_OK;
  }
  /* The same as the table `cstatic run --profile` prints (csv: its CSV). */
  int ProfileText(std::string *text, bool csv = false) {
    c7x_profile info;
    std::vector<c7x_profile_row> rows;
    int s = Profile(&info, &rows);
    if (s != C7X_OK) return s;
    size_t need = c7x_profile_format(&info, rows.data(), (int)rows.size(), csv, nullptr, 0);
    std::vector<char> buf(need + 1);
    c7x_profile_format(&info, rows.data(), (int)rows.size(), csv, buf.data(), buf.size());
    text->assign(buf.data(), need);
    return C7X_OK;
  }

  /* Unload the module (if any) and disconnect. Output views and inputs
   * from CreateInput are invalid afterwards. */
  void Close() {
    Unload();
    if (client_) c7x_client_close(client_);
    client_ = nullptr;
  }

  const char *LastError() const { return error_.c_str(); }
  /* The C client underneath, for what the class does not wrap. */
  c7x_client *Client() const { return client_; }

 private:
  static bool IsFault(int s) { return s == C7X_ERR_FAULT || s == C7X_ERR_TIMEOUT; }

  int Fail(int status, const std::string &why = std::string()) {
    error_ = !why.empty() ? why : client_ ? c7x_client_last_error(client_) : c7x_strerror(status);
    if (error_.empty()) error_ = c7x_strerror(status);
    return status;
  }

  void Unload() {
    if (loaded_ && client_) c7x_client_dyn_unload(client_, handle_);
    loaded_ = false;
    handle_ = 0;
    if (client_) c7x_client_reset_inputs(client_);
  }

  int64_t *InShape(int i) const { return const_cast<int64_t *>(&in_shapes_[(size_t)i * C7X_MAX_NDIM]); }
  int64_t *OutShape(int j) const { return const_cast<int64_t *>(&out_shapes_[(size_t)j * C7X_MAX_NDIM]); }

  /* After Load or a move: the shapes the DLTensors point at. */
  void Rewire() {
    for (size_t j = 0; j < out_.size(); j++) {
      std::memcpy(&out_shapes_[j * C7X_MAX_NDIM], out_[j].shape, sizeof out_[j].shape);
      outputs_[j].dl.shape = OutShape((int)j);
    }
  }

  static DLTensor ToDL(const c7x_tensor_desc &d, void *data, int64_t *shape) {
    DLTensor t;
    t.data = data;
    t.device.device_type = kDLCPU;
    t.device.device_id = 0;
    t.ndim = d.ndim;
    t.dtype.code = (uint8_t)d.dtype_code;
    t.dtype.bits = (uint8_t)d.dtype_bits;
    t.dtype.lanes = 1;
    t.shape = shape;
    t.strides = nullptr;
    t.byte_offset = 0;
    return t;
  }

  /* A dense DLTensor as the C client's descriptor; the firmware checks it
   * against the model (dtype, shape, size). */
  int FromDL(const DLTensor &t, int i, c7x_tensor_desc *d) {
    const std::string what = "input " + std::to_string(i) + ": ";
    if (t.ndim < 0 || t.ndim > C7X_MAX_NDIM)
      return Fail(C7X_ERR_INVALID, what + "ndim " + std::to_string(t.ndim) + " outside [0, 6]");
    if (t.dtype.lanes != 1 || t.dtype.bits == 0 || t.dtype.bits % 8)
      return Fail(C7X_ERR_INVALID, what + "dtype with " + std::to_string(t.dtype.lanes) + " lanes of " +
                                       std::to_string(t.dtype.bits) + " bits");
    if (t.ndim > 0 && !t.shape) return Fail(C7X_ERR_INVALID, what + "no shape");
    if (!t.data) return Fail(C7X_ERR_INVALID, what + "no data");
    size_t n = (size_t)t.dtype.bits / 8;
    int64_t expect = 1;
    for (int k = t.ndim - 1; k >= 0; k--) {
      if (t.shape[k] < 0) return Fail(C7X_ERR_INVALID, what + "negative dimension");
      if (t.strides && t.shape[k] != 1 && t.strides[k] != expect)
        return Fail(C7X_ERR_INVALID, what + "strided (the firmware takes dense row-major tensors)");
      expect *= t.shape[k];
    }
    std::memset(d, 0, sizeof *d);
    d->data = static_cast<uint8_t *>(t.data) + t.byte_offset;
    d->ndim = t.ndim;
    d->dtype_code = t.dtype.code;
    d->dtype_bits = t.dtype.bits;
    for (int k = 0; k < t.ndim; k++) {
      d->shape[k] = t.shape[k];
      n *= (size_t)t.shape[k];
    }
    d->data_size = n;
    return C7X_OK;
  }

  c7x_client *client_ = nullptr;
  uint64_t handle_ = 0;
  bool loaded_ = false;
  std::vector<c7x_tensor_desc> in_, out_;
  std::vector<int64_t> in_shapes_, out_shapes_;
  std::vector<OutputTensor> outputs_;
  uint64_t cycles_ = 0;
  std::string error_;
};

}  // namespace c7x

#endif /* C7X_RUNTIME_H */
