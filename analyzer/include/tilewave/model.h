// A loaded ONNX model after shape inference: nodes in file order, every named
// tensor's shape, and which tensors are constant-foldable. Stage 1 of the flow
// (docs/model.md "Pipeline").
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// tilewave's own copy of ONNX's protobuf classes (analyzer/CMakeLists.txt).
namespace tilewave::onnx {
class ModelProto;
class NodeProto;
class AttributeProto;
}  // namespace tilewave::onnx

namespace tilewave {

struct TensorInfo {
  bool has_shape = false;       // rank known
  std::vector<int64_t> dims;    // -1 where a dimension is unknown
  int32_t elem_type = 0;        // onnx::TensorProto::DataType
  bool fully_known() const;
  int64_t numel() const;        // -1 if not fully known
  bool is_real() const;         // a floating-point element type
};

// A double from a file becomes an int64 only through this: NaN gives 0 and
// values beyond int64 saturate (a plain cast would be undefined behaviour).
inline int64_t saturating_int64(double x) {
  if (!(x == x)) return 0;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return int64_t(x);
}

// Dimension arithmetic on values from a file: a product past int64 gives
// INT64_MAX, which every size check then rejects ("more than 2^50 elements").
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

// A tensor's value known at load time (initializers, constants, shape
// arithmetic). Integer and bool tensors hold `ints`, floating ones `reals`;
// only small tensors are kept (kMaxValueElems).
struct TensorValue {
  std::vector<int64_t> dims;
  bool real = false;
  std::vector<int64_t> ints;
  std::vector<double> reals;
  size_t size() const { return real ? reals.size() : ints.size(); }
  int64_t int_at(size_t i) const { return real ? saturating_int64(reals[i]) : ints[i]; }
  double real_at(size_t i) const { return real ? reals[i] : double(ints[i]); }
};
constexpr int64_t kMaxValueElems = 1 << 16;
// The newest default-domain opset whose op forms the shape functions know.
constexpr int64_t kNewestOpset = 23;
// The largest tensor tilewave accepts (2^50 elements), so that every element,
// byte and FLOP count stays well inside 64 bits.
constexpr int64_t kMaxTensorElems = int64_t(1) << 50;
// Resource limits on a model file (docs/errors.md): protobuf cannot parse a
// message over 2 GiB (ONNX keeps larger weights in external files), and the
// largest real graphs have about 10^5 nodes.
constexpr int64_t kMaxModelFileBytes = (int64_t(1) << 31) - 1;
constexpr int kMaxGraphNodes = 1000000;
// Per node (check_signature): real nodes have at most a few thousand inputs
// (a Concat of every layer's output); the rules stay linear below this.
constexpr int kMaxNodeInputs = 10000;
constexpr int kMaxNodeOutputs = 10000;
// An INTS/FLOATS attribute longer than this is refused: no op reads more
// than a few values per dim, and ranks stay below 64.
constexpr int kMaxAttributeValues = 4096;

struct Node {
  int index = 0;
  std::string name;             // node name, or "<op>_<index>" if the file has none
  std::string op_type, domain;  // domain "" is the default ONNX domain
  std::vector<std::string> inputs, outputs;  // "" marks an omitted optional input
  const onnx::NodeProto* proto = nullptr;
};

// One input of one node: the node's index and the input's position.
struct TensorRead {
  int node = 0;
  int slot = 0;
};

struct Model {
  std::string path;
  std::shared_ptr<onnx::ModelProto> proto;
  std::vector<Node> nodes;
  std::unordered_map<std::string, TensorInfo> tensors;
  std::vector<std::string> inputs;             // graph inputs that are not initializers
  std::vector<std::string> outputs;
  // The outputs again, for is_output (the loader fills both): every pass
  // asking of each tensor stays linear with thousands of outputs (issue 32).
  std::unordered_set<std::string> output_set;
  std::unordered_set<std::string> initializers;
  std::map<std::string, int64_t> opsets;       // domain -> version
  // Tensors whose value is known before run time (initializers, constants,
  // shape arithmetic): a runtime folds the nodes producing them.
  std::unordered_set<std::string> static_tensors;
  // The static tensors a framework computes on every forward rather than
  // folding once (docs/model.md "Weight-only subgraphs"): floating-point
  // outputs of nodes that read a weight (a float initializer or constant of
  // more than one element) or another such tensor, and whose value reaches a
  // run-time node. Shape arithmetic stays out. A runtime that does not fold
  // weights (RuntimeProfile::folds_weight_subgraphs) launches their nodes.
  std::unordered_set<std::string> weight_computed;
  std::unordered_map<std::string, TensorValue> values;          // known at load time
  std::unordered_map<std::string, int> producer;                // tensor -> node index
  // tensor -> each node input that reads it, in file order (a node reading
  // it twice is there twice); an omitted input ("") reads nothing.
  std::unordered_map<std::string, std::vector<TensorRead>> readers;
  // The node graph, built and checked as the file is loaded (docs/model.md
  // "Pipeline"): per node, the nodes reading its outputs, once per input
  // read, in node order; the one topological order (topological_order) and
  // each node's place in it.
  std::vector<std::vector<int>> consumers;
  std::vector<int> topo_order;  // node indices, producers first
  std::vector<int> topo_rank;   // node index -> position in topo_order
  std::unordered_map<std::string, std::string> unknown_reason;  // why a shape stayed unknown
  int64_t batch = 0;                           // dim 0 of the first input after overrides
  std::vector<std::string> notes;              // assumptions the user should know about

  const TensorInfo* tensor(const std::string& name) const;
  int64_t numel(const std::string& name) const;  // -1 if unknown
  bool is_output(const std::string& name) const;  // a graph output
  int64_t opset(const std::string& domain = "") const;
  // The node writing `tensor`, or nullptr for inputs, weights and constants.
  const Node* producer_of(const std::string& tensor) const;
  // The node inputs reading `tensor` (readers); none for a tensor nothing reads.
  const std::vector<TensorRead>& readers_of(const std::string& tensor) const;
  const std::vector<int>& consumers_of(int node) const { return consumers[size_t(node)]; }
};

// Node indices with every producer before its readers, and the file's order
// among nodes ready together, so that a file already in order keeps it (ONNX
// requires that order; reports then list nodes as people read the model).
// Nodes on a cycle come last, in file order (the loader refuses a cycle).
// Model::topo_order holds it for every stage after loading.
std::vector<int> topological_order(const Model& model);

class OpRegistry;

struct LoadOptions {
  std::optional<int64_t> batch;                               // --batch
  std::map<std::string, std::vector<int64_t>> input_shapes;   // --input NAME=1x3x224x224
  const OpRegistry* registry = nullptr;                       // shape functions; null: the built-in ops (load_onnx)
};

// Stage 1, load: reads the file with the ONNX protobuf classes (external
// weight files need not exist), applies the overrides, collects tensors and
// nodes and links the node graph, refusing a tensor produced twice, an input
// nothing produces and a cycle; shapes past the graph inputs stay unknown
// until shape inference (load_onnx in pipeline.h does both). Throws
// InputError naming the file on any problem.
Model read_onnx(const std::string& path, const LoadOptions& options = {});
// The node graph of a model's nodes, producer and readers (Model::consumers,
// topo_order, topo_rank), as read_onnx links it; throws InputError naming
// model.path for an input nothing produces or a cycle.
void link_node_graph(Model& model);
// The file as ONNX's protobuf, unchanged (size and parse checks as read_onnx):
// for tools that rewrite a model (annotate, advise).
std::shared_ptr<onnx::ModelProto> read_onnx_file(const std::string& path);
// The same for a model already in memory; `path` names it in errors.
Model read_onnx_proto(std::shared_ptr<onnx::ModelProto> proto, const std::string& path,
                      const LoadOptions& options = {});

// Attribute access for lowering rules.
const onnx::AttributeProto* find_attr(const Node& n, const std::string& name);
int64_t attr_int(const Node& n, const std::string& name, int64_t fallback);
float attr_float(const Node& n, const std::string& name, float fallback);
std::string attr_string(const Node& n, const std::string& name, const std::string& fallback);
std::vector<int64_t> attr_ints(const Node& n, const std::string& name, std::vector<int64_t> fallback = {});
std::vector<float> attr_floats(const Node& n, const std::string& name);

// Parses "1x3x224x224".
std::optional<std::vector<int64_t>> parse_dims(const std::string& s);

}  // namespace tilewave
