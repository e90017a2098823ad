"""calibrate/measure/run.py on a CPU without torch: the --dry-run plan, bad usage, and what a
resumed call skips (pure functions over fake rows, and the layers stage over a fake runner)."""
import json
import os
import subprocess
import sys
import textwrap
import time
import types

import pytest

sys.dont_write_bytecode = True   # importing run.py must not write into the source tree
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_PY = os.path.join(ROOT, "calibrate", "measure", "run.py")
sys.path.insert(0, ROOT)  # the calibrate package, as `python3 -m` from the checkout finds it
from calibrate.measure import corpus, run  # noqa: E402


def cli(*args, path_first=None):
    """run.py in a subprocess: (exit code, stdout, stderr)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if path_first:
        env["PYTHONPATH"] = os.pathsep.join([str(path_first)] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, RUN_PY, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def write_jsonl(path, rows, tail=""):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
        f.write(tail)


def bench_row(model, layout, batch, precision="amp_fp16", pass_index=0, status="ok", **extra):
    row = {"model": model, "layout": layout, "batch": batch, "precision": precision, "pass": pass_index,
           "status": status, "input": [batch, 3, 224, 224]}
    row.update(extra)
    return row


# ------------------------------------------------------------------ --dry-run

@pytest.fixture
def poisoned_torch(tmp_path):
    """A `torch` package first on the path that fails on import: proves the dry run never imports it."""
    pkg = tmp_path / "poison" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('run.py --dry-run imported torch')\n")
    return tmp_path / "poison"


def test_dry_run_prints_the_plan_without_torch(tmp_path, poisoned_torch):
    out = tmp_path / "run"
    code, stdout, stderr = cli("--out", str(out), "--dry-run", path_first=poisoned_torch)
    assert code == 0, stderr
    plan = json.loads(stdout)
    assert [s["name"] for s in plan["stages"]] == ["state", "host", "layers", "networks", "profiles"]
    ends = list(plan["stage_ends_s"].values())
    assert ends == sorted(ends) and ends[-1] + plan["reserve_s"] == pytest.approx(18 * 60)
    assert plan["layers"]["file"] == "calibrate/data/h200/layers.jsonl" and plan["layers"]["problems"] > 4000
    names = plan["networks"]["names"]
    assert len(names) == 12 and len(set(plan["networks"]["families"].values())) == 12
    configs = plan["configurations"]
    assert len(configs) == 12
    assert {(c["precision"], c["layout"]) for c in configs} == {
        ("amp_fp16", "nchw"), ("amp_fp16", "channels_last"), ("half", "channels_last")}
    assert {c["batch"] for c in configs} == {1, 16, 64, 256}
    assert all(c["passes"] == (3 if c["batch"] in (1, 16) else 1) for c in configs)
    assert plan["timed_configurations"] == 12 * (12 + 2 * 6)
    assert not out.exists(), "a dry run creates nothing"


def test_dry_run_is_seeded_and_takes_sets_and_names(tmp_path):
    plans = [json.loads(cli("--out", str(tmp_path / "x"), "--dry-run", "--seed", seed)[1]) for seed in ("3", "3", "4")]
    assert plans[0]["networks"]["names"] == plans[1]["networks"]["names"] != plans[2]["networks"]["names"]
    code, stdout, _ = cli("--out", str(tmp_path / "x"), "--dry-run", "--networks", "runtime_fresh+resnet18,timm/dla34")
    assert code == 0
    names = json.loads(stdout)["networks"]["names"]
    assert len(names) == 22 and "resnet18" in names and "timm/resnet101d" in names


def test_dry_run_host_only_plans_two_stages(tmp_path):
    code, stdout, _ = cli("--out", str(tmp_path / "x"), "--dry-run", "--host-only", "--budget-min", "1")
    plan = json.loads(stdout)
    assert code == 0 and [s["name"] for s in plan["stages"]] == ["state", "host"]
    assert "networks" not in plan and "layers" not in plan
    # The host stage may use what the later stages would have had: its networks take a minute.
    assert plan["stage_ends_s"]["host"] == pytest.approx(0.95 * 60)


def test_a_layer_file_that_is_not_json_lines_is_one_line_and_exit_1(tmp_path):
    bad = tmp_path / "layers.jsonl"
    bad.write_text("# a comment, not JSON\n")
    code, stdout, stderr = cli("--out", str(tmp_path / "run"), "--dry-run", "--layers", str(bad))
    assert code == 1 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1 and "layers.jsonl:1: not a JSON line" in stderr


def test_recorded_paths_name_no_machine(monkeypatch, tmp_path):
    monkeypatch.setenv("OUT", str(tmp_path))
    text = run.portable("%s/run/x.json %s/calibrate/measure/run.py" % (tmp_path, os.path.abspath(run.ROOT)))
    assert text == "$OUT/run/x.json calibrate/measure/run.py"


def test_dry_run_with_resume_counts_what_is_recorded(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    write_jsonl(out / "bench.jsonl", [{"header": True}, bench_row("resnet18", "nchw", 1)])
    code, stdout, stderr = cli("--out", str(out), "--dry-run", "--resume", "--networks", "resnet18")
    assert code == 0, stderr
    plan = json.loads(stdout)
    assert plan["timed_configurations"] == 24
    assert plan["recorded"]["timed_configurations_pending"] == 23


# ------------------------------------------------------------------ bad usage

@pytest.mark.parametrize("args, says", [
    (["--networks", "no_such_set"], "unknown network or set name 'no_such_set'"),
    (["--networks", "runtime_fit+nope"], "'nope'"),
    (["--budget-min", "0"], "--budget-min"),
    (["--budget-min", "-3"], "--budget-min"),
    (["--budget-min", "soon"], "--budget-min"),
    (["--layers", "no/such/layers.jsonl"], "no such file"),
    (["--sample-size", "0"], "--sample-size"),
    (["--bogus"], "--bogus"),
])
def test_bad_usage_exits_2_with_one_line(tmp_path, args, says):
    code, stdout, stderr = cli("--out", str(tmp_path / "run"), "--dry-run", *args)
    assert code == 2 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1 and says in stderr


def test_out_must_be_a_folder_and_new_unless_resumed(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    code, _, stderr = cli("--out", str(a_file), "--dry-run")
    assert code == 2 and "is a file" in stderr and len(stderr.strip().splitlines()) == 1
    used = tmp_path / "used"
    used.mkdir()
    (used / "run.json").write_text("{}")
    code, _, stderr = cli("--out", str(used), "--dry-run")
    assert code == 2 and "--resume" in stderr
    assert cli("--out", str(used), "--dry-run", "--resume")[0] == 0
    code, _, stderr = cli("--dry-run")
    assert code == 2 and "--out" in stderr


def test_a_call_records_itself_and_resume_appends(tmp_path):
    # Without torch the host stage fails, which the call records and survives.
    out = tmp_path / "run"
    code, _, stderr = cli("--out", str(out), "--host-only", "--budget-min", "1")
    assert code == 0, stderr
    record = json.loads((out / "run.json").read_text())
    call = record["calls"][0]
    assert call["call"] == 1 and call["status"] == "done" and set(call["stages"]) == {"state", "host"}
    assert "gpu" in call["state_start"] and "gpu" in call["state_end"] and call["start_utc"].endswith("+00:00")
    assert "versions" in call["state_start"] and "commit" in call["state_start"]["git"]
    assert (out / "log.txt").exists()
    assert set(record["left"]) == {"host_micro"}
    assert cli("--out", str(out), "--host-only")[0] == 2
    record["calls"][0]["status"] = "running"   # as a killed call leaves it
    (out / "run.json").write_text(json.dumps(record))
    assert cli("--out", str(out), "--host-only", "--resume", "--budget-min", "1")[0] == 0
    calls = json.loads((out / "run.json").read_text())["calls"]
    assert [c["call"] for c in calls] == [1, 2] and calls[0]["status"].startswith("stopped")


# ------------------------------------------------------------------ networks: what a resumed call skips

def test_jobs_run_whole_passes_and_repeat_only_the_host_bound_batches():
    jobs = run.network_jobs(["a", "b"])
    assert len(jobs) == 2 * 12 + 2 * 2 * 6
    assert [j.pass_index for j in jobs] == sorted(j.pass_index for j in jobs)
    assert {j.batch for j in jobs if j.pass_index > 0} == {1, 16}
    first_pass = [j.model for j in jobs if j.pass_index == 0]
    assert first_pass == ["a"] * 12 + ["b"] * 12


def test_repeats_are_estimated_apart_from_pass_0():
    # Pass 0 of a configuration is slow (build, cuDNN's algorithm search); its repeats are not. Estimating a
    # repeat by pass 0's mean held a whole call to 3 networks.
    jobs = run.network_jobs(["a"])
    adm = run.Admission(jobs, [], 1e9, 1e9, 1e9, 1.0, False)
    first = next(j for j in jobs if j.pass_index == 0 and j.batch == 1)
    repeat = next(j for j in jobs if j.pass_index == 1 and j.batch == 1)
    adm.ran(first, seconds=5.0)
    assert adm.mean(run.job_key(first)) == 5.0
    assert adm.mean(run.job_key(repeat)) == run.REPEAT_GUESS_S[1]
    adm.ran(repeat, seconds=0.5)
    assert adm.mean(run.job_key(repeat)) == 0.5 and adm.mean(run.job_key(first)) == 5.0


def test_a_measured_profile_rate_is_not_charged_the_start_and_builds_again():
    # Earlier calls' rate (seconds over configurations profiled) already holds the subprocess's start and the
    # builds; adding them again made the estimate of call 4 twice its 70 s, and the call stopped early.
    calls = {"calls": [{"stages": {"profiles": {"seconds": 70.0, "profiled": 72}}}, {}]}
    rate = run.profile_seconds(calls)
    assert abs(rate - 70.0 / 72) < 1e-9 and run.profile_seconds({"calls": [{}]}) is None
    backlog = [("a", "amp_fp16", "nchw", b) for b in run.BATCHES]
    measured = run.Admission([], backlog, 1e9, 1e9, 1e9, rate, True, True)
    guessed = run.Admission([], backlog, 1e9, 1e9, 1e9, run.PROFILE_GUESS_S, True, False)
    assert measured.finish_s() == max(run.PROFILE_START_S, 4 * rate)
    assert guessed.finish_s() == run.PROFILE_START_S + 4 * run.PROFILE_GUESS_S + run.BUILD_GUESS_S


def test_pending_jobs_skip_recorded_configurations():
    jobs = run.network_jobs(["a", "b", "c"])
    rows = [{"header": True},
            bench_row("a", "nchw", 1),                                   # timed
            bench_row("a", "nchw", 256, status="failed", stage="bench"),  # failed: would fail again
            bench_row("a", "nchw", 1, pass_index=1),                     # a later pass
            bench_row("a", "channels_last", 1, precision="half"),
            {"model": "b", "status": "failed", "stage": "build", "pass": 0},   # never builds: skip it all
            {"model": "c", "status": "skipped", "error": "deadline"}]          # not a measurement
    pending = run.pending_jobs(jobs, rows)
    assert not any(j.model == "b" for j in pending)
    assert sum(j.model == "c" for j in pending) == 24
    recorded = {("a", 0, "amp_fp16", "nchw", 1), ("a", 0, "amp_fp16", "nchw", 256), ("a", 1, "amp_fp16", "nchw", 1),
                ("a", 0, "half", "channels_last", 1)}
    assert {(j.model, j.pass_index, j.precision, j.layout, j.batch) for j in pending if j.model == "a"} == \
        {(j.model, j.pass_index, j.precision, j.layout, j.batch) for j in jobs if j.model == "a"} - recorded
    assert run.pending_jobs(jobs, []) == jobs


def test_a_later_pass_waits_for_pass_0_of_the_same_configuration():
    ok = {("a", "nchw", 1, "amp_fp16", 0)}
    assert run.repeat_ready(run.Job(0, "a", "amp_fp16", "nchw", 16), ok)
    assert run.repeat_ready(run.Job(2, "a", "amp_fp16", "nchw", 1), ok)
    assert not run.repeat_ready(run.Job(1, "a", "amp_fp16", "nchw", 16), ok)
    assert not run.repeat_ready(run.Job(1, "b", "amp_fp16", "nchw", 1), ok)


def test_median_over_passes_keeps_the_row_format():
    rows = [{"header": True}] + [bench_row("a", "nchw", 1, pass_index=p, step_ms=s, step_ms_median=s, host_ms=h,
                                           graph_ms=0.5, aten_ops={"conv": 1})
                                 for p, s, h in ((0, 3.0, 2.0), (1, 1.0, 1.0), (2, 2.0, 5.0))]
    rows += [bench_row("a", "nchw", 256, step_ms=9.0, host_ms=2.0),
             bench_row("a", "nchw", 64, status="failed", stage="bench")]
    medians = run.median_over_passes(rows)
    assert [(m["batch"], m["passes"]) for m in medians] == [(1, 3), (256, 1)]
    m = medians[0]
    assert (m["step_ms"], m["host_ms"], m["graph_ms"], m["status"]) == (2.0, 2.0, 0.5, "ok")
    assert "pass" not in m and m["aten_ops"] == {"conv": 1} and m["input"] == [1, 3, 224, 224]


def test_pending_profiles_one_per_timed_configuration():
    bench = [{"header": True}, bench_row("a", "nchw", 1), bench_row("a", "nchw", 1, pass_index=1),
             bench_row("a", "channels_last", 16, precision="half"), bench_row("a", "nchw", 64, status="failed"),
             bench_row("b", "nchw", 256)]
    kernels = [{"model": "a", "layout": "nchw", "batch": 1, "precision": "amp_fp16", "list": []}]
    assert run.pending_profiles(bench, kernels) == [("a", "channels_last", 16, "half", 224),
                                                    ("b", "nchw", 256, "amp_fp16", 224)]
    assert len(run.pending_profiles(bench, [])) == 3


def test_sample_is_seeded_one_per_family_with_held_out_families():
    sets = run.zoo_sets()
    held = set(sets.runtime_split()[3])
    a = run.sample_networks(sets.RUNTIME_FAMILIES, held, 10, seed=5)
    assert a == run.sample_networks(sets.RUNTIME_FAMILIES, held, 10, seed=5)
    families = [sets.family_of(n) for n in a]
    assert len(set(families)) == 10
    assert sum(f in held for f in families) == round(10 * len(held) / len(sets.RUNTIME_FAMILIES))
    assert len(run.sample_networks(sets.RUNTIME_FAMILIES, held, 999, seed=1)) == len(sets.RUNTIME_FAMILIES)
    with pytest.raises(run.UsageError):
        run.resolve_networks("resnet18,not_a_network", sets, 0, 12)
    assert run.resolve_networks("resnet18,resnet18+timm/dla34", sets, 0, 12) == ["timm/dla34", "resnet18"]


def test_stage_ends_are_cumulative_shares_of_the_budget():
    ends = run.stage_ends(600, ("state", "host", "layers", "networks", "profiles"))
    assert list(ends) == ["state", "host", "layers", "networks", "profiles"]
    assert ends["profiles"] < 600 and ends["layers"] == pytest.approx(600 * (0.01 + 0.06 + 0.36))
    assert list(run.stage_ends(600, ("state", "host"))) == ["state", "host"]
    assert run.pass_ends(100, 200) == [170, 185, 200]


# ------------------------------------------------------------------ files a killed call leaves

def test_read_jsonl_leaves_out_a_cut_off_last_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    write_jsonl(path, [{"a": 1}, {"a": 2}], tail='{"a": 3')
    assert run.read_jsonl(str(path)) == [{"a": 1}, {"a": 2}]
    assert run.read_jsonl(str(tmp_path / "missing.jsonl")) == []
    with run.open_append(str(path)) as f:
        f.write(json.dumps({"a": 4}) + "\n")
    assert run.read_jsonl(str(path)) == [{"a": 1}, {"a": 2}, {"a": 4}]


def test_layers_done_needs_a_prefix_of_the_layer_file():
    layers = [{"op": "eltwise", "elems": i} for i in range(5)]
    rows = [dict(l, measured_us=1.0, status="ok") for l in layers[:3]]
    assert run.layers_done(layers, rows) == 3
    assert run.layers_done(layers, []) == 0
    with pytest.raises(ValueError, match="row 2"):
        run.layers_done(layers, [rows[0], rows[2]])
    with pytest.raises(ValueError, match="more than"):
        run.layers_done(layers[:2], rows)


def test_merge_part_keeps_one_header_and_whole_lines(tmp_path):
    measured, part = str(tmp_path / "measured.jsonl"), str(tmp_path / "measured.part.jsonl")
    write_jsonl(part, [{"header": True, "call": 1}, {"i": 0}], tail='{"i": 1, "cut')
    assert run.merge_part(part, measured) == {"header": True, "call": 1}
    write_jsonl(part, [{"header": True, "call": 2}, {"i": 1}])
    assert run.merge_part(part, measured)["call"] == 2
    assert run.read_jsonl(measured) == [{"header": True, "call": 1}, {"i": 0}, {"i": 1}]
    assert not os.path.exists(part) and run.merge_part(part, measured) is None


# ------------------------------------------------------------------ the layers stage over a fake runner

FAKE_RUNNER = textwrap.dedent('''\
    #!{python}
    # Stands in for tilewave-calibrate: measures at most {per_call} layers per call, then is "killed"
    # halfway through the next line, as a timeout would leave it.
    import json, sys
    if sys.argv[1] == "--self-test":
        print("SELF-TEST PASS")
        sys.exit(0)
    todo, out = sys.argv[2], sys.argv[sys.argv.index("-o") + 1]
    layers = [json.loads(l) for l in open(todo) if l.strip()]
    with open({starts!r}, "a") as f:
        f.write("%d\\n" % layers[0]["elems"])
    with open(out, "w") as f:
        f.write(json.dumps({{"header": True, "layers": len(layers)}}) + "\\n")
        for layer in layers[:{per_call}]:
            f.write(json.dumps(dict(layer, measured_us=1.0, status="ok")) + "\\n")
        if len(layers) > {per_call}:
            f.write('{{"op": "elt')
            sys.exit(124)
''')


def layers_call(tmp_path, monkeypatch, per_call, n_layers=10):
    layer_file = tmp_path / "layers.jsonl"
    write_jsonl(layer_file, [{"header": True}] + [{"op": "eltwise", "dtype": "fp16", "elems": i, "inputs": 1}
                                                  for i in range(n_layers)])
    starts = tmp_path / "starts.txt"
    runner = tmp_path / "fake-runner"
    runner.write_text(FAKE_RUNNER.format(python=sys.executable, per_call=per_call, starts=str(starts)))
    runner.chmod(0o755)
    out = tmp_path / "run"
    out.mkdir(exist_ok=True)
    monkeypatch.setattr(run, "runner_env", lambda: dict(os.environ))   # no cuDNN to look for here
    args = types.SimpleNamespace(out=str(out), runner=str(runner), budget_min=1.0, resume=True)
    plan = {"command": "test", "stage_ends_s": {"layers": 120.0},
            "layers": {"file": os.path.relpath(str(layer_file), ROOT)}}
    call = run.Call(args, plan, time.time())
    return call, out, starts


def test_layers_stage_restarts_the_runner_until_every_layer_has_a_row(tmp_path, monkeypatch):
    call, out, starts = layers_call(tmp_path, monkeypatch, per_call=4)
    result = run.stage_layers(call)
    assert result["status"] == "done" and result["self_test"] == "pass" and result["done"] == 10
    rows = run.read_jsonl(str(out / "measured.jsonl"))
    assert rows[0]["header"] and sum(bool(r.get("header")) for r in rows) == 1
    assert [r["elems"] for r in rows[1:]] == list(range(10))
    assert starts.read_text().split() == ["0", "4", "8"]
    assert not (out / "measured.part.jsonl").exists()
    assert run.stage_layers(call)["status"].startswith("skipped")


def test_layers_stage_resumes_after_what_a_killed_call_left(tmp_path, monkeypatch):
    call, out, starts = layers_call(tmp_path, monkeypatch, per_call=100)
    layer = lambda i: {"op": "eltwise", "dtype": "fp16", "elems": i, "inputs": 1, "measured_us": 1.0, "status": "ok"}
    write_jsonl(out / "measured.jsonl", [{"header": True}] + [layer(i) for i in range(3)])
    # The killed call's runner output, never merged: two whole rows and a cut-off one.
    write_jsonl(out / "measured.part.jsonl", [{"header": True}, layer(3), layer(4)], tail='{"op": "elt')
    result = run.stage_layers(call)
    assert result["done_before"] == 5 and result["status"] == "done"
    assert starts.read_text().split() == ["5"]
    assert [r["elems"] for r in run.read_jsonl(str(out / "measured.jsonl")) if not r.get("header")] == list(range(10))


def test_layers_stage_refuses_rows_of_another_layer_file(tmp_path, monkeypatch):
    call, out, starts = layers_call(tmp_path, monkeypatch, per_call=100)
    write_jsonl(out / "measured.jsonl", [{"header": True}, {"op": "gemm", "M": 1}])
    with pytest.raises(ValueError, match="another"):
        run.stage_layers(call)
    assert not starts.exists()


# ------------------------------------------------------------------ the networks and profiles stages, torch faked

@pytest.fixture
def fake_torch(monkeypatch):
    """A stand-in torch and harness: every configuration times in no time, network "broken" never builds."""
    torch = types.SimpleNamespace(backends=types.SimpleNamespace(cudnn=types.SimpleNamespace(benchmark=False)),
                                  cuda=types.SimpleNamespace(empty_cache=lambda: None, synchronize=lambda: None))
    monkeypatch.setitem(sys.modules, "torch", torch)
    h = run.harness

    def build(torch, name):
        if name == "broken":
            raise RuntimeError("no such network")
        return object(), 224, 1000, 10

    def time_configuration(torch, rec, step, graph=True):
        rec.update(step_ms=1.0 + rec["pass"], step_ms_median=1.0, step_ms_min=1.0, steps=8, host_ms=0.5, graph_ms=0.25,
                   aten_ops={}, status="ok")
        return rec

    monkeypatch.setattr(h, "harness_header", lambda torch, argv, **extra: dict({"header": True}, **extra))
    monkeypatch.setattr(h, "build_network", build)
    monkeypatch.setattr(h, "configure", lambda torch, net, layout, precision: net)
    monkeypatch.setattr(h, "harness_step", lambda *a: None)
    monkeypatch.setattr(h, "time_configuration", time_configuration)
    monkeypatch.setattr(h, "profile_configuration", lambda torch, name, layout, batch, precision, step: {
        "model": name, "layout": layout, "batch": batch, "precision": precision, "kernels": 1, "kernel_sum_us": 2.0,
        "list": [["k", 2.0]]})
    return torch


def networks_call(tmp_path, names, seconds):
    out = tmp_path / "run"
    out.mkdir(exist_ok=True)
    args = types.SimpleNamespace(out=str(out), runner=None, budget_min=1.0, resume=True)
    plan = {"command": "test", "stage_ends_s": {"networks": seconds},
            "networks": {"names": names, "families": {n: None for n in names}}}
    return run.Call(args, plan, time.time()), out


def test_networks_stage_times_every_pass_then_resume_skips_it(tmp_path, fake_torch):
    call, out = networks_call(tmp_path, ["a", "broken"], 300.0)
    result = run.stage_networks(call)
    assert result["status"] == "done" and result["timed_ok"] == 24 and fake_torch.backends.cudnn.benchmark
    rows = run.read_jsonl(str(out / "bench.jsonl"))
    assert rows[0]["header"] and rows[0]["passes"] == 3
    assert [r["stage"] for r in rows if r.get("model") == "broken"] == ["build"]
    assert sorted({(r["pass"], r["batch"]) for r in rows[1:] if r["model"] == "a"}) == [
        (0, 1), (0, 16), (0, 64), (0, 256), (1, 1), (1, 16), (2, 1), (2, 16)]
    medians = run.read_jsonl(str(out / "bench_median.jsonl"))
    assert medians[0]["median_of_passes"] and len(medians) == 1 + 12
    assert {(m["batch"], m["passes"], m["step_ms"]) for m in medians[1:]} == {(1, 3, 2.0), (16, 3, 2.0), (64, 1, 1.0),
                                                                             (256, 1, 1.0)}
    again, _ = networks_call(tmp_path, ["a", "broken"], 300.0)
    assert run.stage_networks(again)["timed_ok"] == 0
    assert len(run.read_jsonl(str(out / "bench.jsonl"))) == len(rows)


def test_networks_stage_starts_nothing_it_cannot_finish(tmp_path, fake_torch):
    call, out = networks_call(tmp_path, ["a"], 1.0)   # less than one configuration's first guess
    result = run.stage_networks(call)
    assert result["status"] == "partial: deadline" and result["timed_ok"] == 0 and result["left"] > 0
    assert [r for r in run.read_jsonl(str(out / "bench.jsonl")) if not r.get("header")] == []


def test_profile_worker_profiles_each_timed_configuration_once(tmp_path, fake_torch):
    out = tmp_path / "run"
    out.mkdir()
    write_jsonl(out / "bench.jsonl", [{"header": True}, bench_row("a", "nchw", 1),
                                      bench_row("a", "nchw", 1, pass_index=1),
                                      bench_row("a", "channels_last", 256, precision="half"),
                                      bench_row("broken", "nchw", 1)])
    write_jsonl(out / "kernels.jsonl", [{"model": "a", "layout": "nchw", "batch": 1, "precision": "amp_fp16"}])
    run.profile_worker(str(out), time.time() + 60, 3)
    rows = run.read_jsonl(str(out / "kernels.jsonl"))
    assert [(r["model"], r["layout"], r["batch"], r["precision"], r.get("call")) for r in rows[1:]] == [
        ("a", "channels_last", 256, "half", 3)]
    assert "broken build failed" in (out / "log.txt").read_text()


def test_pending_jobs_do_not_repeat_a_configuration_that_failed_in_pass_0():
    jobs = run.network_jobs(["a"])
    rows = [{"header": True}, bench_row("a", "nchw", 1, status="failed", stage="bench")]
    pending = {(j.pass_index, j.precision, j.layout, j.batch) for j in run.pending_jobs(jobs, rows)}
    assert not any(layout == "nchw" and batch == 1 and prec == "amp_fp16" for _, prec, layout, batch in pending)
    assert len(pending) == 24 - 3


# ------------------------------------------------------------------ many networks over many calls

@pytest.fixture
def fake_clock(monkeypatch, fake_torch):
    """fake_torch on a clock of its own: a build takes 2 s, a configuration 1-3 s by batch, a profile 1.5 s."""
    clock = types.SimpleNamespace(t=1000.0)
    monkeypatch.setattr(run, "time", types.SimpleNamespace(time=lambda: clock.t, sleep=lambda s: None))
    h = run.harness
    build, time_configuration, profile = h.build_network, h.time_configuration, h.profile_configuration

    def advance(seconds, fn):
        def wrapped(*a, **k):
            clock.t += seconds(*a)
            return fn(*a, **k)
        return wrapped
    monkeypatch.setattr(h, "build_network", advance(lambda *a: 2.0, build))
    monkeypatch.setattr(h, "time_configuration",
                        advance(lambda torch, rec, *a: {1: 1.0, 16: 1.0, 64: 1.5, 256: 3.0}[rec["batch"]],
                                time_configuration))
    monkeypatch.setattr(h, "profile_configuration", advance(lambda *a: 1.5, profile))
    return clock


def test_each_call_leaves_complete_networks_and_the_next_takes_up_the_rest(tmp_path, fake_clock):
    names = ["n%02d" % i for i in range(30)]
    ends = run.stage_ends(5 * 60, ("state", "networks", "profiles"))
    out = tmp_path / "run"
    out.mkdir()
    complete = []
    for number in (1, 2):
        args = types.SimpleNamespace(out=str(out), runner=None, budget_min=5.0, resume=True)
        plan = {"command": "test", "stage_ends_s": ends, "networks": {"names": names, "families": {}}}
        call = run.Call(args, plan, fake_clock.t)
        result = run.stage_networks(call)
        assert fake_clock.t <= call.ends["networks"]
        t_profiles = fake_clock.t
        fake_clock.t += run.PROFILE_START_S
        run.profile_worker(str(out), call.ends["profiles"], number)
        assert fake_clock.t <= call.ends["profiles"]
        bench, kernels = run.read_jsonl(str(out / "bench.jsonl")), run.read_jsonl(str(out / "kernels.jsonl"))
        timed = [n for n in names if any(r.get("model") == n for r in bench)]
        # Whatever a call started it finished: every configuration, pass and profile.
        assert timed and timed == names[:len(timed)]
        assert all(sum(r.get("model") == n for r in bench) == 24 for n in timed)
        assert all(sum(r.get("model") == n for r in kernels) == 12 for n in timed)
        assert run.network_progress(names, bench, kernels)["networks_complete"] == len(timed)
        assert result["networks_started"] == len(timed) - sum(complete) and result["status"] == "partial: deadline"
        complete.append(result["networks_started"])
        # What the profiles stage records, from which the next call estimates a profile's time.
        call.record["stages"]["profiles"] = {"seconds": fake_clock.t - t_profiles, "profiled": 12 * complete[-1]}
        call.save()
        fake_clock.t += 60
    assert complete[0] >= 3 and complete[1] >= 3


def test_a_call_first_finishes_what_a_killed_call_left(tmp_path, fake_clock):
    names = ["n%02d" % i for i in range(30)]
    ends = run.stage_ends(5 * 60, ("state", "networks", "profiles"))
    out = tmp_path / "run"
    out.mkdir()
    args = types.SimpleNamespace(out=str(out), runner=None, budget_min=5.0, resume=True)
    plan = {"command": "test", "stage_ends_s": ends, "networks": {"names": names, "families": {}}}
    first = run.stage_networks(run.Call(args, plan, fake_clock.t))["networks_started"]   # then killed: no profiles
    rows = run.read_jsonl(str(out / "bench.jsonl"))
    write_jsonl(out / "bench.jsonl", [r for r in rows if not (r.get("model") == "n00" and r.get("pass") == 2)])
    fake_clock.t += 600
    call = run.Call(args, plan, fake_clock.t)
    second = run.stage_networks(call)
    fake_clock.t += run.PROFILE_START_S
    run.profile_worker(str(out), call.ends["profiles"], 2)
    bench, kernels = run.read_jsonl(str(out / "bench.jsonl")), run.read_jsonl(str(out / "kernels.jsonl"))
    assert run.network_progress(names, bench, kernels)["networks_complete"] == first + second["networks_started"] - 1
    assert second["networks_started"] >= 1 and sum(r.get("model") == "n00" for r in bench) == 24
    assert [r["model"] for r in kernels[:1]] == ["n00"]


def test_stage_ends_give_skipped_stages_shares_to_the_ones_that_run():
    ends = run.stage_ends(600, ("state", "networks", "profiles"))
    assert list(ends) == ["state", "networks", "profiles"]
    assert ends["profiles"] == pytest.approx(0.95 * 600, abs=0.1)
    assert ends["networks"] == pytest.approx(600 * 0.95 * 0.43 / 0.53, abs=0.1)
    assert ends == run.stage_ends(600, ("networks", "profiles", "state"))


# ------------------------------------------------------------------ the corpus (calibrate/measure/corpus.py)

CORPUS_FILE = os.path.join(ROOT, "calibrate", "data", "h200", "corpus", "networks.json")


def corpus_cli(*args):
    r = subprocess.run([sys.executable, "-m", "calibrate.measure.corpus", *args], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return r.returncode, r.stdout, r.stderr


@pytest.fixture(scope="module")
def committed():
    with open(CORPUS_FILE) as f:
        return json.load(f)


def test_corpus_is_deterministic_and_the_committed_file_passes_check(tmp_path):
    a, _ = corpus.compute(0)
    b, _ = corpus.compute(0)
    assert corpus.render(a) == corpus.render(b) and corpus.render(a) != corpus.render(corpus.compute(1)[0])
    code, stdout, stderr = corpus_cli("--check")
    assert code == 0, stderr
    assert "matches" in stdout
    code, stdout, _ = corpus_cli("-o", str(tmp_path / "n.json"))
    assert code == 0 and "fit" in stdout and (tmp_path / "n.json").read_text() == open(CORPUS_FILE).read()


def test_corpus_check_fails_with_one_line_on_a_changed_file(tmp_path):
    changed = tmp_path / "networks.json"
    obj = json.load(open(CORPUS_FILE))
    obj["networks"][0]["split"] = "fresh" if obj["networks"][0]["split"] != "fresh" else "fit"
    changed.write_text(json.dumps(obj))
    code, stdout, stderr = corpus_cli("--check", "-o", str(changed))
    assert code == 1 and stdout == "" and len(stderr.strip().splitlines()) == 1 and "differs" in stderr
    code, _, stderr = corpus_cli("--check", "-o", str(tmp_path / "missing.json"))
    assert code == 1 and "missing.json" in stderr and len(stderr.strip().splitlines()) == 1
    code, _, stderr = corpus_cli("--seed", "x")
    assert code == 2 and len(stderr.strip().splitlines()) == 1


def test_corpus_input_errors_are_one_line_naming_the_file(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "manifest.jsonl"
    bad.write_text('{"model": "x"\n')
    monkeypatch.setattr(corpus, "MANIFEST", str(bad))
    assert corpus.main(["-o", str(tmp_path / "n.json")]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "manifest.jsonl:1: not a JSON line" in err
    monkeypatch.setattr(corpus, "MODELS_CSV", str(tmp_path / "no_models.csv"))
    assert corpus.main(["-o", str(tmp_path / "n.json")]) == 1
    assert "no_models.csv" in capsys.readouterr().err
    assert not (tmp_path / "n.json").exists()


def test_corpus_counts_and_splits(committed):
    nets = committed["networks"]
    measured = [n for n in nets if n["split"] != "fresh"]
    assert sum(n["kind"] == "cnn" for n in measured) >= 150
    assert sum(n["kind"] in ("vit", "hybrid") for n in measured) >= 60
    assert sum(n["split"] == "fresh" for n in nets) >= 40
    assert len({n["name"] for n in nets}) == len(nets) and all(n["name"].startswith("timm/") for n in nets)
    fit = {n["family"] for n in nets if n["split"] == "fit"}
    held = {n["family"] for n in nets if n["split"] == "held_out"}
    assert not fit & held
    assert 0.25 < len(held) / len(fit | held) < 0.4
    for kind in ("cnn", "hybrid", "vit"):
        assert {"fit", "held_out", "fresh"} <= {n["split"] for n in nets if n["kind"] == kind}
    assert [n["split"] == "fresh" for n in nets] == sorted(n["split"] == "fresh" for n in nets)   # fresh last
    # A partly measured corpus is still balanced: the first 70 hold both groups in about their shares.
    assert 15 <= sum(n["kind"] != "cnn" for n in nets[:70]) <= 25
    assert committed["counts"]["fresh"]["all"] == sum(n["split"] == "fresh" for n in nets)


def test_corpus_leaves_out_what_was_measured_and_what_cannot_be_predicted(committed):
    excluded = corpus.zoo_names() | set(corpus.measured_names())
    nets = committed["networks"]
    assert not [n["name"] for n in nets if corpus.bare(n["name"]) in excluded]
    assert "resnet18" in excluded and "dla34" in excluded   # "timm/dla34" measured: "dla34" is out
    manifest = {(r["model"], r["img_size"]): r for r in corpus.read_json_lines(corpus.MANIFEST)}
    for n in nets:
        row = manifest[(corpus.bare(n["name"]), n["img_size"])]
        assert row["status"] == "ok" and row["file"] and row["default_input_size"][-1] == n["img_size"]
        assert n["gmacs"] <= corpus.GMACS_CAP and not n["family"].startswith("test_")


def test_dry_run_corpus_plans_networks_and_profiles_only(tmp_path, poisoned_torch, committed):
    code, stdout, stderr = cli("--out", str(tmp_path / "c"), "--dry-run", "--networks", "corpus", "--stages",
                               "networks,profiles", "--budget-min", "9", path_first=poisoned_torch)
    assert code == 0, stderr
    plan = json.loads(stdout)
    assert [s["name"] for s in plan["stages"]] == ["state", "networks", "profiles"]
    assert "layers" not in plan and "host" not in plan["stage_ends_s"]
    assert plan["stage_ends_s"]["profiles"] + plan["reserve_s"] == pytest.approx(9 * 60)
    assert sum(s["share"] for s in plan["stages"]) == pytest.approx(0.95, abs=1e-3)
    names = plan["networks"]["names"]
    assert names == [n["name"] for n in committed["networks"] if n["split"] != "fresh"]
    assert plan["networks"]["families"][names[0]] == committed["networks"][0]["family"]
    assert set(plan["networks"]["corpus"]["splits"]) == {"fit", "held_out"}
    code, stdout, _ = cli("--out", str(tmp_path / "f"), "--dry-run", "--networks", "corpus-fresh", "--stages",
                          "networks,profiles")
    assert code == 0
    assert json.loads(stdout)["networks"]["names"] == [n["name"] for n in committed["networks"]
                                                       if n["split"] == "fresh"]


@pytest.mark.parametrize("args, says", [
    (["--stages", "networks,bogus"], "unknown stage 'bogus'"),
    (["--stages", ","], "--stages"),
    (["--stages", "networks", "--host-only"], "--host-only"),
    (["--networks", "corpus+corpus-fresh"], "corpus-fresh"),
    (["--networks", "corpus-fresh,resnet18"], "corpus-fresh"),
])
def test_bad_stages_and_corpus_usage_exit_2_with_one_line(tmp_path, args, says):
    code, stdout, stderr = cli("--out", str(tmp_path / "run"), "--dry-run", *args)
    assert code == 2 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1 and says in stderr


def test_corpus_and_fresh_networks_never_share_a_folder(tmp_path, committed):
    out = tmp_path / "corpus"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"calls": [{"networks": [committed["networks"][0]["name"]]}]}))
    assert cli("--out", str(out), "--dry-run", "--resume", "--networks", "corpus", "--stages", "networks")[0] == 0
    code, stdout, stderr = cli("--out", str(out), "--dry-run", "--resume", "--networks", "corpus-fresh")
    assert code == 2 and len(stderr.strip().splitlines()) == 1 and "folders of their own" in stderr
