// Where advise's graph rewrites are applied (docs/report.md "`tilewave
// advise`"): the searches run over the loaded Model and say what to change as
// a GraphEdit; a ModelCopy applies it to a copy of the file's protobuf and
// analyses the result by the same path as the original. The one part of
// advise that reads or writes protobuf.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tilewave/analysis.h"
#include "tilewave/model.h"

namespace tilewave {

// A change to a model's graph in the loaded Model's terms: tensor names, and
// node indices (Node::index, the file's order).
struct GraphEdit {
  // Initializer -> its dims after the change. Its data goes: the copy is
  // only analysed, and by shape (as the bundled weight-stripped models are).
  std::map<std::string, std::vector<int64_t>> initializer_dims;
  // (node, attribute) -> the attribute's new value.
  std::map<std::pair<int, std::string>, int64_t> int_attributes;
  // Node -> its attributes become these, taken from another node (a conv
  // taking another's window).
  struct AttributesFrom {
    int node = -1;
    std::vector<std::string> names;
  };
  std::map<int, AttributesFrom> attributes_from;
  std::set<int> dropped_nodes;
  // Tensor -> the tensor read instead, by every node kept and every graph output.
  std::map<std::string, std::string> renamed_reads;
};

// A model file's protobuf copied, to be edited and analysed. Copying a
// ModelCopy copies the protobuf.
class ModelCopy {
 public:
  explicit ModelCopy(const ModelFile& file);
  ModelCopy(const ModelCopy& other);
  ModelCopy& operator=(const ModelCopy&) = delete;

  // Real initializers of more than `elements` keep their shapes only, so
  // that copying this copies the graph, not the weights; smaller tensors
  // keep the values the analysis reads (shape inputs, Clip bounds).
  void keep_shapes_only_above(int64_t elements);
  // Node indices are the file's: after an edit that drops nodes, apply no
  // other edit to this copy.
  void apply(const GraphEdit& edit);
  // Analysed as ModelFile::analyze does (loading writes the batch and input
  // overrides into this copy, the same each time).
  Analysis analyze(const GpuModel& gpu, const AnalyzeOptions& options);

 private:
  std::string path_;
  std::shared_ptr<onnx::ModelProto> proto_;
};

// The node as its file names it: its name, or its first output where it has
// none (tilewave's "<op>_<index>" for such a node is in no file).
std::string file_name_of(const Node& n);

}  // namespace tilewave
