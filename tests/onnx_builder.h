// Builds small ONNX graphs in memory for the shape-inference and op tests.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tilewave_onnx.pb.h"

#include "tilewave/model.h"
#include "tilewave/pipeline.h"

namespace tilewave::test {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset, const std::string& domain = "") : proto_(std::make_shared<onnx::ModelProto>()) {
    proto_->set_ir_version(8);
    auto* op = proto_->add_opset_import();
    op->set_domain(domain);
    op->set_version(opset);
    proto_->mutable_graph()->set_name("test");
  }
  void import(const std::string& domain, int64_t version) {
    auto* op = proto_->add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  // dims: -1 is a symbolic dimension named "batch".
  void input(const std::string& name, const std::vector<int64_t>& dims, int32_t type = onnx::TensorProto::FLOAT) {
    auto* v = proto_->mutable_graph()->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0) dim->set_dim_param("batch");
      else dim->set_dim_value(d);
    }
  }
  void output(const std::string& name) { proto_->mutable_graph()->add_output()->set_name(name); }
  void ints(const std::string& name, const std::vector<int64_t>& values, bool scalar = false) {
    auto* t = proto_->mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(int64_t(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  void floats(const std::string& name, const std::vector<float>& values, bool scalar = false) {
    auto* t = proto_->mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    if (!scalar) t->add_dims(int64_t(values.size()));
    for (float v : values) t->add_float_data(v);
  }
  void bools(const std::string& name, const std::vector<bool>& values, bool scalar = false) {
    auto* t = proto_->mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::BOOL);
    if (!scalar) t->add_dims(int64_t(values.size()));
    for (bool v : values) t->add_int32_data(v ? 1 : 0);
  }
  // A weight: dims only, data stored externally (absent), as stripped models have it.
  void weight(const std::string& name, const std::vector<int64_t>& dims, int32_t type = onnx::TensorProto::FLOAT) {
    auto* t = proto_->mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("absent.weights");
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& domain = "") {
    auto* n = proto_->mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(outputs.empty() ? op : outputs[0]);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_floats(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  Model load(const LoadOptions& options = {}) const {
    return load_onnx_proto(std::make_shared<onnx::ModelProto>(*proto_), "test.onnx", options);
  }
  Model load_batch(int64_t batch) const {
    LoadOptions o;
    o.batch = batch;
    return load(o);
  }
  const onnx::ModelProto& proto() const { return *proto_; }

 private:
  std::shared_ptr<onnx::ModelProto> proto_;
};

inline std::vector<int64_t> dims_of(const Model& m, const std::string& tensor) {
  const TensorInfo* t = m.tensor(tensor);
  return t && t->has_shape ? t->dims : std::vector<int64_t>{-99};
}

}  // namespace tilewave::test
