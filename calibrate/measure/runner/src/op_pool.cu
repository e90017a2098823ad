// pool: cudnnPoolingForward on NHWC tensors (max, or average counting padding
// as PyTorch's default count_include_pad=True does).
#include "check.hpp"
#include "context.hpp"
#include "cudnn_desc.hpp"
#include "layer.hpp"
#include "op_runner.hpp"
#include "ops.hpp"

namespace tw {

namespace {

cudnnDataType_t pool_data_type(DType t) {
  switch (t) {
    case DType::fp32:
    case DType::tf32: return CUDNN_DATA_FLOAT;
    case DType::fp16: return CUDNN_DATA_HALF;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    case DType::int8: return CUDNN_DATA_INT8;
  }
  return CUDNN_DATA_FLOAT;
}

class PoolRunner : public OpRunner {
 public:
  PoolRunner(Context& ctx, const Layer& layer);
  void launch(int copy) override;
  std::string algo_name() const override { return "cudnnPoolingForward/" + mode_; }

 private:
  std::string mode_;
  TensorDesc in_desc_, out_desc_;
  PoolDesc pool_desc_;
  size_t in_ = 0, out_ = 0;
};

PoolRunner::PoolRunner(Context& ctx, const Layer& layer) : OpRunner(ctx), mode_(layer.str_or("mode", "max")) {
  const int64_t n = layer.get("N"), c = layer.get("C"), h = layer.get("H"), w = layer.get("W");
  const auto stride = layer.pair_or("stride", {1, 1});
  const auto pad = layer.pair_or("pad", {0, 0});
  const cudnnPoolingMode_t mode =
      mode_ == "avg" ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING : CUDNN_POOLING_MAX;
  const cudnnDataType_t type = pool_data_type(layer.dtype);
  TW_CUDNN(cudnnSetPooling2dDescriptor(pool_desc_.get(), mode, CUDNN_NOT_PROPAGATE_NAN,
                                       static_cast<int>(layer.get("R")), static_cast<int>(layer.get("S")),
                                       static_cast<int>(pad[0]), static_cast<int>(pad[1]),
                                       static_cast<int>(stride[0]), static_cast<int>(stride[1])));
  TW_CUDNN(cudnnSetTensor4dDescriptor(in_desc_.get(), CUDNN_TENSOR_NHWC, type, static_cast<int>(n),
                                      static_cast<int>(c), static_cast<int>(h), static_cast<int>(w)));
  int on, oc, oh, ow;
  TW_CUDNN(cudnnGetPooling2dForwardOutputDim(pool_desc_.get(), in_desc_.get(), &on, &oc, &oh, &ow));
  if (oh < 1 || ow < 1) throw LayerError("pooling output is empty");
  TW_CUDNN(cudnnSetTensor4dDescriptor(out_desc_.get(), CUDNN_TENSOR_NHWC, type, on, oc, oh, ow));
  const Storage st = storage_of(layer.dtype);
  in_ = add_tensor(n * c * h * w, st, false);
  out_ = add_tensor(int64_t(on) * oc * oh * ow, st, true);
}

void PoolRunner::launch(int copy) {
  const float alpha = 1.0f, beta = 0.0f;
  TW_CUDNN(cudnnPoolingForward(ctx_.cudnn, pool_desc_.get(), &alpha, in_desc_.get(), buffer(copy, in_), &beta,
                               out_desc_.get(), buffer(copy, out_)));
}

}  // namespace

std::unique_ptr<OpRunner> make_pool(Context& ctx, const Layer& layer) {
  return std::make_unique<PoolRunner>(ctx, layer);
}

}  // namespace tw
