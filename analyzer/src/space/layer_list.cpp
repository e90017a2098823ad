// Layer lists (docs/python.md "Layer lists") written with net_writer.h: each
// layer is checked field by field, so that a bad description is one clear
// error naming the layer, never a graph the loader rejects later.
#include "tilewave/layer_list.h"

#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "net_writer.h"
#include "tilewave/error.h"

using nlohmann::json;

namespace tilewave::space {

namespace {

// The largest channel count, kernel, stride and so on a layer may ask for:
// far above any real network, low enough that no product overflows.
constexpr int64_t kMaxDim = int64_t(1) << 20;

// One layer's fields, read with checks; `done()` rejects fields nobody read.
class LayerFields {
 public:
  LayerFields(const json& layer, const std::string& where, size_t index) : layer_(layer) {
    if (!layer.is_object()) throw InputError(where, fmt::format("layer {}: not an object with an \"op\"", index));
    const json* op = find("op");
    if (!op || !op->is_string()) throw InputError(where, fmt::format("layer {}: needs \"op\" as a string", index));
    op_ = op->get<std::string>();
    context_ = fmt::format("{}: layer {} ({})", where, index, op_);
  }
  const std::string& op() const { return op_; }

  int64_t integer(const char* key, std::optional<int64_t> fallback, int64_t lo = 1, int64_t hi = kMaxDim) {
    const json* v = find(key);
    if (!v) {
      if (!fallback) fail(fmt::format("needs \"{}\"", key));
      return *fallback;
    }
    if (!v->is_number_integer()) fail(fmt::format("\"{}\" must be an integer", key));
    const int64_t x = v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(hi) ? hi + 1 : v->get<int64_t>();
    if (x < lo || x > hi) fail(fmt::format("\"{}\" must be in {}..{}", key, lo, hi));
    return x;
  }
  bool flag(const char* key, bool fallback) {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(fmt::format("\"{}\" must be true or false", key));
    return v->get<bool>();
  }
  std::string text(const char* key, const std::string& fallback) {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string()) fail(fmt::format("\"{}\" must be a string", key));
    return v->get<std::string>();
  }
  // A list of layer names ("inputs"), or nullopt when absent.
  std::optional<std::vector<std::string>> names(const char* key) {
    const json* v = find(key);
    if (!v) return std::nullopt;
    std::vector<std::string> out;
    if (v->is_string()) out.push_back(v->get<std::string>());
    else if (v->is_array())
      for (const auto& e : *v) {
        if (!e.is_string()) fail(fmt::format("\"{}\" must list layer names", key));
        out.push_back(e.get<std::string>());
      }
    else fail(fmt::format("\"{}\" must be a layer name or a list of them", key));
    return out;
  }
  void done() const {
    for (const auto& item : layer_.items())
      if (!read_.count(item.key())) fail(fmt::format("unknown field \"{}\" (docs/python.md lists each op's fields)", item.key()));
  }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(context_, what); }

 private:
  const json* find(const char* key) {
    read_.insert(key);
    const auto it = layer_.find(key);
    return it == layer_.end() ? nullptr : &*it;
  }
  const json& layer_;
  std::string op_, context_;
  std::set<std::string> read_;
};

const std::set<std::string> kActivations = {"relu", "relu6", "silu", "sigmoid", "tanh", "hardswish", "gelu"};

struct Tensor {
  std::string name;
  Shape4 shape;
};

}  // namespace

WrittenModel network_from_layers(const json& layers, const Shape4& input, const std::string& where) {
  if (!layers.is_array() || layers.empty()) throw InputError(where, "a layer list must be a non-empty list of layers");
  constexpr size_t kMaxLayers = 100000;
  if (layers.size() > kMaxLayers) throw InputError(where, fmt::format("more than {} layers", kMaxLayers));
  NetWriter w("relu", input);
  std::map<std::string, Tensor> named = {{"input", {"input", input}}};
  bool flat = false;  // after a linear layer: N x C only
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerFields f(layers[i], where, i);
    const std::string& op = f.op();
    auto tensor_of = [&](const std::string& name) {
      const auto it = named.find(name);
      if (it == named.end()) f.fail(fmt::format("no earlier layer is named \"{}\"", name));
      return it->second;
    };
    const auto from = f.names("input");
    if (from) {
      if (from->size() != 1) f.fail("\"input\" names one layer (\"inputs\" lists several, for add, mul and concat)");
      const Tensor t = tensor_of(from->front());
      w.set(t.name, t.shape);
      flat = t.shape.h == 0;
    }
    const Shape4 in = w.shape();
    auto activation = [&](const std::string& act) {
      if (act == "none") return;
      if (!kActivations.count(act)) f.fail(fmt::format("unknown activation \"{}\" (none, relu, relu6, silu, sigmoid, tanh, hardswish, gelu)", act));
      w.set(w.activate(w.x(), act), w.shape());
    };
    if (flat && op != "linear" && !kActivations.count(op))
      f.fail("follows a linear layer: only linear layers and activations can");

    if (op == "conv") {
      const int64_t out = f.integer("out", std::nullopt), k = f.integer("kernel", 1, 1, 64);
      const int64_t stride = f.integer("stride", 1, 1, 64), groups = f.integer("groups", 1);
      const int64_t dilation = f.integer("dilation", 1, 1, 64), pad = f.integer("padding", -1, -1, 64);
      if (in.c % groups || out % groups)
        f.fail(fmt::format("groups {} must divide its input channels {} and \"out\" {}", groups, in.c, out));
      const bool bn = f.flag("bn", true), bias = f.flag("bias", false);
      Shape4 s;
      const std::string y = w.conv(w.x(), in, out, k, stride, groups, &s,
                                   bn ? NetWriter::Bias::batch_norm : bias ? NetWriter::Bias::own : NetWriter::Bias::none,
                                   pad, dilation);
      w.set(y, s);
      activation(f.text("act", "none"));
    } else if (op == "linear") {
      if (flat) w.set(w.x(), {in.n, in.c, 1, 1});
      w.linear(f.integer("out", std::nullopt), f.flag("bias", true));
      w.set(w.x(), {in.n, w.shape().c, 0, 0});
      flat = true;
      activation(f.text("act", "none"));
    } else if (op == "batchnorm") {
      w.set(w.batch_norm(w.x(), in.c), in);
    } else if (kActivations.count(op)) {
      activation(op);
    } else if (op == "max_pool" || op == "avg_pool") {
      const int64_t k = f.integer("kernel", std::nullopt, 1, 64), pad = f.integer("padding", 0, 0, 64);
      if (2 * pad > k) f.fail("\"padding\" may be at most half of \"kernel\"");
      w.pool(op == "max_pool" ? "MaxPool" : "AveragePool", k, f.integer("stride", k, 1, 64), pad);
    } else if (op == "global_avg_pool") {
      w.set(w.node("GlobalAveragePool", {w.x()})->output(0), {in.n, in.c, 1, 1});
    } else if (op == "se") {
      w.squeeze_excite(f.integer("squeeze", std::max<int64_t>(1, in.c / 4)));
    } else if (op == "add" || op == "mul" || op == "concat") {
      const auto list = f.names("inputs");
      if (!list || list->empty()) f.fail("needs \"inputs\": the layers it combines (with the previous one if it names one)");
      std::vector<Tensor> parts;
      if (list->size() == 1) parts.push_back({w.x(), in});
      for (const auto& name : *list) parts.push_back(tensor_of(name));
      Shape4 out = parts[0].shape;
      std::vector<std::string> names;
      for (const auto& p : parts) {
        const Shape4& s = p.shape;
        const bool same_nhw = s.n == out.n && s.h == out.h && s.w == out.w;
        // mul also takes a per-channel gate (N x C x 1 x 1), as squeeze-excitation does.
        const bool ok = op == "concat" ? same_nhw
                      : op == "mul" ? (s.n == out.n && s.c == out.c && ((s.h == 1 && s.w == 1) || (out.h == 1 && out.w == 1) || same_nhw))
                                    : s == out;
        if (!ok || s.h == 0 || out.h == 0)
          f.fail(fmt::format("cannot combine shapes {}x{}x{}x{} and {}x{}x{}x{}", out.n, out.c, out.h, out.w, s.n, s.c, s.h, s.w));
        if (op == "concat" && &p != &parts[0]) out.c += s.c;
        if (op == "mul") out.h = std::max(out.h, s.h), out.w = std::max(out.w, s.w);
        names.push_back(p.name);
      }
      if (op == "concat") {
        if (out.c > kMaxDim) f.fail("more than 2^20 channels");
        auto* n = w.node("Concat", names);
        NetWriter::attr_int(n, "axis", 1);
        w.set(n->output(0), out);
      } else {
        std::string acc = names[0];
        for (size_t k = 1; k < names.size(); ++k) acc = w.node(op == "add" ? "Add" : "Mul", {acc, names[k]})->output(0);
        w.set(acc, out);
      }
    } else {
      f.fail("unknown op (conv, linear, batchnorm, max_pool, avg_pool, global_avg_pool, se, add, mul, concat, or an "
             "activation: relu, relu6, silu, sigmoid, tanh, hardswish, gelu)");
    }
    const std::string name = f.text("name", "");
    f.done();
    if (!flat && (w.shape().h < 1 || w.shape().w < 1))
      f.fail(fmt::format("its output would be {}x{}: the feature map shrinks below 1x1", w.shape().h, w.shape().w));
    if (!name.empty()) {
      if (named.count(name)) f.fail(fmt::format("the name \"{}\" is already taken", name));
      named[name] = {w.x(), w.shape()};
    }
  }
  return w.finish();
}

}  // namespace tilewave::space
