#!/usr/bin/env bash
# Sensitivity of the validation errors to the estimated timing parameters
# (docs/calibration.md): runs `stcsim validate` on the GEMM rows of a
# points file once with the config as is and once per override, and prints
# the MAPE of dense time, sparse time and speedup for each.
# Usage: scripts/sensitivity.sh [POINTS.csv]   (default: validation/points/a100-public.csv)
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-validation/points/a100-public.csv}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -1 "$points" > "$tmp/gemm.csv"
grep ',gemm,' "$points" >> "$tmp/gemm.csv"
go build -o "$tmp/stcsim" ./cmd/stcsim
overrides=(
  ""
  "tensorcore.fp16.metadata_decode_latency=14"
  "sm.barrier_latency=60"
  "sm.cta_launch_latency=600"
  "sm.kernel_launch_latency=4230"
  "crossbar.port_bytes_per_clk=32"
  "shared_memory.bytes_per_clk=96"
  "crossbar.port_bytes_per_clk=128"
  "kernel.simulated_candidates=1"
)
printf "%-40s %10s %10s %10s\n" override dense_time sparse_time speedup
for o in "${overrides[@]}"; do
  args=(validate --points "$tmp/gemm.csv" --format json --set sim.extrapolate_waves=true)
  [ -n "$o" ] && args+=(--set "$o")
  "$tmp/stcsim" "${args[@]}" > "$tmp/out.json"
  python3 - "$tmp/out.json" "${o:-(as configured)}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = {s["kind"]: s["mape"] for s in d["summary"]}
print("%-40s %9.1f%% %9.1f%% %9.1f%%" % (sys.argv[2], 100*m["gemm_dense_time"],
      100*m["gemm_sparse_time"], 100*m["gemm_speedup"]))
PY
done
