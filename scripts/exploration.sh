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
# Speedup against area and energy (docs/exploration.md, section 3).
"$s" sweep configs/sweeps/datapath-cost.yaml --db "$out/cost.db" --quiet
"$s" plot "$out/cost.db" --x area_mm2 --y speedup --out docs/exploration-cost-area.png
"$s" plot "$out/cost.db" --x area_mm2 --y tflops_per_w --where tensorcore.fp16.sparse_pattern=2:4 \
  --out docs/exploration-cost-tflops-per-w.png
"$s" results export "$out/cost.db" --format json --out "$out/cost.json"
python3 - "$out/cost.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
def point(r):
    g = r["grid"]
    return (g["tensorcore.fp16.sparse_pattern"], int(g["tensorcore.fp16.b_operand_bytes_per_clk"]),
            int(g["tensorcore.fp16.selector_fan_in"]))
tot = {}
for r in rows:
    t = tot.setdefault((point(r), r["workload"]), {"dense": [0.0, 0.0], "sparse": [0.0, 0.0],
                                                   "area": r["area_mm2"], "flops": 0.0})
    t[r["mode"]][0] += r["time_us"] * r["count"]
    t[r["mode"]][1] += r["energy_uj"] * r["count"]
    if r["mode"] == "sparse":
        t["flops"] += 2.0 * r["m"] * r["n"] * r["k"] * max(1, r["batch"]) * r["count"]
print("\n| pattern | B (B/clk) | fan-in | workload | GPU mm2 | speedup | energy saving | sparse TFLOPS/W | sparse TFLOPS/mm2 |")
print("|---|---|---|---|---|---|---|---|---|")
for (p, w), t in sorted(tot.items()):
    d, s = t["dense"], t["sparse"]
    print("| %s | %d | %d | %s | %.1f | %.2fx | %.2fx | %.3f | %.4f |" % (
        p[0], p[1], p[2], w, t["area"], d[0] / s[0], d[1] / s[1],
        t["flops"] / s[1] / 1e6, t["flops"] / s[0] / 1e6 / t["area"]))
PY
