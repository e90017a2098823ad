// gemm: row-major (M×K)·(K×N) → M×N through cuBLASLt, autotuned by timing the
// heuristic's top candidates (as frameworks' cuBLASLt autotuning does).
//
// cuBLAS is column-major, so we compute Cᵀ = Bᵀ·Aᵀ: a row-major matrix is its
// transpose in column-major, so no data moves (PyTorch's matmul does the same).
#include <cstdio>
#include <vector>

#include "check.hpp"
#include "context.hpp"
#include "layer.hpp"
#include "op_runner.hpp"
#include "ops.hpp"

namespace tw {

namespace {

constexpr int kMaxCandidates = 8;

struct GemmTypes {
  cudaDataType_t ab;  // A and B
  cudaDataType_t c;   // C/D
  cublasComputeType_t compute;
  cudaDataType_t scale;
  Storage ab_storage, c_storage;
  const char* compute_name;
};

GemmTypes gemm_types(DType t) {
  switch (t) {
    case DType::fp32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, Storage::f32, Storage::f32, "32F"};
    case DType::tf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, Storage::f32, Storage::f32,
              "32F_FAST_TF32"};
    case DType::fp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, Storage::f16, Storage::f16, "32F"};
    case DType::bf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, Storage::bf16, Storage::bf16, "32F"};
    case DType::int8:
      return {CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, Storage::i8, Storage::i32, "32I"};
  }
  return gemm_types(DType::fp32);
}

class MatmulDesc {
 public:
  MatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) {
    TW_CUBLAS(cublasLtMatmulDescCreate(&desc_, compute, scale));
  }
  ~MatmulDesc() { cublasLtMatmulDescDestroy(desc_); }
  MatmulDesc(const MatmulDesc&) = delete;
  MatmulDesc& operator=(const MatmulDesc&) = delete;
  cublasLtMatmulDesc_t get() const { return desc_; }
  void set_transpose(cublasOperation_t a, cublasOperation_t b) {
    int32_t ta = a, tb = b;
    TW_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    TW_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  }

 private:
  cublasLtMatmulDesc_t desc_ = nullptr;
};

// Column-major rows×cols matrix with leading dimension `rows`, `batch` of them back to back.
class MatrixLayout {
 public:
  MatrixLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t batch) {
    TW_CUBLAS(cublasLtMatrixLayoutCreate(&layout_, type, rows, cols, rows));
    int32_t count = static_cast<int32_t>(batch);
    int64_t stride = rows * cols;
    TW_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    TW_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                               sizeof(stride)));
  }
  ~MatrixLayout() { cublasLtMatrixLayoutDestroy(layout_); }
  MatrixLayout(const MatrixLayout&) = delete;
  MatrixLayout& operator=(const MatrixLayout&) = delete;
  cublasLtMatrixLayout_t get() const { return layout_; }

 private:
  cublasLtMatrixLayout_t layout_ = nullptr;
};

template <class T>
T algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T value{};
  size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof(value), &written);
  return value;
}

class GemmRunner : public OpRunner {
 public:
  GemmRunner(Context& ctx, const Layer& layer);
  void select_algorithm() override;
  void launch(int copy) override { run(copy, choice_); }
  std::string algo_name() const override;

 private:
  void run(int copy, const GemmChoice& choice);
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic_candidates();
  GemmChoice autotune();

  int64_t m_, n_, k_, batch_;
  GemmTypes types_;
  std::string cache_key_;
  MatmulDesc op_;
  // cuBLAS operands: cublas A = our B (K×N row-major), cublas B = our A (M×K row-major).
  std::unique_ptr<MatrixLayout> lt_a_, lt_b_, lt_d_;
  size_t act_ = 0, weight_ = 0, out_ = 0;  // our A, our B, our C
  GemmChoice choice_;
};

GemmRunner::GemmRunner(Context& ctx, const Layer& layer)
    : OpRunner(ctx),
      m_(layer.get("M")),
      n_(layer.get("N")),
      k_(layer.get("K")),
      batch_(layer.get_or("batch", 1)),
      types_(gemm_types(layer.dtype)),
      op_(types_.compute, types_.scale) {
  const bool int8 = layer.dtype == DType::int8;
  if (int8 && (k_ % 4 || n_ % 4))
    throw Unsupported("cuBLASLt int8 GEMM needs K and N multiples of 4");
  cache_key_ = std::string("gemm|") + dtype_name(layer.dtype) + "|" + std::to_string(m_) + "|" +
               std::to_string(n_) + "|" + std::to_string(k_) + "|" + std::to_string(batch_);
  if (int8) {
    // Integer tensor-core kernels want the "TN" form: B stored N×K (K contiguous,
    // the nn.Linear weight layout) and transposed by cuBLAS.
    op_.set_transpose(CUBLAS_OP_T, CUBLAS_OP_N);
    lt_a_ = std::make_unique<MatrixLayout>(types_.ab, k_, n_, batch_);
  } else {
    op_.set_transpose(CUBLAS_OP_N, CUBLAS_OP_N);
    lt_a_ = std::make_unique<MatrixLayout>(types_.ab, n_, k_, batch_);
  }
  lt_b_ = std::make_unique<MatrixLayout>(types_.ab, k_, m_, batch_);
  lt_d_ = std::make_unique<MatrixLayout>(types_.c, n_, m_, batch_);
  act_ = add_tensor(batch_ * m_ * k_, types_.ab_storage, false);
  weight_ = add_tensor(batch_ * k_ * n_, types_.ab_storage, false);
  out_ = add_tensor(batch_ * m_ * n_, types_.c_storage, true);
}

void GemmRunner::run(int copy, const GemmChoice& choice) {
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const int32_t alpha_i = 1, beta_i = 0;
  const bool int_scale = types_.scale == CUDA_R_32I;
  const void* alpha = int_scale ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = int_scale ? static_cast<const void*>(&beta_i) : &beta_f;
  void* d = buffer(copy, out_);
  TW_CUBLAS(cublasLtMatmul(ctx_.lt, op_.get(), alpha, buffer(copy, weight_), lt_a_->get(), buffer(copy, act_),
                           lt_b_->get(), beta, d, lt_d_->get(), d, lt_d_->get(), &choice.algo,
                           ctx_.lt_workspace->data(), choice.workspace_bytes, ctx_.stream));
}

std::vector<cublasLtMatmulHeuristicResult_t> GemmRunner::heuristic_candidates() {
  cublasLtMatmulPreference_t pref = nullptr;
  TW_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t ws_bytes = kCublasLtWorkspaceBytes;
  cublasStatus_t st =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes));
  std::vector<cublasLtMatmulHeuristicResult_t> results(kMaxCandidates);
  int count = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(ctx_.lt, op_.get(), lt_a_->get(), lt_b_->get(), lt_d_->get(), lt_d_->get(),
                                        pref, kMaxCandidates, results.data(), &count);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && count == 0))
    throw Unsupported("cuBLASLt heuristic returned no algorithm for this problem");
  TW_CUBLAS(st);
  results.resize(count);
  return results;
}

// Times each candidate on the rotating buffers (time_candidate_us) and keeps the fastest.
GemmChoice GemmRunner::autotune() {
  GemmChoice best;
  double best_us = 1e30;
  std::string last_error;
  for (const auto& cand : heuristic_candidates()) {
    if (cand.state != CUBLAS_STATUS_SUCCESS) continue;
    GemmChoice c{cand.algo, cand.workspaceSize};
    try {
      const double us = time_candidate_us(ctx_.stream, [&](int copy) { run(copy, c); }, copies());
      if (us < best_us) best_us = us, best = c;
    } catch (const std::exception& e) {
      cudaGetLastError();
      last_error = e.what();
    }
  }
  if (best_us == 1e30) throw Unsupported("no cuBLASLt candidate ran: " + last_error);
  return best;
}

void GemmRunner::select_algorithm() {
  auto hit = ctx_.gemm_cache.find(cache_key_);
  if (hit != ctx_.gemm_cache.end()) {
    choice_ = hit->second;
    return;
  }
  choice_ = autotune();
  ctx_.gemm_cache[cache_key_] = choice_;
}

std::string GemmRunner::algo_name() const {
  const auto& a = choice_.algo;
  char text[200];
  std::snprintf(text, sizeof(text), "cublasLt id=%d tile=%u stages=%u splitK=%d swizzle=%u cluster=%u compute=%s",
                algo_attr<int32_t>(a, CUBLASLT_ALGO_CONFIG_ID), algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID),
                algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                algo_attr<int32_t>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
                static_cast<unsigned>(algo_attr<uint16_t>(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)),
                types_.compute_name);
  return text;
}

}  // namespace

std::unique_ptr<OpRunner> make_gemm(Context& ctx, const Layer& layer) {
  return std::make_unique<GemmRunner>(ctx, layer);
}

}  // namespace tw
