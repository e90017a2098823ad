"""Figures of docs/nas.md that calibrate/validate/doc_figures.py reprints and checks: the ranking of the 450
measured search-space candidates, as committed before the measurement and under the model as it is now."""
from calibrate.validate import nas_rank  # (calibrate/validate/nas_rank.py)
from calibrate.validate.figures_common import FENCE

TARGET_TAU = 0.9  # issue 10: tau >= 0.9 in every space, runtime and batch


def ranking(runs, now):
    key = ("nas_rank", now)
    if key not in runs.cache:
        runs.cache[key] = nas_rank.cells(tilewave=runs.tw if now else None)
    return runs.cache[key]


def nas_rank_committed(runs):
    """docs/nas.md: `python3 -m calibrate.validate.nas_rank` (the predictions committed before the measurement)."""
    return [FENCE] + nas_rank.table_lines(*ranking(runs, False))[1:] + [FENCE]


def nas_rank_now(runs):
    """docs/nas.md: `python3 -m calibrate.validate.nas_rank --tilewave build/analyzer/tilewave`."""
    return [FENCE] + nas_rank.table_lines(*ranking(runs, True))[1:] + [FENCE]


def nas_rank_change(runs):
    """docs/nas.md: what the model as it is now changes against the committed record, cell by cell."""
    before = {(c["space"], c["runtime"], c["batch"]): c for c in ranking(runs, False)[1] if "tau" in c}
    now = {(c["space"], c["runtime"], c["batch"]): c for c in ranking(runs, True)[1] if "tau" in c}
    cells = [k for k in before if k in now]

    def meeting(table):
        return [k for k in cells if table[k]["tau"] >= TARGET_TAU]

    def named(keys, table):
        return "; ".join(f"{s} {r} batch {b}: {table[(s, r, b)]['tau']:.3f}" for s, r, b in keys) or "none"

    moved = [k for k in cells if abs(now[k]["tau"] - before[k]["tau"]) >= 0.0005]
    lines = [f"Tau \u2265 {TARGET_TAU} holds in {len(meeting(now))} of {len(cells)} cells now "
             f"({named(meeting(now), now)}), against {len(meeting(before))} in the committed record "
             f"({named(meeting(before), before)}); {len(moved)} cells' tau moved.", ""]
    lines.append("| space | runtime | batch | tau, committed \u2192 now | median error, committed \u2192 now |")
    lines.append("| --- | --- | ---: | --- | --- |")
    for k in moved:
        b, n = before[k], now[k]
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {b['tau']:.3f} \u2192 {n['tau']:.3f} | "
                     f"{100 * b['median_error']:.1f}% \u2192 {100 * n['median_error']:.1f}% |")
    return lines


FIGURES = {"nas-rank-committed": nas_rank_committed, "nas-rank-now": nas_rank_now, "nas-rank-change": nas_rank_change}
