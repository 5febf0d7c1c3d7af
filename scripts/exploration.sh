#!/usr/bin/env bash
# The exploration study of docs/exploration.md: runs the sweeps
# configs/sweeps/datapath-bwidth.yaml and datapath-pattern.yaml, draws the
# page's figures into docs/ and prints its tables (per point and layer:
# sparse speedup, what bounds the sparse kernel and its time breakdown).
# Usage: scripts/exploration.sh [STORE_DIR]   (default /tmp/stcsim-exploration;
# a rerun skips the points already in the stores)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/stcsim-exploration}
mkdir -p "$out"
go build -o "$out/stcsim" ./cmd/stcsim
s="$out/stcsim"
"$s" sweep configs/sweeps/datapath-bwidth.yaml --db "$out/bwidth.db" --quiet
"$s" sweep configs/sweeps/datapath-pattern.yaml --db "$out/pattern.db" --quiet
"$s" plot "$out/bwidth.db" --x tensorcore.fp16.b_operand_bytes_per_clk --y speedup \
  --by layer --out docs/exploration-bwidth.png
"$s" plot "$out/pattern.db" --x tensorcore.fp16.sparse_pattern --y speedup --by layer \
  --where tensorcore.fp16.selector_fan_in=4 --where tensorcore.fp16.b_operand_bytes_per_clk=64 \
  --out docs/exploration-pattern-b64-fan4.png
"$s" plot "$out/pattern.db" --x tensorcore.fp16.sparse_pattern --y speedup --by layer \
  --where tensorcore.fp16.selector_fan_in=8 --where tensorcore.fp16.b_operand_bytes_per_clk=128 \
  --out docs/exploration-pattern-b128-fan8.png
for db in bwidth pattern; do
  "$s" results export "$out/$db.db" --format json --out "$out/$db.json"
  python3 - "$out/$db.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
keys = sorted({k for r in rows for k in r["grid"]})
short = lambda k: k.split(".")[-1]
def point(r):
    return tuple(r["grid"].get(k, "") for k in keys)
def num(v):
    try:
        return (0, float(v), "")
    except ValueError:
        return (1, 0.0, v)
def order(p):
    return tuple(num(v) for v in p)
print("\n" + sys.argv[1])
print("| " + " | ".join(short(k) for k in keys) +
      " | layer | sparse speedup | sparse bound | compute / smem / l2 / dram / other | TC util |")
print("|" + "---|" * (len(keys) + 5))
dense = {(point(r), r["workload"], r["layer"]): r for r in rows if r["mode"] == "dense"}
tot = {}
for r in sorted(rows, key=lambda r: (order(point(r)), r["workload"], r["layer"])):
    if r["mode"] != "sparse":
        continue
    d = dense[(point(r), r["workload"], r["layer"])]
    b = r["breakdown"]
    t = tot.setdefault((point(r), r["workload"]), [0.0, 0.0])
    t[0] += d["time_us"]; t[1] += r["time_us"]
    print("| " + " | ".join(point(r)) + " | %s %s | %.2fx | %s | %.2f / %.2f / %.2f / %.2f / %.2f | %.0f%% |" % (
        r["workload"], r["layer"], d["time_us"] / r["time_us"], r["bound"],
        b["compute"], b["smem"], b["l2_bandwidth"] + b["l2_latency"],
        b["dram_bandwidth"] + b["dram_latency"],
        1 - b["compute"] - b["smem"] - b["l2_bandwidth"] - b["l2_latency"]
        - b["dram_bandwidth"] - b["dram_latency"], 100 * r["tc_utilization"]))
print("\n| " + " | ".join(short(k) for k in keys) + " | workload | dense us | sparse us | speedup |")
print("|" + "---|" * (len(keys) + 4))
for (p, w), (d, s) in sorted(tot.items(), key=lambda kv: (order(kv[0][0]), kv[0][1])):
    print("| " + " | ".join(p) + " | %s | %.1f | %.1f | %.2fx |" % (w, d, s, d / s))
PY
done
