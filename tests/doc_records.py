#!/usr/bin/env python3
"""Every figure in the README and docs/ is either reprinted and checked or
pinned to the commit that printed it (issue 34: "every figure in docs/ is
reprinted and checked").

usage: tests/doc_records.py REPO_ROOT [FILE ...]

A figure is a number with a percent sign, a ratio sign (2.6×, not a shape
such as 3×3), a time or a rate unit, or a Kendall tau. A line holding one
must sit in one of:
- a checked block, `<!-- doc_figures.py NAME -->` … `<!-- /doc_figures.py -->`,
  which `python3 -m calibrate.validate.doc_figures --check` reprints (ctest
  `doc_figures`);
- a record, `<!-- record COMMIT: HOW -->` … `<!-- /record -->`: figures of
  the past, printed by the tree at COMMIT (a commit of this repository) by
  the command or data HOW names. A record is history: it is not reprinted,
  and the text around it must not present it as today's figure;
- a fenced block (commands and their output shown as examples).
A number after ≤, ≥, <, > or "at least"/"at most" is a threshold, and "80%
interval" names the interval; neither is a figure. A line that states a
setting, a datasheet fact or a threshold in other words ends with
`<!-- setting: WHY -->`.

Prints each unmarked figure line and each bad record as FILE:LINE: PROBLEM
and exits 1; exits 0 when every figure is checked or pinned.
"""
import glob
import os
import re
import subprocess
import sys

FIGURE = re.compile(
    r"(?<![\w.])[−-]?\d[\d,]*(?:\.\d+)?"
    r"(?:×(?!\s?\d)|\s?(?:%|(?:µs|us|ms|ns|GB/s|TB/s|TFLOP/s|TFLOPS|TOPS)(?![\w/])))"
    r"|\btau\s+(?:of\s+)?[−-]?\d\.\d+")
THRESHOLD = re.compile(r"(?:[≤≥<>]|at least|at most)\s*$")
NOT_FIGURE = re.compile(r"^\d+% (?:prediction )?interval")
SETTING = re.compile(r"<!-- setting: \S.*? -->\s*$")
OPEN = re.compile(r"^<!-- record (\S+): (.+?) -->$")
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


def figures(line):
    """The figures of one line: matches not preceded by a threshold word and not naming the interval."""
    out = []
    for m in FIGURE.finditer(line):
        if THRESHOLD.search(line[:m.start()]) or NOT_FIGURE.match(line[m.start():]):
            continue
        out.append(m.group(0))
    return out


def known_commit(root, commit):
    """True where git resolves the commit; None where the clone cannot say (no git, a shallow clone)."""
    try:
        shallow = subprocess.run(["git", "-C", root, "rev-parse", "--is-shallow-repository"],
                                 capture_output=True, text=True, timeout=30)
        if shallow.returncode != 0 or shallow.stdout.strip() == "true":
            return None
        r = subprocess.run(["git", "-C", root, "cat-file", "-e", commit + "^{commit}"],
                           capture_output=True, timeout=30)
        return r.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return None


def scan(root, path):
    """FILE:LINE problems of one doc."""
    problems, rel = [], os.path.relpath(path, root)
    state, opened = None, 0  # None, "block", "record", "fence"
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if state in (None, "fence") and line.startswith("```"):
                state = None if state == "fence" else "fence"
                continue
            if state == "fence":
                continue
            if line.startswith("<!-- doc_figures.py "):
                state, opened = "block", no
                continue
            if line.startswith("<!-- /doc_figures.py"):
                state = None
                continue
            if line.startswith("<!-- record"):
                m = OPEN.match(line)
                if state == "record":
                    problems.append(f"{rel}:{no}: a record opens inside the record of line {opened}")
                elif not m or not COMMIT.match(m.group(1)):
                    problems.append(f"{rel}:{no}: a record must open as '<!-- record COMMIT: HOW -->' "
                                    "with a commit's hex name and the command or data that printed it")
                elif known_commit(root, m.group(1)) is False:
                    problems.append(f"{rel}:{no}: record names commit {m.group(1)}, which this repository lacks")
                state, opened = "record", no
                continue
            if line.startswith("<!-- /record"):
                if state != "record":
                    problems.append(f"{rel}:{no}: a record closes that never opened")
                state = None
                continue
            if state in ("block", "record"):
                continue
            found = [] if SETTING.search(line) else figures(line)
            if found:
                problems.append(f"{rel}:{no}: figure {', '.join(found)} is neither checked nor recorded")
    if state in ("block", "record"):
        problems.append(f"{rel}:{opened}: {state} never closes")
    return problems


def main():
    if len(sys.argv) < 2:
        print("usage: tests/doc_records.py REPO_ROOT [FILE ...]", file=sys.stderr)
        return 2
    root = sys.argv[1]
    files = sys.argv[2:] or [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    problems = []
    for path in files:
        if not os.path.isfile(path):  # a directory or a FIFO: never opened (a FIFO would block)
            print(f"{path}: cannot read: not a regular file", file=sys.stderr)
            return 1
        try:
            problems += scan(root, path)
        except (OSError, UnicodeDecodeError) as e:
            print(f"{path}: cannot read: {e}", file=sys.stderr)
            return 1
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
