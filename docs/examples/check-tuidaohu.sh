#!/usr/bin/env bash
# Conformance from outside (issue 6): install the tutorial's example package
# docs/examples/qipai-tuidaohu the way a third party would — into a fresh,
# temporary virtual environment, next to qipai itself — and check it from
# the example's own folder: `qipai variants` lists it (and `qipai variants
# tuidaohu` explains its options), `qipai play` plays it,
# `qipai conformance tuidaohu` and `pytest --qipai-variant tuidaohu` pass.
# Then `qipai new-variant demo` writes a package that installs and is listed.
#
# The project's .venv, uv.lock and declared dependencies are not touched.
# Usage: docs/examples/check-tuidaohu.sh   (needs uv; any working directory)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
example="$root/docs/examples/qipai-tuidaohu"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PYTHONDONTWRITEBYTECODE=1 HYPOTHESIS_STORAGE_DIRECTORY="$work/hypothesis"

step() { printf '\n== %s\n' "$*"; }

step "a fresh environment with qipai and the example package"
uv venv --quiet --python ">=3.11" "$work/venv"
py="$work/venv/bin/python"
uv pip install --quiet --python "$py" -e "$root" -e "$example[test]"
bin="$work/venv/bin"

cd "$example"
step "qipai variants lists tuidaohu"
"$bin/qipai" variants | tee "$work/variants.txt"
grep -q "tuidaohu" "$work/variants.txt"

step "qipai variants tuidaohu explains its options"
"$bin/qipai" variants tuidaohu | tee "$work/options.txt"
grep -q "What each payer pays" "$work/options.txt"

step "qipai play tuidaohu"
"$bin/qipai" play tuidaohu --seed 7

step "qipai conformance tuidaohu"
"$bin/qipai" conformance tuidaohu

step "pytest --qipai-variant tuidaohu (from $example)"
"$bin/pytest" -q -p no:cacheprovider --qipai-variant tuidaohu

step "qipai new-variant demo: installs and is listed"
"$bin/qipai" new-variant demo --dir "$work"
uv pip install --quiet --python "$py" -e "$work/qipai-demo"
"$bin/qipai" variants > "$work/variants.txt"
grep -q "demo" "$work/variants.txt" || { cat "$work/variants.txt"; echo "demo not listed"; exit 1; }
"$bin/qipai" play demo --seed 1 > /dev/null
(cd "$work/qipai-demo" && "$bin/qipai" conformance demo && \
    "$bin/pytest" -q -p no:cacheprovider --qipai-variant demo)

step "outside conformance: all passed"
