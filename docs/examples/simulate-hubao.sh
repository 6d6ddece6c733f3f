#!/usr/bin/env bash
# The example of docs/howto/simulate.md: 桂林麻将 with and without 互包,
# HANDS greedy hands of each ruleset (default 100000), seed 2024, two worker
# processes; then the report as text and as HTML, and the payments chart as
# a PNG, all in OUTDIR (default /tmp/qipai-hubao).
#
# The simulation is skipped when OUTDIR/guilin-hubao.parquet exists (delete
# it to run again).  A long run survives the terminal under nohup:
#     nohup docs/examples/simulate-hubao.sh 100000 /tmp/qipai-hubao > /tmp/hubao.log 2>&1 &
# and `kill -INT PID` or `kill PID` of the `qipai simulate` process stops it
# keeping the finished chunks (the log's last line says how many hands).
#
# Usage: docs/examples/simulate-hubao.sh [HANDS] [OUTDIR]   (needs uv)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
hands="${1:-100000}"
out="${2:-/tmp/qipai-hubao}"
mkdir -p "$out"
cd "$root"
git log -1 --format='qipai commit %H (%cd)' 2>/dev/null || true
if [ ! -e "$out/guilin-hubao.parquet" ]; then
    uv run qipai simulate guilin-mahjong "guilin-mahjong(hubao=false)" \
        --hands "$hands" --bots greedy --seed 2024 --workers 2 \
        --out "$out/guilin-hubao.parquet"
    rc=$?
    # 130: interrupted, the finished chunks were written
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ]; then exit "$rc"; fi
fi
COLUMNS=250 uv run qipai report "$out/guilin-hubao.parquet" --html "$out/report.html" \
    | tee "$out/report.txt"
uv run qipai report "$out/guilin-hubao.parquet" --markdown > "$out/report.md"
uv run python - "$out" <<'PY'
import sys

from qipai.sim.report import charts, summarize

out = sys.argv[1]
path = f"{out}/guilin-hubao.parquet"
figs = charts(summarize(path), path)
figs["moved"].savefig(f"{out}/simulate-payments.png", dpi=110, bbox_inches="tight")
print(f"wrote {out}/simulate-payments.png")
PY
