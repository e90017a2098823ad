// Stage 4a: one entry per ONNX operator — how its node lowers to a kernel
// problem and what part it can play in fusion. Families live in src/ops/*.cpp,
// one file each; adding an op is one entry there plus its test.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tilewave/exec_axes.h"
#include "tilewave/layer.h"
#include "tilewave/model.h"
#include "tilewave/shape_context.h"

namespace tilewave {

// What part an op can play in a runtime's fusion (docs/model.md "Runtimes").
enum class FusionRole {
  none,         // shape-only: no kernel at all
  gemm,         // conv/gemm/matmul: a library kernel; can absorb an elementwise epilogue (tensorrt)
  elementwise,  // can join an epilogue or a chain of elementwise ops
  reduction,    // pooling and reductions: a generated kernel can take its producers in (inductor)
  opaque,       // a kernel of its own
};

class OpRegistry;

struct LowerContext {
  const Model& model;
  const Node& node;
  DType dtype;
  // The configuration's activation layout: how a 4-D tensor lies in memory
  // between framework ops (ExecutionConfig::activation_layout).
  Layout layout;
  // The runtime copies a permuted view an op needs contiguous
  // (RuntimeProfile::copies_permuted_views).
  bool copies_permuted_views = false;
  // The ops' entries, for rules that ask what their readers are (an expand
  // read only by elementwise ops); null where no graph surrounds the node.
  const OpRegistry* registry = nullptr;
  // The runtime resamples with PyTorch's own kernels: a linear NCHW one that
  // loops over planes, and per-value ones (RuntimeProfile::aten_resample_kernels).
  bool aten_resample_kernels = false;
  // Shape of input/output i; throws Unmodelled if absent or unknown.
  const TensorInfo& input(size_t i) const;
  const TensorInfo& output(size_t i) const;
  bool has_input(size_t i) const { return i < node.inputs.size() && !node.inputs[i].empty(); }
  bool input_is_static(size_t i) const;
  int64_t bytes_of(int64_t elems) const { return elems * dtype_bytes(dtype); }
  // Why a tensor's shape is unknown, from shape inference.
  std::string unknown_why(const std::string& tensor, const char* role) const;
};

// Thrown by a lowering rule for a node it cannot model (3-D conv, unknown
// shape …); the node becomes an "unmodelled" row with this reason.
struct Unmodelled : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Returns the kernel's problem, or nullopt for a node that does no GPU work.
using LowerFn = std::function<std::optional<Layer>(const LowerContext&)>;
// Sets the outputs' shapes (and known values) from the inputs' (stage 2);
// throws ShapeUnknown when it cannot, ctx.fail() for an inconsistent node.
using ShapeFn = std::function<void(ShapeContext&)>;

// What a node of the op must look like before any shape or value rule runs
// (docs/errors.md "Checked before use"); check_signature() enforces it, so that
// shape functions and lowerings may index the dims of a declared rank.
// Attribute types are not declared here: they come from one vocabulary
// (attribute_kind), as ONNX gives each attribute name one type across ops.
struct OpSignature {
  struct Rank {
    size_t input;
    int64_t min, max;
  };
  struct AttrRange {
    std::string name;
    int64_t min, max;  // every value of an INT or INTS attribute
  };
  int min_inputs = 0;
  int max_inputs = -1;  // -1: up to kMaxNodeInputs
  std::vector<Rank> ranks;
  std::vector<AttrRange> attr_ranges;

  OpSignature& inputs(int min, int max = -1) {
    min_inputs = min;
    max_inputs = max;
    return *this;
  }
  // Input i, when present and of known shape, has a rank in [min, max].
  OpSignature& rank(size_t i, int64_t min, int64_t max) {
    ranks.push_back({i, min, max});
    return *this;
  }
  OpSignature& rank(size_t i, int64_t exact) { return rank(i, exact, exact); }
  OpSignature& attr(std::string name, int64_t min, int64_t max) {
    attr_ranges.push_back({std::move(name), min, max});
    return *this;
  }
};

// What an op is to the rewrites around it, beside its fusion role: stated in
// its registry entry (`.traits(...)`), so that no runtime, pass or advice
// keeps its own list of op names.
namespace op_trait {
enum : unsigned {
  // Its output has input 0's channels (activations, norms, pools): advise's
  // channel padding passes through it.
  carries_channels = 1u << 0,
  // Elementwise on two tensors: both operands carry the channels, unless
  // one is a scalar constant (advise).
  channel_binary = 1u << 1,
  // An activation function: advise moves it with the conv it follows.
  activation = 1u << 2,
  // Moves elements to other positions without arithmetic: inductor's
  // generated kernels read through it as loads (docs/model.md "Runtimes").
  index_remap = 1u << 3,
  // QuantizeLinear / DequantizeLinear: an int8 engine folds the pair into
  // its kernels (docs/model.md "Quantized graphs and other op families").
  quantize_boundary = 1u << 4,
  // BatchNormalization: in training mode its inputs 3 and 4 (mean, var) feed
  // only outputs 1 and 2, the running statistics; its normalised output
  // computes its own (docs/model.md "Weight-only subgraphs").
  running_stats_inputs = 1u << 5,
};
}  // namespace op_trait

struct OpRule {
  std::string domain;  // "" = default ONNX domain
  std::string op_type;
  FusionRole role = FusionRole::opaque;
  ShapeFn shape;
  LowerFn lower;
  std::string registered_at;  // file:line, for duplicate-registration errors
  int since_opset = 7;        // the oldest opset whose form the shape function reads (7 or the op's first)
  OpSignature signature = {};
  unsigned traits = 0;        // op_trait bits
  // Special functions (erf, tanh, exp, a sigmoid) evaluated per element:
  // arithmetic that can outlast the element's traffic (docs/model.md
  // "Memory-bound kernels"). Mish's tanh of a softplus counts 2.
  int special_functions = 0;
  bool has(unsigned trait) const { return (traits & trait) != 0; }
};

// An entry as it is registered: its signature's checks and its traits, set
// where the op is added: r.add({...}).inputs(3, 6).rank(0, 3, 4).traits(op_trait::activation).
class OpEntry {
 public:
  explicit OpEntry(OpRule& rule) : rule_(&rule) {}
  OpEntry& inputs(int min, int max = -1) {
    rule_->signature.inputs(min, max);
    return *this;
  }
  OpEntry& rank(size_t i, int64_t min, int64_t max) {
    rule_->signature.rank(i, min, max);
    return *this;
  }
  OpEntry& rank(size_t i, int64_t exact) {
    rule_->signature.rank(i, exact);
    return *this;
  }
  OpEntry& attr(std::string name, int64_t min, int64_t max) {
    rule_->signature.attr(std::move(name), min, max);
    return *this;
  }
  OpEntry& traits(unsigned bits) {
    rule_->traits |= bits;
    return *this;
  }
  OpEntry& special_functions(int per_element) {
    rule_->special_functions = per_element;
    return *this;
  }

 private:
  OpRule* rule_;
};

// The type ONNX gives an attribute name (onnx::AttributeProto::AttributeType),
// or 0 for a name tilewave does not read.
int attribute_kind(const std::string& name);

// The shared per-op checker, run before the op's shape function: input
// count and ranks, attribute types, lengths and ranges, duplicates. Throws
// InputError (through ctx.fail) naming the node.
void check_signature(const ShapeContext& ctx, const OpSignature& signature);

class OpRegistry {
 public:
  // Throws std::logic_error on a duplicate (domain, op_type): two rules for
  // one op is a programming error, caught at start-up by the tests.
  // Returns the stored entry, so that it states its checks and traits where
  // it is registered: r.add({...}).inputs(3, 6).rank(0, 3, 4).
  OpEntry add(OpRule rule);
  const OpRule* find(const std::string& domain, const std::string& op_type) const;
  // Whether the op (domain "" or "ai.onnx": the default) is registered with `trait`.
  bool has_trait(const std::string& domain, const std::string& op_type, unsigned trait) const;
  // The special functions the op evaluates per element; 0 for an unknown op.
  int special_functions(const std::string& domain, const std::string& op_type) const;
  // Whether the op does compute (tensor-core work): registered with the gemm
  // role, or, unknown, named so (QOrderedMatMul, DeformConv …).
  bool is_compute(const std::string& domain, const std::string& op_type) const;
  // The first compute op inside the node's subgraphs (Loop, If and Scan
  // bodies, at any depth), or "": compute tilewave leaves out, so that such
  // a node is never folded at load time and its model is an error, not a
  // partial total (docs/errors.md "Checked before use", control flow).
  std::string compute_in_subgraphs(const Node& node) const;
  size_t size() const { return rules_.size(); }
  std::vector<std::string> op_names() const;
  const std::map<std::pair<std::string, std::string>, OpRule>& rules() const { return rules_; }
  // The built-in rules of every family.
  static const OpRegistry& builtin();

 private:
  std::map<std::pair<std::string, std::string>, OpRule> rules_;
};

#define TILEWAVE_HERE (std::string(__FILE__) + ":" + std::to_string(__LINE__))

// Family registration functions, one per src/ops file.
void register_conv_ops(OpRegistry& r);
void register_gemm_ops(OpRegistry& r);
void register_elementwise_ops(OpRegistry& r);
void register_pool_reduce_ops(OpRegistry& r);
void register_data_movement_ops(OpRegistry& r);
void register_shape_ops(OpRegistry& r);
void register_quant_ops(OpRegistry& r);
void register_transformer_ops(OpRegistry& r);

}  // namespace tilewave
