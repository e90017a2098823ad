#include "tilewave/layer_set.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <stdexcept>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/json_input.h"

using nlohmann::json;

namespace tilewave {

namespace {

// An optional true/false field, false when absent.
bool flag(const json& j, const char* key) {
  if (!j.contains(key)) return false;
  if (!j.at(key).is_boolean()) throw std::invalid_argument(fmt::format("field '{}' must be true or false", key));
  return j.at(key).get<bool>();
}

int64_t positive_int(const json& j, const char* key, std::optional<int64_t> fallback = std::nullopt) {
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    throw std::invalid_argument(fmt::format("missing field '{}'", key));
  }
  const json& v = j.at(key);
  // A float is accepted when it is a whole number an int64 holds (checked before the cast).
  const bool whole_float = v.is_number_float() && std::abs(v.get<double>()) < 9.2e18 &&
                           v.get<double>() == std::floor(v.get<double>());
  if (!v.is_number_integer() && !whole_float)
    throw std::invalid_argument(fmt::format("field '{}' must be an integer", key));
  const int64_t n = v.get<int64_t>();
  if (n <= 0) throw std::invalid_argument(fmt::format("field '{}' must be positive, got {}", key, n));
  return n;
}

std::array<int64_t, 2> pair_field(const json& j, const char* key, int64_t fallback, bool allow_zero) {
  if (!j.contains(key)) return {fallback, fallback};
  const json& v = j.at(key);
  std::array<int64_t, 2> out{};
  if (v.is_number_integer()) {
    out = {v.get<int64_t>(), v.get<int64_t>()};
  } else if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer()) {
    out = {v[0].get<int64_t>(), v[1].get<int64_t>()};
  } else {
    throw std::invalid_argument(fmt::format("field '{}' must be [h, w]", key));
  }
  for (int64_t x : out)
    if (x < 0 || (!allow_zero && x == 0))
      throw std::invalid_argument(fmt::format("field '{}' has an invalid value {}", key, x));
  return out;
}

ConvProblem conv_from_json(const json& j, bool with_k) {
  ConvProblem p;
  p.N = positive_int(j, "N");
  p.C = positive_int(j, "C");
  p.H = positive_int(j, "H");
  p.W = positive_int(j, "W");
  p.K = with_k ? positive_int(j, "K") : p.C;
  p.R = positive_int(j, "R");
  p.S = positive_int(j, "S");
  p.stride = pair_field(j, "stride", 1, false);
  p.pad = pair_field(j, "pad", 0, true);
  p.dilation = pair_field(j, "dilation", 1, false);
  p.groups = positive_int(j, "groups", 1);
  if (p.C % p.groups || p.K % p.groups)
    throw std::invalid_argument(fmt::format("groups={} must divide C={} and K={}", p.groups, p.C, p.K));
  return p;
}

void check_output_size(const ConvProblem& p) {
  if (p.P() <= 0 || p.Q() <= 0)
    throw std::invalid_argument(fmt::format("window larger than the padded input (output {}x{})", p.P(), p.Q()));
}

}  // namespace

int64_t l2_hit_bytes_from_json(const json& j, const Layer& layer) {
  if (!j.contains("l2_hit_bytes")) return 0;
  const json& v = j.at("l2_hit_bytes");
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > min_bytes(layer))
    throw std::invalid_argument("field 'l2_hit_bytes' must be an integer from 0 to the kernel's bytes");
  return v.get<int64_t>();
}

Layer layer_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("not a JSON object");
  if (!j.contains("op") || !j.at("op").is_string()) throw std::invalid_argument("missing string field 'op'");
  Layer l;
  const std::string dt = j.value("dtype", std::string("fp16"));
  auto d = parse_dtype(dt);
  if (!d) throw std::invalid_argument(fmt::format("unknown dtype '{}' (fp32, tf32, fp16, bf16, int8)", dt));
  l.dtype = *d;
  if (j.contains("input_dtype")) {
    const json& in = j.at("input_dtype");
    const auto read = in.is_string() ? parse_dtype(in.get<std::string>()) : std::nullopt;
    if (!read) throw std::invalid_argument("'input_dtype' is not a dtype (fp32, tf32, fp16, bf16, int8)");
    l.input_dtype = *read;
  }
  const std::string op = j.at("op").get<std::string>();
  if (op == "conv" || op == "conv_transpose") {
    ConvProblem p = conv_from_json(j, true);
    p.transposed = op == "conv_transpose";
    p.nchw = flag(j, "nchw");
    check_output_size(p);
    l.problem = p;
  } else if (op == "gemm") {
    GemmProblem g;
    g.M = positive_int(j, "M");
    g.N = positive_int(j, "N");
    g.K = positive_int(j, "K");
    g.batch = positive_int(j, "batch", 1);
    l.problem = g;
  } else if (op == "attention") {
    AttentionProblem a;
    a.batch_heads = positive_int(j, "batch_heads");
    a.q_len = positive_int(j, "q_len");
    a.kv_len = positive_int(j, "kv_len");
    a.head_dim = positive_int(j, "head_dim");
    a.v_head_dim = positive_int(j, "v_head_dim", a.head_dim);
    a.masked = flag(j, "masked");
    l.problem = a;
  } else {
    MemoryProblem m;
    if (op == "eltwise" || op == "norm") {
      m.op = op == "eltwise" ? MemoryOp::eltwise : MemoryOp::norm;
      m.elems = positive_int(j, "elems");
      m.inputs = positive_int(j, "inputs", 1);
      if (m.op == MemoryOp::eltwise) {
        m.strided = flag(j, "strided");
        m.unrolled = flag(j, "unrolled");
        if (m.strided && m.unrolled) throw std::invalid_argument("fields 'strided' and 'unrolled' exclude each other");
        if (j.contains("special_functions")) m.special_functions = positive_int(j, "special_functions");  // absent: none
      }
      if (m.op == MemoryOp::norm && j.contains("planes")) m.outer = positive_int(j, "planes");
    } else if (op == "pool") {
      m.op = MemoryOp::pool;
      m.window = conv_from_json(j, false);
      check_output_size(m.window);
      const std::string mode = j.value("mode", std::string("max"));
      if (mode != "max" && mode != "avg") throw std::invalid_argument("field 'mode' must be \"max\" or \"avg\"");
      m.max_pool = mode == "max";
    } else if (op == "reduce" || op == "softmax") {
      m.op = op == "reduce" ? MemoryOp::reduce : MemoryOp::row_norm;
      m.outer = positive_int(j, "outer");
      m.inner = positive_int(j, "inner");
      m.kept_inside = positive_int(j, "kept_inside", 1);
      if (m.op == MemoryOp::row_norm) {
        m.row_moments = flag(j, "row_moments");
        m.warp_rows = flag(j, "warp_rows");
        m.layer_norm = flag(j, "layer_norm");
        if (m.warp_rows && (m.inner > kWarpRowsMaxValues || m.kept_inside != 1))
          throw std::invalid_argument(fmt::format(
              "field 'warp_rows' needs contiguous rows (kept_inside 1) of at most {} values", kWarpRowsMaxValues));
      }
    } else if (op == "copy" || op == "fused" || op == "transform") {
      m.op = op == "copy" ? MemoryOp::copy : op == "fused" ? MemoryOp::fused : MemoryOp::transform;
      m.elems_in = positive_int(j, "elems_in");
      m.elems_out = positive_int(j, "elems_out");
      if (m.op == MemoryOp::copy && j.contains("resample_planes")) {  // absent: any other copy
        m.resample_planes = positive_int(j, "resample_planes");
        if (m.elems_out % m.resample_planes != 0)
          throw std::invalid_argument("field 'resample_planes' must divide 'elems_out' (planes of whole output maps)");
      }
      if (m.op == MemoryOp::copy && j.contains("resample_kernel")) {  // absent: any other copy
        const auto& kind = j.at("resample_kernel");
        const auto k = kind.is_string() ? resample_kernel_of(kind.get<std::string>()) : std::nullopt;
        if (!k)
          throw std::invalid_argument(
              "field 'resample_kernel' must be \"nearest_nchw\", \"nearest_nhwc\" or \"linear_nhwc\"");
        if (m.resample_planes > 0)
          throw std::invalid_argument("a copy cannot have both 'resample_planes' and 'resample_kernel'");
        m.resample_kernel = *k;
      }
    } else {
      throw std::invalid_argument(
          fmt::format("unknown op '{}' (conv, conv_transpose, gemm, eltwise, pool, reduce, softmax, copy, fused, transform, norm)", op));
    }
    l.problem = m;
  }
  if (j.contains("extra_bytes")) {
    const json& v = j.at("extra_bytes");
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      throw std::invalid_argument("field 'extra_bytes' must be a non-negative integer");
    l.extra_bytes = v.get<int64_t>();
  }
  if (!layer_within_limits(l))
    throw std::invalid_argument("its FLOPs or bytes exceed 2^60, the most tilewave counts for one kernel");
  return l;
}

json layer_to_json(const Layer& l) {
  json j;
  j["op"] = layer_kind(l);
  auto conv_fields = [&](const ConvProblem& p, bool with_k) {
    j["N"] = p.N;
    j["C"] = p.C;
    j["H"] = p.H;
    j["W"] = p.W;
    if (with_k) j["K"] = p.K;
    j["R"] = p.R;
    j["S"] = p.S;
    j["stride"] = {p.stride[0], p.stride[1]};
    j["pad"] = {p.pad[0], p.pad[1]};
    if (with_k) {
      j["dilation"] = {p.dilation[0], p.dilation[1]};
      j["groups"] = p.groups;
    }
  };
  if (auto* c = std::get_if<ConvProblem>(&l.problem)) {
    conv_fields(*c, true);
    if (c->nchw) j["nchw"] = true;
  } else if (auto* g = std::get_if<GemmProblem>(&l.problem)) {
    j["M"] = g->M;
    j["N"] = g->N;
    j["K"] = g->K;
    if (g->batch != 1) j["batch"] = g->batch;
  } else if (auto* a = std::get_if<AttentionProblem>(&l.problem)) {
    j["batch_heads"] = a->batch_heads;
    j["q_len"] = a->q_len;
    j["kv_len"] = a->kv_len;
    j["head_dim"] = a->head_dim;
    if (a->masked) j["masked"] = true;
    j["v_head_dim"] = a->v_head_dim;
  } else {
    const auto& m = std::get<MemoryProblem>(l.problem);
    switch (m.op) {
      case MemoryOp::eltwise:
        j["elems"] = m.elems;
        j["inputs"] = m.inputs;
        if (m.strided) j["strided"] = true;
        if (m.unrolled) j["unrolled"] = true;
        if (m.special_functions > 0) j["special_functions"] = m.special_functions;
        break;
      case MemoryOp::norm:
        j["elems"] = m.elems;
        j["inputs"] = m.inputs;
        if (m.outer > 0) j["planes"] = m.outer;  // (image, channel) planes
        break;
      case MemoryOp::pool: conv_fields(m.window, false); j["mode"] = m.max_pool ? "max" : "avg"; break;
      case MemoryOp::reduce:
      case MemoryOp::row_norm:
        j["outer"] = m.outer;
        j["inner"] = m.inner;
        if (m.kept_inside != 1) j["kept_inside"] = m.kept_inside;
        if (m.op == MemoryOp::row_norm && m.row_moments) j["row_moments"] = true;
        if (m.op == MemoryOp::row_norm && m.warp_rows) j["warp_rows"] = true;
        if (m.op == MemoryOp::row_norm && m.layer_norm) j["layer_norm"] = true;
        break;
      case MemoryOp::copy:
      case MemoryOp::fused:
      case MemoryOp::transform:
        j["elems_in"] = m.elems_in;
        j["elems_out"] = m.elems_out;
        if (m.resample_planes > 0) j["resample_planes"] = m.resample_planes;
        if (m.resample_kernel != ResampleKernel::none) j["resample_kernel"] = resample_kernel_name(m.resample_kernel);
        break;
    }
  }
  j["dtype"] = dtype_name(l.dtype);
  if (l.input_dtype) j["input_dtype"] = dtype_name(*l.input_dtype);
  if (l.extra_bytes) j["extra_bytes"] = l.extra_bytes;
  return j;
}

// Written with fmt rather than through a json object: `tilewave layers`
// emits this for every line, and building and dumping an object per line
// cost a third of its time. Names and tiles contain no characters to escape.
std::string cost_fields(const KernelCost& c, bool deprecated_pred_us) {
  std::string s;
  auto out = std::back_inserter(s);
  auto num = [&](const char* key, double v) {
    if (std::isfinite(v)) fmt::format_to(out, FMT_COMPILE("\"{}\":{},"), key, v);
    else fmt::format_to(out, FMT_COMPILE("\"{}\":null,"), key);
  };
  auto str = [&](const char* key, const std::string& v) { fmt::format_to(out, FMT_COMPILE("\"{}\":\"{}\","), key, v); };
  auto integer = [&](const char* key, int64_t v) { fmt::format_to(out, FMT_COMPILE("\"{}\":{},"), key, v); };
  num("time_us", c.time_us);
  str("kernel", c.kernel);
  str("path", path_name(c.path));
  integer("flops", c.flops);
  integer("bytes", c.bytes);
  if (c.l2_hit_bytes) integer("l2_hit_bytes", c.l2_hit_bytes);
  num("intensity", c.intensity);
  str("bound", bound_name(c.bound));
  num("utilization", c.utilization);
  num("bandwidth_utilization", c.bandwidth_utilization);
  num("compute_us", c.compute_us);
  num("memory_us", c.memory_us);
  if (c.ramp_us > 0) num("ramp_us", c.ramp_us);
  num("fixed_us", c.fixed_us);
  if (c.path == CostPath::tensor_gemm || c.path == CostPath::cuda_gemm) {
    str("tile", c.tile.name());
    integer("split_k", c.split_k);
    integer("tiles", c.tiles);
    integer("waves", c.waves);
    num("tile_eff", c.tile_eff);
    num("wave_eff", c.wave_eff);
    num("mainloop_eff", c.mainloop_eff);
    s += c.aligned ? "\"aligned\":true," : "\"aligned\":false,";
  } else if (c.waves > 0) {  // a block per row (docs/model.md "Memory-bound kernels")
    integer("blocks", c.tiles);
    integer("waves", c.waves);
  } else if (c.warps > 0) {  // a short-row softmax (docs/model.md "Memory-bound kernels")
    integer("warps", c.warps);
    integer("values_per_thread", c.values_per_thread);
    integer("shuffles_per_warp", c.shuffles_per_warp);
  }
  s += "\"loss\":{";
  num("tile", c.losses.tile);
  num("wave", c.losses.wave);
  num("efficiency", c.losses.efficiency);
  num("memory", c.losses.memory);
  num("fixed", c.losses.fixed);
  s.back() = '}';
  if (deprecated_pred_us) {
    s += ',';
    num("pred_us", c.time_us);
    s.pop_back();
  }
  return s;
}

json cost_to_json(const KernelCost& c, bool deprecated_pred_us) {
  return json::parse("{" + cost_fields(c, deprecated_pred_us) + "}");
}

void scan_layer_set(const std::string& path,
                    const std::function<void(const LayerSetEntry& entry, const std::string& text)>& fn) {
  if (path == "-") return scan_layer_set(std::cin, "stdin", fn);  // a pipe is given as "-"
  require_regular_file(path, "a layer set");
  std::ifstream f(path);
  if (!f) throw InputError(path, "cannot open layer set");
  scan_layer_set(f, path, fn);
}

void scan_costed_layer_set(
    const std::string& path, const CostModel& cost_model,
    const std::function<void(const LayerSetEntry& entry, const std::string& text, const KernelCost& cost)>& fn) {
  scan_layer_set(path, [&](const LayerSetEntry& e, const std::string& text) { fn(e, text, cost_layer(e.layer, cost_model, double(e.l2_hit_bytes))); });
}

void scan_layer_set(std::istream& f, const std::string& path,
                    const std::function<void(const LayerSetEntry& entry, const std::string& text)>& fn) {
  std::string text;
  LayerSetEntry entry;
  int line = 0, layers = 0;
  // A line is read up to a bound: one endless line on stdin must not grow
  // without limit (docs/errors.md "Budgets").
  constexpr size_t kMaxLineBytes = size_t(16) << 20;
  auto next_line = [&]() {
    text.clear();
    std::istream::sentry ok(f, true);
    if (!ok) return false;
    for (std::streambuf* b = f.rdbuf();;) {
      const int c = b->sbumpc();
      if (c == std::char_traits<char>::eof()) {
        f.setstate(std::ios::eofbit);
        return !text.empty();
      }
      if (c == '\n') return true;
      if (text.size() >= kMaxLineBytes)
        throw InputError(fmt::format("{}:{}", path, line + 1), "line longer than 16 MB: not a layer");
      text.push_back(char(c));
    }
  };
  auto next_line_or_error = [&]() {
    try {
      return next_line();
    } catch (const std::ios_base::failure& e) {  // a read error (EIO) the stream's buffer throws
      throw InputError(path, fmt::format("cannot be read ({})", e.code().message()));
    }
  };
  while (next_line_or_error()) {
    ++line;
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos || text[first] == '#') continue;
    const std::string where = fmt::format("{}:{}", path, line);
    entry.object = parse_json_text(text, where);
    // A header line ({"header": true, ...}) describes the file; any other value of it is a mistake.
    if (entry.object.is_object() && entry.object.contains("header")) {
      if (!entry.object.at("header").is_boolean()) throw InputError(where, "field 'header' must be true or false");
      if (entry.object.at("header").get<bool>()) continue;
    }
    try {
      entry.line = line;
      entry.layer = layer_from_json(entry.object);
      entry.l2_hit_bytes = l2_hit_bytes_from_json(entry.object, entry.layer);
    } catch (const std::invalid_argument& e) {
      throw InputError(where, e.what());
    } catch (const json::exception& e) {
      throw InputError(where, std::string("bad field: ") + e.what());
    }
    fn(entry, text);
    ++layers;
  }
  // Nothing to predict is no answer: an empty file, or one the system gives
  // no bytes of (/proc/self/mem reads as an I/O error, which streams show as
  // an end).
  if (layers == 0) throw InputError(path, "holds no layers (an empty file, or one that cannot be read)");
}

std::vector<LayerSetEntry> read_layer_set(const std::string& path) {
  std::vector<LayerSetEntry> out;
  scan_layer_set(path, [&](const LayerSetEntry& e, const std::string&) { out.push_back(e); });
  return out;
}

std::string append_fields(const std::string& line, const std::string& fields) {
  const auto close = line.find_last_of('}');
  if (close == std::string::npos || fields.empty()) return line;
  const auto open = line.find('{');
  const bool empty = line.find_first_not_of(" \t\r\n", open + 1) == close;
  return line.substr(0, close) + (empty ? "" : ",") + fields + "}";
}

}  // namespace tilewave
