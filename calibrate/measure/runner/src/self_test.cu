#include "self_test.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "check.hpp"
#include "context.hpp"
#include "measure.hpp"
#include "op_runner.hpp"
#include "op_table.hpp"

namespace tw {

namespace {

using Vec = std::vector<double>;
// Computes the expected output from the (downloaded) input tensors.
using Reference = std::function<Vec(const Layer&, const std::vector<Vec>&)>;

Vec download(const void* dev, int64_t n, Storage s) {
  std::vector<unsigned char> raw(static_cast<size_t>(n) * storage_bytes(s));
  TW_CUDA(cudaMemcpy(raw.data(), dev, raw.size(), cudaMemcpyDeviceToHost));
  Vec v(n);
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* p = raw.data() + i * storage_bytes(s);
    switch (s) {
      case Storage::f32: { float f; std::memcpy(&f, p, 4); v[i] = f; break; }
      case Storage::f16: { __half h; std::memcpy(&h, p, 2); v[i] = __half2float(h); break; }
      case Storage::bf16: { __nv_bfloat16 b; std::memcpy(&b, p, 2); v[i] = __bfloat162float(b); break; }
      case Storage::i8: v[i] = static_cast<int8_t>(*p); break;
      case Storage::i32: { int32_t x; std::memcpy(&x, p, 4); v[i] = x; break; }
    }
  }
  return v;
}

// ---- CPU references (NHWC activations, filters K×R×S×(C/g) for conv) ----
Vec conv_ref(const Layer& l, const std::vector<Vec>& in) {
  const int64_t N = l.get("N"), C = l.get("C"), H = l.get("H"), W = l.get("W"), K = l.get("K"), R = l.get("R"),
                S = l.get("S"), G = l.get_or("groups", 1);
  const auto st = l.pair_or("stride", {1, 1}), pd = l.pair_or("pad", {0, 0}), dl = l.pair_or("dilation", {1, 1});
  const int64_t P = (H + 2 * pd[0] - dl[0] * (R - 1) - 1) / st[0] + 1;
  const int64_t Q = (W + 2 * pd[1] - dl[1] * (S - 1) - 1) / st[1] + 1;
  const int64_t Cg = C / G, Kg = K / G;
  const Vec &x = in[0], &w = in[1];
  Vec y(N * P * Q * K, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t q = 0; q < Q; ++q)
        for (int64_t k = 0; k < K; ++k) {
          double acc = 0;
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              const int64_t h = p * st[0] - pd[0] + r * dl[0], ww = q * st[1] - pd[1] + s * dl[1];
              if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
              for (int64_t c = 0; c < Cg; ++c)
                acc += x[((n * H + h) * W + ww) * C + (k / Kg) * Cg + c] * w[((k * R + r) * S + s) * Cg + c];
            }
          y[((n * P + p) * Q + q) * K + k] = acc;
        }
  return y;
}

// Transposed conv: scatter each input pixel through filter C×R×S×(K/g).
Vec conv_transpose_ref(const Layer& l, const std::vector<Vec>& in) {
  const int64_t N = l.get("N"), C = l.get("C"), H = l.get("H"), W = l.get("W"), K = l.get("K"), R = l.get("R"),
                S = l.get("S"), G = l.get_or("groups", 1);
  const auto st = l.pair_or("stride", {1, 1}), pd = l.pair_or("pad", {0, 0}), dl = l.pair_or("dilation", {1, 1});
  const int64_t Ho = (H - 1) * st[0] - 2 * pd[0] + dl[0] * (R - 1) + 1;
  const int64_t Wo = (W - 1) * st[1] - 2 * pd[1] + dl[1] * (S - 1) + 1;
  const int64_t Cg = C / G, Kg = K / G;
  const Vec &dy = in[0], &w = in[1];
  Vec dx(N * Ho * Wo * K, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ih = 0; ih < H; ++ih)
      for (int64_t iw = 0; iw < W; ++iw)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              const int64_t oh = ih * st[0] - pd[0] + r * dl[0], ow = iw * st[1] - pd[1] + s * dl[1];
              if (oh < 0 || oh >= Ho || ow < 0 || ow >= Wo) continue;
              for (int64_t kk = 0; kk < Kg; ++kk)
                dx[((n * Ho + oh) * Wo + ow) * K + (c / Cg) * Kg + kk] +=
                    dy[((n * H + ih) * W + iw) * C + c] * w[((c * R + r) * S + s) * Kg + kk];
            }
  return dx;
}

Vec gemm_ref(const Layer& l, const std::vector<Vec>& in) {
  const int64_t M = l.get("M"), N = l.get("N"), K = l.get("K"), B = l.get_or("batch", 1);
  Vec c(B * M * N, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) {
        const double a = in[0][(b * M + m) * K + k];
        for (int64_t n = 0; n < N; ++n) c[(b * M + m) * N + n] += a * in[1][(b * K + k) * N + n];
      }
  return c;
}

Vec eltwise_ref(const Layer& l, const std::vector<Vec>& in) {
  Vec out(l.get("elems"), 0.0);
  for (size_t i = 0; i < out.size(); ++i) {
    for (const Vec& v : in) out[i] += v[i];
    out[i] = std::max(out[i], 0.0);
  }
  return out;
}

Vec reduce_ref(const Layer& l, const std::vector<Vec>& in) {
  const int64_t outer = l.get("outer"), inner = l.get("inner");
  Vec out(outer, 0.0);
  for (int64_t r = 0; r < outer; ++r) {
    for (int64_t j = 0; j < inner; ++j) out[r] += in[0][r * inner + j];
    out[r] /= inner;
  }
  return out;
}

Vec softmax_ref(const Layer& l, const std::vector<Vec>& in) {
  const int64_t outer = l.get("outer"), inner = l.get("inner");
  Vec out(outer * inner);
  for (int64_t r = 0; r < outer; ++r) {
    double mx = -1e300, sum = 0;
    for (int64_t j = 0; j < inner; ++j) mx = std::max(mx, in[0][r * inner + j]);
    for (int64_t j = 0; j < inner; ++j) sum += std::exp(in[0][r * inner + j] - mx);
    for (int64_t j = 0; j < inner; ++j) out[r * inner + j] = std::exp(in[0][r * inner + j] - mx) / sum;
  }
  return out;
}

Vec pool_ref(const Layer& l, const std::vector<Vec>& in) {
  const int64_t N = l.get("N"), C = l.get("C"), H = l.get("H"), W = l.get("W"), R = l.get("R"), S = l.get("S");
  const auto st = l.pair_or("stride", {1, 1}), pd = l.pair_or("pad", {0, 0});
  const bool is_max = l.str_or("mode", "max") == "max";
  const int64_t P = (H + 2 * pd[0] - R) / st[0] + 1, Q = (W + 2 * pd[1] - S) / st[1] + 1;
  Vec out(N * P * Q * C);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t q = 0; q < Q; ++q)
        for (int64_t c = 0; c < C; ++c) {
          double acc = is_max ? -1e300 : 0.0;
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              const int64_t h = p * st[0] - pd[0] + r, w = q * st[1] - pd[1] + s;
              if (h < 0 || h >= H || w < 0 || w >= W) continue;
              const double v = in[0][((n * H + h) * W + w) * C + c];
              acc = is_max ? std::max(acc, v) : acc + v;
            }
          out[((n * P + p) * Q + q) * C + c] = is_max ? acc : acc / (R * S);
        }
  return out;
}

// Tiling copy (elems_out >= elems_in): out[i] = in[i mod elems_in].
Vec copy_ref(const Layer& l, const std::vector<Vec>& in) {
  Vec out(l.get("elems_out"));
  for (size_t i = 0; i < out.size(); ++i) out[i] = in[0][i % in[0].size()];
  return out;
}

struct Check {
  const char* json;
  Reference reference;
  double tolerance;  // on relative L2 error
};

// Relative L2 error; infinite if any element is not finite (poison survived).
double relative_error(const Vec& got, const Vec& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// Runs the check on every path the runner has (conv: graph API and legacy API,
// one line each; a path with nothing to run fails), or once for single-path ops.
bool run_check(Context& ctx, const Check& check) {
  const Layer layer = parse_layer(Json::parse(check.json), 0);
  struct Outcome {
    std::string path;
    double err = INFINITY;
    std::string note;
  };
  std::vector<Outcome> outcomes;
  try {
    ctx.arena->reset();
    auto runner = find_op(layer.op)->make(ctx, layer);
    runner->allocate(1, 0xC0FFEEull);
    std::vector<Vec> inputs;
    size_t out_index = 0;
    for (size_t i = 0; i < runner->tensors().size(); ++i) {
      const TensorSpec& t = runner->tensors()[i];
      if (t.is_output) {
        out_index = i;
        poison(runner->buffer(0, i), t.elems * storage_bytes(t.storage), ctx.stream);
      } else {
        inputs.push_back(download(runner->buffer(0, i), t.elems, t.storage));
      }
    }
    runner->select_algorithm();
    const Vec want = check.reference(layer, inputs);
    const TensorSpec& o = runner->tensors()[out_index];
    std::vector<RunPath> paths = runner->paths();
    const bool single = paths.empty();
    if (single) paths.push_back({"", true, ""});
    for (size_t p = 0; p < paths.size(); ++p) {
      Outcome r{paths[p].name, INFINITY, ""};
      if (!paths[p].available) {
        r.note = "no " + paths[p].name + " path: " + paths[p].note;
        outcomes.push_back(r);
        continue;
      }
      try {
        if (!single) runner->use_path(p);
        poison(runner->buffer(0, out_index), o.elems * storage_bytes(o.storage), ctx.stream);  // autotune wrote it
        runner->launch(0);
        TW_CUDA(cudaStreamSynchronize(ctx.stream));
        r.err = relative_error(download(runner->buffer(0, out_index), o.elems, o.storage), want);
        r.note = runner->algo_name();
      } catch (const std::exception& e) {
        r.note = e.what();
        cudaGetLastError();
      }
      outcomes.push_back(r);
    }
  } catch (const std::exception& e) {
    outcomes.push_back({"", INFINITY, e.what()});
    cudaGetLastError();
  }
  bool all = true;
  for (const Outcome& r : outcomes) {
    const bool pass = r.err < check.tolerance;
    all = all && pass;
    std::printf("%s  rel_err=%.3g (limit %.0e)  %s%s%s  [%s]\n", pass ? "PASS" : "FAIL", r.err, check.tolerance,
                r.path.empty() ? "" : r.path.c_str(), r.path.empty() ? "" : " ", check.json, r.note.c_str());
  }
  return all;
}

const std::vector<Check>& correctness_checks() {
  static const std::vector<Check> checks = {
      {R"({"op":"conv","dtype":"fp32","N":2,"C":8,"H":9,"W":9,"K":16,"R":3,"S":3,"pad":[1,1]})", conv_ref, 1e-3},
      {R"({"op":"conv","dtype":"fp32","N":2,"C":12,"H":11,"W":10,"K":18,"R":3,"S":3,"stride":[2,1],"pad":[2,1],"dilation":[2,1],"groups":3})",
       conv_ref, 1e-3},
      {R"({"op":"conv","dtype":"fp32","N":2,"C":16,"H":8,"W":8,"K":16,"R":3,"S":3,"pad":[1,1],"groups":16})",
       conv_ref, 1e-3},
      // Grouped fp32 (group width 8, as RegNet/ResNeXt) and fp16 depthwise convs,
      // the shapes the graph API's dedicated engines serve.
      {R"({"op":"conv","dtype":"fp32","N":2,"C":32,"H":10,"W":10,"K":32,"R":3,"S":3,"stride":[2,2],"pad":[1,1],"groups":4})",
       conv_ref, 1e-3},
      {R"({"op":"conv","dtype":"fp16","N":2,"C":32,"H":14,"W":14,"K":32,"R":7,"S":7,"pad":[3,3],"groups":32})",
       conv_ref, 1e-2},
      {R"({"op":"conv","dtype":"fp16","N":3,"C":24,"H":15,"W":15,"K":24,"R":3,"S":3,"stride":[2,2],"pad":[1,1],"groups":24})",
       conv_ref, 1e-2},
      {R"({"op":"conv_transpose","dtype":"fp32","N":2,"C":8,"H":5,"W":6,"K":6,"R":3,"S":3,"stride":[2,2],"pad":[1,1]})",
       conv_transpose_ref, 1e-3},
      {R"({"op":"gemm","dtype":"fp16","M":96,"N":72,"K":200,"batch":2})", gemm_ref, 1e-2},
      {R"({"op":"gemm","dtype":"fp16","M":33,"N":17,"K":45})", gemm_ref, 1e-2},
      {R"({"op":"gemm","dtype":"fp32","M":64,"N":48,"K":100})", gemm_ref, 1e-3},
      {R"({"op":"eltwise","dtype":"fp32","elems":1003,"inputs":2})", eltwise_ref, 1e-6},
      {R"({"op":"eltwise","dtype":"fp16","elems":4099,"inputs":1})", eltwise_ref, 1e-3},
      {R"({"op":"reduce","dtype":"fp32","outer":100,"inner":77})", reduce_ref, 1e-5},
      {R"({"op":"reduce","dtype":"fp32","outer":37,"inner":2000})", reduce_ref, 1e-5},
      {R"({"op":"softmax","dtype":"fp32","outer":50,"inner":300})", softmax_ref, 1e-5},
      {R"({"op":"softmax","dtype":"fp32","outer":3,"inner":3000})", softmax_ref, 1e-5},
      {R"({"op":"pool","dtype":"fp32","N":2,"C":8,"H":9,"W":9,"R":3,"S":3,"stride":[2,2],"pad":[1,1],"mode":"max"})",
       pool_ref, 1e-6},
      {R"({"op":"pool","dtype":"fp32","N":2,"C":8,"H":9,"W":9,"R":3,"S":3,"stride":[2,2],"pad":[1,1],"mode":"avg"})",
       pool_ref, 1e-5},
      {R"({"op":"copy","dtype":"fp32","elems_in":1001,"elems_out":1001})", copy_ref, 1e-12},
      {R"({"op":"copy","dtype":"fp32","elems_in":100,"elems_out":1000})", copy_ref, 1e-12},
  };
  return checks;
}

// Every op kind through the full measuring path; "failed" is an error here.
const char* const kTimingLayers[] = {
    R"({"op":"conv","dtype":"fp16","N":8,"C":64,"H":56,"W":56,"K":64,"R":3,"S":3,"pad":[1,1]})",
    R"({"op":"conv","dtype":"bf16","N":8,"C":64,"H":56,"W":56,"K":64,"R":1,"S":1})",
    R"({"op":"conv","dtype":"tf32","N":8,"C":64,"H":28,"W":28,"K":64,"R":3,"S":3,"pad":[1,1]})",
    R"({"op":"conv","dtype":"int8","N":8,"C":64,"H":28,"W":28,"K":64,"R":3,"S":3,"pad":[1,1]})",
    R"({"op":"conv","dtype":"fp16","N":8,"C":96,"H":56,"W":56,"K":96,"R":7,"S":7,"pad":[3,3],"groups":96})",
    R"({"op":"conv_transpose","dtype":"fp16","N":4,"C":64,"H":28,"W":28,"K":32,"R":2,"S":2,"stride":[2,2]})",
    R"({"op":"gemm","dtype":"bf16","M":512,"N":512,"K":512})",
    R"({"op":"gemm","dtype":"int8","M":512,"N":512,"K":512})",
    R"({"op":"gemm","dtype":"tf32","M":512,"N":512,"K":512,"batch":4})",
    R"({"op":"eltwise","dtype":"fp16","elems":1048576,"inputs":2})",
    R"({"op":"pool","dtype":"fp16","N":8,"C":64,"H":56,"W":56,"R":3,"S":3,"stride":[2,2],"pad":[1,1],"mode":"max"})",
    R"({"op":"reduce","dtype":"fp16","outer":4096,"inner":49})",
    R"({"op":"softmax","dtype":"fp16","outer":4096,"inner":1024})",
    R"({"op":"copy","dtype":"fp16","elems_in":1048576,"elems_out":1048576})",
};

bool run_timing_smoke(Context& ctx) {
  bool ok = true;
  for (size_t i = 0; i < sizeof(kTimingLayers) / sizeof(kTimingLayers[0]); ++i) {
    const Layer layer = parse_layer(Json::parse(kTimingLayers[i]), 0);
    const Json out = measure_layer(ctx, layer, 42 + i);
    const std::string status = out["status"].get<std::string>();
    ok = ok && status != "failed";
    std::printf("%s  %-11s %s\n", status == "failed" ? "FAIL" : "PASS", status.c_str(), out.dump().c_str());
  }
  return ok;
}

}  // namespace

int run_self_test(const TimingConfig& timing) {
  std::unique_ptr<Context> ctx;
  try {
    ctx = create_context(timing);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilewave-calibrate: %s\n", e.what());
    return 1;
  }
  bool ok = true;
  try {
    for (const Check& check : correctness_checks()) ok = run_check(*ctx, check) && ok;
    ok = run_timing_smoke(*ctx) && ok;
  } catch (const std::exception& e) {
    std::printf("FAIL  self-test aborted: %s\n", e.what());
    ok = false;
  }
  std::printf("%s\n", ok ? "SELF-TEST PASS" : "SELF-TEST FAIL");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace tw
