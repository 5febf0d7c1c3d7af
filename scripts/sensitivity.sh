#!/usr/bin/env bash
# Sensitivity of the validation errors to the estimated timing parameters
# (docs/calibration.md): runs `stcsim validate` on the GEMM rows of a
# points file once with the config as is and once per override, and prints
# the MAPE and mean signed error (bias) of dense time, sparse time and
# speedup for each.
#
#   scripts/sensitivity.sh [POINTS.csv]   (default: validation/points/a100-public.csv)
#
# CONDITIONS=measured|boost|both (default measured) is validate's
# --conditions: measured runs each row under its own clock, power limit
# and harness, the conditions its error is reported under.
#
# ONLY=REGEX runs only the overrides that match REGEX (grep -E), beside
# the configuration as it is.
#
# ROWS=REGEX keeps only the GEMM rows whose id matches REGEX (grep -E,
# anchored at the id's start): every GEMM row of the public file takes
# some 40 minutes of both cores per override on the instruction-level
# SM, so docs/validation.md's table runs the quicker rows.
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-validation/points/a100-public.csv}
rows=${ROWS:-}
conditions=${CONDITIONS:-measured}
if [[ ! -r $points ]]; then
  echo "sensitivity.sh: cannot read the points file $points" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -1 "$points" > "$tmp/gemm.csv"
if [[ -n $rows ]]; then
  grep ',gemm,' "$points" | grep -E "^($rows)," >> "$tmp/gemm.csv" || true
else
  grep ',gemm,' "$points" >> "$tmp/gemm.csv" || true
fi
if [[ $(wc -l < "$tmp/gemm.csv") -lt 2 ]]; then
  echo "sensitivity.sh: no GEMM row of $points matches ${rows:-any id}" >&2
  exit 2
fi
go build -o "$tmp/stcsim" ./cmd/stcsim
overrides=(
  ""
  "tensorcore.fp16.metadata_decode_latency=14"
  "sm.barrier_latency=60"
  "sm.cta_launch_latency=600"
  "sm.kernel_launch_latency=4230"
  "sm.cta_dispatch_interval=1"
  "sm.register_file_bytes_per_clk=192"
  "shared_memory.latency=46"
  "shared_memory.bytes_per_clk=96"
  "shared_memory.fill_arbitration=fills_first"
  "shared_memory.fill_packing=true"
  "crossbar.port_bytes_per_clk=32"
  "crossbar.port_bytes_per_clk=128"
  "kernel.simulated_candidates=1"
  "power.board_static_w=50"
  "power.energy.mma_data_share=0.7"
)
printf "%-44s %-15s %-15s %-15s\n" override "dense time" "sparse time" speedup
printf "%-44s %-15s %-15s %-15s\n" "" "MAPE / bias" "MAPE / bias" "MAPE / bias"
for o in "${overrides[@]}"; do
  if [[ -n $o && -n ${ONLY:-} ]] && ! grep -qE -- "${ONLY}" <<< "$o"; then
    continue
  fi
  args=(validate --points "$tmp/gemm.csv" --format json --conditions "$conditions")
  [ -n "$o" ] && args+=(--set "$o")
  "$tmp/stcsim" "${args[@]}" > "$tmp/out.json"
  python3 - "$tmp/out.json" "${o:-(as configured)}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = {x["kind"]: x for x in d["summary"]}
def cell(kind):
    x = s.get(kind)
    if not x:
        return "-"
    return "%5.1f%% %+6.1f%%" % (100 * x["mape"], 100 * x["bias"])
print("%-44s %-15s %-15s %-15s" % (sys.argv[2], cell("gemm_dense_time"),
      cell("gemm_sparse_time"), cell("gemm_speedup")))
PY
done
