#include "conv_backend.hpp"

#include <algorithm>

namespace tw {

namespace {

constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;
constexpr int64_t kAlignment = 16;  // bytes; arena buffers are 256-byte aligned
// Most configs read per heuristics mode (mode A ranks them; later ones rarely win).
constexpr int64_t kMaxHeuristicResults = 24;

// NHWC tensor described in cuDNN's logical N,C,H,W order with NHWC strides.
BackendDesc nhwc_tensor(int64_t uid, cudnnDataType_t type, int64_t n, int64_t c, int64_t h, int64_t w) {
  BackendDesc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t dims[4] = {n, c, h, w};
  const int64_t strides[4] = {h * w * c, 1, w * c, c};
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims, 4)
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides, 4)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &kAlignment)
      .finalize();
  return t;
}

// Reads up to `max` elements of an attribute; returns how many there are.
template <class T>
int64_t get_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                 int64_t max, T* out) {
  int64_t count = 0;
  TW_CUDNN(cudnnBackendGetAttribute(d, name, type, max, &count, out));
  return count;
}

}  // namespace

struct BackendConvGraph {
  BackendDesc x, w, y, conv, op, graph;
  BackendConvGraph(cudnnHandle_t handle, const BackendConvProblem& p)
      : x(nhwc_tensor(kUidX, p.data, p.N, p.C, p.H, p.W)),
        w(nhwc_tensor(kUidW, p.data, p.K, p.C / p.groups, p.R, p.S)),  // groups follow from C vs C/g
        y(nhwc_tensor(kUidY, p.data, p.N, p.K, p.P, p.Q)),
        conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR),
        op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR),
        graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) {
    const int64_t spatial = 2;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &p.compute)
        .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode)
        .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial)
        .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, p.pad.data(), 2)
        .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, p.pad.data(), 2)
        .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, p.stride.data(), 2)
        .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, p.dilation.data(), 2)
        .finalize();
    const float alpha = 1.0f, beta = 0.0f;
    op.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y)
        .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha)
        .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta)
        .finalize();
    graph.set_desc(CUDNN_ATTR_OPERATIONGRAPH_OPS, op)
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle)
        .finalize();
  }
};

BackendConvTuner::BackendConvTuner(cudnnHandle_t handle, const BackendConvProblem& p)
    : handle_(handle), graph_(std::make_shared<BackendConvGraph>(handle, p)) {
  std::vector<std::pair<int64_t, std::vector<std::pair<int, int64_t>>>> seen;  // engine, knobs
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    BackendDesc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph_->graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
    if (cudnnBackendFinalize(heur.get()) != CUDNN_STATUS_SUCCESS) continue;
    int64_t available = 0;
    if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                 &available, nullptr) != CUDNN_STATUS_SUCCESS)
      continue;
    const int64_t wanted = std::min(available, kMaxHeuristicResults);
    std::vector<std::shared_ptr<BackendDesc>> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < wanted; ++i) {
      cfgs.push_back(std::make_shared<BackendDesc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(cfgs.back()->get());
    }
    int64_t got = 0;
    if (wanted == 0 || cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, wanted, &got, raw.data()) !=
                           CUDNN_STATUS_SUCCESS)
      continue;
    for (int64_t i = 0; i < std::min(got, wanted); ++i) {
      BackendDesc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      cudnnBackendDescriptor_t engine_raw = engine.get();
      int64_t index = -1;
      cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
      cudnnBackendBehaviorNote_t behavior[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
      int64_t n_notes = 0, n_behavior = 0;
      try {
        get_attr(cfgs[i]->get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine_raw);
        get_attr(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
        n_notes = get_attr(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                           CUDNN_NUMERICAL_NOTE_TYPE_COUNT, notes);
        n_behavior = get_attr(engine.get(), CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                              CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, behavior);
      } catch (const std::exception&) {
        continue;
      }
      // As PyTorch: never engines that down-convert inputs; TENSOR_CORE engines
      // (TF32 on float data) only when tensor-op math is allowed.
      bool drop = false, rtc = false;
      for (int64_t k = 0; k < std::min<int64_t>(n_notes, CUDNN_NUMERICAL_NOTE_TYPE_COUNT); ++k)
        drop |= notes[k] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
                (notes[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && !p.allow_tensor_core);
      for (int64_t k = 0; k < std::min<int64_t>(n_behavior, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT); ++k)
        rtc |= behavior[k] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
      if (drop) {
        ++filtered_;
        continue;
      }
      // Knob choices identify the config within its engine.
      std::vector<std::pair<int, int64_t>> knobs;
      std::vector<BackendDesc> knob_descs;
      std::vector<cudnnBackendDescriptor_t> knob_raw;
      for (int k = 0; k < CUDNN_KNOB_TYPE_COUNTS; ++k) {
        knob_descs.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
        knob_raw.push_back(knob_descs.back().get());
      }
      int64_t n_knobs = 0;
      if (cudnnBackendGetAttribute(cfgs[i]->get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                   CUDNN_KNOB_TYPE_COUNTS, &n_knobs, knob_raw.data()) == CUDNN_STATUS_SUCCESS) {
        for (int64_t k = 0; k < std::min<int64_t>(n_knobs, CUDNN_KNOB_TYPE_COUNTS); ++k) {
          cudnnBackendKnobType_t type{};
          int64_t value = 0, c1 = 0, c2 = 0;
          if (cudnnBackendGetAttribute(knob_raw[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &c1,
                                       &type) == CUDNN_STATUS_SUCCESS &&
              cudnnBackendGetAttribute(knob_raw[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &c2,
                                       &value) == CUDNN_STATUS_SUCCESS)
            knobs.emplace_back(static_cast<int>(type), value);
        }
      }
      std::sort(knobs.begin(), knobs.end());
      if (std::find(seen.begin(), seen.end(), std::make_pair(index, knobs)) != seen.end()) continue;
      seen.emplace_back(index, knobs);
      std::string name = "engine=" + std::to_string(index);
      if (!knobs.empty()) {
        name += " knobs=";
        for (size_t k = 0; k < knobs.size(); ++k)
          name += (k ? "," : "") + std::to_string(knobs[k].first) + ":" + std::to_string(knobs[k].second);
      }
      if (rtc) name += " rtc";
      configs_.push_back(cfgs[i]);
      names_.push_back(name);
    }
  }
  if (configs_.empty())
    throw Unsupported("cuDNN graph API: heuristics returned no usable engine config (" + std::to_string(filtered_) +
                      " filtered by numerical notes)");
}

std::unique_ptr<BackendConvPlan> BackendConvTuner::make_plan(size_t i, size_t workspace_cap, std::string* why) const {
  auto plan = std::make_unique<BackendConvPlan>();
  plan->graph = graph_;
  plan->config = configs_.at(i);
  plan->name = names_.at(i);
  cudnnBackendDescriptor_t cfg = plan->config->get();
  try {
    plan->plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle_)
        .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, &cfg)
        .finalize();
    get_attr(plan->plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
             &plan->workspace_bytes);
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return nullptr;
  }
  if (plan->workspace_bytes < 0 || static_cast<size_t>(plan->workspace_bytes) > workspace_cap) {
    if (why) *why = "workspace " + std::to_string(plan->workspace_bytes >> 20) + " MiB over the cap";
    return nullptr;
  }
  return plan;
}

BackendDesc make_conv_variant_pack(void* x, void* w, void* y, void* workspace) {
  BackendDesc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  void* ptrs[3] = {x, w, y};
  const int64_t uids[3] = {kUidX, kUidW, kUidY};
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs, 3)
      .set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids, 3)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace)
      .finalize();
  return pack;
}

void execute_backend_plan(cudnnHandle_t handle, const BackendConvPlan& plan, const BackendDesc& variant_pack) {
  TW_CUDNN(cudnnBackendExecute(handle, plan.plan.get(), variant_pack.get()));
}

}  // namespace tw
