#!/bin/sh
# The README's two Quick start commands, timed on a fresh clone of HEAD
# (docs/performance.md "Build and test times"). The packages must already be
# installed: the apt-get part of the first command is left out, so the time
# is the build and the first analysis, then the rest of the build and the
# default test run. Usage: tests/bench/first_commands.sh [REPO]
set -eu
repo=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/tilewave"
cd "$work/tilewave"
# The README's first two ```sh blocks after "## Quick start".
blocks=$(awk '/^## Quick start/{q=1} q&&/^```sh/{b++; inb=1; next} /^```/{inb=0; next} q&&inb&&b<=2{print b "\t" $0} b>2{exit}' README.md)
first=$(printf '%s\n' "$blocks" | awk -F'\t' '$1==1{print $2}' | sed 's/^.*apt-get install[^&]*&& //')
second=$(printf '%s\n' "$blocks" | awk -F'\t' '$1==2{print $2}')
echo "cores: $(nproc); commit $(git rev-parse --short HEAD)"
for step in first second; do
  eval "cmd=\$$step"
  echo "$step command: $cmd"
  start=$(date +%s)
  sh -c "$cmd" > "$work/$step.log" 2>&1 || { tail -20 "$work/$step.log"; echo "$step command failed"; exit 1; }
  end=$(date +%s)
  echo "$step command: $((end - start)) s"
done
grep -E "tests passed|tests failed|Total Test time" "$work/second.log" || true
