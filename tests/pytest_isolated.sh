#!/bin/sh
# Runs pytest with a --basetemp of its own under a fresh mktemp folder, removed afterwards.
# pytest sessions side by side (ctest -j) otherwise share /tmp/pytest-of-USER, and one
# session's clean-up can remove the numbered folder another is still using.
#   tests/pytest_isolated.sh PYTHON PYTEST_ARGS...
python=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/tilewave-pytest.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT INT TERM
"$python" -m pytest --basetemp="$dir/base" "$@"
