#!/usr/bin/env python3
"""The H200 network corpus (issue 31, item 1): which timm networks to measure, fixed before any is.

Reads onnx_models/timm_results/ (models.csv, manifest.jsonl, failures.jsonl), onnx_models/zoo.py (through
run.py's zoo_sets(), without torch) and the "model" fields of every JSON-lines file already under
calibrate/data/h200/ (outside corpus/), and writes calibrate/data/h200/corpus/networks.json:

  pool      each timm model at its default input size (the manifest's `default_input_size`, the
            pretrained_cfg size timm.create_model(name) builds and timm_harness_bench.build_network runs
            at) whose ONNX file exists there, so the model can be predicted. Left out: models with no
            exported file at that size, timm's test_* toy models, every network the project has already
            measured on the H200 (zoo.py's sets and the measured files; "timm/x" and "x" are one name),
            and models above GMACS_CAP GMACs at their size (too slow at batch 256 for the budget).
  corpus    a family-stratified sample: per group (cnn; vit and hybrid together), families in a seeded
            order, one network per family round-robin (members in a seeded order), until CORPUS[group]
            networks; a family's second member only after every family has one, and so on.
  split     whole families: about 1/3 of each kind's corpus families (seeded) are held_out, the rest fit;
            no family is in both, and each kind is in both.
  fresh     FRESH[group] more networks, the continuation of the same round-robin: not measured until the
            model is frozen (run.py --networks corpus-fresh). Their families may be corpus families.

"Seeded" orders are sha256("<seed>/<what>/<name>") orders, not a shuffled list: a model leaving the pool
moves no other model in its family's order and no family in the family order, so a newly measured network
that was never drawn leaves the corpus as it was. Measurement order (the file's order): each group's
round-robin order, the two groups merged in proportion (about 5 cnn to 2 vit/hybrid), corpus first, then
fresh; so a partly measured corpus is still a sample across families and kinds.

Measurements of the corpus itself go under calibrate/data/h200/corpus/ and are not read here, so the file
stays what it is; --check fails if a corpus or fresh network shows up as measured anywhere else.

usage: python3 -m calibrate.measure.corpus [-o calibrate/data/h200/corpus/networks.json] [--seed N] [--check]
Exit codes: 0 written (or --check: the file matches), 1 an input or the file is wrong (one line naming
it), 2 bad usage.
"""
import argparse
import collections
import csv
import glob
import hashlib
import json
import os
import sys

if __name__ == "__main__" and not __package__:  # run as a path (calibrate/measure/_path_entry.py)
    import _path_entry
    _path_entry.run_as_module(__file__)
    sys.exit()

from calibrate import jsonl  # noqa: E402  (after the path entry above)
from calibrate.cli import InputError  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SEED = 0
GMACS_CAP = 25.0
CORPUS = {"cnn": 150, "vit_hybrid": 60}
FRESH = {"cnn": 34, "vit_hybrid": 14}
HELD_OUT_SHARE = 1 / 3
TIMM_RESULTS = os.path.join("onnx_models", "timm_results")
MODELS_CSV = os.path.join(TIMM_RESULTS, "models.csv")
MANIFEST = os.path.join(TIMM_RESULTS, "manifest.jsonl")
FAILURES = os.path.join(TIMM_RESULTS, "failures.jsonl")
ZOO = os.path.join("onnx_models", "zoo.py")
MEASURED_DIR = os.path.join("calibrate", "data", "h200")
CORPUS_DIR = os.path.join(MEASURED_DIR, "corpus")
DEFAULT_OUT = os.path.join(CORPUS_DIR, "networks.json")
MEASURED_GLOBS = ("*.jsonl", "*.jsonl.gz")
KINDS = ("cnn", "hybrid", "vit")
SPLITS = ("fit", "held_out", "fresh")

RULES = ("pool: timm models at their default input size (manifest default_input_size) with an exported ONNX file "
         "(manifest status ok, not in failures.jsonl); out: timm's test_* models, every name in onnx_models/zoo.py's "
         "sets and every \"model\" of calibrate/data/h200/**/*.jsonl[.gz] outside corpus/ ('timm/x' = 'x'), "
         "gmacs above %g. corpus: per group (cnn: %d; vit+hybrid: %d), families in sha256(seed/family/name) order, "
         "one member per family round-robin (members in sha256(seed/model/name) order). split: whole families, "
         "round(1/3) of each kind's corpus families held_out (sha256(seed/split/name) order), the rest fit. fresh: "
         "the next %d cnn and %d vit+hybrid of the same round-robin, measured only after the model is frozen. "
         "order: each group's round-robin order, groups merged in proportion, corpus then fresh."
         % (GMACS_CAP, CORPUS["cnn"], CORPUS["vit_hybrid"], FRESH["cnn"], FRESH["vit_hybrid"]))




def rel(path):
    """A path as the repository names it; one outside the repository as given."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(os.path.abspath(ROOT) + os.sep) else path


def group_of(kind):
    return "cnn" if kind == "cnn" else "vit_hybrid"


def seeded_key(seed, what, name):
    return hashlib.sha256(("%d/%s/%s" % (seed, what, name)).encode()).hexdigest()


def bare(name):
    """A network name as the timm model it is: "timm/x" and "x" are the same name."""
    return name[len("timm/"):] if name.startswith("timm/") else name


# ------------------------------------------------------------------ inputs

def read_json_lines(path):
    """Rows of a JSON-lines file, gzipped or not. A last line without its newline (a killed writer cut it
    off) is left out, as run.py's read_jsonl leaves it."""
    try:
        return jsonl.read(os.path.join(ROOT, path), cut_tail=True)
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise InputError("%s: cannot read it (%s)" % (path, e))
    except ValueError as e:
        raise InputError(str(e).replace(ROOT + os.sep, ""))


def read_models_csv(path):
    """models.csv: {(model, img_size): row}."""
    try:
        with open(os.path.join(ROOT, path), newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in ("model", "img_size", "family", "kind", "param_count_m", "gmacs")
                       if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError("%s: no column %s" % (path, ", ".join(missing)))
            rows = {}
            for n, r in enumerate(reader, 2):
                try:
                    key = (r["model"], int(r["img_size"]))
                    r["gmacs"] = float(r["gmacs"]) if r["gmacs"] else None
                    r["param_count_m"] = float(r["param_count_m"]) if r["param_count_m"] else None
                except ValueError:
                    raise InputError("%s:%d: img_size, gmacs or param_count_m is not a number" % (path, n))
                if r["kind"] not in KINDS:
                    raise InputError("%s:%d: kind '%s' is none of %s" % (path, n, r["kind"], ", ".join(KINDS)))
                rows[key] = r
            return rows
    except OSError as e:
        raise InputError("%s: cannot read it (%s)" % (path, e.strerror or e))


def default_rows(manifest, failures, models):
    """Each model's manifest row at its default input size, and the models with none (why).

    The default size is the manifest's `default_input_size` (timm's pretrained_cfg["input_size"], what
    timm.create_model(name) builds and what the harness runs at; it is square for every row). One model has
    no such field (swinv2_cr_giant_384, a timeout): for such a model the README's rule stands that a model's
    name ends in its pretrained configuration's size where it has one, so the row whose size ends the name
    is taken, else the model's only row; a model with neither has no default row."""
    failed = {(r.get("model"), r.get("img_size")) for r in failures}
    by_model = collections.OrderedDict()
    for n, r in enumerate(manifest, 1):
        if "model" not in r or "img_size" not in r:
            raise InputError("%s:%d: no model or img_size" % (MANIFEST, n))
        if (r["model"], r["img_size"]) not in models:
            raise InputError("%s:%d: %s at %s is not a row of %s" % (MANIFEST, n, r["model"], r["img_size"],
                                                                      MODELS_CSV))
        by_model.setdefault(r["model"], []).append(r)
    rows, left_out = {}, collections.Counter()
    for name, group in by_model.items():
        size = next((r["default_input_size"][-1] for r in group if r.get("default_input_size")), None)
        if size is not None:
            match = [r for r in group if r["img_size"] == size]
        else:
            match = [r for r in group if name.endswith("_%d" % r["img_size"])] or (group if len(group) == 1 else [])
        if not match:
            left_out["no row at the default size"] += 1
            continue
        row = match[0]
        if row.get("status") != "ok" or not row.get("file") or (name, row["img_size"]) in failed:
            left_out["no exported file at the default size"] += 1
            continue
        rows[name] = row
    return rows, left_out


def measured_files():
    """Every JSON-lines file under calibrate/data/h200/ except the corpus's own folder, sorted."""
    found = set()
    for pattern in MEASURED_GLOBS:
        found.update(glob.glob(os.path.join(ROOT, MEASURED_DIR, "**", pattern), recursive=True))
    corpus = os.path.join(ROOT, CORPUS_DIR) + os.sep
    return sorted(rel(p) for p in found if not p.startswith(corpus))


def measured_names():
    """{bare name: first file naming it} over the "model" fields of the measured files."""
    names = {}
    for path in measured_files():
        for r in read_json_lines(path):
            if isinstance(r, dict) and isinstance(r.get("model"), str):
                names.setdefault(bare(r["model"]), path)
    return names


def zoo_names():
    from calibrate.measure import run   # its zoo_sets() reads zoo.py without torch
    try:
        sets = run.zoo_sets()
    except (OSError, SyntaxError) as e:
        raise InputError("%s: cannot read it (%s)" % (ZOO, e))
    names = set(sets.ALL)
    for members in sets.RUNTIME_FAMILIES.values():
        names.update(members)
    for members in sets.VALIDATION_SETS.values():
        names.update(members)
    return {bare(n) for n in names}


# ------------------------------------------------------------------ the draw

def round_robin(members_by_family, seed):
    """Families in seeded order, one member each per round, members in seeded order."""
    families = sorted(members_by_family, key=lambda f: seeded_key(seed, "family", f))
    members = {f: sorted(members_by_family[f], key=lambda m: seeded_key(seed, "model", m)) for f in families}
    return [members[f][i] for i in range(max(map(len, members.values()), default=0)) for f in families
            if i < len(members[f])]


def merge_in_proportion(lists):
    """The lists interleaved so that every prefix holds each in about its share."""
    keyed = [((i + 0.5) / len(items), g, item) for g, items in enumerate(lists) for i, item in enumerate(items)]
    return [item for _, _, item in sorted(keyed, key=lambda k: (k[0], k[1]))]


def draw(pool, seed):
    """(corpus names in measurement order, fresh names in order, held-out families)."""
    by_group = collections.defaultdict(lambda: collections.defaultdict(list))
    for name, e in pool.items():
        by_group[group_of(e["kind"])][e["family"]].append(name)
    corpus, fresh = [], []
    for group in ("cnn", "vit_hybrid"):
        order = round_robin(by_group[group], seed)
        need = CORPUS[group] + FRESH[group]
        if len(order) < need:
            raise InputError("%s: only %d %s networks are left in the pool, %d needed" % (
                MODELS_CSV, len(order), group.replace("_", "/"), need))
        corpus.append(order[:CORPUS[group]])
        fresh.append(order[CORPUS[group]:need])
    held = set()
    for kind in KINDS:
        families = sorted({pool[n]["family"] for names in corpus for n in names if pool[n]["kind"] == kind},
                          key=lambda f: seeded_key(seed, "split", f))
        held.update(families[:round(len(families) * HELD_OUT_SHARE)])
    return merge_in_proportion(corpus), merge_in_proportion(fresh), held


def compute(seed):
    """(networks.json's object, summary lines to print)."""
    models = read_models_csv(MODELS_CSV)
    manifest = read_json_lines(MANIFEST)
    failures = read_json_lines(FAILURES)
    rows, left_out = default_rows(manifest, failures, models)
    zoo = zoo_names()
    measured = measured_names()
    pool, out = {}, collections.Counter()
    for name, r in sorted(rows.items()):
        c = models[(name, r["img_size"])]
        if c["family"].startswith("test_"):
            out["timm test_* models"] += 1
        elif name in zoo or name in measured:
            out["already measured on the H200 (zoo.py sets, measured files)"] += 1
        elif c["gmacs"] is None or c["gmacs"] > GMACS_CAP:
            out["above %g GMACs (or none given) at their size" % GMACS_CAP] += 1
        else:
            pool[name] = {"family": c["family"], "kind": c["kind"], "gmacs": c["gmacs"], "img_size": r["img_size"],
                          "param_count_m": c["param_count_m"]}
    corpus, fresh, held = draw(pool, seed)
    networks = []
    for name in corpus + fresh:
        e = pool[name]
        split = "fresh" if name in fresh else "held_out" if e["family"] in held else "fit"
        networks.append({"name": "timm/" + name, "family": e["family"], "kind": e["kind"], "gmacs": e["gmacs"],
                         "param_count_m": e["param_count_m"], "img_size": e["img_size"], "split": split})
    counts = {s: {k: sum(1 for n in networks if n["split"] == s and n["kind"] == k) for k in KINDS} for s in SPLITS}
    families = {s: len({n["family"] for n in networks if n["split"] == s}) for s in SPLITS}
    obj = collections.OrderedDict([
        ("seed", seed),
        ("source", [MODELS_CSV, MANIFEST, FAILURES, ZOO,
                    os.path.join(MEASURED_DIR, "**", "*.jsonl[.gz]") + " (\"model\" fields; not corpus/)"]),
        ("rules", RULES),
        ("counts", collections.OrderedDict((s, dict(counts[s], all=sum(counts[s].values()), families=families[s]))
                                           for s in SPLITS)),
        ("networks", networks)])
    lines = ["corpus.py: %d models in %s, %d with an exported file at their default size (%s)" % (
        len({m for m, _ in models}), MODELS_CSV, len(rows), ", ".join("%d %s" % (v, k) for k, v in
                                                                      sorted(left_out.items())) or "none left out"),
             "left out: %s; pool %d (%s) in %d families" % (
                 ", ".join("%d %s" % (v, k) for k, v in sorted(out.items())), len(pool),
                 ", ".join("%d %s" % (sum(1 for e in pool.values() if e["kind"] == k), k) for k in KINDS),
                 len({e["family"] for e in pool.values()})),
             "%-9s %5s %7s %5s %5s %9s" % ("split", "cnn", "hybrid", "vit", "all", "families")]
    for s in SPLITS:
        c = obj["counts"][s]
        lines.append("%-9s %5d %7d %5d %5d %9d" % (s, c["cnn"], c["hybrid"], c["vit"], c["all"], c["families"]))
    return obj, lines


def render(obj):
    """networks.json's text: one network a line, so a change reads as a diff of lines."""
    head = ",\n".join(" %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in obj.items() if k != "networks")
    nets = ",\n".join("  " + json.dumps(n) for n in obj["networks"])
    return "{\n%s,\n \"networks\": [\n%s\n ]\n}\n" % (head, nets)


# ------------------------------------------------------------------ command line

class Parser(argparse.ArgumentParser):
    def error(self, message):   # one line, exit 2
        print("corpus.py: error: %s (see --help)" % message, file=sys.stderr)
        sys.exit(2)


def check(path, text, seed):
    """None if the file at path is text, else one line saying how it differs."""
    try:
        with open(path) as f:
            old = f.read()
    except OSError as e:
        return "%s: cannot read it (%s)" % (rel(path), e.strerror or e)
    if old == text:
        return None
    try:
        committed = json.loads(old)
        was = {n["name"]: n.get("split") for n in committed["networks"]}
    except (ValueError, KeyError, TypeError):
        return "%s: not a networks.json (run corpus.py without --check to rewrite it)" % rel(path)
    now = {n["name"]: n["split"] for n in json.loads(text)["networks"]}
    gone = [n for n in was if n not in now]
    hint = ""
    if committed.get("seed") != seed:
        hint = "; it was made with --seed %s" % committed.get("seed")
    elif gone:
        hint = "; %d of its networks are no longer drawn (first: %s; measured elsewhere?)" % (len(gone), gone[0])
    changed = sum(1 for n in was if n in now and now[n] != was[n])
    return "%s differs from a fresh computation (%d networks gone, %d new, %d with another split%s)" % (
        rel(path), len(gone), sum(1 for n in now if n not in was), changed, hint)


def main(argv=None):
    ap = Parser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("-o", "--out", default=DEFAULT_OUT, help="the file to write (default %s)" % DEFAULT_OUT)
    ap.add_argument("--seed", type=int, help="seed of the draw (default %d; --check: the file's own seed)" % SEED)
    ap.add_argument("--check", action="store_true", help="recompute; exit 1 if the file differs, write nothing")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    path = args.out if os.path.isabs(args.out) else os.path.join(os.getcwd(), args.out)
    seed = args.seed
    if seed is None:
        seed = SEED
        if args.check:
            try:
                with open(path) as f:
                    seed = json.load(f).get("seed", SEED)
            except (OSError, ValueError, AttributeError):
                pass   # check() says what is wrong with the file
    try:
        obj, lines = compute(seed)
    except InputError as e:
        print("corpus.py: %s" % e, file=sys.stderr)
        return 1
    text = render(obj)
    if args.check:
        problem = check(path, text, seed)
        if problem:
            print("corpus.py: %s" % problem, file=sys.stderr)
            return 1
        print("corpus.py: %s matches (seed %d, %d networks)" % (rel(path), seed, len(obj["networks"])))
        return 0
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    except OSError as e:
        print("corpus.py: %s: cannot write it (%s)" % (args.out, e.strerror or e), file=sys.stderr)
        return 1
    print("\n".join(lines + ["wrote %s" % rel(path)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
