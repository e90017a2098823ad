#!/usr/bin/env python3
"""Where the time goes and where the model misses, by kernel class, across
calibrate/measure/run.py folders (issue 31 item 2; docs/validation.md
"Kernel classes across the measured networks").

Every profiled forward of the folders' kernels.jsonl is held against
tilewave's prediction of the same network, batch, layout and precision by
the library's one pairing step, `tilewave check --format json`, called in
process as the Python module's check() (a kernels.jsonl row is a trace it
reads). The classes are the "pairing" vocabulary of
analyzer/data/kernel_names.json; `check` puts every measured kernel in one
by its name and every predicted kernel by its problem. Summed over the
forwards, per class:

  share        the class's share of all measured kernel time
  measured     measured kernel time, ms, and kernels
  predicted    predicted kernel time of the class, ms (its own kernels: the
               launch gap is the schedule's)
  paired err   sum predicted / sum measured - 1 over the kernels paired
               with a predicted one (by the measured kernel's class)
  same class   the same over the pairs whose predicted kernel has the
               class too: a kernel the runtime launches in another order
               than the prediction pairs with an unlike neighbour, and
               only like pairs say how well the class is costed
  missing      measured time no predicted kernel paired with, share of the
               class's measured time: what tilewave does not predict
  extra        predicted time no measured kernel paired with, ms

usage: python3 -m calibrate.validate.kernel_classes RUN_DIR [RUN_DIR ...]
       [--tilewave build/analyzer/tilewave] [--gpu h200] [--by harness|batch|none]
       [--families fit|held_out|all] [--networks-of CLASS]
       python3 -m calibrate.validate.kernel_classes RUN_DIR --forward MODEL:PRECISION:LAYOUT:BATCH [--nodes TEXT]
       python3 -m calibrate.validate.kernel_classes RUN_DIR --op-of MODEL[,MODEL...]:OP [--named TEXT]
--networks-of CLASS adds the ten networks with the most measured time of that class left unpaired, with
their measured and predicted time of the class: whether a class's "missing" is one network or many.
--forward prints one profiled forward's pairs in launch order instead of the sums: each predicted kernel
(node, op, µs) beside the measured kernel paired with it (class, µs), and each kernel of either side that
nothing paired; --nodes keeps the pairs from the first to the last predicted kernel whose node name holds
TEXT (one block of a network, say), with the unpaired kernels between them.
--op-of sums, per profiled forward of the networks named, the kernels predicted for one ONNX op (Resize,
say) and the measured kernels paired with them, beside the forward's whole kernel time; --named adds the
measured kernels whose name holds TEXT (`upsample`, say), found by name wherever the alignment paired them:
where the runtime launches the op's kernels in another order than the prediction (a cast before each), the
pairs mix them with their neighbours, and only the named sum says how well the op's own kernel is costed.
ONNX files: onnx_models/runtime/ for onnx_models/zoo.py's networks, else
onnx_models/timm_results/timm_results_onnx.tar.xz (the corpus of
calibrate/data/h200/corpus/networks.json at its input size; another timm
network by its one export there), unpacked to a temporary folder.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import sys
import tarfile
import tempfile

from calibrate import harness_flags, jsonl
from calibrate.cli import InputError, add_tilewave_option, print_lines
from calibrate.module import tilewave_module

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ARCHIVE = os.path.join(ROOT, "onnx_models", "timm_results", "timm_results_onnx.tar.xz")
CORPUS = os.path.join(ROOT, "calibrate", "data", "h200", "corpus", "networks.json")




def kernel_rows(folder):
    """The profiled forwards (kernels.jsonl or .jsonl.gz rows) of a run.py folder."""
    for name in ("kernels.jsonl", "kernels.jsonl.gz"):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            try:
                rows = jsonl.read(path)
            except (OSError, ValueError, EOFError, UnicodeDecodeError) as e:
                raise InputError("%s: not a JSON-lines file (%s)" % (path, e))
            for i, r in enumerate(rows, 1):
                if not (isinstance(r, dict) and isinstance(r.get("model"), str) and isinstance(r.get("list"), list)
                        and isinstance(r.get("batch"), int) and (r.get("precision", "amp_fp16"), r.get("layout"))
                        in harness_flags.CONFIGURATIONS):
                    raise InputError("%s: row %d is not a profiled forward of run.py (model, layout, batch, "
                                     "precision, list)" % (path, i))
            return rows
    raise InputError("%s: no kernels.jsonl or kernels.jsonl.gz (is it a calibrate/measure/run.py folder?)" % folder)


def corpus_sizes():
    """{name: img_size} of the corpus file's networks (their exports in the timm_results archive)."""
    if not os.path.isfile(CORPUS):
        return {}
    return {n["name"]: n["img_size"] for n in json.load(open(CORPUS))["networks"]}


def onnx_files(models, tmp):
    """{model: ONNX path}: onnx_models/runtime/ first, else the archive's export, unpacked into tmp in one pass."""
    found, wanted = {}, {}
    sizes = corpus_sizes()
    for m in models:
        runtime = os.path.join(ROOT, "onnx_models", "runtime", m.replace("/", "_") + ".onnx")
        if os.path.isfile(runtime):
            found[m] = runtime
        elif m in sizes:
            wanted[m] = "legacy/%s-%d.onnx" % (m.split("/", 1)[-1], sizes[m])
        else:  # a network measured beside the corpus: the archive's one export of it, at whatever input size
            wanted[m] = re.compile(r"legacy/%s-\d+\.onnx" % re.escape(m.split("/", 1)[-1]))
    if wanted:  # Python's own xz reader, as the other validations read the archive
        members = {w for w in wanted.values() if isinstance(w, str)}
        patterns = {m: w for m, w in wanted.items() if not isinstance(w, str)}
        try:
            with tarfile.open(ARCHIVE, "r:xz") as t:
                for info in t:
                    for m, pattern in list(patterns.items()):
                        if pattern.fullmatch(info.name):
                            wanted[m] = info.name
                            members.add(info.name)
                            del patterns[m]
                    if info.name in members and info.isfile():
                        with open(os.path.join(tmp, os.path.basename(info.name)), "wb") as out:
                            out.write(t.extractfile(info).read())
                        members.discard(info.name)
                        if not members and not patterns:
                            break
        except (OSError, tarfile.TarError, EOFError) as e:
            raise InputError("%s: %s" % (os.path.relpath(ARCHIVE, ROOT), e))
        if patterns:
            raise InputError("%s: no ONNX file (neither onnx_models/runtime/ nor the archive has one)" % min(patterns))
        if members:
            raise InputError("%s: no %s" % (os.path.relpath(ARCHIVE, ROOT), ", ".join(sorted(members))))
        found.update({m: os.path.join(tmp, os.path.basename(member)) for m, member in wanted.items()})
    return found


def checks(tilewave, rows, onnx, gpu, tmp):
    """(results, failed): (row, check result) per profiled forward, by the in-process module's check()
    (`tilewave check --format json`'s library step, without a process and a JSON text per forward), and
    (model, batch, error) per forward tilewave cannot analyse, left out and counted."""
    module = tilewave_module(tilewave)

    def one(i):
        r = rows[i]
        trace = os.path.join(tmp, "forward%d.json" % i)
        with open(trace, "w") as f:
            json.dump({"list": r["list"]}, f)
        try:  # the module releases the GIL while it analyses and pairs, so the threads share the cores
            return r, module.check(onnx[r["model"]], trace, batch=r["batch"], gpu=gpu,
                                   **harness_flags.timm_row(r)), None
        except module.InputError as e:
            # named by the file's name, not the temporary folder's path, so that the doc's figure repeats
            error = str(e).replace(onnx[r["model"]], os.path.basename(onnx[r["model"]]))
            return r, None, (r["model"], r["batch"], error)
        finally:
            os.remove(trace)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(one, range(len(rows))))
    return [(r, c) for r, c, _ in results if c is not None], [e for _, _, e in results if e]


def paired_layers(tilewave, rows, onnx, gpu, tmp, keep):
    """([keep(row, pair, layer)] where not None, failed): every check() pair of every forward beside the
    predicted kernel's layer in the module's analyze() of the same forward (joined by name, in order; None
    for a pair without a predicted kernel), for fits that need the predicted problem, not only its time."""
    module = tilewave_module(tilewave)
    results, failed = checks(tilewave, rows, onnx, gpu, tmp)

    def one(result):
        r, check = result
        analysis = module.analyze(onnx[r["model"]], batch=r["batch"], gpu=gpu, **harness_flags.timm_row(r))
        layers = collections.defaultdict(collections.deque)
        for k in analysis["layers"]:
            layers[k["name"]].append(k)
        kept = []
        for p in check["pairs"]:
            k = layers[p["predicted"]].popleft() if p.get("predicted") and layers.get(p["predicted"]) else None
            x = keep(r, p, k)
            if x is not None:
                kept.append(x)
        return kept
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # analyze releases the GIL
        return [x for xs in pool.map(one, results) for x in xs], failed


def table(results, group):
    """{group key: {class: sums}} and {group key: total measured us}."""
    sums = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    totals = collections.Counter()
    for r, c in results:
        key = group(r)
        totals[key] += c["measured_kernel_us"]
        for row in c["by_class"]:
            s = sums[key][row["class"]]
            for field in ("measured", "measured_us", "predicted_us", "paired_measured_us", "paired_predicted_us",
                          "same_class_measured_us", "same_class_predicted_us", "missing_us", "extra_us"):
                s[field] += row[field]
    return sums, totals


def lines_of(results, failed, group_name="harness"):
    groups = {"harness": lambda r: harness_flags.CONFIGURATIONS[(r.get("precision", "amp_fp16"), r["layout"])],
              "batch": lambda r: "batch %d" % r["batch"], "none": lambda r: "all forwards"}
    sums, totals = table(results, groups[group_name])
    out = ["%d profiled forwards of %d networks paired by `tilewave check`%s" % (
        len(results), len({r["model"] for r, _ in results}),
        "; %d left out (tilewave could not analyse them)" % len(failed) if failed else "")]
    for key in sorted(sums):
        out += ["", "%s (%.1f ms of measured kernel time):" % (key, totals[key] / 1e3), "",
                "| class | share | measured, ms (kernels) | predicted, ms | paired err | same class | missing | extra, ms |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for cls, s in sorted(sums[key].items(), key=lambda kv: (-kv[1]["measured_us"], -kv[1]["predicted_us"])):
            def err(prefix):
                return ("%+.0f%%" % (100 * (s[prefix + "_predicted_us"] / s[prefix + "_measured_us"] - 1))
                        if s[prefix + "_measured_us"] > 0 else "-")
            missing = "%.0f%%" % (100 * s["missing_us"] / s["measured_us"]) if s["measured_us"] > 0 else "-"
            out.append("| %s | %.1f%% | %.1f (%d) | %.1f | %s | %s | %s | %.1f |" % (
                cls, 100 * s["measured_us"] / totals[key] if totals[key] else 0, s["measured_us"] / 1e3,
                s["measured"], s["predicted_us"] / 1e3, err("paired"), err("same_class"), missing, s["extra_us"] / 1e3))
    return out


def unpaired_lines(results, cls, top=10):
    """The `top` networks by measured time of class `cls` that no predicted kernel paired with, summed over
    their forwards, beside their measured and predicted time of the class; InputError for a class no forward
    has."""
    sums, _ = table(results, lambda r: r["model"])
    by_model = {model: classes[cls] for model, classes in sums.items() if cls in classes}
    if not by_model:  # a misspelt class is an error, not a table of zeros
        raise InputError("--networks-of: no forward has a kernel of class %r (classes here: %s)" % (
            cls[:40], ", ".join(sorted({c for classes in sums.values() for c in classes}))))
    total = sum(s["missing_us"] for s in by_model.values())
    out = ["", "%s: %.1f ms measured with no predicted kernel paired, by network:" % (cls, total / 1e3), "",
           "| network | unpaired, ms | share of it | measured, ms | predicted, ms |", "| --- | ---: | ---: | ---: | ---: |"]
    for model, s in sorted(by_model.items(), key=lambda kv: -kv[1]["missing_us"])[:top]:
        out.append("| %s | %.1f | %.1f%% | %.1f | %.1f |" % (
            model, s["missing_us"] / 1e3, 100 * s["missing_us"] / total if total else 0, s["measured_us"] / 1e3,
            s["predicted_us"] / 1e3))
    return out


def left_out_lines(failed):
    """One line per network and error tilewave could not analyse, with how many forwards that left out."""
    counts = collections.Counter((model, error) for model, _, error in failed)
    return ["  left out (%d forwards): %s: %s" % (n, model, error) for (model, error), n in counts.items()]


def in_families(rows, which):
    """The rows of the corpus's fit or held-out families (zoo networks: onnx_models/zoo.py's runtime split)."""
    if which == "all":
        return rows
    split = {n["name"]: n["split"] for n in json.load(open(CORPUS))["networks"]} if os.path.isfile(CORPUS) else {}
    from calibrate.pair.harness_runs import zoo_split
    fit, held = zoo_split()
    for m in fit:
        split.setdefault(m, "fit")
    for m in held:
        split.setdefault(m, "held_out")
    return [r for r in rows if split.get(r["model"]) == which]


def classes(tilewave, folders, gpu="h200", families="all"):
    """(results, failed) over the folders' profiled forwards (see the module doc)."""
    rows = [r for folder in folders for r in kernel_rows(folder)]
    rows = in_families(rows, families)
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        return checks(tilewave, rows, onnx, gpu, tmp)


def forward_key(spec):
    """(model, precision, layout, batch) of --forward's MODEL:PRECISION:LAYOUT:BATCH."""
    parts = spec.rsplit(":", 3)
    if len(parts) != 4 or not parts[3].isdigit() or (parts[1], parts[2]) not in harness_flags.CONFIGURATIONS:
        raise InputError("--forward %r: not MODEL:PRECISION:LAYOUT:BATCH with PRECISION:LAYOUT one of %s" % (
            spec[:80], ", ".join("%s:%s" % k for k in sorted(harness_flags.CONFIGURATIONS))))
    return parts[0], parts[1], parts[2], int(parts[3])


def forward_lines(tilewave, folder, spec, gpu, nodes=None):
    """The --forward table: one forward's check() pairs in launch order (the module doc)."""
    key = forward_key(spec)
    rows = [r for r in kernel_rows(folder)
            if (r["model"], r.get("precision", "amp_fp16"), r["layout"], r["batch"]) == key]
    if not rows:
        raise InputError("%s: no profiled forward %s" % (folder, ":".join(map(str, key))))
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files([key[0]], tmp)
        results, failed = checks(tilewave, rows[:1], onnx, gpu, tmp)
    if failed:
        raise InputError("%s: %s" % failed[0][::2])
    check = results[0][1]
    pairs = check["pairs"]
    if nodes:
        hit = [i for i, p in enumerate(pairs) if nodes in (p.get("predicted") or "")]
        if not hit:
            raise InputError("--nodes %r: no predicted kernel of %s has it in its node name" % (nodes[:80], key[0]))
        pairs = pairs[hit[0]:hit[-1] + 1]
    out = ["%s, %s %s batch %d on %s: %d of %d pairs%s (measured %.1f ms, predicted %.1f ms of kernel time in all)" % (
        key[0], key[1], key[2], key[3], gpu, len(pairs), len(check["pairs"]),
        ", from the first to the last kernel of a node holding `%s`" % nodes if nodes else "",
        check["measured_kernel_us"] / 1e3, check["predicted_kernel_us"] / 1e3), "",
        "| predicted kernel (node) | op | predicted, µs | measured class | measured, µs |",
        "| --- | --- | ---: | --- | ---: |"]
    for p in pairs:
        ran = "measured_class" in p
        out.append("| %s | %s | %s | %s | %s |" % (
            p.get("predicted") or "(nothing predicted)", p.get("predicted_op") or "",
            "%.1f" % p["predicted_us"] if p.get("predicted") else "", p["measured_class"] if ran else "(none ran)",
            "%.1f" % p["measured_us"] if ran else ""))
    ran = [p for p in pairs if "measured_class" in p]
    return out + ["", "These pairs: measured %.1f µs, predicted %.1f µs; measured with nothing predicted %.1f µs." % (
        sum(p["measured_us"] for p in ran), sum(p["predicted_us"] for p in pairs if p.get("predicted")),
        sum(p["measured_us"] for p in ran if not p.get("predicted")))]


def op_lines(tilewave, folder, spec, gpu, named=None):
    """The --op-of table: per profiled forward of the networks (MODEL[,MODEL...]:OP), their kernels predicted
    for one ONNX op beside the measured kernels paired with them, and the forward's kernel time; with `named`,
    also the measured kernels whose name holds it."""
    names, _, op = spec.rpartition(":")
    models = [m for m in names.split(",") if m]
    rows = sorted((r for r in kernel_rows(folder) if r["model"] in models),
                  key=lambda r: (models.index(r["model"]), r.get("precision", "amp_fp16"), r["layout"], r["batch"]))
    missing = [m for m in models if not any(r["model"] == m for r in rows)]
    if not models or not op or missing:
        raise InputError("%s: no profiled forward of %r (--op-of MODEL[,MODEL...]:OP)" % (folder, (missing or [spec])[0]))
    with tempfile.TemporaryDirectory() as tmp:
        results, failed = checks(tilewave, rows, onnx_files(models, tmp), gpu, tmp)
    out = ["%s kernels on %s: each forward's predicted kernels of the op, the measured kernels paired with them, "
           "%sand all its kernel time" % (op, gpu, "the measured kernels named `%s`, " % named if named else ""), "",
           "| network | precision | layout | batch | kernels | predicted, ms | measured, ms | ratio | "
           + ("named: kernels | measured, ms | ratio | " if named else "")
           + "forward: predicted, ms | measured, ms | ratio |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | " + ("---: | ---: | ---: | " if named else "")
           + "---: | ---: | ---: |"]

    def ratio(predicted, measured):
        return "%.2f" % (predicted / measured) if measured > 0 else "–"

    for r, check in results:
        mine = [p for p in check["pairs"] if p.get("predicted_op") == op]
        predicted = sum(p["predicted_us"] for p in mine) / 1e3
        measured = sum(p.get("measured_us", 0.0) for p in mine) / 1e3
        by_name = [us for name, us in r["list"] if named in name] if named else []
        named_cells = "%d | %.2f | %s | " % (len(by_name), sum(by_name) / 1e3,
                                             ratio(predicted, sum(by_name) / 1e3)) if named else ""
        out.append("| `%s` | %s | %s | %d | %d | %.2f | %.2f | %s | %s%.1f | %.1f | %.2f |" % (
            r["model"], r.get("precision", "amp_fp16"), r["layout"], r["batch"], len(mine), predicted, measured,
            ratio(predicted, measured), named_cells, check["predicted_kernel_us"] / 1e3,
            check["measured_kernel_us"] / 1e3, check["predicted_kernel_us"] / check["measured_kernel_us"]))
    return out + left_out_lines(failed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dirs", nargs="+", help="calibrate/measure/run.py folders")
    add_tilewave_option(ap, os.path.join("build", "analyzer", "tilewave"))
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--by", default="harness", choices=("harness", "batch", "none"))
    ap.add_argument("--families", default="all", choices=("fit", "held_out", "all"))
    ap.add_argument("--networks-of", metavar="CLASS",
                    help="also the ten networks with the most unpaired measured time of this class")
    ap.add_argument("--forward", metavar="MODEL:PRECISION:LAYOUT:BATCH",
                    help="instead, one profiled forward's pairs in launch order (of the one RUN_DIR)")
    ap.add_argument("--nodes", metavar="TEXT", help="with --forward: the pairs from the first to the last "
                    "predicted kernel whose node name holds TEXT")
    ap.add_argument("--op-of", metavar="MODEL[,MODEL...]:OP", help="instead, per profiled forward of the "
                    "networks (of the one RUN_DIR), the kernels predicted for ONNX op OP beside the measured ones "
                    "paired with them")
    ap.add_argument("--named", metavar="TEXT", help="with --op-of: also the measured kernels whose name holds TEXT, "
                    "whatever they paired with")
    a = ap.parse_args()
    if a.named is not None and (not a.op_of or not a.named):
        ap.error("--named needs --op-of and a non-empty TEXT")
    if a.op_of:
        if len(a.run_dirs) != 1:
            ap.error("--op-of reads one RUN_DIR")
        return print_lines("kernel_classes.py", lambda: op_lines(a.tilewave, a.run_dirs[0], a.op_of, a.gpu, a.named))
    if a.nodes and not a.forward:
        ap.error("--nodes needs --forward")
    if a.forward and len(a.run_dirs) != 1:
        ap.error("--forward reads one RUN_DIR")
    if a.forward:
        return print_lines("kernel_classes.py", lambda: forward_lines(a.tilewave, a.run_dirs[0], a.forward, a.gpu,
                                                                     a.nodes))

    def make_lines():
        results, failed = classes(a.tilewave, a.run_dirs, a.gpu, a.families)
        return (lines_of(results, failed, a.by) + (unpaired_lines(results, a.networks_of) if a.networks_of else [])
                + left_out_lines(failed))
    return print_lines("kernel_classes.py", make_lines)


if __name__ == "__main__":
    sys.exit(main())
