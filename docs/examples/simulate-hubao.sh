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
    # 130: interrupted, the finished chunks were written (none finished: no file)
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 130 ]; then exit "$rc"; fi
    [ -e "$out/guilin-hubao.parquet" ] || exit "$rc"
fi
# A run stopped early holds the chunks finished by then, not always the
# same hands of both rulesets: keep the hands both have (so the differences
# are paired on the same deals) and say how many.
uv run python - "$out/guilin-hubao.parquet" <<'PY'
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

path = sys.argv[1]
t = pq.read_table(path)
sets = [set(pc.filter(t["hand"], pc.equal(t["ruleset"], r)).to_pylist())
        for r in pc.unique(t["ruleset"]).to_pylist()]
common = set.intersection(*sets)
if any(len(s) != len(common) for s in sets):
    keep = pc.is_in(t["hand"], value_set=pa.array(sorted(common)))
    t = t.filter(keep)
    pq.write_table(t, path, compression="zstd")
    print(f"kept the {len(common)} hands every ruleset played ({t.num_rows} rows)")
print(f"hands per ruleset: {len(common)}; hand indices {min(common)}..{max(common)}")
PY
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
