#include "op_runner.hpp"

#include "context.hpp"

namespace tw {

size_t OpRunner::add_tensor(int64_t elems, Storage storage, bool is_output) {
  tensors_.push_back({elems, storage, is_output});
  return tensors_.size() - 1;
}

size_t OpRunner::set_bytes() const {
  size_t bytes = 0;
  for (const auto& t : tensors_) bytes += static_cast<size_t>(t.elems) * storage_bytes(t.storage);
  return bytes;
}

void OpRunner::allocate(int copies, uint64_t seed) {
  buffers_.assign(copies, {});
  for (int c = 0; c < copies; ++c) {
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const TensorSpec& t = tensors_[i];
      void* p = ctx_.arena->alloc(static_cast<size_t>(t.elems) * storage_bytes(t.storage));
      // Outputs are filled too: never start from zeros or stale data.
      fill_randn(p, t.elems, t.storage, seed + 1000003ull * (c * tensors_.size() + i), ctx_.stream);
      buffers_[c].push_back(p);
    }
  }
}

}  // namespace tw
