#!/usr/bin/env python3
"""Measures everything a calibration needs, as one command on the GPU machine (issue 30).

Stages, in this order; each writes its rows as it measures them, so a killed
call keeps what it had:

  state     the GPU (nvidia-smi), CPU, Python/PyTorch/timm/cuDNN versions, the
            git commit and the command line -> run.json (again at the end)
  host      single ops issued back to back (timm_harness_bench.host_micro)
            -> host_micro.jsonl
  layers    the layer runner (runner/README.md) over a layer file, after its
            self-test -> measured.jsonl (the runner's header, then one row per
            layer, in the layer file's order)
  networks  whole networks timed as timm's benchmark.py times them
            (timm_harness_bench.py): NCHW and channels_last under AMP (fp32
            weights, autocast fp16) and model.half() channels_last, at batch 1,
            16, 64 and 256: the plain loop's step, host_ms (the forward's issue
            time) and graph_ms (the forward replayed in a CUDA graph). Batch 1
            and 16 (host-bound) are timed in 3 whole passes, one pass over the
            call's networks after the other -> bench.jsonl (one row per pass), and
            bench_median.jsonl (the median over passes, the same row format)
  profiles  one forward per configuration under torch.profiler, in a
            subprocess after all timing (CUPTI stays attached to a profiled
            process) -> kernels.jsonl

Networks: --networks takes set names of onnx_models/zoo.py, network names, or
`sample` (the default): one network from each of --sample-size families of
zoo.RUNTIME_FAMILIES, drawn with --seed, fit and held-out families in the
share zoo.runtime_split() gives them. `corpus`: the fit and held-out networks
of calibrate/data/h200/corpus/networks.json (calibrate/measure/corpus.py), in
the file's order; `corpus-fresh`: its fresh networks, alone, measured only
after the model is frozen. Never both in one folder.

Stages: --stages names the stages to run, joined by ',' (default: all);
`state` always runs (it records the machine). --host-only is `--stages
state,host`. A corpus call skips host and layers: `--stages networks,profiles`.

Budget: --budget-min for the whole call. Each stage ends by its share of it
(STAGE_SHARES, cumulative, so time a stage leaves goes to the next) and starts
no new work it cannot finish by then; the last share is kept for writing the
results. Stages left out give their shares to the ones that run: the chosen
stages' shares are scaled to add up to what all of them add up to, so the
reserve stays the same.

Many networks, many calls: a folder is measured over as many --resume calls as
it takes, each taking up the networks in the list's order. Within a call the
networks stage times whole passes (pass 0: every configuration of the
networks it starts; passes 1 and 2: their host-bound batches), but it starts
a network only if, by its estimates, that network's pass 0 ends before pass
0's own deadline and everything started so far (the networks' remaining
passes, then one profile per timed configuration still lacking one, in the
profiles stage) ends before the call's last stage does. The estimates are
this call's mean time per batch, pass 0 apart from the repeats (FIRST_GUESS_S
and REPEAT_GUESS_S before one ran), per build,
and per profile (earlier calls' profiles stage, else PROFILE_GUESS_S). So a
call leaves complete networks (every configuration, pass and profile) and
does not spend itself on pass 0 of hundreds, leaving their repeats and
profiles to pile up; what a call could not finish, the next one finishes
first, since pending work is taken in the list's order. A configuration that
failed in pass 0 is not repeated, so it leaves nothing pending.

--resume continues a folder: it skips the layers, configurations and
profiles already recorded and appends this call to run.json's calls; rows of
bench.jsonl and kernels.jsonl carry the call's number. Every data file keeps
the header of the call that created it; later calls' headers are in run.json.

--dry-run prints the plan as JSON without importing torch. Exit codes: 0 done
(a stage may still have stopped at its deadline or failed: run.json says), 1
an unexpected error, 2 bad usage.

usage (GPU machine, repository root):
  python3 calibrate/measure/run.py --out DIR [--budget-min 18] [--resume] [--host-only]
      [--stages state,host,layers,networks,profiles] [--networks SET_OR_LIST] [--sample-size 12]
      [--layers LAYERS.jsonl] [--runner BINARY] [--seed 0] [--dry-run]
  python3 calibrate/measure/run.py --out DIR --networks corpus --stages networks,profiles --budget-min 9
      [--resume]      (calibrate/data/h200/corpus/README.md)
"""
import argparse
import ast
import collections
import csv
import datetime
import importlib.metadata
import json
import os
import platform
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import types

if __name__ == "__main__" and not __package__:  # run as a path (calibrate/measure/_path_entry.py)
    import _path_entry
    _path_entry.run_as_module(__file__)
    sys.exit()

from calibrate import harness_flags, jsonl  # noqa: E402  (after the path entry above)
from calibrate.log import log  # noqa: E402
from calibrate.measure import timm_harness_bench as harness  # noqa: E402  (imports no torch)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Cumulative shares of the budget: each stage ends by the sum of its share and
# those before it; what is left after the last is kept for writing results.
STAGE_SHARES = (("state", 0.01), ("host", 0.06), ("layers", 0.36), ("networks", 0.42), ("profiles", 0.10))
STAGE_NAMES = tuple(name for name, _ in STAGE_SHARES)
HOST_ONLY_STAGES = ("state", "host")
# Networks whose forward-call time the host stage takes at batch 1 (NCHW, AMP),
# in 3 whole passes: the calibrated host's machine timed them too
# (calibrate/data/h200/timm_harness/fit_heldout), so a machine's ratio to it is
# its host's scale (calibrate/fit/host_file.py). Single ops alone misjudge it.
HOST_REFERENCE_NETWORKS = ("resnet18", "mobilenet_v2", "efficientnet_b0", "densenet121", "regnet_y_400mf")
HOST_REFERENCE_PASSES = 3
# Within the networks stage: pass 0 ends by 70% of its window, so passes 1 and
# 2 (batch 1 and 16 only) still find time for the networks pass 0 timed.
PASS_ENDS = (0.70, 0.85, 1.0)
CONFIGURATIONS = tuple(harness_flags.CONFIGURATIONS)
BATCHES = (1, 16, 64, 256)
HOST_BOUND_BATCHES = (1, 16)   # timed in every pass: their step is the host's, which varies pass to pass
PASSES = 3
SAMPLE = "sample"
CORPUS, CORPUS_FRESH = "corpus", "corpus-fresh"
CORPUS_FILE = os.path.join("calibrate", "data", "h200", "corpus", "networks.json")
DEFAULT_LAYERS = os.path.join("calibrate", "data", "h200", "layers.jsonl")
# Where build.sh and the top-level CMake build put the runner.
RUNNER_PATHS = (os.path.join("calibrate", "measure", "runner", "build", "tilewave-calibrate"),
                os.path.join("build", "calibrate", "measure", "runner", "tilewave-calibrate"))
GPU_FIELDS = ("index,name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,temperature.gpu,"
              "power.draw,power.limit,pstate,persistence_mode,memory.total,memory.used")
# A configuration's first guess of its duration, s, before one of its batch has run in this call.
FIRST_GUESS_S = {1: 2.0, 16: 3.0, 64: 5.0, 256: 10.0}
# The same for a repeat (passes 1 and 2): the network is built and cuDNN has chosen its algorithms, so a repeat
# takes a fraction of pass 0's time (0.5 s against 4-5 s at batch 1 on the H200); pass 0's mean would hold back
# every network after the first few.
REPEAT_GUESS_S = {1: 1.0, 16: 1.5}
BUILD_GUESS_S = 3.0
# One profiled configuration, s (build included), before an earlier call of the folder profiled some; and the
# profiles subprocess's start (Python, torch, CUDA).
PROFILE_GUESS_S = 2.0
PROFILE_START_S = 20.0

Job = collections.namedtuple("Job", "pass_index model precision layout batch")


class UsageError(Exception):
    pass


# ------------------------------------------------------------------ plan (no torch)

def zoo_sets():
    """onnx_models/zoo.py's sets, families and family_of without importing torch: its module body
    runs with stand-ins for torch and torchvision, which it needs only to build networks."""
    path = os.path.join(ROOT, "onnx_models", "zoo.py")
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    tree.body = [n for n in tree.body
                 if not (isinstance(n, ast.Import) and {a.name for a in n.names} <= {"torch", "torchvision"})]
    stand_in = types.SimpleNamespace(nn=types.SimpleNamespace(Module=object))
    ns = {"__name__": "zoo_sets", "__file__": path, "torch": stand_in, "torchvision": stand_in}
    exec(compile(tree, path, "exec"), ns)
    return types.SimpleNamespace(**{k: ns[k] for k in ("ALL", "VALIDATION_SETS", "RUNTIME_FAMILIES",
                                                       "family_of", "runtime_split")})


def sample_networks(families, held_out, size, seed):
    """One network from each of `size` families drawn with `seed`; held-out families get the share of
    the draw they have of all families, so a sample has networks to fit and to validate on."""
    rng = random.Random(seed)
    held = sorted(f for f in families if f in held_out)
    fit = sorted(f for f in families if f not in held_out)
    size = min(size, len(families))
    n_held = min(len(held), round(size * len(held) / len(families)))
    chosen = rng.sample(held, n_held) + rng.sample(fit, min(len(fit), size - n_held))
    return [rng.choice(families[f]) for f in sorted(chosen)]


def load_corpus(path=CORPUS_FILE):
    """networks.json's networks (corpus.py): [{"name", "family", "kind", "split", ...}], in its order.
    ValueError (one line) for a missing or malformed file."""
    full = path if os.path.isabs(path) else os.path.join(ROOT, path)
    try:
        with open(full) as f:
            networks = json.load(f)["networks"]
        if not all(isinstance(n["name"], str) and n["split"] in ("fit", "held_out", "fresh") for n in networks):
            raise KeyError("split")
    except OSError as e:
        raise ValueError("%s: cannot read it (%s); calibrate/measure/corpus.py makes it" % (path, e.strerror or e))
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError("%s: not a corpus.py networks file (%s: %s)" % (path, type(e).__name__, e))
    return networks


def corpus_families(spec):
    """{network: family} of networks.json, where --networks names the corpus; else {}."""
    items = set(re.split("[+,]", spec))
    return {n["name"]: n["family"] for n in load_corpus()} if items & {CORPUS, CORPUS_FRESH} else {}


def resolve_networks(spec, sets, seed, sample_size):
    """--networks: names, zoo set names, `sample`, `corpus` and `corpus-fresh`, joined by ',' or '+', in
    family round-robin order; the corpus alone keeps networks.json's order (it is one already)."""
    names = []
    items = [s for s in re.split("[+,]", spec) if s]
    if CORPUS_FRESH in items and set(items) != {CORPUS_FRESH}:
        raise UsageError("--networks %s is measured alone, in a folder of its own (the networks never measured "
                         "before the model was frozen)" % CORPUS_FRESH)
    for item in items:
        if item in (CORPUS, CORPUS_FRESH):
            names += [n["name"] for n in load_corpus() if (n["split"] == "fresh") == (item == CORPUS_FRESH)]
        elif item == SAMPLE:
            names += sample_networks(sets.RUNTIME_FAMILIES, set(sets.runtime_split()[3]), sample_size, seed)
        elif item in sets.VALIDATION_SETS:
            names += sets.VALIDATION_SETS[item]
        elif item in sets.ALL or item.startswith(("timm/", "space/")):
            names.append(item)
        else:
            raise UsageError("--networks: unknown network or set name '%s' (sets: %s)" % (
                item, ", ".join([SAMPLE, CORPUS, CORPUS_FRESH] + sorted(sets.VALIDATION_SETS))))
    names = list(dict.fromkeys(names))
    if not names:
        raise UsageError("--networks names no network")
    if set(items) <= {CORPUS, CORPUS_FRESH}:
        return names
    families = corpus_families(spec)
    return harness.network_order(names, lambda n: families.get(n) or sets.family_of(n))


def configurations():
    return [{"precision": p, "layout": l, "batch": b, "passes": PASSES if b in HOST_BOUND_BATCHES else 1,
             "timed": "loop, host, CUDA graph"} for p, l in CONFIGURATIONS for b in BATCHES]


def network_jobs(networks):
    """Every (pass, network, precision, layout, batch) in the order they run: whole passes one after
    the other; passes after the first time only the host-bound batches."""
    return [Job(p, m, prec, layout, b) for p in range(PASSES) for m in networks for prec, layout in CONFIGURATIONS
            for b in BATCHES if p == 0 or b in HOST_BOUND_BATCHES]


def bench_key(row):
    return (row["model"], row.get("layout"), row.get("batch"), row.get("precision", "amp_fp16"), row.get("pass", 0))


def recorded_bench(rows):
    """(configuration keys with a row, ok or failed; networks whose build failed) of bench.jsonl rows."""
    done, broken = set(), set()
    for r in rows:
        if r.get("header"):
            continue
        if r.get("status") == "failed" and r.get("stage") == "build":
            broken.add(r["model"])
        elif r.get("status") in ("ok", "failed") and "layout" in r:
            done.add(bench_key(r))
    return done, broken


def pending_jobs(jobs, rows):
    """The jobs bench.jsonl's rows do not yet record. A failed configuration counts as recorded (it
    would fail again), and so do its later passes; so does every configuration of a network whose build
    failed."""
    done, broken = recorded_bench(rows)
    failed = {bench_key(r)[:4] for r in rows
              if not r.get("header") and r.get("status") == "failed" and "layout" in r and r.get("pass", 0) == 0}
    return [j for j in jobs if j.model not in broken and
            (j.model, j.layout, j.batch, j.precision, j.pass_index) not in done and
            not (j.pass_index > 0 and (j.model, j.layout, j.batch, j.precision) in failed)]


def repeat_ready(job, ok_keys):
    """A later pass times a configuration only where pass 0 timed it: medians over the same networks."""
    return job.pass_index == 0 or (job.model, job.layout, job.batch, job.precision, 0) in ok_keys


def median_over_passes(rows):
    """bench_median.jsonl: per (network, layout, batch, precision), pass 0's row with step_ms,
    step_ms_median, step_ms_min, host_ms and graph_ms the median over the ok passes, `passes` their count."""
    groups = collections.OrderedDict()
    for r in rows:
        if not r.get("header") and r.get("status") == "ok":
            groups.setdefault(bench_key(r)[:4], []).append(r)
    out = []
    for group in groups.values():
        group.sort(key=lambda r: r.get("pass", 0))
        row = dict(group[0])
        for field in ("step_ms", "step_ms_median", "step_ms_min", "host_ms", "graph_ms"):
            values = [r[field] for r in group if r.get(field) is not None]
            if values:
                row[field] = round(statistics.median(values), 5)
        row["passes"] = len(group)
        row.pop("pass", None)
        out.append(row)
    return out


def pending_profiles(bench_rows, kernel_rows):
    """(network, layout, batch, precision, input side) timed ok with no kernels.jsonl row yet, in
    bench.jsonl's order."""
    have = {(k["model"], k["layout"], k["batch"], k.get("precision", "amp_fp16")) for k in kernel_rows}
    out = []
    for r in bench_rows:
        if r.get("header") or r.get("status") != "ok":
            continue
        key = bench_key(r)[:4]
        if key not in have:
            have.add(key)
            out.append(key + (r["input"][-1],))
    return out


def network_progress(names, bench_rows, kernel_rows):
    """How many of `names` are complete (every configuration and pass recorded, every timed configuration
    profiled; a network that never built counts too), and how many have no bench row at all."""
    unfinished = {j.model for j in pending_jobs(network_jobs(names), bench_rows)}
    unfinished |= {p[0] for p in pending_profiles(bench_rows, kernel_rows)}
    seen = {r.get("model") for r in bench_rows if not r.get("header")}
    return {"networks_complete": sum(1 for n in names if n not in unfinished),
            "networks_not_started": sum(1 for n in names if n not in seen)}


def layers_done(layers, measured):
    """How many of `layers` (the layer file's problems, in order) measured.jsonl's rows already cover.
    The runner writes one row per layer, in order, each its input object plus results, so the rows
    must be a prefix of the file: anything else was measured from another layer file."""
    if len(measured) > len(layers):
        raise ValueError("measured.jsonl has %d rows, more than the %d layers of the layer file: "
                         "measured from another file?" % (len(measured), len(layers)))
    for i, (layer, row) in enumerate(zip(layers, measured)):
        if any(row.get(k) != v for k, v in layer.items()):
            raise ValueError("measured.jsonl row %d is not the layer file's layer %d: measured from another "
                             "file?" % (i + 1, i + 1))
    return len(measured)


def stage_shares(stages):
    """[(stage, share)] of the stages that run, in STAGE_SHARES's order: their shares scaled to add up to
    what all shares add up to, so skipped stages' time goes to the ones that run and the reserve stays."""
    chosen = [(n, s) for n, s in STAGE_SHARES if n in stages]
    scale = sum(s for _, s in STAGE_SHARES) / sum(s for _, s in chosen)
    return [(n, s * scale) for n, s in chosen]


def stage_ends(budget_s, stages):
    """Seconds after the call's start by which each stage ends (cumulative shares of the stages that
    run). A host-only call gives the host stage what the later stages would have had, less the reserve."""
    ends, total = {}, 0.0
    for name, share in stage_shares(stages):
        total += share
        ends[name] = round(budget_s * total, 1)
    return ends


def pass_ends(start, end):
    return [start + (end - start) * f for f in PASS_ENDS]


# ------------------------------------------------------------------ files

def read_jsonl(path):
    """The JSON rows of a file this run appends to: a last line without its newline was cut off by
    a kill and is left out. Missing file: no rows."""
    return jsonl.read(path, cut_tail=True, missing_ok=True)


def open_append(path):
    """Opens a JSONL file for appending, first dropping a last line a kill cut off."""
    if os.path.exists(path):
        with open(path, "rb+") as f:
            data = f.read()
            if data and not data.endswith(b"\n"):
                f.truncate(data.rfind(b"\n") + 1)
    return open(path, "a")


def portable(text):
    """`text` with this machine's paths spelled as any machine's: the repository root dropped, the
    output folder as $OUT where the device tool set it, temporary folders as $TMPDIR."""
    out = os.environ.get("OUT")
    if out:
        text = text.replace(os.path.abspath(out), "$OUT")
    text = text.replace(os.path.abspath(ROOT) + os.sep, "")
    return re.sub(re.escape(tempfile.gettempdir()) + r"/tmp\w+", "$TMPDIR", text)


def write_json_atomic(path, obj):
    """Provenance without any machine's absolute paths (they name nothing elsewhere)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(portable(json.dumps(obj, indent=1)))
        f.write("\n")
    os.replace(tmp, path)


def merge_part(part, measured):
    """Appends a runner output's complete rows to measured.jsonl as the runner wrote them, its header
    only when measured.jsonl has none, and removes it. Returns the part's header (None without one)."""
    if not os.path.exists(part):
        return None
    has_header = any(r.get("header") for r in read_jsonl(measured)[:1])
    header = None
    with open(part) as f:
        lines = f.read().split("\n")[:-1]
    with open_append(measured) as out:
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if row.get("header"):
                header = row
                if has_header:
                    continue
                has_header = True
                line = portable(line)  # the runner's own command line names this machine's paths
            out.write(line + "\n")
    os.remove(part)
    return header


# ------------------------------------------------------------------ machine state

def run_text(cmd, timeout=20, cwd=None):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
        return r.stdout.strip() if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def gpu_state():
    text = run_text(["nvidia-smi", "--query-gpu=" + GPU_FIELDS, "--format=csv,noheader,nounits"])
    if text is None:
        return {"error": "nvidia-smi failed or is missing"}
    fields = GPU_FIELDS.split(",")
    return [dict(zip(fields, (v.strip() for v in row))) for row in csv.reader(text.splitlines())]


def package_version(*names):
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return None


def machine_state():
    """Versions from the installed packages' metadata: torch is not imported yet."""
    nvcc = run_text(["nvcc", "--version"])
    if nvcc is None and os.environ.get("CUDA_HOME"):
        nvcc = run_text([os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc"), "--version"])
    commit = run_text(["git", "rev-parse", "HEAD"], cwd=ROOT)
    dirty = run_text(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT) if commit else None
    try:
        mem_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30, 1)
    except (ValueError, OSError, AttributeError):
        mem_gib = None
    return {"gpu": gpu_state(),
            "cpu": {"model": harness.cpu_model(), "count": os.cpu_count(),
                    "usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
                    "memory_gib": mem_gib},
            "os": platform.platform(),
            "versions": {"python": platform.python_version(), "torch": package_version("torch"),
                         "torchvision": package_version("torchvision"), "timm": package_version("timm"),
                         "cudnn_wheel": package_version("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn"),
                         "nvcc": next((l.strip() for l in (nvcc or "").splitlines() if "release" in l), None)},
            "git": {"commit": commit, "dirty": bool(dirty) if commit else None}}


# ------------------------------------------------------------------ the call

class Call:
    """This call's folder, deadlines and record in run.json."""

    def __init__(self, args, plan, t0):
        self.args, self.plan, self.t0 = args, plan, t0
        self.out = os.path.abspath(args.out)   # subprocesses run in the repository root
        self.logf = os.path.join(self.out, "log.txt")
        self.ends = {k: t0 + v for k, v in plan["stage_ends_s"].items()}
        path = os.path.join(self.out, "run.json")
        self.runs = json.load(open(path)) if os.path.exists(path) else {"tool": "calibrate/measure/run.py",
                                                                        "calls": []}
        for earlier in self.runs["calls"]:
            if earlier.get("status") == "running":
                earlier["status"] = "stopped before its end (killed?)"
        self.number = len(self.runs["calls"]) + 1
        self.record = {"call": self.number, "command": plan["command"], "argv": sys.argv[1:],
                       "start_utc": utc(t0), "budget_min": args.budget_min, "resume": args.resume,
                       "stage_ends_s": plan["stage_ends_s"], "networks": plan.get("networks", {}).get("names"),
                       "layer_file": plan.get("layers", {}).get("file"), "stages": {}, "status": "running"}
        self.runs["calls"].append(self.record)

    def path(self, name):
        return os.path.join(self.out, name)

    def log(self, *a):
        log(self.logf, *(portable(str(x)) for x in a))

    def save(self):
        write_json_atomic(self.path("run.json"), self.runs)

    def stage(self, name, **fields):
        entry = self.record["stages"].setdefault(name, {})
        entry.update(fields)
        self.save()

    def left(self, stage):
        return self.ends[stage] - time.time()


def utc(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(timespec="seconds")


def stage_state(call):
    call.record["state_start"] = machine_state()
    gpus = call.record["state_start"]["gpu"]
    call.log("run.py call %d: budget %.1f min, stages %s; GPU %s; commit %s" % (
        call.number, call.args.budget_min, ",".join(call.plan["stage_ends_s"]),
        gpus[0].get("name") if isinstance(gpus, list) and gpus else gpus,
        call.record["state_start"]["git"]["commit"]))
    return {"status": "done"}


def stage_host(call, torch):
    call.record["torch_runtime"] = {"torch": torch.__version__, "cuda": torch.version.cuda,
                                    "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name(0)}
    path = call.path("host_micro.jsonl")
    if not read_jsonl(path):
        harness.host_micro(torch, path, call.logf)
    torch.backends.cudnn.benchmark = True   # as the harness runs (timm's benchmark.py)
    networks = call.path("host_networks.jsonl")
    done = {(r["model"], r["pass"]) for r in read_jsonl(networks) if r.get("status") == "ok"}
    nets = {}
    with open_append(networks) as f:
        for p in range(HOST_REFERENCE_PASSES):
            for name in HOST_REFERENCE_NETWORKS:
                if (name, p) in done:
                    continue
                if time.time() > call.ends["host"]:
                    return {"status": "partial: deadline", "rows": len(read_jsonl(path))}
                rec = {"model": name, "layout": "nchw", "batch": 1, "precision": "amp_fp16", "pass": p}
                try:
                    if name not in nets:
                        net, size, _, _ = harness.build_network(torch, name)
                        nets[name] = (net, harness.harness_step(torch, net, "nchw", 1, size, "amp_fp16"))
                    step = nets[name][1]
                    with torch.inference_mode():
                        for _ in range(10):  # warm-up: cudnn.benchmark's choice, the allocator
                            step()
                        torch.cuda.synchronize()
                        rec.update(host_ms=round(harness.host_time(torch, step), 5), status="ok")
                except Exception as e:
                    rec.update(status="failed", error="%s: %s" % (type(e).__name__, str(e)[:200]))
                f.write(json.dumps(rec) + "\n")
                f.flush()
                call.log("host: %-16s pass %d  host %s ms" % (name, p, rec.get("host_ms")))
    return {"status": "done", "rows": len(read_jsonl(path)), "networks": len(read_jsonl(networks))}


def find_runner(explicit):
    if explicit:
        return os.path.abspath(explicit)
    return next((p for p in (os.path.join(ROOT, r) for r in RUNNER_PATHS) if os.access(p, os.X_OK)), None)


def stream(call, cmd, env=None, prefix="runner: "):
    """Runs cmd with its output line by line into log.txt and stderr; returns the exit code."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    tail = []
    for line in p.stdout:
        line = line.rstrip("\r\n").split("\r")[-1]
        if line:
            call.log(prefix + line)
            tail = (tail + [line])[-5:]
    return p.wait(), tail


def runner_env():
    """LD_LIBRARY_PATH as runner/gpu_env.sh sets it (cuDNN inside the Python environment)."""
    script = os.path.join(ROOT, "calibrate", "measure", "runner", "gpu_env.sh")
    lib = run_text(["bash", "-c", '. "$1" >/dev/null 2>&1; printf %s "$LD_LIBRARY_PATH"', "_", script], timeout=120)
    env = dict(os.environ)
    if lib:
        env["LD_LIBRARY_PATH"] = lib
    return env


def stage_layers(call):
    layers = [r for r in read_jsonl(os.path.join(ROOT, call.plan["layers"]["file"])) if not r.get("header")]
    measured, part = call.path("measured.jsonl"), call.path("measured.part.jsonl")
    merge_part(part, measured)   # what a killed call's runner had written
    done = layers_done(layers, [r for r in read_jsonl(measured) if not r.get("header")])
    if done == len(layers):
        return {"status": "skipped: already recorded", "layers": len(layers)}
    runner = find_runner(call.args.runner)
    if runner is None:
        call.log("layers: no runner binary; building it with runner/build.sh")
        rc, tail = stream(call, ["timeout", str(max(10, int(call.left("layers")))), "bash",
                                 os.path.join(ROOT, "calibrate", "measure", "runner", "build.sh")], prefix="build: ")
        runner = find_runner(None)
        if rc != 0 or runner is None:
            return {"status": "failed: no runner binary and build.sh failed (exit %d): %s" % (rc, " | ".join(tail))}
    env = runner_env()
    result = {"runner": os.path.relpath(runner, ROOT), "layers": len(layers), "done_before": done}
    rc, tail = stream(call, ["timeout", "120", runner, "--self-test"], env=env)
    result["self_test"] = "pass" if rc == 0 and any("SELF-TEST PASS" in t for t in tail) else "FAIL (exit %d)" % rc
    call.log("layers: self-test %s; %d of %d layers to measure" % (result["self_test"], len(layers) - done,
                                                                    len(layers)))
    with tempfile.TemporaryDirectory() as tmp:
        todo = os.path.join(tmp, "layers_todo.jsonl")
        while done < len(layers) and call.left("layers") > 30:
            with open(todo, "w") as f:
                for layer in layers[done:]:
                    f.write(json.dumps(layer) + "\n")
            seconds = int(call.left("layers") - 10)
            call.log("layers: runner on layers %d-%d for at most %d s" % (done + 1, len(layers), seconds))
            rc, tail = stream(call, ["timeout", "--kill-after=10", str(seconds), runner, "measure", todo, "-o", part],
                              env=env)
            header = merge_part(part, measured)
            if header is not None:
                result.setdefault("runner_headers", []).append(header)
            now = layers_done(layers, [r for r in read_jsonl(measured) if not r.get("header")])
            call.log("layers: runner exit %d, %d of %d layers measured" % (rc, now, len(layers)))
            if now == done:   # nothing measured: the runner cannot start; the log has why
                result["error"] = "runner exit %d without a row: %s" % (rc, " | ".join(tail))
                break
            done = now
    result["done"] = done
    result["status"] = "done" if done == len(layers) else ("failed" if "error" in result else "partial: deadline")
    return result


def job_key(job):
    """What a job's duration is estimated by: its batch, and whether it repeats one timed before."""
    return job.batch, job.pass_index > 0


class Admission:
    """Which networks the networks stage starts (the module docstring, "Many networks, many calls").

    A network is started only if, by the estimates, its pass 0 ends before pass 0's deadline, the timing of
    every network started so far ends before the networks stage's end (their jobs not yet run, their builds),
    and so does all their work before `deadline` (the profiles stage's end where it runs in this call, else the
    networks stage's): the timing, then the profiles' start and one profile per configuration timed without
    one. Networks that have only later passes left from
    an earlier call count as started: they are finished first. Estimates: this call's mean seconds per batch
    and per build (FIRST_GUESS_S and BUILD_GUESS_S before one ran) and `profile_s` per profile."""

    def __init__(self, todo, profile_backlog, pass0_end, networks_end, deadline, profile_s, profiles_run,
                 profile_rate_measured=False):
        self.left = collections.OrderedDict()     # network -> its jobs not yet run in this call
        for j in todo:
            self.left.setdefault(j.model, []).append(j)
        self.started = [m for m, jobs in self.left.items() if all(j.pass_index > 0 for j in jobs)]
        self.to_profile = len(profile_backlog)    # configurations timed without a profile, or to be timed
        self.profile_networks = {p[0] for p in profile_backlog}
        self.pass0_end, self.networks_end, self.deadline = pass0_end, networks_end, deadline
        self.profile_s, self.profiles_run = profile_s, profiles_run
        self.profile_rate_measured = profile_rate_measured
        self.built = set()
        self.seconds = collections.defaultdict(list)   # batch or "build" -> durations of this call, s

    def mean(self, key):
        """Mean seconds of `key`: "build", or a job's (batch, is a repeat) as job_key gives it."""
        runs = self.seconds[key]
        if runs:
            return sum(runs) / len(runs)
        if key == "build":
            return BUILD_GUESS_S
        batch, repeat = key
        return (REPEAT_GUESS_S if repeat else FIRST_GUESS_S).get(batch, 10.0)

    def jobs_s(self, model, jobs):
        return sum(self.mean(job_key(j)) for j in jobs) + \
            (0.0 if model in self.built or not jobs else self.mean("build"))

    def timing_s(self, extra=None):
        """Seconds the started networks' timing (and `extra`'s) still needs."""
        return sum(self.jobs_s(m, self.left.get(m, [])) for m in self.started + ([extra] if extra else []))

    def finish_s(self, extra=None):
        """Seconds the started networks' work (and `extra`'s) still needs, profiles included."""
        total = self.timing_s(extra)
        if self.profiles_run:
            configs = self.to_profile + (sum(1 for j in self.left.get(extra, []) if j.pass_index == 0) if extra else 0)
            networks = self.profile_networks | ({extra} if extra else set())
            if configs and self.profile_rate_measured:
                # the earlier calls' rate already holds the subprocess's start and the builds
                total += max(PROFILE_START_S, configs * self.profile_s)
            elif configs:
                total += PROFILE_START_S + configs * self.profile_s + len(networks) * self.mean("build")
        return total

    def admit(self, model, now):
        """Starts `model` if it fits (True), else False."""
        pass0 = [j for j in self.left.get(model, []) if j.pass_index == 0]
        if now + self.jobs_s(model, pass0) > self.pass0_end or now + self.timing_s(model) > self.networks_end or \
                now + self.finish_s(model) > self.deadline:
            return False
        self.started.append(model)
        self.to_profile += len(pass0)
        if pass0:
            self.profile_networks.add(model)
        return True

    def ran(self, job, seconds=None, build_s=None):
        """job ran (seconds: its time without the build) or was skipped."""
        jobs = self.left.get(job.model, [])
        if job in jobs:
            jobs.remove(job)
        if seconds is not None:
            self.seconds[job_key(job)].append(seconds)
        if build_s is not None:
            self.seconds["build"].append(build_s)
            self.built.add(job.model)

    def drop(self, model):
        """A network whose build failed: none of its work is left, nothing of it to profile."""
        self.to_profile -= sum(1 for j in self.left.get(model, []) if j.pass_index == 0)
        self.profile_networks.discard(model)
        self.left[model] = []


def profile_seconds(runs):
    """Seconds per profiled configuration by the folder's earlier calls (their profiles stage's seconds,
    subprocess start and builds included, over what it profiled), or None before 5 were profiled."""
    seconds = profiled = 0
    for c in runs.get("calls", [])[:-1]:
        st = c.get("stages", {}).get("profiles", {})
        if st.get("profiled"):
            seconds += st.get("seconds", 0.0)
            profiled += st["profiled"]
    return min(10.0, max(0.5, seconds / profiled)) if profiled >= 5 else None


def stage_networks(call):
    import torch
    torch.backends.cudnn.benchmark = True
    bench = call.path("bench.jsonl")
    rows = read_jsonl(bench)
    header = harness.harness_header(torch, [portable(a) for a in sys.argv[1:]], precisions="amp_fp16,half", passes=PASSES,
                                    passes_batches=list(HOST_BOUND_BATCHES), call=call.number,
                                    tool="calibrate/measure/run.py")
    call.record["bench_header"] = header
    names = call.plan["networks"]["names"]
    todo = pending_jobs(network_jobs(names), rows)
    ok_keys = {bench_key(r) for r in rows if not r.get("header") and r.get("status") == "ok"}
    start = time.time()
    ends = pass_ends(start, call.ends["networks"])
    profiles_run = "profiles" in call.ends
    profile_rate = profile_seconds(call.runs)
    admission = Admission(todo, pending_profiles(rows, read_jsonl(call.path("kernels.jsonl"))), ends[0],
                          call.ends["networks"], call.ends["profiles"] if profiles_run else call.ends["networks"],
                          profile_rate or PROFILE_GUESS_S, profiles_run, profile_rate is not None)
    seen_s = {}        # job_key -> longest configuration of this call (its build left out), s
    models = {}
    broken = set()
    counts = collections.Counter()
    call.log("networks: %d configurations to time (%d networks, %d with work left), passes end in %s s" % (
        len(todo), len(names), len(admission.left), [round(e - start) for e in ends]))
    if admission.started:
        started = admission.started
        call.log("networks: first the later passes of %d networks started before: %s" % (
            len(started), ", ".join(started[:10]) + (" ..." if len(started) > 10 else "")))
    with open_append(bench) as res:
        if not any(r.get("header") for r in rows[:1]):
            res.write(json.dumps(header) + "\n")
        for p in range(PASSES):
            jobs = [j for j in todo if j.pass_index == p]
            for i, job in enumerate(jobs):
                if job.model in broken:
                    continue
                if job.model not in admission.started:
                    if p > 0:
                        continue   # not started in this call: a later call times it after its pass 0
                    if not admission.admit(job.model, time.time()):
                        call.log("networks: starts no more networks: by the estimates %s would end after the "
                                 "call's work can (%d networks started, %d configurations of pass 0 left)" % (
                                     job.model, len(admission.started), len(jobs) - i))
                        break
                    call.log("networks: start %s (%d of %d; the started networks' work needs about %.0f s of the "
                             "%.0f s left)" % (job.model, names.index(job.model) + 1, len(names), admission.finish_s(),
                                               admission.deadline - time.time()))
                if not repeat_ready(job, ok_keys):
                    admission.ran(job)
                    continue
                build_guess = max(admission.seconds["build"] or [BUILD_GUESS_S])
                guess = seen_s.get(job_key(job), admission.mean(job_key(job))) + \
                    (0 if job.model in models else build_guess)
                if time.time() + guess > ends[p]:
                    call.log("networks: pass %d stops at its deadline, %d configurations left" % (p, len(jobs) - i))
                    break
                build_s = None
                if job.model not in models:
                    t_build = time.time()
                    try:
                        models[job.model] = harness.build_network(torch, job.model)
                    except Exception as e:
                        broken.add(job.model)
                        admission.drop(job.model)
                        res.write(json.dumps({"model": job.model, "status": "failed", "stage": "build", "pass": p,
                                              "call": call.number,
                                              "error": "%s: %s" % (type(e).__name__, str(e)[:300])}) + "\n")
                        res.flush()
                        call.log("networks: %s build failed: %s" % (job.model, e))
                        continue
                    build_s = time.time() - t_build
                t_job = time.time()
                net, size, params, modules = models[job.model]
                rec = {"model": job.model, "family": call.plan["networks"]["families"].get(job.model),
                       "layout": job.layout, "batch": job.batch, "precision": job.precision,
                       "input": [job.batch, 3, size, size], "params": params, "modules": modules, "pass": p,
                       "call": call.number}
                try:
                    net = harness.configure(torch, net, job.layout, job.precision)
                    harness.time_configuration(torch, rec, harness.harness_step(torch, net, job.layout, job.batch,
                                                                                size, job.precision))
                    ok_keys.add(bench_key(rec))
                    counts["ok"] += 1
                    call.log("%-28s %-8s %-13s b%-4d pass %d  step %9.4f ms  host %8.4f ms  graph %s" % (
                        job.model, job.precision, job.layout, job.batch, p, rec["step_ms"], rec["host_ms"],
                        rec.get("graph_ms")))
                except Exception as e:
                    rec.update(status="failed", stage="bench", error="%s: %s" % (type(e).__name__, str(e)[:300]))
                    counts["failed"] += 1
                    call.log("networks: %s %s %s b%d failed: %s" % (job.model, job.precision, job.layout, job.batch,
                                                                    str(e)[:200]))
                    try:
                        torch.cuda.synchronize()
                        torch.cuda.empty_cache()   # an out-of-memory batch leaves its blocks cached
                    except Exception as sticky:
                        # A broken CUDA context fails everything after it: record this configuration and stop,
                        # so a --resume call in a fresh process times the rest instead of recording failures.
                        res.write(json.dumps(rec) + "\n")
                        call.log("networks: the CUDA context is broken (%s); stopping" % str(sticky)[:200])
                        return {"status": "failed: CUDA context broken at %s %s %s b%d" % (
                            job.model, job.precision, job.layout, job.batch), "timed_ok": counts["ok"],
                            "failed": counts["failed"]}
                res.write(json.dumps(rec) + "\n")
                res.flush()
                seconds = time.time() - t_job
                admission.ran(job, seconds, build_s)
                seen_s[job_key(job)] = max(seen_s.get(job_key(job), 0.0), seconds)
                if not admission.left[job.model]:
                    models.pop(job.model, None)   # its work in this call is done: free its memory
    del models
    torch.cuda.empty_cache()
    rows = read_jsonl(bench)
    medians = median_over_passes(rows)
    with open(call.path("bench_median.jsonl") + ".tmp", "w") as f:
        first = next((r for r in rows if r.get("header")), header)
        f.write(json.dumps(dict(first, median_of_passes=True)) + "\n")
        for r in medians:
            f.write(json.dumps(r) + "\n")
    os.replace(call.path("bench_median.jsonl") + ".tmp", call.path("bench_median.jsonl"))
    left = pending_jobs(network_jobs(names), rows)
    status = "done" if not left else "partial: deadline"
    return {"status": status, "timed_ok": counts["ok"], "failed": counts["failed"], "left": len(left),
            "networks_started": len(admission.started), "networks_with_work_left": len({j.model for j in left}),
            "configurations_with_median": len(medians)}


def stage_profiles(call):
    seconds = int(call.left("profiles"))
    todo = pending_profiles(read_jsonl(call.path("bench.jsonl")), read_jsonl(call.path("kernels.jsonl")))
    if not todo:
        return {"status": "skipped: nothing to profile"}
    if seconds < 15:
        return {"status": "skipped: no time left", "left": len(todo)}
    call.log("profiles: %d configurations, in a subprocess, at most %d s" % (len(todo), seconds))
    cmd = ["timeout", "--kill-after=10", str(seconds), sys.executable, os.path.abspath(__file__), "--out", call.out,
           "--profile-worker", "%.1f" % call.ends["profiles"], "--call", str(call.number)]
    rc = subprocess.call(cmd, cwd=ROOT)
    left = pending_profiles(read_jsonl(call.path("bench.jsonl")), read_jsonl(call.path("kernels.jsonl")))
    return {"status": "done" if not left else "partial: deadline" if rc in (0, 124, 137) else "failed: exit %d" % rc,
            "profiled": len(todo) - len(left), "left": len(left), "exit": rc}


def profile_worker(out, deadline, call_number):
    """The profiles stage's subprocess: one profiled forward per timed configuration lacking one."""
    logf = os.path.join(out, "log.txt")
    todo = pending_profiles(read_jsonl(os.path.join(out, "bench.jsonl")),
                            read_jsonl(os.path.join(out, "kernels.jsonl")))
    import torch
    torch.backends.cudnn.benchmark = True   # the timed runs' algorithm choice
    by_model = collections.OrderedDict()
    for item in todo:
        by_model.setdefault(item[0], []).append(item)
    longest = {}
    with open_append(os.path.join(out, "kernels.jsonl")) as kf:
        for name, items in by_model.items():
            if time.time() + BUILD_GUESS_S + longest.get(items[0][2], 2.0) > deadline:
                log(logf, "profiles: stopped at the deadline")
                return
            try:
                net, size, _, _ = harness.build_network(torch, name)
            except Exception as e:
                log(logf, "profiles: %s build failed: %s" % (name, e))
                continue
            for _, layout, batch, precision, _ in items:
                if time.time() + longest.get(batch, 2.0) > deadline:
                    log(logf, "profiles: stopped at the deadline")
                    return
                t = time.time()
                try:
                    net = harness.configure(torch, net, layout, precision)
                    step = harness.harness_step(torch, net, layout, batch, size, precision)
                    row = harness.profile_configuration(torch, name, layout, batch, precision, step)
                    row["call"] = call_number
                    kf.write(json.dumps(row) + "\n")
                    kf.flush()
                    log(logf, "profiles: %-28s %-8s %-13s b%-4d %4d kernels, %.1f us" % (
                        name, precision, layout, batch, row["kernels"], row["kernel_sum_us"]))
                except Exception as e:
                    log(logf, "profiles: %s %s %s b%d failed: %s" % (name, precision, layout, batch, e))
                longest[batch] = max(longest.get(batch, 0.0), time.time() - t)
            del net
            torch.cuda.empty_cache()


# ------------------------------------------------------------------ command line

class Parser(argparse.ArgumentParser):
    def error(self, message):   # one line, exit 2
        print("run.py: error: %s (see --help)" % message, file=sys.stderr)
        sys.exit(2)


def parse_args(argv):
    ap = Parser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--out", required=True, help="the run's folder (created; must be empty unless --resume)")
    ap.add_argument("--budget-min", type=float, default=18.0, help="wall-clock budget of this call, minutes")
    ap.add_argument("--resume", action="store_true", help="continue DIR: skip what it already records")
    ap.add_argument("--host-only", action="store_true", help="stop after the host stage (--stages state,host)")
    ap.add_argument("--stages", help="the stages to run, joined by , (default: all of %s; state always runs)" %
                    ",".join(STAGE_NAMES))
    ap.add_argument("--networks", default=SAMPLE, help="network and set names of onnx_models/zoo.py joined by , or "
                    "+; `sample`: the seeded sample across families (default); `corpus`: the fit and held-out "
                    "networks of %s; `corpus-fresh`: its fresh ones" % CORPUS_FILE)
    ap.add_argument("--sample-size", type=int, default=12, help="families in `sample` (default 12)")
    ap.add_argument("--seed", type=int, default=0, help="seed of `sample` (default 0)")
    ap.add_argument("--layers", default=DEFAULT_LAYERS, help="layer file for the runner (default %s)" % DEFAULT_LAYERS)
    ap.add_argument("--runner", help="the tilewave-calibrate binary (default: %s, else built with build.sh)" %
                    " or ".join(RUNNER_PATHS))
    ap.add_argument("--dry-run", action="store_true", help="print the plan as JSON and exit, without torch")
    ap.add_argument("--profile-worker", type=float, metavar="DEADLINE", help=argparse.SUPPRESS)
    ap.add_argument("--call", type=int, default=0, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def chosen_stages(args):
    """The stages this call runs, in their order; UsageError for an unknown one."""
    if args.stages is None:
        return HOST_ONLY_STAGES if args.host_only else STAGE_NAMES
    names = [n.strip() for n in args.stages.split(",") if n.strip()]
    unknown = [n for n in names if n not in STAGE_NAMES]
    if unknown or not names:
        what = "unknown stage '%s'" % unknown[0] if unknown else "names no stage"
        raise UsageError("--stages: %s (stages: %s)" % (what, ", ".join(STAGE_NAMES)))
    stages = tuple(n for n in STAGE_NAMES if n == "state" or n in names)
    if args.host_only and stages != HOST_ONLY_STAGES:
        raise UsageError("--host-only is --stages state,host: give one or the other")
    return stages


def make_plan(args):
    """What the call will do, checked; UsageError for bad usage. Imports no torch."""
    if not args.budget_min > 0:
        raise UsageError("--budget-min must be more than 0 (got %g)" % args.budget_min)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError("--out %s is a file; it must name a folder" % args.out)
    if os.path.isdir(args.out) and os.listdir(args.out) and not args.resume:
        raise UsageError("--out %s already holds results: add --resume to continue them, or name a new folder"
                         % args.out)
    if args.sample_size < 1:
        raise UsageError("--sample-size must be at least 1")
    stages = chosen_stages(args)
    budget_s = args.budget_min * 60
    plan = {"command": " ".join(shlex.quote(a) for a in [os.path.relpath(os.path.abspath(__file__), os.getcwd())] +
                                sys.argv[1:]),
            "out": args.out, "budget_min": args.budget_min, "resume": args.resume, "host_only": args.host_only,
            "stages": [{"name": n, "share": round(s, 4)} for n, s in stage_shares(stages)],
            "stage_ends_s": stage_ends(budget_s, stages), "reserve_s": round(budget_s * (1 - sum(
                s for _, s in STAGE_SHARES)), 1)}
    if "layers" in stages:
        layer_path = args.layers if os.path.isabs(args.layers) or os.path.exists(args.layers) else \
            os.path.join(ROOT, args.layers)
        if not os.path.isfile(layer_path):
            raise UsageError("--layers %s: no such file" % args.layers)
        if args.runner and not os.access(args.runner, os.X_OK):
            raise UsageError("--runner %s: not an executable file" % args.runner)
        layers = [r for r in read_jsonl(layer_path) if not r.get("header")]
        runner = find_runner(args.runner)
        plan["layers"] = {"file": os.path.relpath(os.path.abspath(layer_path), ROOT), "problems": len(layers),
                          "runner": os.path.relpath(runner, ROOT) if runner else None,
                          "runner_built_by": None if runner else "calibrate/measure/runner/build.sh"}
    if "networks" not in stages and "profiles" not in stages:
        return plan
    sets = zoo_sets()
    names = resolve_networks(args.networks, sets, args.seed, args.sample_size)
    families = corpus_families(args.networks)
    jobs = network_jobs(names)
    plan["networks"] = {"spec": args.networks, "seed": args.seed, "sample_size": args.sample_size, "names": names,
                        "families": {n: families.get(n) or sets.family_of(n) for n in names}}
    if families:
        splits = {n["name"]: n["split"] for n in load_corpus()}
        run_json = os.path.join(args.out, "run.json")
        if args.resume and os.path.isfile(run_json):
            fresh_now = any(splits.get(n) == "fresh" for n in names)
            try:
                with open(run_json) as f:
                    earlier = {n for c in json.load(f).get("calls", []) for n in c.get("networks") or []}
            except (ValueError, AttributeError) as e:
                raise ValueError("%s: not a run.json (%s)" % (run_json, e))
            if any(n in splits and (splits[n] == "fresh") != fresh_now for n in earlier):
                raise UsageError("--out %s holds %s networks: the corpus and its fresh networks are measured in "
                                 "folders of their own" % (args.out, "fresh" if not fresh_now else "corpus"))
        plan["networks"]["corpus"] = {"file": CORPUS_FILE, "splits": dict(collections.Counter(
            splits[n] for n in names if n in splits))}
    plan["configurations"] = configurations()
    plan["timed_configurations"] = len(jobs)
    plan["profiles"] = len(names) * len(CONFIGURATIONS) * len(BATCHES)
    if args.resume and os.path.isdir(args.out):
        bench = read_jsonl(os.path.join(args.out, "bench.jsonl"))
        measured = [r for r in read_jsonl(os.path.join(args.out, "measured.jsonl")) if not r.get("header")]
        pending = pending_jobs(jobs, bench)
        plan["recorded"] = {"layers": len(measured), "host_micro": len(read_jsonl(os.path.join(args.out,
                                                                                               "host_micro.jsonl"))),
                            "timed_configurations_pending": len(pending),
                            "profiles": len(read_jsonl(os.path.join(args.out, "kernels.jsonl")))}
        plan["recorded"].update(network_progress(names, bench, read_jsonl(os.path.join(args.out, "kernels.jsonl"))))
    return plan


def work_left(call):
    """What the folder still lacks for this call's plan: a --resume call would do it."""
    left = {}
    if "host" in call.plan["stage_ends_s"]:
        left["host_micro"] = not read_jsonl(call.path("host_micro.jsonl"))
    if "layers" in call.plan:
        measured = [r for r in read_jsonl(call.path("measured.jsonl")) if not r.get("header")]
        left["layers"] = call.plan["layers"]["problems"] - len(measured)
    if "networks" in call.plan:
        bench = read_jsonl(call.path("bench.jsonl"))
        left["timed_configurations"] = len(pending_jobs(network_jobs(call.plan["networks"]["names"]), bench))
        kernels = read_jsonl(call.path("kernels.jsonl"))
        left["profiles"] = len(pending_profiles(bench, kernels))
        progress = network_progress(call.plan["networks"]["names"], bench, kernels)
        left["networks_unfinished"] = len(call.plan["networks"]["names"]) - progress["networks_complete"]
    return left


def run(args, plan, t0):
    os.makedirs(args.out, exist_ok=True)
    call = Call(args, plan, t0)
    call.save()
    for name in plan["stage_ends_s"]:
        t = time.time()
        call.stage(name, status="running", start_s=round(t - t0, 1))
        try:
            if name == "state":
                result = stage_state(call)
            elif name == "host":
                import torch   # first here: the state stage reads versions without it
                result = stage_host(call, torch)
            elif name == "layers":
                result = stage_layers(call)
            elif name == "networks":
                result = stage_networks(call)
            else:
                result = stage_profiles(call)
        except Exception as e:
            call.log("%s stage failed:\n%s" % (name, traceback.format_exc()))
            result = {"status": "failed: %s: %s" % (type(e).__name__, str(e)[:300])}
        call.stage(name, seconds=round(time.time() - t, 1), **result)
        call.log("stage %s: %s (%.0f s)" % (name, result["status"], time.time() - t))
    call.record.update(state_end={"gpu": gpu_state()}, end_utc=utc(time.time()), status="done",
                       seconds=round(time.time() - t0, 1))
    call.runs["left"] = work_left(call)
    call.save()
    call.log("left for a --resume call: %s" % json.dumps(call.runs["left"]))
    call.log("run.py call %d done in %.0f s -> %s" % (call.number, time.time() - t0, args.out))


def main(argv=None):
    t0 = time.time()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.profile_worker is not None:
        profile_worker(args.out, args.profile_worker, args.call)
        return 0
    try:
        plan = make_plan(args)
    except UsageError as e:
        print("run.py: error: %s" % e, file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:  # a layer file that is not JSON lines, one that cannot be read
        print("run.py: error: %s" % e, file=sys.stderr)
        return 1
    if args.dry_run:
        try:
            print(json.dumps(plan, indent=1))
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            pass
        return 0
    run(args, plan, t0)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
