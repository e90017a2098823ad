#!/bin/sh
# `tilewave rank` over every bundled model (onnx_models/, 170 files) on one
# thread: the instructions callgrind counts, and the user CPU seconds of an
# uninstrumented run (best of 3). Instruction counts are the figure to
# compare: a shared machine's clock moves ±10% between identical runs.
# docs/performance.md "Ranking: totals only" reports its output.
# usage: tests/bench/rank_instructions.sh build/analyzer/tilewave [REPO]
set -eu
tw=$1
repo=${2:-.}
command -v valgrind >/dev/null || { echo "rank_instructions.sh: valgrind is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set -- rank "$repo/onnx_models" --threads 1 --format csv
rows=$("$tw" "$@" 2>/dev/null | grep -c '^[0-9]')
best=
for i in 1 2 3; do
  /usr/bin/time -f %U -o "$tmp/user" "$tw" "$@" >/dev/null 2>&1
  u=$(cat "$tmp/user")
  best=$(awk -v a="$best" -v b="$u" 'BEGIN{print (a == "" || b < a) ? b : a}')
done
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$tw" "$@" >/dev/null 2>"$tmp/cg.err"
ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/cg.err")
echo "tilewave rank onnx_models --threads 1 --format csv ($rows models ranked)"
echo "  instructions (callgrind)   $(echo "$ir" | sed ':a;s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/;ta')"
echo "  user CPU, best of 3        $best s"
