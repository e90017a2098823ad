"""The figures docs/validation.md quotes (calibrate/validate/doc_figures.py)."""
import os

from calibrate.fit import attention_tiles  # (calibrate/fit/attention_tiles.py)
from calibrate.fit import resample_planes  # (calibrate/fit/resample_planes.py)
from calibrate.fit import intervals  # (calibrate/fit/intervals.py)
from calibrate.pair import harness_kernel_classes  # (calibrate/pair/harness_kernel_classes.py)
from calibrate.fit import corpus_fit, row_moments  # (calibrate/fit/corpus_fit.py, row_moments.py)
from calibrate.fit import softmax_rows  # (calibrate/fit/softmax_rows.py)
from calibrate.fit import strided_eltwise  # (calibrate/fit/strided_eltwise.py)
from calibrate.fit import special_functions  # (calibrate/fit/special_functions.py)
from calibrate.validate import attention_paths  # (calibrate/validate/attention_paths.py)
from calibrate.validate import compare_networks  # (calibrate/validate/compare_networks.py: runs 1-6, eager-folded)
from calibrate.validate import harness  # (calibrate/validate/harness.py: timm's harness, issue 18)
from calibrate.validate import harness_repeatability  # (calibrate/validate/harness_repeatability.py)
from calibrate.validate import corpus_networks  # (calibrate/validate/corpus_networks.py)
from calibrate.validate import gpu_pair  # (calibrate/validate/gpu_pair.py)
from calibrate.validate import host_passes  # (calibrate/validate/host_passes.py)
from calibrate.validate import kernel_classes  # (calibrate/validate/kernel_classes.py)
from calibrate.validate import layout_transforms  # (calibrate/validate/layout_transforms.py)
from calibrate.validate import pointwise_paths  # (calibrate/validate/pointwise_paths.py)
from calibrate.fit import elementwise_loads  # (calibrate/fit/elementwise_loads.py)
from calibrate.fit import partial_vectors  # (calibrate/fit/partial_vectors.py)
from calibrate.validate import pool_validation  # (calibrate/validate/pool_validation.py)
from calibrate.validate import row_sweep  # (calibrate/validate/row_sweep.py)
from calibrate.validate import figures_readme  # (calibrate/validate/figures_readme.py: other_gpus.py's kept text)
from calibrate.module import tilewave_module
from calibrate.validate.figures_common import DATA

# The run.py folders with profiled forwards under timm's harness on the H200.
RUN_FOLDERS = [DATA + "/measure_run", DATA + "/two_commands/run", DATA + "/corpus/run"]


def validation_kernel_classes(runs):
    """docs/validation.md: `python3 -m calibrate.validate.kernel_classes calibrate/data/h200/measure_run calibrate/data/h200/two_commands/run calibrate/data/h200/corpus/run`."""
    if "kernel_classes" not in runs.cache:
        runs.cache["kernel_classes"] = kernel_classes.classes(runs.tw, RUN_FOLDERS)
    results, failed = runs.cache["kernel_classes"]
    return kernel_classes.lines_of(results, failed, "harness") + kernel_classes.left_out_lines(failed)


def validation_fresh_kernel_classes(runs):
    """docs/validation.md: `python3 -m calibrate.validate.kernel_classes calibrate/data/h200/corpus/fresh --by none --networks-of gemm`."""
    results, failed = kernel_classes.classes(runs.tw, [DATA + "/corpus/fresh"])
    return (kernel_classes.lines_of(results, failed, "none") + kernel_classes.unpaired_lines(results, "gemm")
            + kernel_classes.left_out_lines(failed))


def validation_cait_block(runs):
    """docs/validation.md: `python3 -m calibrate.validate.kernel_classes calibrate/data/h200/corpus/fresh --forward
    timm/cait_xs24_384:amp_fp16:nchw:64 --nodes blocks.1/attn/`."""
    return kernel_classes.forward_lines(runs.tw, DATA + "/corpus/fresh", "timm/cait_xs24_384:amp_fp16:nchw:64", "h200",
                                        "blocks.1/attn/")


def corpus_predictions(runs):
    """The corpus predicted once for both figures that read it."""
    if "corpus_predictions" not in runs.cache:
        runs.cache["corpus_predictions"] = corpus_networks.corpus_predictions(DATA + "/corpus/run", runs.tw)
    return runs.cache["corpus_predictions"]


def validation_corpus_networks(runs):
    """docs/validation.md: `python3 -m calibrate.validate.corpus_networks calibrate/data/h200/corpus/run --misses 6`."""
    return corpus_networks.lines_of(DATA + "/corpus/run", runs.tw, misses=6, predicted_corpus=corpus_predictions(runs))


def validation_intervals(runs):
    """docs/validation.md: `python3 -m calibrate.fit.intervals build/analyzer/tilewave`."""
    lines = []
    intervals.run(runs.tw, out=lines.append, predicted_corpus=corpus_predictions(runs))
    return lines


def validation_row_moments(runs):
    """docs/validation.md: `python3 -m calibrate.fit.row_moments build/analyzer/tilewave`."""
    lines = []
    corpus_fit.on_corpus(row_moments.fit, runs.tw, out=lines.append)
    return lines


def validation_strided_eltwise(runs):
    """docs/validation.md: `python3 -m calibrate.fit.strided_eltwise build/analyzer/tilewave`."""
    lines = []
    corpus_fit.on_corpus(strided_eltwise.fit, runs.tw, out=lines.append)
    return lines


def validation_special_functions(runs):
    """docs/validation.md: `python3 -m calibrate.fit.special_functions build/analyzer/tilewave`."""
    lines = []
    corpus_fit.on_corpus(special_functions.fit, runs.tw, out=lines.append)
    return lines


def validation_softmax_rows(runs):
    """docs/validation.md: `python3 -m calibrate.fit.softmax_rows build/analyzer/tilewave`."""
    lines = []
    corpus_fit.on_corpus(softmax_rows.fit, runs.tw, out=lines.append)
    return lines


def validation_row_sweep(runs):
    """docs/validation.md: `python3 -m calibrate.validate.row_sweep`."""
    return row_sweep.lines_of(row_sweep.GPU)


def validation_attention_paths(runs):
    """docs/validation.md: `python3 -m calibrate.validate.attention_paths calibrate/data/h200/corpus/run`."""
    result, failed = attention_paths.paths(runs.tw, [DATA + "/corpus/run"])
    return attention_paths.lines(result, failed)


def validation_fresh_set(runs):
    """docs/validation.md: `python3 -m calibrate.validate.corpus_networks calibrate/data/h200/corpus/fresh --misses 6`."""
    return corpus_networks.lines_of(DATA + "/corpus/fresh", runs.tw, misses=6)


def fresh_set_part(calls=None, kind=None):
    """The fresh set's table of one machine's run.py calls (calibrate/data/h200/corpus/fresh/README.md) or of
    one kind of network."""
    def figure(runs):
        return corpus_networks.lines_of(DATA + "/corpus/fresh", runs.tw, misses=6, kind=kind,
                                        calls=corpus_networks.parse_calls(calls) if calls else None)
    figure.__doc__ = ("docs/validation.md: `python3 -m calibrate.validate.corpus_networks "
                      "calibrate/data/h200/corpus/fresh %s --misses 6`." % ("--calls " + calls if calls else "--kind " + kind))
    return figure


H100_FRESH = os.path.join(os.path.dirname(DATA), "h100", "corpus", "fresh")


def h100_predictions(runs):
    """The H100's fresh set predicted once for both figures that read it."""
    if "h100_predictions" not in runs.cache:
        runs.cache["h100_predictions"] = corpus_networks.corpus_predictions(H100_FRESH, runs.tw, "h100")
    return runs.cache["h100_predictions"]


def validation_h100_fresh(runs):
    """docs/validation.md: `python3 -m calibrate.validate.corpus_networks calibrate/data/h100/corpus/fresh --gpu h100 --misses 6`."""
    return corpus_networks.lines_of(H100_FRESH, runs.tw, gpu="h100", misses=6, predicted_corpus=h100_predictions(runs))


def validation_carried_intervals(runs):
    """docs/validation.md: `python3 -m calibrate.fit.intervals build/analyzer/tilewave --carried`."""
    lines = []
    intervals.run_carried(runs.tw, out=lines.append, predicted_corpus=h100_predictions(runs))
    return lines


def validation_gpu_pair(runs):
    """docs/validation.md: `python3 -m calibrate.validate.gpu_pair calibrate/data/h200/corpus/fresh calibrate/data/h100/corpus/fresh --gpus h200,h100`."""
    return gpu_pair.lines_of(DATA + "/corpus/fresh", H100_FRESH, ["h200", "h100"], runs.tw)


GROUP_NORM_NETWORKS = ["timm/poolformer_m48", "timm/resnet50_gn", "timm/resnetv2_50x1_bit", "timm/mobilevitv2_150"]


def validation_memory_formats(runs):
    """docs/validation.md: `python3 -m calibrate.validate.corpus_networks calibrate/data/h200/corpus/run --networks timm/poolformer_m48,timm/resnet50_gn,timm/resnetv2_50x1_bit,timm/mobilevitv2_150`."""
    return corpus_networks.network_lines(DATA + "/corpus/run", runs.tw, GROUP_NORM_NETWORKS)


def validation_host_passes(runs):
    """docs/validation.md: `python3 -m calibrate.validate.host_passes calibrate/data/h200/corpus/run`."""
    return host_passes.lines_of(DATA + "/corpus/run", runs.tw, predicted_corpus=corpus_predictions(runs))


def validation_sdpa_cases(runs):
    """docs/validation.md: `python3 -m calibrate.validate.attention_paths --cases calibrate/data/h200/sdpa_paths/sdpa_paths.jsonl`."""
    return attention_paths.case_lines(DATA + "/sdpa_paths/sdpa_paths.jsonl")


def validation_attention_tiles(runs):
    """docs/validation.md: `python3 -m calibrate.fit.attention_tiles calibrate/data/h100/attention_sweep --other calibrate/data/h200/sdpa_paths/sdpa_paths.jsonl`."""
    sweep = os.path.join(os.path.dirname(DATA), "h100", "attention_sweep")
    return attention_tiles.table_lines(sweep, tilewave_module(runs.tw), "h100", DATA + "/sdpa_paths/sdpa_paths.jsonl", "h200")[0]


def validation_resample_planes(runs):
    """docs/validation.md: `python3 -m calibrate.fit.resample_planes calibrate/data/h100/resize_kernels`."""
    sweep = os.path.join(os.path.dirname(DATA), "h100", "resize_kernels")
    return resample_planes.table_lines(sweep, tilewave_module(runs.tw), "h100")[0]


def validation_resample_network(runs):
    """docs/validation.md: `python3 -m calibrate.validate.kernel_classes calibrate/data/h200/corpus/run --op-of timm/efficientformerv2_s1:Resize --named upsample`."""
    return kernel_classes.op_lines(runs.tw, DATA + "/corpus/run", "timm/efficientformerv2_s1:Resize", "h200", "upsample")


def validation_resample_unlooped(runs):
    """docs/validation.md: `python3 -m calibrate.validate.kernel_classes calibrate/data/h200/corpus/run --op-of timm/coat_mini,timm/crossvit_18_dagger_240,timm/ghostnetv2_100,timm/hrnet_w32:Resize --named upsample`."""
    return kernel_classes.op_lines(runs.tw, DATA + "/corpus/run",
                                   "timm/coat_mini,timm/crossvit_18_dagger_240,timm/ghostnetv2_100,timm/hrnet_w32:Resize",
                                   "h200", "upsample")


def validation_pointwise_paths(runs):
    """docs/validation.md: `python3 -m calibrate.validate.pointwise_paths calibrate/data/h200/pointwise_paths --gpu h200`."""
    return pointwise_paths.lines_of(DATA + "/pointwise_paths", tilewave_module(runs.tw), "h200")


def validation_elementwise_loads(runs):
    """docs/validation.md: `python3 -m calibrate.fit.elementwise_loads`."""
    return elementwise_loads.table_lines(tilewave_module(runs.tw))[0]


def validation_partial_vectors(runs):
    """docs/validation.md: `python3 -m calibrate.fit.partial_vectors`."""
    return partial_vectors.table_lines(tilewave_module(runs.tw))[0]


def validation_layout_transforms(runs):
    """docs/validation.md: `python3 -m calibrate.validate.layout_transforms calibrate/data/h200/corpus/run`."""
    return layout_transforms.lines_of(runs.tw, DATA + "/corpus/run")


def validation_resample_h100(runs):
    """docs/validation.md: `python3 -m calibrate.validate.kernel_classes calibrate/data/h100/resample_networks --gpu h100 --op-of timm/efficientformerv2_s0,timm/efficientformerv2_s2,timm/efficientformerv2_l:Resize --named upsample`."""
    return kernel_classes.op_lines(runs.tw, os.path.join(os.path.dirname(DATA), "h100", "resample_networks"),
                                   "timm/efficientformerv2_s0,timm/efficientformerv2_s2,timm/efficientformerv2_l:Resize",
                                   "h100", "upsample")


def validation_other_gpus(runs):
    """docs/validation.md: the tables `python3 -m calibrate.validate.other_gpus --write` printed when it wrote gpu_models/rtx3090.json and rtx4090.json (calibrate/data/other_gpus/validate.md), held to the held-out errors those files record."""
    figures_readme.kept_other_gpus_fit()
    lines = []
    for line in open(figures_readme.OTHER_GPUS_TEXT):
        if line.startswith("wrote "):
            break
        lines.append(line.rstrip("\n"))
    while lines and not lines[-1]:
        lines.pop()
    return lines


def harness_groups(runs):
    if "harness_groups" not in runs.cache:
        runs.cache["harness_groups"] = harness.harness_groups(runs.tw)
    return runs.cache["harness_groups"]


def validation_harness(runs):
    """docs/validation.md: `python3 -m calibrate.validate.harness build/analyzer/tilewave --markdown`."""
    return harness.markdown_lines(harness_groups(runs))


HARNESS_TARGETS = {"median": 0.10, "p90": 0.25, "tau": 0.9}  # issue 18: held-out and fresh networks


def validation_harness_targets(runs):
    """docs/validation.md: the harness table's held-out and fresh cells against issue 18's targets."""
    groups = harness_groups(runs)
    stats = {key: harness.row_stats(g) for key, g in groups.items() if key[0] in ("held-out", "fresh")}

    def value(which, v):
        return ("%.2f" % v) if which == "tau" else ("%.1f%%" % (100 * v))

    def span(name, which):
        v = [s[which] for k, s in stats.items() if k[0] == name]
        return value(which, min(v)) + "–" + value(which, max(v))

    def meeting(which):
        keys = sorted(k for k, s in stats.items() if (s[which] >= HARNESS_TARGETS[which] if which == "tau"
                                                      else s[which] <= HARNESS_TARGETS[which]))
        return "%d of %d%s" % (len(keys), len(stats), (": " + ", ".join(
            "%s %s b%d (%s)" % (k[0], k[1], k[2], value(which, stats[k][which])) for k in keys)) if keys else "")

    lines = ["| target | fresh | held-out | cells that meet it |", "| --- | --- | --- | --- |"]
    for which in ("median", "p90", "tau"):
        target = HARNESS_TARGETS[which]
        label = ("tau ≥ %g" % target) if which == "tau" else ("%s ≤ %g%%" % (which, 100 * target))
        lines.append("| %s | %s | %s | %s |" % (label, span("fresh", which), span("held-out", which), meeting(which)))
    flops = [s["tau_flops"] for s in stats.values()]
    return lines + ["", "FLOPs' tau over the same cells: %.2f to %.2f." % (min(flops), max(flops))]


def validation_harness_repeatability(runs):
    """docs/validation.md: `python3 -m calibrate.validate.harness_repeatability build/analyzer/tilewave`."""
    lines = []
    harness_repeatability.report(runs.tw, lines.append)
    return ["```", *lines, "```"]


def validation_harness_classes(runs):
    """docs/validation.md: `python3 -m calibrate.pair.harness_kernel_classes build/analyzer/tilewave --set held-out`."""
    return ["```", *harness_kernel_classes.table_lines(harness_kernel_classes.class_sums(runs.tw, "held-out"),
                                                        "held-out"), "```"]


# Runs 1-6 (docs/validation.md "Runs 1–6"): netbench's folded networks, each set with its folder of graphs,
# in the order the sets met the model; calibrate/reproduce_h200.sh steps 4 and 4b run the same comparisons.
RUNS_SETS = [("unseen set 4", "heldout_segmentation", "one-shot"), ("unseen set 3", "heldout_largest", "one-shot"),
             ("unseen set 2", "heldout_variants_more", ""), ("unseen set 1", "heldout_variants", ""),
             ("bundled 23", "", "")]


def runs_rows(runs, folder):
    """compare_networks' rows of one runs 1-6 set, predicted once."""
    key = ("runs_1_6", folder)
    if key not in runs.cache:
        netbench = os.path.join(DATA, f"netbench_{folder}.jsonl" if folder else "netbench.jsonl")
        runs.cache[key] = compare_networks.network_rows(runs.tw, netbench, os.path.join("onnx_models", folder))
    return runs.cache[key]


def validation_runs_summary(runs):
    """docs/validation.md: `compare_networks` of every runs 1-6 set under `--runtime eager-folded` (calibrate/reproduce_h200.sh steps 4, 4b), one row per set and batch."""
    lines = ["| set | batch | networks | median abs error | max abs error | Kendall tau, predicted vs measured "
             "| Kendall tau, FLOPs vs measured |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, folder, note in RUNS_SETS:
        for s in compare_networks.batch_summary(runs_rows(runs, folder)):
            name = f"{label} ({note})" if note else label
            lines.append("| " + " | ".join([name] + compare_networks.summary_cells(s)) + " |")
    return lines


def validation_runs_pooled(runs):
    """docs/validation.md: `pool_validation` over the four unseen sets (calibrate/reproduce_h200.sh step 4b)."""
    return pool_validation.pooled_lines([r for _, folder, _ in RUNS_SETS if folder for r in runs_rows(runs, folder)])


def validation_runs_pooled_sets_1_3(runs):
    """docs/validation.md: `pool_validation` over unseen sets 1-3 (the three the previous revision is compared on)."""
    return pool_validation.pooled_lines([r for label, folder, _ in RUNS_SETS if label in ("unseen set 1", "unseen set 2", "unseen set 3")
                                         for r in runs_rows(runs, folder)])


def runs_set_figure(label, folder):
    def figure(runs):
        return compare_networks.markdown_tables(runs_rows(runs, folder), "### " + label[0].upper() + label[1:]
                                                + ", batch {batch}")[1:]
    figure.__doc__ = (f"docs/validation.md: `compare_networks` of runs 1-6's {label} per batch "
                      f"(calibrate/reproduce_h200.sh step {'4b' if folder else '4'}).")
    return figure


FIGURES = {"validation-kernel-classes": validation_kernel_classes, "validation-cait-block": validation_cait_block,
           "validation-corpus-networks": validation_corpus_networks,
           "validation-intervals": validation_intervals,
           "validation-row-moments": validation_row_moments,
           "validation-strided-eltwise": validation_strided_eltwise,
           "validation-softmax-rows": validation_softmax_rows,
           "validation-special-functions": validation_special_functions,
           "validation-row-sweep": validation_row_sweep,
           "validation-attention-paths": validation_attention_paths,
           "validation-sdpa-cases": validation_sdpa_cases,
           "validation-attention-tiles": validation_attention_tiles,
           "validation-resample-planes": validation_resample_planes,
           "validation-resample-network": validation_resample_network,
           "validation-resample-h100": validation_resample_h100,
           "validation-resample-unlooped": validation_resample_unlooped,
           "validation-layout-transforms": validation_layout_transforms,
           "validation-pointwise-paths": validation_pointwise_paths,
           "validation-partial-vectors": validation_partial_vectors,
           "validation-elementwise-loads": validation_elementwise_loads,
           "validation-fresh-set": validation_fresh_set,
           "validation-fresh-set-calls-1-3": fresh_set_part(calls="1-3"),
           "validation-fresh-set-calls-4-6": fresh_set_part(calls="4-6"),
           "validation-fresh-kernel-classes": validation_fresh_kernel_classes,
           "validation-fresh-set-cnn": fresh_set_part(kind="cnn"),
           "validation-fresh-set-transformer": fresh_set_part(kind="transformer"),
           "validation-host-passes": validation_host_passes,
           "validation-h100-fresh": validation_h100_fresh,
           "validation-carried-intervals": validation_carried_intervals,
           "validation-gpu-pair": validation_gpu_pair,
           "validation-memory-formats": validation_memory_formats,
           "validation-other-gpus": validation_other_gpus,
           "validation-harness": validation_harness,
           "validation-harness-targets": validation_harness_targets,
           "validation-harness-classes": validation_harness_classes,
           "validation-harness-repeatability": validation_harness_repeatability,
           "validation-runs-summary": validation_runs_summary,
           "validation-runs-pooled": validation_runs_pooled,
           "validation-runs-pooled-sets-1-3": validation_runs_pooled_sets_1_3}
FIGURES.update({"validation-runs-" + (folder or "bundled").replace("_", "-"): runs_set_figure(label, folder)
                for label, folder, _ in RUNS_SETS})
# Figures over the whole measured corpus: their time grows with each device call's networks, so the
# default test run leaves them to ctest's `long` label (doc_figures.py --figures).
LONG = {"validation-carried-intervals", "validation-fresh-set", "validation-fresh-set-calls-1-3",
        "validation-fresh-set-calls-4-6", "validation-fresh-set-cnn", "validation-fresh-set-transformer", "validation-host-passes", "validation-h100-fresh", "validation-gpu-pair", "validation-kernel-classes", "validation-corpus-networks", "validation-intervals", "validation-strided-eltwise",
        "validation-softmax-rows", "validation-special-functions"}
