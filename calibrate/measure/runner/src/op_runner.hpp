// Base class of every op runner. A runner owns the tensors of one launch,
// replicated `copies` times so successive launches rotate through memory
// larger than L2, and knows how to autotune and enqueue its kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dtype.hpp"

namespace tw {

struct Context;

// One of several library paths an op can run through (conv: the cuDNN graph
// API and the legacy API). The measure loop times every available path in full
// and reports the fastest, plus "<name>_us" per path.
struct RunPath {
  std::string name;  // "backend", "legacy"
  bool available = false;
  std::string note;  // why not, when unavailable
};

struct TensorSpec {
  int64_t elems = 0;
  Storage storage = Storage::f32;
  bool is_output = false;
};

class OpRunner {
 public:
  explicit OpRunner(Context& ctx) : ctx_(ctx) {}
  virtual ~OpRunner() = default;
  OpRunner(const OpRunner&) = delete;
  OpRunner& operator=(const OpRunner&) = delete;

  // Bytes of one buffer set (every tensor one launch touches).
  size_t set_bytes() const;
  // Takes `copies` sets from the arena; inputs get standard-normal values.
  void allocate(int copies, uint64_t seed);
  int copies() const { return static_cast<int>(buffers_.size()); }
  const std::vector<TensorSpec>& tensors() const { return tensors_; }
  void* buffer(int copy, size_t tensor) const { return buffers_.at(copy).at(tensor); }

  // Autotune (cudnnFind, cuBLASLt candidates). Runs after allocate(), untimed.
  virtual void select_algorithm() {}
  // Enqueues one launch on ctx.stream using buffer set `copy`.
  virtual void launch(int copy) = 0;
  // What ran, e.g. "IMPLICIT_PRECOMP_GEMM/TENSOR_OP" or a kernel name.
  virtual std::string algo_name() const = 0;
  // After select_algorithm(): the paths (empty for single-path ops), and
  // switching launch() and algo_name() to one of the available ones.
  virtual std::vector<RunPath> paths() const { return {}; }
  virtual void use_path(size_t index) { (void)index; }

 protected:
  // Declares a tensor; returns its index for buffer().
  size_t add_tensor(int64_t elems, Storage storage, bool is_output);
  Context& ctx_;

 private:
  std::vector<TensorSpec> tensors_;
  std::vector<std::vector<void*>> buffers_;  // [copy][tensor]
};

}  // namespace tw
