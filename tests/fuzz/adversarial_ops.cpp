// Issue 20: generated adversarial models, per op (docs/robustness.md
// "Generated models per op"). The byte fuzzers mutate seeds and rarely reach
// an op's own rules; this walks the op registry and builds, for every op,
// small models of valid structure and hostile contents: ranks 0-6, dims of 0,
// 1 and huge, each attribute missing, empty, too long, of the wrong type or at
// 0, -1, 2^31 and 2^63-1, integer inputs holding such values, scalar weights,
// and chains of the op. Each model is loaded and analysed as `tilewave
// analyze` does, and held to the contract of docs/errors.md (contract.h):
// a finite answer or one InputError. A crash is caught by the sanitizers; the
// model being run is always in OUT/current.onnx, so a finding can be kept.
//
//   adversarial_ops --seed 1 --cases 6000 --seconds 600 --out DIR [--op NAME] [--slow-seconds S] [--stats 1]
//
// Exit 0: every case kept the contract; 1: a finding (named on stderr; the
// model is OUT/finding-N.onnx); 2: bad usage. Cases run in a fixed order from
// the seed, so a run is repeatable and a shorter one is a prefix of a longer.
#include <onnx/defs/schema.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "../onnx_builder.h"
#include "contract.h"
#include "tilewave/gpu_model.h"
#include "tilewave/lowering.h"
#include "tilewave/model.h"
#include "tilewave/op_registry.h"
#include "tilewave/pipeline.h"
#include "tilewave_onnx.pb.h"

using namespace tilewave;
namespace tp = tilewave::onnx;

namespace {

using Rng = std::mt19937_64;

template <class T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}
bool chance(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
int64_t between(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

const std::vector<int64_t> kHostileInts = {0,  1,  -1, 2,  3,  -2, 4, 7, 64, -100, int64_t(1) << 31, -(int64_t(1) << 31),
                                           std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                           int64_t(1) << 32, int64_t(1) << 40, 1000000};
// -1 is a symbolic dim (the batch).
const std::vector<int64_t> kDims = {0, 1, 1, 2, 3, 4, 8, 16, 64, 7, 224, -1, int64_t(1) << 31, int64_t(1) << 40,
                                    int64_t(1) << 62};
const std::vector<int32_t> kElemTypes = {tp::TensorProto::FLOAT, tp::TensorProto::FLOAT, tp::TensorProto::FLOAT,
                                         tp::TensorProto::FLOAT16, tp::TensorProto::INT64, tp::TensorProto::INT8,
                                         tp::TensorProto::UINT8, tp::TensorProto::BOOL, tp::TensorProto::INT32,
                                         tp::TensorProto::STRING, 0, 999};
const std::vector<double> kHostileFloats = {0.0, -1.0, 1.0, 0.5, 2.0, 1e30, -1e30, 1e-310, NAN, INFINITY, -INFINITY};
const std::vector<std::string> kStrings = {"", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "forward", "reverse",
                                           "bidirectional", "linear", "nearest", "cubic", "half_pixel", "Relu",
                                           "not_larger", "not_smaller", "stretch", "tanh", "none", "constant",
                                           "reflect", "edge", "DCR", "CRD", "\x1b[31mred\x1b[0m",
                                           std::string(300, 'a')};
const std::vector<std::string> kEquations = {"ij,jk->ik", "bij,bjk->bik", "i,i->", "ii->i", "...ij,...jk->...ik",
                                             "ij->ji", "abc,cd->abd", "->", "", "i,j->ij", "ij,jk",
                                             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ->a",
                                             "bhqd,bhkd->bhqk", "a...,a...->...", "ij,ij,ij->ij", "i->iii"};

// An attribute the generator may set: its name and ONNX type.
struct AttrSlot {
  std::string name;
  int type;  // tp::AttributeProto::AttributeType
  bool required = false;
};

// What the generator knows of an op: its ONNX schema when ONNX has one;
// otherwise (com.microsoft) a pool of the attributes such ops read.
struct OpShape {
  int min_inputs = 1, max_inputs = 4;
  int min_outputs = 1, max_outputs = 3;
  std::vector<AttrSlot> attrs;
};

std::vector<AttrSlot> contrib_attrs() {
  using A = tp::AttributeProto;
  return {{"num_heads", A::INT},       {"unidirectional", A::INT},  {"mask_filter_value", A::FLOAT},
          {"scale", A::FLOAT},         {"epsilon", A::FLOAT},       {"axis", A::INT},
          {"qkv_hidden_sizes", A::INTS}, {"past_present_share_buffer", A::INT}, {"do_rotary", A::INT},
          {"kv_num_heads", A::INT},    {"q_num_heads", A::INT},     {"channels_last", A::INT},
          {"activation", A::STRING},   {"group", A::INT},           {"kernel_shape", A::INTS},
          {"strides", A::INTS},        {"pads", A::INTS},           {"dilations", A::INTS},
          {"auto_pad", A::STRING},     {"interleaved", A::INT},     {"rotary_embedding_dim", A::INT},
          {"transA", A::INT},          {"transB", A::INT},          {"alpha", A::FLOAT},
          {"block_size", A::INT},      {"bits", A::INT},            {"K", A::INT},
          {"N", A::INT},               {"approximate", A::STRING}};
}

OpShape op_shape(const std::string& domain, const std::string& op, int opset) {
  OpShape s;
  const ::onnx::OpSchema* schema = domain.empty() ? ::onnx::OpSchemaRegistry::Schema(op, opset, "") : nullptr;
  if (!schema) {
    s.attrs = contrib_attrs();
    s.max_inputs = 8;
    return s;
  }
  s.min_inputs = schema->min_input();
  s.max_inputs = std::min(schema->max_input(), 6);
  s.min_outputs = std::max(schema->min_output(), 1);
  s.max_outputs = std::min(schema->max_output(), 4);
  for (const auto& [name, a] : schema->attributes()) s.attrs.push_back({name, int(a.type), a.required});
  return s;
}

void set_hostile_attr_value(Rng& rng, tp::AttributeProto& a, int type, const std::string& name);

// Near-valid values, so that a case gets past the first check and reaches
// the op's deeper rules with one hostile part.
void set_sane_attr_value(Rng& rng, tp::AttributeProto& a, int type, const std::string& name) {
  using A = tp::AttributeProto;
  a.set_type(A::AttributeType(type));
  switch (type) {
    case A::INT: a.set_i(between(rng, 0, 2)); break;
    case A::FLOAT: a.set_f(float(pick(rng, std::vector<double>{0.0, 0.5, 1.0, 1e-5}))); break;
    case A::STRING: a.set_s(name == "equation" ? pick(rng, kEquations) : pick(rng, kStrings)); break;
    case A::INTS: {
      const int64_t len = pick(rng, std::vector<int64_t>{1, 2, 2, 2, 4});
      for (int64_t k = 0; k < len; ++k) a.add_ints(between(rng, 1, 3));
      break;
    }
    default: set_hostile_attr_value(rng, a, type, name);
  }
}

void set_hostile_attr_value(Rng& rng, tp::AttributeProto& a, int type, const std::string& name) {
  using A = tp::AttributeProto;
  a.set_type(A::AttributeType(type));
  switch (type) {
    case A::INT: a.set_i(pick(rng, kHostileInts)); break;
    case A::FLOAT: a.set_f(float(pick(rng, kHostileFloats))); break;
    case A::STRING: a.set_s(name == "equation" ? pick(rng, kEquations) : pick(rng, kStrings)); break;
    case A::INTS: {
      const int64_t len = pick(rng, std::vector<int64_t>{0, 1, 2, 2, 3, 4, 6, 7, 13, 300});
      const bool small = chance(rng, 0.5);
      for (int64_t k = 0; k < len; ++k) a.add_ints(small ? between(rng, -2, 4) : pick(rng, kHostileInts));
      break;
    }
    case A::FLOATS: {
      const int64_t len = pick(rng, std::vector<int64_t>{0, 1, 2, 4, 7});
      for (int64_t k = 0; k < len; ++k) a.add_floats(float(pick(rng, kHostileFloats)));
      break;
    }
    case A::STRINGS: {
      const int64_t len = between(rng, 0, 3);
      for (int64_t k = 0; k < len; ++k) a.add_strings(pick(rng, kStrings));
      break;
    }
    case A::TENSOR: {
      auto* t = a.mutable_t();
      t->set_data_type(pick(rng, kElemTypes));
      const int64_t rank = between(rng, 0, 3);
      int64_t n = 1;
      for (int64_t k = 0; k < rank; ++k) {
        const int64_t d = chance(rng, 0.8) ? between(rng, 0, 3) : pick(rng, kHostileInts);
        t->add_dims(d);
        n = (d >= 0 && d <= 4) ? n * d : 5;
      }
      for (int64_t k = 0; k < std::min<int64_t>(n, 5); ++k) {
        t->add_int64_data(pick(rng, kHostileInts));
        t->add_float_data(float(pick(rng, kHostileFloats)));
      }
      break;
    }
    default: a.set_i(pick(rng, kHostileInts)); break;
  }
}

// A value of the given type, or (hostile) of another one, a type the op does not read.
void add_attribute(Rng& rng, tp::NodeProto& n, const AttrSlot& slot, bool hostile) {
  using A = tp::AttributeProto;
  auto* a = n.add_attribute();
  a->set_name(slot.name);
  int type = slot.type;
  if (hostile && chance(rng, 0.2))
    type = pick(rng, std::vector<int>{A::INT, A::INTS, A::FLOAT, A::FLOATS, A::STRING, A::TENSOR, 0});
  if (hostile) set_hostile_attr_value(rng, *a, type, slot.name);
  else set_sane_attr_value(rng, *a, type, slot.name);
}

void add_graph_input(Rng& rng, tp::GraphProto& g, const std::string& name, bool hostile, int64_t sane_rank,
                     const std::vector<int64_t>& first_dims) {
  auto* v = g.add_input();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(!hostile || chance(rng, 0.85) ? tp::TensorProto::FLOAT : pick(rng, kElemTypes));
  if (hostile && chance(rng, 0.05)) return;  // no shape at all
  auto* shape = tt->mutable_shape();
  const int64_t rank = hostile ? pick(rng, std::vector<int64_t>{0, 1, 2, 3, 4, 4, 4, 5, 6}) : sane_rank;
  // Near-valid inputs often share the first input's dims (a weight that
  // fits, an elementwise partner); only the first dim may be symbolic.
  if (!hostile && !first_dims.empty() && chance(rng, 0.5)) {
    for (int64_t d : first_dims) {
      if (d < 0) shape->add_dim()->set_dim_param("batch");
      else shape->add_dim()->set_dim_value(d);
    }
    return;
  }
  for (int64_t k = 0; k < rank; ++k) {
    auto* d = shape->add_dim();
    int64_t dim = !hostile || chance(rng, 0.7) ? pick(rng, std::vector<int64_t>{1, 2, 3, 4, 8, 16, 32, -1})
                                               : pick(rng, kDims);
    if (!hostile && dim < 0 && k > 0) dim = 4;
    if (dim < 0) d->set_dim_param("batch");
    else d->set_dim_value(dim);
  }
}

// A constant input: integers (shapes, axes, k, sizes) or reals (scales),
// a scalar or a short list, or a weight stored outside the file.
void add_initializer(Rng& rng, tp::GraphProto& g, const std::string& name, bool hostile, int64_t sane_rank,
                     const std::vector<int64_t>& first_dims) {
  auto* t = g.add_initializer();
  t->set_name(name);
  int kind = int(between(rng, 0, 3));
  if (kind == 3 || (!hostile && chance(rng, 0.6))) {  // a stripped weight: dims only
    t->set_data_type(tp::TensorProto::FLOAT);
    if (!hostile && !first_dims.empty() && chance(rng, 0.5)) {
      for (int64_t d : first_dims) t->add_dims(std::max<int64_t>(d, 1));
      t->set_data_location(tp::TensorProto::EXTERNAL);
      auto* e = t->add_external_data();
      e->set_key("location");
      e->set_value("absent.weights");
      return;
    }
    const int64_t rank = hostile ? between(rng, 0, 5) : pick(rng, std::vector<int64_t>{sane_rank, sane_rank, 1});
    for (int64_t k = 0; k < rank; ++k) t->add_dims(chance(rng, 0.8) ? pick(rng, std::vector<int64_t>{1, 2, 3, 4, 8, 16}) : pick(rng, kDims) < 0 ? 0 : pick(rng, kDims));
    t->set_data_location(tp::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("absent.weights");
    return;
  }
  if (!hostile) kind = 0;
  const bool scalar = chance(rng, 0.3);
  const int64_t len = scalar ? 1 : pick(rng, std::vector<int64_t>{0, 1, 2, 3, 4, 4, 5, 6});
  if (!scalar) t->add_dims(len);
  if (kind == 2) {
    t->set_data_type(tp::TensorProto::FLOAT);
    for (int64_t k = 0; k < len; ++k) t->add_float_data(float(pick(rng, kHostileFloats)));
  } else {
    t->set_data_type(tp::TensorProto::INT64);
    const bool small = kind == 0;
    for (int64_t k = 0; k < len; ++k) t->add_int64_data(small ? between(rng, -3, 8) : pick(rng, kHostileInts));
  }
}

std::string op_name(const OpRule& r) { return r.domain.empty() ? r.op_type : r.domain + "." + r.op_type; }

struct Case {
  std::string op;
  std::shared_ptr<tp::ModelProto> proto;
  std::string description;
};

Case make_case(const OpRule& rule, uint64_t seed, uint64_t index) {
  Rng rng(seed * 0x9E3779B97F4A7C15ull + index);
  Case c;
  c.op = op_name(rule);
  c.proto = std::make_shared<tp::ModelProto>();
  auto& m = *c.proto;
  m.set_ir_version(8);
  const int opset = int(pick(rng, std::vector<int64_t>{7, 9, 11, 13, 13, 17, 18, 21}));
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(std::max(opset, rule.domain.empty() ? rule.since_opset : 7));
  if (!rule.domain.empty()) {
    auto* ms = m.add_opset_import();
    ms->set_domain(rule.domain);
    ms->set_version(1);
  }
  const OpShape shape = op_shape(rule.domain, rule.op_type, int(imp->version()));
  auto& g = *m.mutable_graph();
  g.set_name("adversarial");

  int n_inputs = int(between(rng, shape.min_inputs, std::max(shape.min_inputs, shape.max_inputs)));
  if (chance(rng, 0.05)) n_inputs = int(between(rng, 0, 12));
  if (chance(rng, 0.01)) n_inputs = 3000;  // many inputs to one node (Sum, Concat)
  const int n_outputs = int(between(rng, shape.min_outputs, std::max(shape.min_outputs, shape.max_outputs)));
  // A chain of the op (outputs feed the next node's first input), as value
  // ops (Gather, Shape arithmetic) are chained by exporters.
  const int chain = chance(rng, 0.1) ? int(between(rng, 2, 40)) : 1;

  // Most cases are near-valid with one hostile part (an input, or an
  // attribute), so that they reach the op's deeper rules; the rest are
  // hostile throughout.
  const bool all_hostile = chance(rng, 0.3);
  const int64_t sane_rank = pick(rng, std::vector<int64_t>{2, 3, 4, 4, 4, 5});
  const int hostile_part = int(between(rng, -int64_t(shape.attrs.size()), std::max(n_inputs, 1) - 1));
  auto hostile_input = [&](int i) { return all_hostile || hostile_part == i; };
  auto hostile_attr = [&](size_t a) { return all_hostile || hostile_part == -1 - int(a); };
  std::vector<std::string> inputs;
  std::vector<int64_t> first_dims;
  for (int i = 0; i < n_inputs; ++i) {
    const std::string name = "in" + std::to_string(i);
    if (i > 0 && chance(rng, 0.05)) {
      inputs.push_back("");  // an omitted optional input
      continue;
    }
    if (i > 0 && chance(rng, 0.1)) {
      inputs.push_back(inputs[0]);  // the same tensor twice
      continue;
    }
    if (i == 0 || chance(rng, 0.5)) add_graph_input(rng, g, name, hostile_input(i), sane_rank, first_dims);
    else add_initializer(rng, g, name, hostile_input(i), sane_rank, first_dims);
    if (i == 0 && g.input_size() > 0) {
      for (const auto& d : g.input(0).type().tensor_type().shape().dim())
        first_dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    inputs.push_back(name);
  }
  std::vector<tp::AttributeProto> attrs;
  {
    tp::NodeProto scratch;
    for (size_t a = 0; a < shape.attrs.size(); ++a)
      if (hostile_attr(a) ? chance(rng, 0.8) : chance(rng, shape.attrs[a].required ? 0.95 : rule.domain.empty() ? 0.4 : 0.1))
        add_attribute(rng, scratch, shape.attrs[a], hostile_attr(a));
    if (chance(rng, 0.03) && scratch.attribute_size() > 0)  // the same attribute twice
      *scratch.add_attribute() = scratch.attribute(0);
    attrs.assign(scratch.attribute().begin(), scratch.attribute().end());
  }

  std::string prev;
  for (int k = 0; k < chain; ++k) {
    auto* n = g.add_node();
    n->set_op_type(rule.op_type);
    n->set_domain(rule.domain);
    n->set_name(fmt::format("n{}", k));
    for (size_t i = 0; i < inputs.size(); ++i) n->add_input(i == 0 && k > 0 ? prev : inputs[i]);
    for (int o = 0; o < n_outputs; ++o) n->add_output(fmt::format("y{}_{}", k, o));
    for (const auto& a : attrs) *n->add_attribute() = a;
    prev = n->output(0);
  }
  for (int o = 0; o < n_outputs; ++o) g.add_output()->set_name(fmt::format("y{}_{}", chain - 1, o));
  c.description = fmt::format("{}{} opset {} inputs {} outputs {} attributes {} chain {}",
                              rule.domain.empty() ? "" : rule.domain + ".", rule.op_type, imp->version(), n_inputs,
                              n_outputs, attrs.size(), chain);
  return c;
}

// Large inputs that once took seconds to minutes or gigabytes (issue 20),
// run first in every campaign: each must finish under the slow limit.
std::vector<Case> budget_cases() {
  using B = test::OnnxBuilder;
  std::vector<Case> out;
  auto add = [&](const std::string& what, const B& b) {
    out.push_back({"budget", std::make_shared<tp::ModelProto>(b.proto()), what});
  };
  for (const char* op : {"Sum", "Concat", "Max", "Mean"}) {  // kMaxNodeInputs inputs to one node
    B b(13);
    std::vector<std::string> ins;
    for (int i = 0; i < kMaxNodeInputs; ++i) {
      ins.push_back("x" + std::to_string(i));
      b.input(ins.back(), {1, 8});
    }
    auto& n = b.node(op, ins, {"y"});
    if (std::string(op) == "Concat") B::attr(n, "axis", int64_t(0));
    b.output("y");
    add(fmt::format("{} of {} inputs", op, kMaxNodeInputs), b);
  }
  {  // a value doubled 40 times (Concat of itself, past the values kept), then read by Gathers
    B b(13);
    b.ints("v", {1, 2, 3, 4});
    std::string prev = "v";
    for (int i = 0; i < 40; ++i) {
      const std::string next = "c" + std::to_string(i);
      B::attr(b.node("Concat", {prev, prev}, {next}), "axis", int64_t(0));
      prev = next;
    }
    b.ints("idx", {0, 1, 2, 3});
    for (int i = 0; i < 200; ++i) {
      const std::string next = "g" + std::to_string(i);
      b.node("Gather", {prev, "idx"}, {next});
      prev = next;
    }
    b.output(prev);
    add("a value doubled 40 times, then 200 Gathers", b);
  }
  {  // values of 2^40 elements asked for: Range, ConstantOfShape, Expand, Tile
    B b(13);
    b.ints("zero", {0}, true);
    b.ints("huge", {int64_t(1) << 40}, true);
    b.ints("one", {1}, true);
    b.node("Range", {"zero", "huge", "one"}, {"r"});
    b.ints("shape", {int64_t(1) << 20, int64_t(1) << 20});
    b.node("ConstantOfShape", {"shape"}, {"c"});
    b.node("Expand", {"one", "shape"}, {"e"});
    b.ints("reps", {int64_t(1) << 40});
    b.node("Tile", {"reps", "reps"}, {"t"});
    for (const char* o : {"r", "c", "e", "t"}) {
      b.node("Shape", {o}, {std::string(o) + "_shape"});
      b.output(std::string(o) + "_shape");
    }
    add("values of 2^40 elements", b);
  }
  {  // a chain of 200,000 activations
    B b(13);
    b.input("x", {1, 64});
    std::string prev = "x";
    for (int i = 0; i < 200000; ++i) {
      const std::string next = "a" + std::to_string(i);
      b.node(i % 2 ? "Relu" : "Sigmoid", {prev}, {next});
      prev = next;
    }
    b.output(prev);
    add("a chain of 200,000 activations", b);
  }
  {  // one tensor read by 20,000 nodes
    B b(13);
    b.input("x", {1, 64});
    for (int i = 0; i < 20000; ++i) {
      b.node("Relu", {"x"}, {"r" + std::to_string(i)});
      b.output("r" + std::to_string(i));
    }
    add("one tensor read by 20,000 nodes", b);
  }
  return out;
}

// One run as `tilewave analyze` makes it: load (own shape inference), lower
// under one runtime, cost, and every view. Returns the broken rule, or ""
// with `refused` set when the model was refused with one InputError.
std::string run_case(const Case& c, const GpuModel& gpu, uint64_t index, bool& refused) {
  refused = false;
  static const char* const runtimes[] = {"eager", "inductor", "tensorrt"};
  AnalyzeOptions options;
  options.load.batch = index % 8 == 0 ? std::optional<int64_t>() : std::optional<int64_t>(int64_t(1) << (index % 4 * 3));
  options.exec.runtime = find_runtime(runtimes[index % 3]);
  options.exec.fuse_attention = index % 2 == 0;
  if (index % 5 == 0) options.exec.dtype = DType::fp32;
  try {
    const Model model = load_onnx_proto(c.proto, "adversarial.onnx", options.load);
    const Analysis a = analyze_model(model, gpu, options);
    (void)incomplete_reason(a);
    fuzz::check_analysis(a);  // aborts on a non-finite or negative figure
  } catch (const InputError& e) {
    refused = true;
    const std::string what = e.what();
    if (std::getenv("ADVERSARIAL_SHOW_REFUSALS")) std::fprintf(stderr, "refused: %s\n", what.c_str());
    if (what.find('\n') != std::string::npos) return "an error of more than one line: " + what;
  } catch (const std::exception& e) {
    return std::string("uncaught exception (exit 3): ") + e.what();
  }
  return "";
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

constexpr int kExitRefused = 10;

// Each case in a child process, so that a signal, a hang or a blowup is one
// finding and the run goes on: the child has an alarm at 3x the slow limit
// and (outside ASan, which reserves its shadow memory) 4 GiB of address space.
std::string run_isolated(const Case& c, const GpuModel& gpu, uint64_t index, double slow_seconds, bool& refused) {
  std::fflush(nullptr);
  refused = false;
  const pid_t pid = fork();
  if (pid < 0) return run_case(c, gpu, index, refused);
  if (pid == 0) {
    alarm(unsigned(std::ceil(3 * slow_seconds)));
    if (!kAddressSanitizer) {
      const rlimit limit{rlim_t(4) << 30, rlim_t(4) << 30};
      setrlimit(RLIMIT_AS, &limit);
    }
    bool child_refused = false;
    const std::string broken = run_case(c, gpu, index, child_refused);
    if (!broken.empty()) std::fprintf(stderr, "%s\n", broken.c_str());
    std::fflush(nullptr);
    _exit(!broken.empty() ? 1 : child_refused ? kExitRefused : 0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    return WTERMSIG(status) == SIGALRM ? "ran past 3x the slow limit (a hang)"
                                       : fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitRefused) {
    refused = true;
    return "";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return fmt::format("exit {} (contract broken, above)", WEXITSTATUS(status));
  return "";
}

int usage(const char* why) {
  std::fprintf(stderr, "adversarial_ops: %s\nusage: adversarial_ops --seed N --cases N [--seconds S] --out DIR [--op NAME] [--slow-seconds S] [--stats 1]\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1, cases = 1000;
  // "Nothing over 10 s" (issue 20) is for a release build; the sanitizers
  // run the same work about 5 times slower.
  double seconds = 600, slow_seconds = kAddressSanitizer ? 50 : 10;
  std::string out, only_op;
  bool stats = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    try {
      if (a == "--seed") seed = std::stoull(v);
      else if (a == "--cases") cases = std::stoull(v);
      else if (a == "--seconds") seconds = std::stod(v);
      else if (a == "--slow-seconds") slow_seconds = std::stod(v);
      else if (a == "--out") out = v;
      else if (a == "--op") only_op = v;
      else if (a == "--stats") stats = std::string(v) == "1";
      else return usage(("unknown option " + a).c_str());
    } catch (const std::exception&) {
      return usage(("bad value for " + a).c_str());
    }
  }
  if (out.empty()) return usage("--out is required");
  std::filesystem::create_directories(out);
  const GpuModel gpu = load_gpu("h200", TILEWAVE_GPU_DIR);
  std::vector<const OpRule*> rules;
  for (const auto& [key, rule] : OpRegistry::builtin().rules())
    if (only_op.empty() || rule.op_type == only_op) rules.push_back(&rule);
  if (rules.empty()) return usage(("no registered op " + only_op).c_str());

  const auto start = std::chrono::steady_clock::now();
  uint64_t run = 0, findings = 0;
  if (only_op.empty())
    for (const Case& c : budget_cases()) {
      const auto t0 = std::chrono::steady_clock::now();
      bool refused = false;
      std::string broken = run_isolated(c, gpu, 1, slow_seconds, refused);
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (broken.empty() && took > slow_seconds) broken = fmt::format("took {:.1f} s (limit {} s)", took, slow_seconds);
      std::printf("budget case: %s: %s in %.2f s\n", c.description.c_str(),
                  !broken.empty() ? "FINDING" : refused ? "refused with one error line" : "analysed", took);
      if (!broken.empty()) {
        const std::string keep = fmt::format("{}/finding-budget-{}.onnx", out, findings);
        std::ofstream f(keep, std::ios::binary);
        c.proto->SerializeToOstream(&f);
        std::fprintf(stderr, "finding: budget case (%s): %s; model kept as %s\n", c.description.c_str(), broken.c_str(),
                     keep.c_str());
        ++findings;
      }
    }
  std::map<std::string, uint64_t> analysed_by_op, refused_by_op;
  for (; run < cases; ++run) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > seconds) break;
    const OpRule& rule = *rules[run % rules.size()];
    const Case c = make_case(rule, seed, run);
    {
      // Written before the run: a crash leaves the model that caused it here.
      std::ofstream f(out + "/current.onnx", std::ios::binary | std::ios::trunc);
      c.proto->SerializeToOstream(&f);
    }
    const auto t0 = std::chrono::steady_clock::now();
    bool refused = false;
    std::string broken = run_isolated(c, gpu, run, slow_seconds, refused);
    (refused ? refused_by_op : analysed_by_op)[c.op] += 1;
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (broken.empty() && took > slow_seconds) broken = fmt::format("took {:.1f} s (limit {} s)", took, slow_seconds);
    if (!broken.empty()) {
      const std::string keep = fmt::format("{}/finding-{}.onnx", out, run);
      std::filesystem::copy_file(out + "/current.onnx", keep, std::filesystem::copy_options::overwrite_existing);
      std::fprintf(stderr, "finding: case %llu (%s): %s; model kept as %s\n", (unsigned long long)run,
                   c.description.c_str(), broken.c_str(), keep.c_str());
      ++findings;
    }
  }
  std::filesystem::remove(out + "/current.onnx");
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  uint64_t analysed = 0;
  for (const auto& [op, n] : analysed_by_op) analysed += n;
  if (stats)
    for (const auto* rule : rules) {
      const std::string op = op_name(*rule);
      std::printf("%-40s analysed %6llu  refused %6llu\n", op.c_str(), (unsigned long long)analysed_by_op[op],
                  (unsigned long long)refused_by_op[op]);
    }
  std::printf("adversarial_ops: seed %llu, %llu cases over %zu ops in %.1f s: %llu analysed, %llu refused with one "
              "error line, %llu findings\n",
              (unsigned long long)seed, (unsigned long long)run, rules.size(), elapsed, (unsigned long long)analysed,
              (unsigned long long)(run - analysed - findings), (unsigned long long)findings);
  return findings ? 1 : 0;
}
