#include "measure.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <utility>
#include <vector>

#include "check.hpp"
#include "context.hpp"
#include "header.hpp"
#include "op_runner.hpp"
#include "op_table.hpp"

namespace tw {

namespace {

using Clock = std::chrono::steady_clock;

// Multiplying by the power of ten and dividing again gives the double nearest the
// decimal, so the JSON shows e.g. 931.632 rather than 931.6320000000001.
double round_decimals(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

// Enough copies that one pass over all of them is > kRotationTargetBytes
// (so replays do not hit in L2), within the arena.
int choose_copies(size_t set_bytes, size_t arena_bytes) {
  if (set_bytes > arena_bytes)
    throw LayerError("problem needs " + std::to_string(set_bytes >> 20) + " MiB, arena holds " +
                     std::to_string(arena_bytes >> 20) + " MiB");
  size_t wanted = (kRotationTargetBytes + set_bytes - 1) / std::max<size_t>(set_bytes, 1);
  size_t fit = arena_bytes / std::max<size_t>(set_bytes, 1);
  return static_cast<int>(std::clamp<size_t>(std::min(wanted, fit), 1, kMaxCopies));
}

void set_result(Json& out, const TimingResult& t, const std::string& algo, int copies) {
  out["measured_us"] = round_decimals(t.median_us, 3);
  out["min_us"] = round_decimals(t.min_us, 3);
  out["spread"] = round_decimals((t.max_us - t.min_us) / std::max(t.median_us, 1e-9), 4);
  out["algo"] = algo;
  out["status"] = "ok";
  out["timing"] = std::string(t.used_graph ? "graph" : "events") + " R=" + std::to_string(t.launches_per_replay) +
                  " x" + std::to_string(t.replays) + " copies=" + std::to_string(copies);
}

void set_problem(Json& out, const char* status, const std::string& algo, const char* key,
                 const std::string& message) {
  out["measured_us"] = nullptr;
  out["min_us"] = nullptr;
  out["spread"] = nullptr;
  out["algo"] = algo;
  out["status"] = status;
  out[key] = message;
}

// After a failed layer: drain the stream and clear the error. A sticky error
// (illegal address, …) survives that, and then nothing else can run.
void recover_or_throw(Context& ctx) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(ctx.stream, &capturing) == cudaSuccess && capturing != cudaStreamCaptureStatusNone) {
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(ctx.stream, &graph);
    if (graph) cudaGraphDestroy(graph);
  }
  cudaDeviceSynchronize();
  cudaGetLastError();
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    throw FatalError(std::string("CUDA context is broken (") + cudaGetErrorName(err) + ": " +
                     cudaGetErrorString(err) + "); stopping — rerun the remaining layers in a new process");
}

std::string format_seconds(double s) {
  char text[32];
  int total = static_cast<int>(s + 0.5);
  if (total >= 3600) std::snprintf(text, sizeof(text), "%dh%02dm", total / 3600, total / 60 % 60);
  else std::snprintf(text, sizeof(text), "%dm%02ds", total / 60, total % 60);
  return text;
}

// One status line on stderr: redrawn in place on a terminal at <= 4 Hz,
// otherwise a new line every 10 s so logs stay short.
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), tty_(isatty(STDERR_FILENO)), start_(Clock::now()) {}
  void update(size_t done, const Layer& last) {
    auto now = Clock::now();
    double since_print = std::chrono::duration<double>(now - last_print_).count();
    if (done != total_ && since_print < (tty_ ? 0.25 : 10.0)) return;
    last_print_ = now;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    double eta = done ? elapsed / done * (total_ - done) : 0;
    std::fprintf(stderr, "%s[%zu/%zu] %5.1f%%  elapsed %s  eta %s  (%s %s, line %d)%s", tty_ ? "\r" : "", done,
                 total_, 100.0 * done / std::max<size_t>(total_, 1), format_seconds(elapsed).c_str(),
                 format_seconds(eta).c_str(), last.op.c_str(), dtype_name(last.dtype), last.line,
                 tty_ ? "\033[K" : "\n");
    if (tty_ && done == total_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  size_t total_;
  bool tty_;
  Clock::time_point start_;
  Clock::time_point last_print_{};
};

// Several library paths (conv: graph API and legacy API): each available one is
// timed in full; the fastest median becomes measured_us, and every path gets
// "<name>_us": null when it has nothing to run ("<name>_note" says why) or when
// its timing failed ("<name>_error").
void time_paths(Context& ctx, OpRunner& runner, const std::vector<RunPath>& paths, int copies, Json& out) {
  int best = -1;
  TimingResult best_t;
  std::string best_algo;
  std::exception_ptr first_error;
  std::vector<std::pair<std::string, Json>> fields;
  for (size_t i = 0; i < paths.size(); ++i) {
    const RunPath& p = paths[i];
    fields.emplace_back(p.name + "_us", nullptr);
    if (!p.available) {
      if (!p.note.empty()) fields.emplace_back(p.name + "_note", p.note);
      continue;
    }
    try {
      runner.use_path(i);
      const std::string algo = runner.algo_name();
      const TimingResult t = time_launches(ctx.stream, [&](int c) { runner.launch(c); }, copies, ctx.timing);
      fields[fields.size() - 1].second = round_decimals(t.median_us, 3);
      if (best < 0 || t.median_us < best_t.median_us) best = static_cast<int>(i), best_t = t, best_algo = algo;
    } catch (const std::exception& e) {
      if (!first_error) first_error = std::current_exception();
      fields.emplace_back(p.name + "_error", e.what());
      recover_or_throw(ctx);
    }
  }
  if (best < 0) {
    if (first_error) std::rethrow_exception(first_error);
    throw LayerError("no path could run");
  }
  set_result(out, best_t, best_algo, copies);
  for (auto& f : fields) out[f.first] = f.second;
}

}  // namespace

Json measure_layer(Context& ctx, const Layer& layer, uint64_t seed) {
  Json out = layer.json;
  std::string algo;
  bool failed = false;
  try {
    ctx.arena->reset();
    std::unique_ptr<OpRunner> runner = find_op(layer.op)->make(ctx, layer);
    const int copies = choose_copies(runner->set_bytes(), ctx.arena->capacity_bytes());
    runner->allocate(copies, seed);
    runner->select_algorithm();  // autotune: excluded from timing
    algo = runner->algo_name();
    const std::vector<RunPath> paths = runner->paths();
    if (paths.empty()) {
      TimingResult t = time_launches(ctx.stream, [&](int c) { runner->launch(c); }, copies, ctx.timing);
      set_result(out, t, algo, copies);
    } else {
      time_paths(ctx, *runner, paths, copies, out);
    }
  } catch (const Unsupported& e) {
    set_problem(out, "unsupported", algo, "reason", e.what());
    failed = true;
  } catch (const std::exception& e) {
    set_problem(out, "failed", algo, "error", e.what());
    failed = true;
  }
  if (failed) recover_or_throw(ctx);
  return out;
}

int run_measure(const MeasureOptions& opts) {
  std::vector<Layer> layers;
  try {
    layers = read_layer_file(opts.layers_path);
  } catch (const InputError& e) {
    std::fprintf(stderr, "tilewave-calibrate: %s\n", e.what());
    return 1;
  }
  if (opts.limit > 0 && layers.size() > static_cast<size_t>(opts.limit)) layers.resize(opts.limit);

  std::unique_ptr<Context> ctx;
  try {
    ctx = create_context(opts.timing);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilewave-calibrate: %s\n", e.what());
    return 1;
  }
  std::ofstream out(opts.output_path);
  if (!out) {
    std::fprintf(stderr, "tilewave-calibrate: %s: cannot open for writing\n", opts.output_path.c_str());
    return 1;
  }
  spin_gpu(ctx->stream, ctx->sm_count, 300.0);  // leave idle clocks before reading them and timing
  Json header = device_header(*ctx, opts.command);
  header["repeats"] = opts.timing.repeats;
  header["warmup"] = opts.timing.warmup;
  header["budget_ms"] = opts.timing.budget_us / 1000.0;
  header["conv_plans"] = opts.timing.conv_plans;
  header["conv_tune_ms"] = opts.timing.conv_tune_ms;
  header["layers"] = layers.size();
  out << header.dump() << '\n' << std::flush;

  Progress progress(layers.size());
  size_t counts[3] = {0, 0, 0};  // ok, unsupported, failed
  for (size_t i = 0; i < layers.size(); ++i) {
    Json result;
    try {
      result = measure_layer(*ctx, layers[i], 0x5eed0000ull + 7919ull * i);
    } catch (const FatalError& e) {
      Json line = layers[i].json;
      set_problem(line, "failed", "", "error", e.what());
      out << line.dump() << '\n' << std::flush;
      std::fprintf(stderr, "\ntilewave-calibrate: %s:%d: %s\n", opts.layers_path.c_str(), layers[i].line, e.what());
      return 1;
    }
    const std::string status = result["status"].get<std::string>();
    ++counts[status == "ok" ? 0 : status == "unsupported" ? 1 : 2];
    out << result.dump() << '\n' << std::flush;  // complete lines survive a killed run
    progress.update(i + 1, layers[i]);
  }
  std::fprintf(stderr, "tilewave-calibrate: %zu ok, %zu unsupported, %zu failed -> %s\n", counts[0], counts[1],
               counts[2], opts.output_path.c_str());
  return 0;
}

}  // namespace tw
