#include "tilewave/report.h"
#include "tilewave/text.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "tilewave/layer_set.h"

using nlohmann::json;

namespace tilewave {

namespace {

std::string si(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (std::abs(v) >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  return fmt::format("{:.3g} {}{}", v, prefixes[i], unit);
}

std::string pct(double f) { return fmt::format("{:.1f}%", 100 * f); }

}  // namespace

// The biggest loss names the reason a layer is slow.
std::string main_loss(const KernelCost& c) {
  const std::pair<double, const char*> parts[] = {{c.losses.tile, "tile quantization"},
                                                  {c.losses.wave, "wave quantization"},
                                                  {c.losses.efficiency, "main-loop efficiency"},
                                                  {c.losses.memory, "memory bound"},
                                                  {c.losses.fixed, "fixed per-kernel cost"}};
  auto best = std::max_element(std::begin(parts), std::end(parts));
  return best->first > 0 ? best->second : "-";
}

std::string shape_text(const Kernel& k) {
  if (!k.layer) return "";
  const Layer& l = *k.layer;
  if (auto* c = std::get_if<ConvProblem>(&l.problem))
    return fmt::format("{}x{}x{}x{}->{} {}x{}/{}{}", c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->stride[0],
                       c->groups > 1 ? fmt::format(" g{}", c->groups) : "");
  if (auto* g = std::get_if<GemmProblem>(&l.problem))
    return fmt::format("{}x{}x{}{}", g->M, g->N, g->K, g->batch > 1 ? fmt::format(" b{}", g->batch) : "");
  if (auto* a = std::get_if<AttentionProblem>(&l.problem))
    return fmt::format("attn {}x{}x{} d{} b{}", a->q_len, a->kv_len, a->v_head_dim, a->head_dim, a->batch_heads);
  const auto& m = std::get<MemoryProblem>(l.problem);
  std::string n = si(double(m.elems_read() + m.elems_written()), "");
  n.erase(std::remove(n.begin(), n.end(), ' '), n.end());
  return "mem " + n + " elems";
}

namespace {

json loss_json(const Losses& l) {
  return {{"tile", l.tile}, {"wave", l.wave}, {"efficiency", l.efficiency}, {"memory", l.memory}, {"fixed", l.fixed}};
}

}  // namespace

// One kernel's row of the JSON document, as text: the one definition of its
// fields, which write_json streams and analysis_to_json parses back.
std::string kernel_json(const KernelResult& r) {
  // Names from the file need not be valid UTF-8: replaced, not fatal.
  const auto text = [](const std::string& v) { return json(v).dump(-1, ' ', false, json::error_handler_t::replace); };
  std::string row = fmt::format("{{\"name\":{},\"op\":{},\"nodes\":{},", text(r.kernel.name), text(r.kernel.ops),
                                r.kernel.nodes.size());
  if (r.cost) {
    std::string fields = cost_fields(*r.cost);  // starts with "pred_us", which the analysis calls time_us
    fields.replace(0, std::string("\"pred_us\"").size(), "\"time_us\"");
    row += "\"layer\":" + layer_to_json(*r.kernel.layer).dump() + "," + fields;
  } else {
    row += "\"unmodelled\":" + text(r.kernel.unmodelled_reason);
  }
  return row + '}';
}

json analysis_to_json(const Analysis& a, bool with_layers) {
  json layers = json::array();
  if (with_layers)
    for (const auto& r : a.kernels) layers.push_back(json::parse(kernel_json(r)));
  // Built without the layers, which are moved in: an initializer list would copy them.
  json out = {{"model", a.model_name},
          {"model_path", a.model_path},
          {"gpu", a.gpu_id},
          {"gpu_name", a.gpu_name},
          {"peak_tflops", a.peak_tflops},
          {"batch", a.batch},
          {"dtype", dtype_name(a.dtype)},
          {"runtime", a.runtime},
          {"runtime_calibrated", a.runtime_calibrated},
          {"launch_gap_us", a.launch_gap_us},
          {"nodes", a.nodes},
          {"free_nodes", a.free_nodes},
          {"total",
           {{"flops", a.total.flops},
            {"bytes", a.total.bytes},
            {"time_us", a.total.time_us},
            {"utilization", a.total.utilization},
            {"throughput_per_s", a.total.throughput_per_s},
            {"kernels", a.total.kernels},
            {"loss", loss_json(a.total.losses)}}},
          {"unmodelled", a.unmodelled},
          {"partial", a.partial}};
  out["layers"] = std::move(layers);
  return out;
}

json candidate_to_json(const space::CandidateCost& c, bool with_losses) {
  json j = {{"flops", c.flops},   {"params", c.params},     {"latency_us", c.time_us},
            {"throughput_per_s", c.throughput_per_s}, {"utilization", c.utilization},
            {"main_loss", c.main_loss}, {"kernels", c.kernels}};
  if (with_losses) j["loss"] = loss_json(c.losses);
  return j;
}

// The same document as analysis_to_json(a).dump(2), written without
// building a json value per kernel, and streamed kernel by kernel: for a
// network of hundreds of kernels that took most of a call's time
// (docs/performance.md "Start-up").
void write_json(std::ostream& os, const Analysis& a) {
  const std::string top = analysis_to_json(a, false).dump(2, ' ', false, json::error_handler_t::replace);
  const std::string placeholder = "\"layers\": []";
  const auto at = top.find(placeholder);
  os.write(top.data(), std::streamsize(at));
  os << "\"layers\": [";
  for (size_t i = 0; i < a.kernels.size(); ++i) os << (i ? ",\n    " : "\n    ") << kernel_json(a.kernels[i]);
  os << (a.kernels.empty() ? "]" : "\n  ]");
  os.write(top.data() + at + placeholder.size(), std::streamsize(top.size() - at - placeholder.size()));
  os << "\n";
}

void write_csv(std::ostream& os, const Analysis& a) {
  // The run's facts first, as one JSON comment line (the same convention as `nas`).
  json meta = analysis_to_json(a, false);
  meta.erase("layers");
  os << "# " << meta.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  os << "name,op,shape,kernel,flops,bytes,l2_hit_bytes,intensity,time_us,compute_us,memory_us,fixed_us,utilization,"
        "bound,tile,split_k,tile_eff,wave_eff,tiles,waves,loss_tile,loss_wave,loss_efficiency,loss_memory,loss_fixed,"
        "unmodelled\n";
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const auto& r : a.kernels) {
    os << quote(r.kernel.name) << ',' << quote(r.kernel.ops) << ',' << quote(shape_text(r.kernel)) << ',';
    if (!r.cost) {
      os << ",,,,,,,,,,,,,,,,,,,,,," << quote(r.kernel.unmodelled_reason) << "\n";
      continue;
    }
    const KernelCost& c = *r.cost;
    const bool gemm = c.path == CostPath::tensor_gemm || c.path == CostPath::cuda_gemm;
    fmt::print(os, "{},{},{},{},{:.4g},{:.4f},{:.4f},{:.4f},{:.4f},{:.6f},{},{},{},{:.4f},{:.4f},{},{},{:.4f},{:.4f},{:.4f},"
                   "{:.4f},{:.4f},\n",
               c.kernel, c.flops, c.bytes, c.l2_hit_bytes, c.intensity, c.time_us, c.compute_us, c.memory_us, c.fixed_us,
               c.utilization, bound_name(c.bound), gemm ? c.tile.name() : "", gemm ? c.split_k : 0, c.tile_eff,
               c.wave_eff, c.tiles, c.waves, c.losses.tile, c.losses.wave, c.losses.efficiency, c.losses.memory,
               c.losses.fixed);
  }
}

void write_table(std::ostream& os, const Analysis& a, int worst_layers) {
  const Totals& t = a.total;
  fmt::print(os, "{} on {} ({}), batch {}, {}, runtime {}{}\n", printable(a.model_name), a.gpu_name, a.gpu_id, a.batch,
             dtype_name(a.dtype), a.runtime, a.runtime_calibrated ? "" : " (no parameters fitted on this runtime)");
  fmt::print(os, "  {} ONNX nodes -> {} kernels ({} nodes launch nothing){}\n", a.nodes, a.kernels.size(),
             a.free_nodes, a.unmodelled.empty() ? "" : fmt::format(", {} UNMODELLED", a.unmodelled.size()));
  fmt::print(os, "  predicted latency  {:.1f} us   throughput {:.0f} samples/s{}\n", t.time_us, t.throughput_per_s,
             a.partial ? "   (PARTIAL: unmodelled kernels left out)" : "");
  fmt::print(os, "  useful work        {}   DRAM traffic {}   intensity {:.1f} FLOP/B\n", si(double(t.flops), "FLOP"),
             si(double(t.bytes), "B"), t.bytes ? double(t.flops) / t.bytes : 0.0);
  fmt::print(os, "  utilization        {} of the {:.0f} TFLOP/s {} peak\n", pct(t.utilization), a.peak_tflops,
             dtype_name(a.dtype));
  fmt::print(os, "  time lost to       tile quantization {}, wave quantization {},\n"
                 "                     main-loop efficiency {}, memory {}, fixed cost {}\n",
             pct(t.losses.tile), pct(t.losses.wave), pct(t.losses.efficiency), pct(t.losses.memory),
             pct(t.losses.fixed));
  for (size_t i = 0; i < a.by_bound.size(); ++i)
    fmt::print(os, "  {:<19}{}-bound: {} kernels, {} of time\n", i ? "" : "kernels by bound", a.by_bound[i].name,
               a.by_bound[i].kernels, pct(a.by_bound[i].share));

  const size_t ops_shown = std::min<size_t>(10, a.by_op.size());
  fmt::print(os, "\nBy op ({} of {} kinds, by time):\n", ops_shown, a.by_op.size());
  fmt::print(os, "  {:<24} {:>7} {:>11} {:>7} {:>11} {:>7}\n", "op", "kernels", "time_us", "share", "FLOP", "util");
  for (size_t i = 0; i < ops_shown; ++i) {
    const KernelGroup& g = a.by_op[i];
    fmt::print(os, "  {:<24} {:>7} {:>11.1f} {:>7} {:>11} {:>7}\n", middle_ellipsis(printable(g.name), 24), g.kernels,
               g.time_us, pct(g.share), si(double(g.flops), ""), pct(g.utilization));
  }

  std::vector<const KernelResult*> rows;
  for (const auto& r : a.kernels)
    if (r.cost) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](auto* x, auto* y) { return x->cost->time_us > y->cost->time_us; });
  const int shown = std::min<int>(worst_layers, int(rows.size()));
  fmt::print(os, "\nSlowest {} of {} kernels: name, bound and main loss; then op, shape, time, share\n"
                 "of the network, utilization, tile/wave efficiency in % (GEMM-like kernels):\n", shown, rows.size());
  for (int i = 0; i < shown; ++i) {
    const auto& r = *rows[i];
    const KernelCost& c = *r.cost;
    const bool gemm = c.path == CostPath::tensor_gemm || c.path == CostPath::cuda_gemm;
    const std::string why = fmt::format("{}-bound: {}", bound_name(c.bound), main_loss(c));
    fmt::print(os, "{:>3} {:<{}} {}\n", i + 1, middle_ellipsis(printable(compact_name(r.kernel.name)), 75 - why.size()),
               75 - why.size(), why);
    fmt::print(os, "    {:<10} {:<28} {:>8.1f} us {:>6} {:>6} {:>7}\n", middle_ellipsis(printable(r.kernel.ops), 10),
               middle_ellipsis(shape_text(r.kernel), 28), c.time_us, pct(t.time_us > 0 ? c.time_us / t.time_us : 0),
               pct(c.utilization),
               gemm ? fmt::format("{:.0f}/{:.0f}", 100 * c.tile_eff, 100 * c.wave_eff) : std::string("-"));
  }
  if (!a.unmodelled.empty()) {
    fmt::print(os, "\nPARTIAL: {} kernels are unmodelled and left out of the totals, by cause:\n", a.unmodelled.size());
    for (const auto& c : a.unmodelled_causes)
      fmt::print(os, "  {} kernel{} (first: {}): {}\n", c.kernels, c.kernels == 1 ? "" : "s", printable(c.first),
                 printable(c.reason));
  }
  fmt::print(os, "\nKernel times are inside the network: L2 reuse between kernels and the {:.1f} us\n"
                 "launch gap included (`tilewave layers` costs a kernel alone).\n"
                 "util = useful FLOPs / (time x peak); docs/model.md explains every number;\n"
                 "--format json or csv gives all kernels.\n",
             a.launch_gap_us);
}

namespace {

// Kendall's tau-b between two orderings of the same items.
double kendall_tau(const std::vector<double>& x, const std::vector<double>& y) {
  long concordant = 0, discordant = 0, tx = 0, ty = 0;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = i + 1; j < x.size(); ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0 && dy == 0) continue;
      if (dx == 0) ++tx;
      else if (dy == 0) ++ty;
      else if ((dx > 0) == (dy > 0)) ++concordant;
      else ++discordant;
    }
  const double denom = std::sqrt(double(concordant + discordant + tx) * double(concordant + discordant + ty));
  return denom > 0 ? (concordant - discordant) / denom : 0.0;
}

}  // namespace

json rank_to_json(const std::vector<Analysis>& as, const std::vector<RankFailure>& failed) {
  json rows = json::array();
  std::vector<double> time, flops;
  for (const auto& a : as) {
    rows.push_back({{"model", a.model_name},
                    {"time_us", a.total.time_us},
                    {"flops", a.total.flops},
                    {"utilization", a.total.utilization},
                    {"throughput_per_s", a.total.throughput_per_s},
                    {"unmodelled", a.unmodelled.size()},
                    {"partial", a.partial}});
    time.push_back(a.total.time_us);
    flops.push_back(double(a.total.flops));
  }
  std::sort(rows.begin(), rows.end(), [](const json& x, const json& y) { return x["time_us"] < y["time_us"]; });
  return {{"gpu", as.empty() ? "" : as[0].gpu_id},
          {"batch", as.empty() ? 0 : as[0].batch},
          {"models", rows},
          {"failed", [&] {
             json f = json::array();
             for (const auto& x : failed) f.push_back({{"model", x.model_path}, {"error", x.reason}});
             return f;
           }()},
          {"kendall_tau_flops_vs_predicted", kendall_tau(time, flops)}};
}

void write_rank_table(std::ostream& os, const std::vector<Analysis>& as, const std::vector<RankFailure>& failed) {
  std::vector<size_t> by_time(as.size()), by_flops(as.size());
  std::iota(by_time.begin(), by_time.end(), 0);
  std::iota(by_flops.begin(), by_flops.end(), 0);
  std::sort(by_time.begin(), by_time.end(), [&](size_t x, size_t y) { return as[x].total.time_us < as[y].total.time_us; });
  std::sort(by_flops.begin(), by_flops.end(), [&](size_t x, size_t y) { return as[x].total.flops < as[y].total.flops; });
  std::vector<size_t> flops_rank(as.size());
  for (size_t i = 0; i < by_flops.size(); ++i) flops_rank[by_flops[i]] = i + 1;
  if (!as.empty())
    fmt::print(os, "{} models on {}, batch {}, {}, runtime {} (fastest first)\n", as.size(), as[0].gpu_name,
               as[0].batch, dtype_name(as[0].dtype), as[0].runtime);
  fmt::print(os, "{:>4} {:<24} {:>11} {:>12} {:>7} {:>14} {:>10}   {}\n", "rank", "model", "latency_us", "FLOPs", "util",
             "samples/s", "FLOPs rank", "FLOPs-only order");
  for (size_t i = 0; i < by_time.size(); ++i) {
    const Analysis& a = as[by_time[i]];
    const Analysis& f = as[by_flops[i]];
    fmt::print(os, "{:>4} {:<24.24} {:>11.1f} {:>12} {:>7} {:>14.0f} {:>10}   {}\n", i + 1, printable(a.model_name),
               a.total.time_us, si(double(a.total.flops), ""), pct(a.total.utilization), a.total.throughput_per_s,
               flops_rank[by_time[i]], printable(f.model_name));
  }
  json j = rank_to_json(as);
  fmt::print(os, "Kendall tau between the FLOPs order and the predicted-latency order: {:.3f}\n",
             j["kendall_tau_flops_vs_predicted"].get<double>());
  if (!failed.empty()) fmt::print(os, "{} model{} not ranked:\n", failed.size(), failed.size() == 1 ? "" : "s");
  for (const auto& f : failed) fmt::print(os, "   {}: {}\n", printable(f.model_path), printable(f.reason));
}

json sweep_to_json(const std::vector<Analysis>& as) {
  json rows = json::array();
  for (const auto& a : as)
    rows.push_back({{"batch", a.batch},
                    {"time_us", a.total.time_us},
                    {"utilization", a.total.utilization},
                    {"throughput_per_s", a.total.throughput_per_s},
                    {"loss", loss_json(a.total.losses)}});
  return {{"model", as.empty() ? "" : as[0].model_name}, {"gpu", as.empty() ? "" : as[0].gpu_id}, {"points", rows}};
}

void write_sweep_table(std::ostream& os, const std::vector<Analysis>& as) {
  if (as.empty()) return;
  fmt::print(os, "{} on {}, {}, runtime {}\n", printable(as[0].model_name), as[0].gpu_name, dtype_name(as[0].dtype),
             as[0].runtime);
  fmt::print(os, "{:>6} {:>12} {:>14} {:>7}  {:>6} {:>6} {:>6} {:>6} {:>6}  {}\n", "batch", "latency_us", "samples/s",
             "util", "tile", "wave", "eff", "mem", "fixed", "utilization bar");
  double max_u = 0;
  for (const auto& a : as) max_u = std::max(max_u, a.total.utilization);
  for (const auto& a : as) {
    const Losses& l = a.total.losses;
    const int bar = max_u > 0 ? int(std::round(30 * a.total.utilization / max_u)) : 0;
    fmt::print(os, "{:>6} {:>12.1f} {:>14.0f} {:>7}  {:>6} {:>6} {:>6} {:>6} {:>6}  {}\n", a.batch, a.total.time_us,
               a.total.throughput_per_s, pct(a.total.utilization), pct(l.tile), pct(l.wave), pct(l.efficiency),
               pct(l.memory), pct(l.fixed), std::string(bar, '#'));
  }
  fmt::print(os, "tile/wave/eff/mem/fixed: share of time lost to each cause (docs/model.md)\n");
}

}  // namespace tilewave
