"""The Python module against the CLI (docs/python.md): the same numbers for the
same question, clear errors for bad input. Run by ctest (`python` test) with
PYTHONPATH at the built module and TILEWAVE_CLI at the built CLI."""
import csv
import io
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import threading

import pytest

import tilewave

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("TILEWAVE_CLI", os.path.join(ROOT, "build", "analyzer", "tilewave"))
RESNET50 = os.path.join(ROOT, "onnx_models", "resnet50.onnx")


def cli(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


def test_analyze_equals_the_cli_json():
    for runtime in ("eager", "inductor", "tensorrt"):
        ours = tilewave.analyze(RESNET50, gpu="h200", batch=16, runtime=runtime)
        theirs = json.loads(cli("analyze", RESNET50, "--gpu", "h200", "--batch", "16", "--runtime", runtime,
                                "--format", "json"))
        assert ours["total"] == theirs["total"]
        assert ours["layers"] == theirs["layers"]
        assert {k: v for k, v in ours.items() if k != "notes"} == theirs
        assert ours["runtime"] == runtime and ours["batch"] == 16


SMALL_NET = [
    {"op": "conv", "out": 32, "kernel": 3, "stride": 2, "act": "relu", "name": "stem"},
    {"op": "conv", "out": 32, "kernel": 3, "groups": 32, "act": "relu6"},
    {"op": "se", "squeeze": 8},
    {"op": "conv", "out": 32, "kernel": 1},
    {"op": "add", "inputs": ["stem"]},
    {"op": "conv", "out": 60, "kernel": 3, "stride": 2, "act": "silu", "name": "a"},
    {"op": "conv", "out": 4, "kernel": 1, "input": "stem", "stride": 2, "bn": False, "bias": True, "name": "b"},
    {"op": "concat", "inputs": ["a", "b"]},
    {"op": "batchnorm"},
    {"op": "max_pool", "kernel": 3, "stride": 2, "padding": 1},
    {"op": "avg_pool", "kernel": 2},
    {"op": "global_avg_pool"},
    {"op": "linear", "out": 128, "act": "gelu"},
    {"op": "linear", "out": 10},
]


def test_a_layer_list_is_costed_as_its_onnx_export(tmp_path):
    path = str(tmp_path / "small.onnx")
    params = tilewave.layers_to_onnx(SMALL_NET, path, input=[3, 64, 64], batch=8)
    # conv 3x3x3x32 + BN(32 scale, 32 shift): 864 + 64 = 928, and so on; the
    # total, counted by hand from the list above:
    expected = (3 * 9 * 32 + 64) + (32 * 9 + 64) + (32 * 8 + 8 + 8 * 32 + 32) + (32 * 32 + 64) \
        + (32 * 9 * 60 + 120) + (32 * 4 + 4) + 64 * 2 + (64 * 128 + 128) + (128 * 10 + 10)
    assert params == expected
    for runtime in ("eager", "inductor", "tensorrt"):
        from_list = tilewave.analyze_layers(SMALL_NET, input=[3, 64, 64], batch=8, runtime=runtime)
        from_file = tilewave.analyze(path, batch=8, runtime=runtime)
        assert from_list["total"] == from_file["total"]
        assert from_list["total"]["flops"] > 0 and 0 < from_list["total"]["utilization"] < 1
        theirs = json.loads(cli("analyze", path, "--batch", "8", "--runtime", runtime, "--format", "json"))
        assert from_list["total"] == theirs["total"]


@pytest.mark.parametrize("layers, message", [
    ([{"op": "conv"}], "layer 0 (conv): needs \"out\""),
    ([{"op": "conv", "out": 8, "groups": 3}], "groups 3 must divide its input channels 3 and \"out\" 8"),
    ([{"op": "conv", "out": 8, "kernal": 3}], "unknown field \"kernal\""),
    ([{"op": "conv", "out": 8}, {"op": "dropout"}], "layer 1 (dropout): unknown op"),
    ([{"op": "conv", "out": 8, "act": "swish"}], "unknown activation \"swish\""),
    ([{"op": "max_pool", "kernel": 2, "stride": 2}] * 9, "layer 5 (max_pool): its output would be 0x0"),
    ([{"op": "add", "inputs": ["nope"]}], "no earlier layer is named \"nope\""),
    ([{"op": "conv", "out": 8, "stride": 2, "name": "x"}, {"op": "add", "inputs": ["input"]}],
     "cannot combine shapes"),
    ([{"op": "linear", "out": 10}, {"op": "conv", "out": 8}], "follows a linear layer"),
    ([{"op": "conv", "out": 2 ** 40}], "\"out\" must be in 1..1048576"),
    ([], "non-empty list"),
    ("conv", "non-empty list"),
    ([{"op": "conv", "out": float("nan")}], "not finite"),
    ([{"op": "conv", "out": object()}], "a object where dicts"),
    ([{"op": "conv", "out": 8.5}], "\"out\" must be an integer"),
])
def test_a_bad_layer_list_is_one_clear_error(layers, message):
    with pytest.raises(tilewave.InputError) as e:
        tilewave.analyze_layers(layers, input=[3, 32, 32])
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert isinstance(e.value, ValueError)


def test_predict_layers_equals_tilewave_layers():
    path = os.path.join(ROOT, "calibrate", "measure", "runner", "smoke.jsonl")
    dicts = [json.loads(l) for l in open(path) if l.strip() and not l.startswith("#")]
    ours = tilewave.predict_layers(dicts, gpu="h200")
    theirs = [json.loads(l) for l in cli("layers", path, "--gpu", "h200").splitlines()
              if l.strip()]
    assert len(ours) == len(dicts) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b
    with pytest.raises(tilewave.InputError, match=r"layers\[1\]"):
        tilewave.predict_layers([dicts[0], {"op": "gemm", "M": 4}])


def test_space_scores_equal_nas_rows(tmp_path):
    rows = list(csv.DictReader(io.StringIO("\n".join(
        l for l in cli("nas", os.path.join(ROOT, "onnx_models", "spaces", "mobilenetv2.json"), "--samples", "40",
                       "--seed", "5", "--batch", "16", "--runtime", "inductor").splitlines()
        if not l.startswith("#")))))
    space = tilewave.Space("mobilenetv2")
    assert space.name == "mobilenetv2" and space.size > 1e9
    scorer = space.scorer(gpu="h200", batch=16, runtime="inductor")
    scores = scorer.score_many([r["encoding"] for r in rows])
    for r, s in zip(rows, scores):
        assert space.sample(5, int(r["index"])) == r["encoding"]
        assert f"{s['time_us']:.4f}" == r["time_us"]
        assert s["latency_us"] == s["time_us"] and r["latency_us"] == r["time_us"]  # the former name, until 1.0
        assert s["flops"] == int(r["flops"]) and s["params"] == int(r["params"])
        assert s["main_loss"] == r["main_loss"]
        assert abs(sum(s["loss"].values()) + s["utilization"] - 1) < 1e-9  # time is useful or lost
    assert scorer.score(rows[0]["encoding"]) == scores[0]
    assert scorer.distinct_blocks > 0
    # The exported ONNX, analysed whole, costs what the block sum said.
    path = str(tmp_path / "cand.onnx")
    space.export_onnx(rows[0]["encoding"], path, batch=16)
    whole = tilewave.analyze(path, batch=16, runtime="inductor")
    assert whole["total"]["time_us"] == pytest.approx(scores[0]["time_us"], rel=1e-9)


def test_space_options_rebuild_its_encodings():
    space = tilewave.Space("regnet")
    options = space.options()
    enc = space.sample(1, 0)
    stages = enc.split("_")
    assert len(stages) == len(options)
    for stage, choices in zip(stages, options):
        for token, (name, texts) in zip(stage.split("-"), choices.items()):
            assert token in texts


def test_bad_arguments_raise_input_error():
    with pytest.raises(tilewave.InputError, match="unknown GPU 'h999'"):
        tilewave.analyze(RESNET50, gpu="h999")
    with pytest.raises(tilewave.InputError, match="batch must be positive"):
        tilewave.analyze(RESNET50, batch=0)
    with pytest.raises(tilewave.InputError, match="unknown runtime 'onnxruntime'"):
        tilewave.analyze(RESNET50, runtime="onnxruntime")
    with pytest.raises(tilewave.InputError, match="unknown dtype"):
        tilewave.analyze(RESNET50, dtype="fp13")
    with pytest.raises(tilewave.InputError, match="no_such.onnx"):
        tilewave.analyze("no_such.onnx")
    with pytest.raises(tilewave.InputError):
        tilewave.Space("mobilenetv2").scorer().score("d9-zz")
    with pytest.raises(tilewave.InputError, match="nope.json"):
        tilewave.Space("nope")


def run_threads(work, count):
    """work(0) ... work(count - 1), each on its own thread, all started before any is joined."""
    threads = [threading.Thread(target=work, args=(t,)) for t in range(count)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def test_threads_score_in_parallel_with_the_same_results():
    space = tilewave.Space("resnet")
    encodings = [space.sample(3, i) for i in range(200)]
    expected = space.scorer(batch=4).score_many(encodings)
    results = [None] * 4

    def work(t):
        results[t] = space.scorer(batch=4).score_many(encodings)
    run_threads(work, 4)
    assert all(r == expected for r in results)


def test_eight_threads_sharing_one_scorer_get_one_threads_answers():
    # Issue 20: a shared Scorer's memo was written by several threads at
    # once, and about 30% of latencies came out wrong.
    space = tilewave.Space("mobilenetv2")
    encodings = [space.sample(7, i) for i in range(300)]
    expected = space.scorer(batch=8).score_many(encodings)
    shared = space.scorer(batch=8)
    results = [None] * 8

    def work(t):
        order = encodings[t:] + encodings[:t]  # different threads reach the same blocks at different times
        rows = [shared.score(e) for e in order[: len(order) // 2]] + shared.score_many(order[len(order) // 2:])
        results[t] = rows[len(order) - t:] + rows[: len(order) - t]
    run_threads(work, 8)
    for r in results:
        assert r == expected
    assert shared.distinct_blocks > 0


def test_threads_on_gpus_of_different_architectures_get_one_threads_answers():
    # Issue 34: each architecture's file is read into a shared cache on first use; eight threads reaching
    # five architectures at once (Hopper, Ampere, Turing, Ada, Volta) must each get the serial answers.
    gpus = ["h200", "a100", "t4", "rtx4090", "v100"]
    space = tilewave.Space("mobilenetv2")
    encodings = [space.sample(11, i) for i in range(40)]
    expected = {g: (tilewave.analyze(RESNET18, batch=2, gpu=g)["total"], space.scorer(batch=2, gpu=g).score_many(encodings))
                for g in gpus}
    results = [None] * 8

    def work(t):
        order = gpus[t % len(gpus):] + gpus[:t % len(gpus)]
        results[t] = {g: (tilewave.analyze(RESNET18, batch=2, gpu=g)["total"],
                          space.scorer(batch=2, gpu=g).score_many(encodings)) for g in order}
    run_threads(work, 8)
    assert all(r == expected for r in results)


def test_formats_are_the_view_registrys_and_each_analyze_format_writes():
    entries = tilewave.formats()
    assert all(set(e) == {"command", "format", "summary"} and e["summary"] for e in entries)
    analyze = [e["format"] for e in entries if e["command"] == "analyze"]
    assert analyze[:3] == ["table", "json", "csv"]
    for f in analyze:
        assert tilewave.analyze_text(RESNET18, batch=1, format=f)
    with pytest.raises(tilewave.InputError, match="unknown format 'pyi'"):
        tilewave.analyze_text(RESNET18, batch=1, format="pyi")


def test_lists_of_gpus_and_runtimes():
    assert "h200" in tilewave.gpus()
    assert [name for name, _ in tilewave.runtimes()][:3] == ["eager", "inductor", "tensorrt"]


def test_the_gpu_database_is_what_the_cli_lists():
    database = tilewave.gpu_database()
    assert [g["id"] for g in database] == tilewave.gpus()
    assert database == json.loads(cli("gpus", "--format", "json"))


def test_the_evolution_example_runs():
    example = os.path.join(ROOT, "docs", "examples", "evolution.py")
    out = subprocess.run([sys.executable, example, "--generations", "3", "--population", "16", "--seed", "1"],
                         check=True, capture_output=True, text=True, env=os.environ).stdout
    assert "best" in out


def test_the_execution_configuration_as_the_cli_takes_it():
    loop = tilewave.analyze(RESNET50, batch=1, layout="nchw", amp=True, graph=False)
    graph = tilewave.analyze(RESNET50, batch=1, layout="nchw", amp=True, graph=True)
    assert loop["execution"]["launch"] == "loop" and loop["total"]["bound_by"] == "host"
    # None: the runtime's defaults, as flags not given (timm's harness for eager, an engine for tensorrt).
    assert tilewave.analyze(RESNET50, batch=1)["execution"] == loop["execution"]
    trt = tilewave.analyze(RESNET50, batch=1, runtime="tensorrt")["execution"]
    assert (trt["launch"], trt["layout"], trt["amp"]) == ("graph", "nhwc", False)
    assert graph["total"]["time_us"] < loop["total"]["time_us"]
    assert graph["total"]["gpu_busy_us"] == pytest.approx(loop["total"]["gpu_busy_us"])
    with pytest.raises(tilewave.InputError, match="unknown layout"):
        tilewave.analyze(RESNET50, layout="nwhc")


def test_a_scorer_in_a_plain_loop_equals_nas_rows(tmp_path):
    out = tmp_path / "loop.csv"
    cli("nas", os.path.join(ROOT, "onnx_models", "spaces", "mobilenetv2.json"), "--samples", "5", "--seed", "3", "--batch", "1", "--layout", "nchw", "--amp",
        "--no-graph", "-o", str(out))
    rows = list(csv.DictReader(l for l in open(out) if not l.startswith("#")))
    space = tilewave.Space("mobilenetv2")
    scorer = space.scorer(batch=1, layout="nchw", amp=True, graph=False)
    for r in rows:
        s = scorer.score(r["encoding"])
        assert f"{s['time_us']:.4f}" == r["time_us"]
        assert s["main_loss"] == r["main_loss"]


# Issue 21 item 4: every function equal to its CLI command, option by option.
# The CLI's JSON and the module's dicts come from the same code, so floats are
# compared exactly.
RESNET18 = os.path.join(ROOT, "onnx_models", "resnet18.onnx")
BERT = os.path.join(ROOT, "onnx_models", "corpus", "legacy", "hf_bert_L4_H256_eager.onnx")


def cli_json(*args):
    return json.loads(cli(*args, "--format", "json"))


def without_notes(result):
    return {k: v for k, v in result.items() if k != "notes"}


@pytest.fixture(scope="module")
def batch8_onnx(tmp_path_factory):
    """A file that declares batch 8 (the bundled models leave it symbolic)."""
    path = str(tmp_path_factory.mktemp("batch8") / "small_b8.onnx")
    tilewave.layers_to_onnx(SMALL_NET, path, input=[3, 64, 64], batch=8)
    return path


def test_the_default_batch_is_the_files_as_on_the_cli(batch8_onnx):
    ours = tilewave.analyze(batch8_onnx)
    assert ours["batch"] == 8
    assert without_notes(ours) == cli_json("analyze", batch8_onnx)
    ours = tilewave.analyze(batch8_onnx, batch=2, runtime="inductor")
    assert ours["batch"] == 2
    assert without_notes(ours) == cli_json("analyze", batch8_onnx, "--batch", "2", "--runtime", "inductor")


def test_input_shapes_equal_the_clis_input():
    ours = tilewave.analyze(BERT, input={"input_ids": [2, 64], "attention_mask": (2, 64)})
    theirs = cli_json("analyze", BERT, "--input", "input_ids=2x64", "--input", "attention_mask=2x64")
    assert ours["batch"] == 2
    assert without_notes(ours) == theirs
    assert ours["total"] != tilewave.analyze(BERT, batch=2)["total"]  # sequence 64, not the file's 128


# Issue 34 item 1: one option table (exec_options.h) makes the CLI's flags and
# these keywords, so the option-by-option parity tests that compared copies
# are gone; this holds both front ends to the table.
def options_table():
    return json.loads(cli("options", "--format", "json"))


def test_the_option_table_is_the_modules_and_the_clis():
    table = options_table()
    assert tilewave.execution_options() == table
    keywords = {e["keyword"] for e in table}
    assert {"gpu", "runtime", "dtype", "attention", "layout", "amp", "graph", "host", "input"} <= keywords
    # The CLI's flags are held to the same table by tests/cli_test.sh.
    # Each function's docstring lists the keywords it takes, from the table.
    for function, command in ((tilewave.analyze, "analyze"), (tilewave.sweep, "sweep"), (tilewave.rank, "rank"),
                              (tilewave.check, "check"), (tilewave.Space.scorer, "nas")):
        doc = function.__doc__
        for e in table:
            assert (f"{e['keyword']}={e['default']}" in doc) == (command in e["commands"]), (command, e["keyword"])


def test_every_option_is_a_keyword_of_every_call_that_takes_it(tmp_path):
    """An option the table gives a command but the call refuses (or the reverse) fails here."""
    trace = os.path.join(TRACES, "resnet18_b1_eager_h200.profiler.json.gz")
    calls = {
        "analyze": lambda **kw: tilewave.analyze(TINY_CNN, batch=1, **kw),
        "sweep": lambda **kw: tilewave.sweep(TINY_CNN, batches=[1], **kw),
        "rank": lambda **kw: tilewave.rank([TINY_CNN], **kw),
        "advise": lambda **kw: tilewave.advise(TINY_CNN, batch=1, **kw),
        "check": lambda **kw: tilewave.check(RUNTIME_RESNET18, trace, batch=1, **kw),
        "annotate": lambda **kw: tilewave.annotate(TINY_CNN, tmp_path / "a.onnx", batch=1, **kw),
        "compare": lambda **kw: tilewave.compare(TINY_CNN, batches=[1], **{"gpus": ["h200"], **kw}),
        "nas": lambda **kw: tilewave.Space("regnet").scorer(**kw),
    }
    values = {"gpu": "h200", "gpu_dir": None, "runtime": "eager", "dtype": "fp16", "attention": "unfused",
              "layout": "nhwc", "amp": False, "graph": True, "host": "builtin", "allow_unmodelled": True,
              "input": None}
    table = options_table()
    assert set(values) == {e["keyword"] for e in table}, "a new option needs a value here"
    for command, call in calls.items():
        for e in table:
            keyword = e["compare_keyword"] if command == "compare" and e["compare_keyword"] else e["keyword"]
            value = values[e["keyword"]]
            if command == "compare" and e["compare_keyword"]:
                value = [value]
            if command in e["commands"]:
                call(**{keyword: value})
            else:
                with pytest.raises(TypeError, match=f"unexpected keyword argument '{keyword}'"):
                    call(**{keyword: value})
    with pytest.raises(TypeError, match="analyze\\(\\) got an unexpected keyword argument 'gpuu'"):
        tilewave.analyze(TINY_CNN, gpuu="h200")


def test_attention_reaches_every_call():
    """compare, analyze_layers and Space.scorer lacked attention (issue 34): each takes it now."""
    fused = tilewave.compare(BERT, gpus=["h200"], batches=[4])
    unfused = tilewave.compare(BERT, gpus=["h200"], batches=[4], attention="unfused")
    assert fused["configurations"][0]["execution"]["attention"] == "fused"
    assert unfused["configurations"][0]["execution"]["attention"] == "unfused"
    assert tilewave.analyze_layers(SMALL_NET, attention="unfused")["execution"]["attention"] == "unfused"
    tilewave.Space("regnet").scorer(attention="unfused")
    with pytest.raises(tilewave.InputError, match="^attention: unknown attention 'flash' \\(fused or unfused\\)$"):
        tilewave.Space("regnet").scorer(attention="flash")


def test_bad_options_are_one_clear_error_naming_the_problem():
    with pytest.raises(tilewave.InputError, match="resnet18.onnx: --input names 'nope', which is not a graph input"):
        tilewave.analyze(RESNET18, input={"nope": [1, 3, 8, 8]})
    with pytest.raises(tilewave.InputError, match="input: input 'input': every dimension must be positive"):
        tilewave.analyze(RESNET18, input={"input": [1, 0, 8, 8]})
    with pytest.raises(tilewave.InputError, match="attention: unknown attention 'flash' \\(fused or unfused\\)"):
        tilewave.analyze(RESNET18, attention="flash")
    with pytest.raises(tilewave.InputError, match="batch: batch must be positive, not 0"):
        tilewave.sweep(RESNET18, batches=[1, 0])
    with pytest.raises(tilewave.InputError, match="unknown format 'xml'"):
        tilewave.analyze_text(RESNET18, format="xml")


def test_sweep_equals_the_clis_sweep(batch8_onnx):
    assert tilewave.sweep(RESNET18, batches=[1, 8, 64], runtime="tensorrt") == \
        cli_json("sweep", RESNET18, "--batch", "1,8,64", "--runtime", "tensorrt")
    ours = tilewave.sweep(batch8_onnx)  # the CLI's default batches
    assert ours == cli_json("sweep", batch8_onnx)
    assert [p["batch"] for p in ours["points"]] == [1, 2, 4, 8, 16, 32, 64, 128, 256]


def test_compare_equals_the_clis_compare(batch8_onnx):
    ours = tilewave.compare(batch8_onnx)  # h200, a100, l4 at the file's batch
    assert ours == cli_json("compare", batch8_onnx)
    assert [c["batch"] for c in ours["configurations"]] == [8, 8, 8]
    ours = tilewave.compare(RESNET18, gpus=["h200", "l4"], runtimes="eager,tensorrt", batches=[1, 16],
                            layouts=["nhwc"], graph=False, amp=False, attention="unfused")
    theirs = cli_json("compare", RESNET18, "--gpu", "h200,l4", "--runtime", "eager,tensorrt", "--batch", "1,16",
                      "--layout", "nhwc", "--no-graph", "--no-amp", "--attention", "unfused")
    assert ours == theirs and len(ours["configurations"]) == 8
    assert {c["execution"]["launch"] for c in ours["configurations"]} == {"loop"}


def test_compare_of_two_networks_equals_the_clis_with_its_findings():
    effnet = os.path.join(ROOT, "onnx_models", "efficientnet_b0.onnx")
    ours = tilewave.compare([RESNET50, pathlib.Path(effnet)], gpus=["h200"], batches=[16], layouts=["nhwc"],
                            graph=True, amp=False)
    theirs = cli_json("compare", RESNET50, effnet, "--gpu", "h200", "--batch", "16", "--layout", "nhwc",
                      "--graph", "--no-amp")
    assert ours == theirs
    assert [c["model"] for c in ours["configurations"]] == ["resnet50", "efficientnet_b0"]
    # Two models in one configuration: which is faster, by how much, then why.
    assert re.match(r"(resnet50|efficientnet_b0) is [0-9.]+x as fast as (resnet50|efficientnet_b0): [0-9]+ samples/s",
                    ours["faster"])
    assert ours["findings"]
    with pytest.raises(tilewave.InputError, match="names no model"):
        tilewave.compare([])


def test_analyze_text_is_what_the_cli_prints(batch8_onnx):
    assert tilewave.analyze_text(batch8_onnx) == cli("analyze", batch8_onnx, "--format", "csv")
    assert tilewave.analyze_text(RESNET18, batch=2, format="table", runtime="tensorrt") == \
        cli("analyze", RESNET18, "--batch", "2", "--format", "table", "--runtime", "tensorrt")


def test_every_path_may_be_a_pathlike(tmp_path):
    model = pathlib.Path(RESNET18)
    gpu_dir = pathlib.Path(ROOT) / "gpu_models"
    r = tilewave.analyze(model, batch=2, gpu=gpu_dir / "l4.json", gpu_dir=gpu_dir, host=gpu_dir / "hosts" / "h200-vm.json")
    assert r["gpu"] == "l4" and r["total"] == tilewave.analyze(RESNET18, batch=2, gpu="l4", host="h200-vm")["total"]
    assert tilewave.sweep(model, batches=[1])["points"][0]["batch"] == 1
    assert tilewave.compare(model, gpus=["h200"])["configurations"][0]["gpu"] == "h200"
    assert tilewave.analyze_text(model, batch=1).split("\n")[1].startswith("model,gpu,gpu_trust,batch,execution,name,")
    out = tmp_path / "net.onnx"
    assert tilewave.layers_to_onnx(SMALL_NET, out, input=[3, 64, 64]) > 0 and out.exists()
    space = tilewave.Space(pathlib.Path(ROOT) / "onnx_models" / "spaces" / "mobilenetv2.json")
    space.export_onnx(space.sample(1, 0), tmp_path / "cand.onnx")
    assert (tmp_path / "cand.onnx").exists()
    assert "h200" in tilewave.gpus(gpu_dir)
    with pytest.raises(tilewave.InputError, match="missing.onnx"):
        tilewave.analyze(tmp_path / "missing.onnx")


def test_version_is_what_the_cli_prints():
    assert cli("--version").strip() == "tilewave " + tilewave.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", tilewave.__version__)


def test_interval_coverage_is_the_one_the_answers_state():
    # One value: what the JSON's interval says, the table's label and what calibrate/fit/intervals.py fits.
    a = tilewave.analyze(RESNET18, batch=1)
    assert a["interval"]["coverage"] == tilewave.interval_coverage == 0.8
    assert "%.0f%% interval" % (100 * tilewave.interval_coverage) in tilewave.analyze_text(RESNET18, batch=1, format="table")


def test_signatures_name_python_types_not_cpp_ones():
    docs = {name: getattr(tilewave, name).__doc__ for name in dir(tilewave) if not name.startswith("_")}
    for cls in (tilewave.Space, tilewave.Scorer):
        docs.update({f"{cls.__name__}.{n}": getattr(cls, n).__doc__ for n in dir(cls) if not n.startswith("_")})
    for name, doc in docs.items():
        assert doc and "::" not in doc, name
    assert "-> tilewave.Scorer" in tilewave.Space.scorer.__doc__
    assert "path: os.PathLike" in tilewave.analyze.__doc__ and "-> dict" in tilewave.analyze.__doc__
    # The returned dict's keys are the docstring's.
    keys = tilewave.analyze(RESNET18, batch=1).keys()
    assert all(f"{k}," in tilewave.analyze.__doc__ or f"{k} (" in tilewave.analyze.__doc__ for k in keys)


def test_space_size_is_an_exact_python_int(tmp_path):
    space = tilewave.Space("mobilenetv2")
    assert type(space.size) is int
    assert space.size == math.prod(len(texts) for stage in space.options() for texts in stage.values())
    # 2359296**32 needs 677 bits: a double cannot hold it exactly.
    stage = {"depth": list(range(1, 17)), "width": [8 * i for i in range(1, 65)],
             "expansion": [1 + 0.25 * i for i in range(60)], "kernel": list(range(1, 10)), "se": [0, 1], "stride": [1, 2]}
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"name": "huge", "family": "mbconv", "stages": [stage] * 32}))
    assert tilewave.Space(path).size == (16 * 64 * 60 * 9 * 2 * 2) ** 32


def test_score_refuses_an_encoding_outside_its_space():
    space = tilewave.Space("mobilenetv2")
    scorer = space.scorer()
    good = space.sample(1, 0)
    stages = good.split("_")
    first = stages[0].split("-")
    bad = {
        "_".join(stages[:-1]): "has 6 of the space's 7 stages",
        good + "_" + stages[-1]: "has more than the space's 7 stages",
        "_".join([stages[0] + "-k3"] + stages[1:]): "stage 0 has more than its 6 choices ('k3')",
        "_".join(["-".join(first[:3])] + stages[1:]): "stage 0 lacks 'k'",
        "_".join(["-".join([first[0] + ".0"] + first[1:])] + stages[1:]): "is not as the space writes it: '" + good + "'",
        "": "lacks 'd'",
    }
    for encoding, message in bad.items():
        for score in (scorer.score, lambda e: scorer.score_many([good, e])):
            with pytest.raises(tilewave.InputError) as e:
                score(encoding)
            assert message in str(e.value) and "mobilenetv2.json" in str(e.value), encoding
    assert scorer.score(good)["encoding"] == good


def stub_typed_dicts():
    """The TypedDicts of the installed stub, each with its fields (inherited ones
    included) and whether every field is required."""
    import ast
    stub = pathlib.Path(tilewave.__file__).with_name("tilewave.pyi")
    assert stub.is_file(), "the type stub is not beside the module"
    tree = ast.parse(stub.read_text())
    classes = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        if "TypedDict" not in bases and not any(b in classes for b in bases):
            continue
        fields = set()
        for b in bases:
            if b in classes:
                fields |= classes[b][0]
        fields |= {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)}
        total = not any(k.arg == "total" and k.value.value is False for k in node.keywords)
        classes[node.name] = (fields, total)
    return classes


def test_the_stubs_typed_results_are_the_keys_each_call_returns(tmp_path):
    types = stub_typed_dicts()
    model = os.path.join(ROOT, "tests", "data", "tiny_cnn.onnx")
    a = tilewave.analyze(model, batch=2)
    s = tilewave.sweep(model, batches=[1, 2])
    c = tilewave.compare(model, gpus=["h200"])
    c2 = tilewave.compare([model, os.path.join(ROOT, "tests", "data", "depthwise.onnx")], gpus=["h200"], batches=[2])
    space = tilewave.Space("regnet")
    candidate = space.scorer().score(space.sample(1, 0))
    exact = {"Analysis": a, "Totals": a["total"], "Loss": a["total"]["loss"], "NodeFate": a["node_fates"][0],
             "KernelGroup": a["by_op"][0], "Memory": a["memory"], "Schedule": a["schedule"], "Sweep": s,
             "SweepPoint": s["points"][0], "Comparison": c, "ComparisonOfTwo": c2, "RunFacts": c["configurations"][0], "Candidate": candidate}
    for name, value in exact.items():
        fields, total = types[name]
        assert total and fields == set(value), (name, set(value) ^ fields)
    fields, total = types["Layer"]
    assert not total
    for layer in a["layers"]:
        assert set(layer) <= fields | {"tile", "split_k", "tiles", "waves", "tile_eff", "wave_eff", "mainloop_eff",
                                       "aligned"}, set(layer) - fields


# The rest of issue 21's parity: nas's samplings, analyze's --top/--by, and
# advise, check, rank, report and annotate, each against its CLI command.
RUNTIME_RESNET18 = os.path.join(ROOT, "onnx_models", "runtime", "resnet18.onnx")
TRACES = os.path.join(ROOT, "tests", "data", "traces")
TINY_CNN = os.path.join(ROOT, "tests", "data", "tiny_cnn.onnx")
SPACES = os.path.join(ROOT, "onnx_models", "spaces")


def cli_error(*args):
    """The CLI's one error line for a bad input (exit 1), without its 'tilewave: error: '."""
    r = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert r.returncode == 1, (args, r.returncode, r.stderr)
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith("tilewave: error: "), line
    return line[len("tilewave: error: "):]


def as_python_spells_it(message):
    """A CLI message with its options spelled as the module's keywords (docs/python.md)."""
    return message.replace("(--allow-unmodelled gives", "(allow_unmodelled=True gives")


def assert_same_error(call, *cli_args):
    """call() raises InputError with the message the CLI prints for cli_args."""
    with pytest.raises(tilewave.InputError) as e:
        call()
    assert str(e.value) == as_python_spells_it(cli_error(*cli_args))


def nas_encodings(tmp_path, space_file, *args):
    out = tmp_path / "nas.csv"
    cli("nas", space_file, *args, "-o", str(out))
    rows = list(csv.DictReader(l for l in open(out) if not l.startswith("#")))
    assert [int(r["index"]) for r in rows] == list(range(len(rows)))
    return [r["encoding"] for r in rows]


def test_unique_sampling_equals_nas_unique(tmp_path):
    path = os.path.join(SPACES, "regnet.json")
    space = tilewave.Space(path)
    unique = space.samples(300, seed=5, unique=True)
    assert unique == nas_encodings(tmp_path, path, "--samples", "300", "--seed", "5", "--unique")
    assert len(set(unique)) == 300
    # Candidate i depends on the seed and i alone: any prefix, any single index.
    assert space.samples(40, seed=5, unique=True) == unique[:40]
    assert [space.sample(5, i, unique=True) for i in (0, 17, 299)] == [unique[0], unique[17], unique[299]]
    assert space.samples(300, seed=6, unique=True) != unique
    # With replacement, nas's default, as before.
    replaced = space.samples(300, seed=5)
    assert replaced == nas_encodings(tmp_path, path, "--samples", "300", "--seed", "5")
    assert replaced == [space.sample(5, i) for i in range(300)]
    assert space.samples(0) == []
    # The whole space, without replacement: every candidate once.
    everything = space.samples(space.size, seed=2, unique=True)
    assert len(set(everything)) == space.size == 21504


def test_enumerate_equals_nas_enumerate(tmp_path):
    small = json.load(open(os.path.join(SPACES, "resnet.json")))
    small["name"] = "small"
    small["stages"] = [{"depth": [1, 2], "width": [32, 48], "bottleneck": [0, 1], "stride": [1]},
                       {"depth": [1], "width": [64, 96, 128], "bottleneck": [0], "stride": [2]},
                       {"depth": [1], "width": [128], "bottleneck": [0, 1], "stride": [2]},
                       {"depth": [2], "width": [256], "bottleneck": [1], "stride": [2]}]
    path = tmp_path / "small.json"
    path.write_text(json.dumps(small))
    space = tilewave.Space(path)
    everything = space.enumerate()
    assert everything == nas_encodings(tmp_path, str(path), "--enumerate")
    assert len(everything) == len(set(everything)) == space.size == 2 * 2 * 2 * 3 * 2
    assert sorted(space.samples(space.size, seed=9, unique=True)) == sorted(everything)


def test_sampling_errors_are_the_clis():
    regnet = os.path.join(SPACES, "regnet.json")
    assert_same_error(lambda: tilewave.Space(regnet).samples(21505, unique=True),
                      "nas", regnet, "--samples", "21505", "--unique")
    mobilenet = os.path.join(SPACES, "mobilenetv2.json")
    assert_same_error(lambda: tilewave.Space(mobilenet).enumerate(), "nas", mobilenet, "--enumerate")
    with pytest.raises(tilewave.InputError, match="more than the 21504 candidates"):
        tilewave.Space(regnet).sample(1, 21504, unique=True)
    assert tilewave.Space(regnet).sample(1, 21503, unique=True)
    with pytest.raises(tilewave.InputError):
        tilewave.Space(regnet).sample(1, 2 ** 64 - 1, unique=True)


def test_analyze_text_top_and_by_equal_the_clis():
    for by in ("op", "name", "node", "kernel"):
        assert tilewave.analyze_text(RESNET18, batch=2, format="table", top=3, by=by) == \
            cli("analyze", RESNET18, "--batch", "2", "--format", "table", "--top", "3", "--by", by)
    assert tilewave.analyze_text(RESNET18, batch=2, format="table", top=0, by="node") == \
        cli("analyze", RESNET18, "--batch", "2", "--format", "table", "--top", "0", "--by", "node")
    # The defaults are the CLI's; --top shapes the table only, --by also the CSV's rows.
    assert tilewave.analyze_text(RESNET18, batch=2, format="table") == \
        cli("analyze", RESNET18, "--batch", "2", "--format", "table")
    assert tilewave.analyze_text(RESNET18, batch=2, top=1) == tilewave.analyze_text(RESNET18, batch=2)
    assert tilewave.analyze_text(RESNET18, batch=2, by="kernel") == tilewave.analyze_text(RESNET18, batch=2)
    for by in ("op", "name", "node"):
        assert tilewave.analyze_text(RESNET18, batch=2, by=by) == \
            cli("analyze", RESNET18, "--batch", "2", "--format", "csv", "--by", by)
    with pytest.raises(tilewave.InputError, match=r"^by: unknown summary 'layer' \(op, name, node, kernel\)$"):
        tilewave.analyze_text(RESNET18, format="table", by="layer")
    with pytest.raises(tilewave.InputError, match="^top: top counts table rows: 0 or more, not -1$"):
        tilewave.analyze_text(RESNET18, format="table", top=-1)


def test_advise_equals_the_clis_advise():
    ours = tilewave.advise(RESNET18, batch=16)
    assert ours == cli_json("advise", RESNET18, "--batch", "16")
    assert ours["advice"] and all(a["gain"] > 0 for a in ours["advice"])
    regnet = os.path.join(ROOT, "onnx_models", "regnet_y_400mf.onnx")
    ours = tilewave.advise(regnet, batch=16, layout="nhwc", amp=False, graph=True)
    assert ours == cli_json("advise", regnet, "--batch", "16", "--layout", "nhwc", "--no-amp", "--graph")
    assert "channels" in [a["kind"] for a in ours["advice"]]


def test_check_equals_the_clis_check():
    trace = os.path.join(TRACES, "resnet18_b1_eager_h200.profiler.json.gz")
    ours = tilewave.check(RUNTIME_RESNET18, trace, batch=1, layout="nhwc", amp=False)
    theirs = cli_json("check", RUNTIME_RESNET18, "--trace", trace, "--batch", "1", "--layout", "nhwc", "--no-amp")
    assert ours == theirs
    assert ours["paired"] > 0 and ours["pairs"]
    trace = pathlib.Path(TRACES) / "resnet18_b16_inductor_h200.profiler.json.gz"
    ours = tilewave.check(pathlib.Path(RUNTIME_RESNET18), trace, batch=16, runtime="inductor", layout="nhwc", amp=False)
    assert ours == cli_json("check", RUNTIME_RESNET18, "--runtime", "inductor", "--trace", str(trace), "--batch", "16",
                            "--layout", "nhwc", "--no-amp")


def test_rank_equals_the_clis_rank(tmp_path):
    mobilenet = os.path.join(ROOT, "onnx_models", "mobilenet_v2.onnx")
    conv3d = os.path.join(ROOT, "tests", "data", "conv3d.onnx")  # cannot be analysed: a failure row
    ours = tilewave.rank([RESNET18, pathlib.Path(mobilenet), conv3d], batch=4, threads=2, keep_going=True)
    theirs = cli_json("rank", RESNET18, mobilenet, conv3d, "--batch", "4", "--threads", "2", "--keep-going")
    assert [f["model"] for f in ours["failed"]] == [conv3d]
    for f in theirs["failed"]:  # why a model failed names the option as the caller spells it
        f["error"] = as_python_spells_it(f["error"])
    assert "allow_unmodelled=True" in ours["failed"][0]["error"]
    assert ours == theirs
    # Without keep_going a failure is an error, as the CLI's exit 1: the
    # failed model, why, and how many failed.
    with pytest.raises(tilewave.InputError, match=r"conv3d\.onnx: .*\(1 of 3 models failed; keep_going=True ranks the rest\)"):
        tilewave.rank([RESNET18, mobilenet, conv3d], batch=4)
    with pytest.raises(tilewave.InputError, match="keep_going=True ranks the rest"):
        tilewave.rank_text([RESNET18, conv3d], batch=4)
    assert "1 model not ranked" in tilewave.rank_text([RESNET18, conv3d], batch=4, keep_going=True)
    # What bounds each model: the host at batch 1 in a plain loop, and a note
    # saying the order is the host's; the GPU's kernels under CUDA graphs.
    host = tilewave.rank([RESNET18, mobilenet], batch=1)
    assert [m["bound"] for m in host["models"]] == ["host", "host"] and host["host_bound_models"] == 2
    assert len(host["notes"]) == 1 and "--graph" in host["notes"][0]
    gpu = tilewave.rank([RESNET18, mobilenet], batch=64, graph=True)
    assert all(m["bound"] in ("compute", "memory", "latency", "tile", "wave", "cuda-core") for m in gpu["models"])
    assert gpu["host_bound_models"] == 0 and gpu["notes"] == []
    # rank's default batch is 1 (not the file's), folders and list files as on the CLI.
    models = tmp_path / "models.txt"
    models.write_text(f"# a list\n{RESNET18}\n\n{mobilenet}\n")
    unseen = os.path.join(ROOT, "onnx_models", "heldout_variants")
    ours = tilewave.rank([models, pathlib.Path(unseen)], runtime="tensorrt")
    assert ours == cli_json("rank", str(models), unseen, "--runtime", "tensorrt")
    assert ours["batch"] == 1
    assert_same_error(lambda: tilewave.rank([tmp_path / "missing.onnx"]), "rank", str(tmp_path / "missing.onnx"))
    assert_same_error(lambda: tilewave.rank([tmp_path]), "rank", str(tmp_path))
    with pytest.raises(tilewave.InputError, match="threads is 1..1024, not 0"):
        tilewave.rank([RESNET18], threads=0)


def test_report_writes_the_clis_html(tmp_path):
    ours, theirs = tmp_path / "ours.html", tmp_path / "theirs.html"
    tilewave.report(RESNET18, ours, batch=2, compare=["a100"], batches=[1, 4])
    cli("report", RESNET18, "--batch", "2", "--compare", "a100", "--batches", "1,4", "-o", str(theirs))
    assert ours.read_bytes() == theirs.read_bytes()
    # A GPU list, the second network beside the first.
    mobilenet = os.path.join(ROOT, "onnx_models", "mobilenet_v2.onnx")
    tilewave.report(RESNET18, ours, gpu="h200,l4", vs=mobilenet, batches=[1, 8], runtime="inductor")
    cli("report", RESNET18, "--gpu", "h200,l4", "--vs", mobilenet, "--batches", "1,8", "--runtime", "inductor",
        "-o", str(theirs))
    assert ours.read_bytes() == theirs.read_bytes()
    assert b"<html" in ours.read_bytes()


def test_annotate_writes_the_clis_model(tmp_path):
    ours, theirs = tmp_path / "ours.onnx", tmp_path / "theirs.onnx"
    tilewave.annotate(TINY_CNN, ours, batch=4, runtime="tensorrt")
    cli("annotate", TINY_CNN, "--batch", "4", "--runtime", "tensorrt", "-o", str(theirs))
    assert ours.read_bytes() == theirs.read_bytes()
    assert b"tilewave.utilization" in ours.read_bytes()
    assert tilewave.analyze(ours, batch=4, runtime="tensorrt")["total"] == \
        tilewave.analyze(TINY_CNN, batch=4, runtime="tensorrt")["total"]


def test_outputs_are_written_safely_as_the_clis(tmp_path):
    # Never over an input, and nothing left behind by a failure.
    model = tmp_path / "model.onnx"
    model.write_bytes(open(TINY_CNN, "rb").read())
    before = model.read_bytes()
    for call, command in ((tilewave.annotate, "annotate"), (tilewave.report, "report")):
        assert_same_error(lambda: call(model, model), command, str(model), "-o", str(model))
        assert model.read_bytes() == before
    assert_same_error(lambda: tilewave.report(RESNET18, model, vs=model), "report", RESNET18, "--vs", str(model),
                      "-o", str(model))
    assert model.read_bytes() == before
    truncated = os.path.join(ROOT, "tests", "data", "truncated.onnx")
    out = tmp_path / "out.onnx"
    assert_same_error(lambda: tilewave.annotate(truncated, out), "annotate", truncated, "-o", str(out))
    assert_same_error(lambda: tilewave.report(truncated, out), "report", truncated, "-o", str(out))
    assert not out.exists()
    assert os.listdir(tmp_path) == ["model.onnx"]  # no temporary either


def test_bad_inputs_of_the_new_calls_are_the_clis_errors(tmp_path):
    missing = str(tmp_path / "missing.onnx")
    trace = os.path.join(TRACES, "resnet18_b1_eager_h200.profiler.json.gz")
    assert_same_error(lambda: tilewave.advise(missing), "advise", missing)
    assert_same_error(lambda: tilewave.check(missing, trace), "check", missing, "--trace", trace)
    assert_same_error(lambda: tilewave.check(RESNET18, missing), "check", RESNET18, "--trace", missing)
    not_a_trace = os.path.join(ROOT, "tests", "data", "not_onnx.onnx")
    assert_same_error(lambda: tilewave.check(RESNET18, not_a_trace), "check", RESNET18, "--trace", not_a_trace)
    conv3d = os.path.join(ROOT, "tests", "data", "conv3d.onnx")
    assert_same_error(lambda: tilewave.advise(conv3d), "advise", conv3d)
    assert_same_error(lambda: tilewave.annotate(missing, tmp_path / "a.onnx"), "annotate", missing, "-o",
                      str(tmp_path / "a.onnx"))
    assert_same_error(lambda: tilewave.report(RESNET18, tmp_path / "r.html", vs=missing), "report", RESNET18, "--vs",
                      missing, "-o", str(tmp_path / "r.html"))
    assert_same_error(lambda: tilewave.report(RESNET18, tmp_path / "r.html", compare=["h999"]), "report", RESNET18,
                      "--compare", "h999", "-o", str(tmp_path / "r.html"))
    assert_same_error(lambda: tilewave.advise(RESNET18, gpu="h999"), "advise", RESNET18, "--gpu", "h999")
    with pytest.raises(tilewave.InputError, match="^batch: batch must be positive, not 0$"):
        tilewave.rank([RESNET18], batch=0)
    with pytest.raises(tilewave.InputError, match="^batch: batch must be positive, not 0$"):
        tilewave.report(RESNET18, tmp_path / "r.html", batches=[1, 0])
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "a.onnx").exists()


def test_the_stubs_typed_results_of_the_new_calls(tmp_path):
    types = stub_typed_dicts()
    advice = tilewave.advise(RESNET18, batch=16)
    trace = os.path.join(TRACES, "resnet18_b1_eager_h200.profiler.json.gz")
    checked = tilewave.check(RUNTIME_RESNET18, trace, batch=1, layout="nhwc", amp=False)
    conv3d = os.path.join(ROOT, "tests", "data", "conv3d.onnx")
    ranked = tilewave.rank([RESNET18, conv3d], batch=2, keep_going=True)
    exact = {"Advising": advice, "Advice": advice["advice"][0], "AdviceTotals": advice["advice"][0]["before"],
             "TraceCheck": checked, "KindError": checked["by_kind"][0], "Ranking": ranked,
             "RankedModel": ranked["models"][0], "RankFailure": ranked["failed"][0],
             "TraceSetting": checked["trace_configuration"][0]}
    # Checked without the trace's flags, the trace's configuration is a mismatch.
    unlike = tilewave.check(RUNTIME_RESNET18, trace, batch=1)
    exact["SettingMismatch"] = unlike["configuration_mismatches"][0]
    assert {m["option"] for m in unlike["configuration_mismatches"]} == {"layout", "amp"}
    assert checked["configuration_mismatches"] == []
    for name, value in exact.items():
        fields, total = types[name]
        assert total and fields == set(value), (name, set(value) ^ fields)
    fields, total = types["TracePair"]
    assert not total
    assert set().union(*(set(p) for p in checked["pairs"])) == fields


def test_advise_check_and_rank_text_are_what_the_cli_prints():
    trace = os.path.join(ROOT, "tests", "data", "traces", "resnet18_b1_eager_h200.profiler.json.gz")
    model = os.path.join(ROOT, "onnx_models", "runtime", "resnet18.onnx")
    conf = ["--batch", "1", "--layout", "nhwc", "--no-amp"]
    for fmt in ("table", "json"):
        assert tilewave.advise_text(RESNET18, batch=2, format=fmt) == \
            cli("advise", RESNET18, "--batch", "2", "--format", fmt)
        assert tilewave.check_text(model, trace, batch=1, layout="nhwc", amp=False, format=fmt, top=4) == \
            cli("check", model, "--trace", trace, *conf, "--format", fmt, "--top", "4")
    assert tilewave.check_text(model, trace, batch=1, layout="nhwc", amp=False) == \
        cli("check", model, "--trace", trace, *conf)
    models = [RESNET18, model]
    for fmt in ("table", "json", "csv"):
        assert tilewave.rank_text(models, threads=1, format=fmt) == cli("rank", *models, "--threads", "1", "--format", fmt)
    # The text is the dict's document, as the CLI writes both.
    assert json.loads(tilewave.advise_text(RESNET18, batch=2, format="json")) == tilewave.advise(RESNET18, batch=2)
    with pytest.raises(tilewave.InputError, match=r"^format: unknown format 'csv' \(table, json\)$"):
        tilewave.advise_text(RESNET18, format="csv")
    with pytest.raises(tilewave.InputError, match=r"^format: unknown format 'md' \(table, json, csv\)$"):
        tilewave.rank_text(models, format="md")
    with pytest.raises(tilewave.InputError, match="^top: top counts table rows: 0 or more, not -2$"):
        tilewave.check_text(model, trace, top=-2)
