#!/usr/bin/env bash
# Golden outputs of the instruction-level SM, for changes that must not move
# a single simulated cycle (speed work on sim/warp.go, subpartition.go,
# calendar.go, the tensor core's and the fast memory's hot paths).
#
#   scripts/instr-golden.sh OUTDIR           run every case, write OUTDIR/<case>.json
#                                            (provenance and version stripped) and
#                                            OUTDIR/SHA256SUMS, print the sums
#   scripts/instr-golden.sh OUTDIR REFDIR    the same, then compare with REFDIR's
#                                            outputs; exit 1 on any difference
#
# STCSIM=path uses a prebuilt binary (e.g. one built from main for REFDIR);
# by default the working tree's cmd/stcsim is built. NO_CANDIDATES=1 drops
# each record's list of selection candidates before comparing (for
# REFDIRs made before the selection stopped losing samples early, which
# changes only the losers' estimates; sim/prune.go). The family: dense and
# sparse; fp16, int8 and tf32; one wave and many; 32x32 and 64x64 warp
# tiles; split-K; beta = 1; a narrow register file, two schedulers and the
# loose round-robin policy; the tensor core's instruction fidelity; a
# jitter ensemble of three runs; the steady-state fast-forward (the
# fastfwd case's sparse kernel); and wave and K extrapolation (defaults)
# beside a many-wave case simulated in full. Every case lets kernel selection simulate
# its candidates, so each covers several kernels.
set -euo pipefail
export STCSIM_CACHE=off # measure the simulator, not the simulation cache
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/instr-golden.sh OUTDIR [REFDIR]}
ref=${2:-}
bin=${STCSIM:-}
if [[ -z $bin ]]; then
  bin=$(mktemp -d)/stcsim
  go build -o "$bin" ./cmd/stcsim
fi
mkdir -p "$out"

cases=(
  "small-fp16|--gemm 512x512x512"
  "waves-fp16|--gemm 4096x4096x256 --set kernel.force=128x128x64_64x64_s3 --set sim.extrapolate_waves=false"
  "waves-extrap|--gemm 4096x4096x256 --set kernel.force=128x128x64_64x64_s3"
  "k-extrap|--gemm 256x512x8192 --set kernel.force=128x128x64_64x64_s3 --set kernel.split_k=[1]"
  "splitk-fp16|--gemm 128x784x1152"
  "int8|--gemm 1024x1024x1024 --precision int8"
  "tf32|--gemm 512x1024x512 --precision tf32"
  "beta1|--gemm 1024x512x768 --set kernel.beta=1"
  "warp64|--gemm 1024x1024x1024 --set kernel.force=128x128x64_64x64_s4"
  "warp32|--gemm 1024x1024x512 --set kernel.force=64x64x64_32x32_s6"
  "pipes|--gemm 512x768x512 --set sm.scheduler_policy=lrr --set sm.warp_schedulers=2 --set sm.issue_per_clk=2 --set sm.register_file_bytes_per_clk=128"
  "tc-instr|--gemm 768x512x512 --set tensorcore.fidelity=instruction"
  "jitter3|--gemm 1024x1024x512 --set sim.jitter_runs=3"
  "fastfwd|--gemm 2048x2048x2048 --set kernel.force_dense=128x128x32_64x64_s5 --set kernel.force_sparse=128x128x64_64x64_s3"
)

# strip drops what is not a simulated result: the tool's version and the
# run's provenance (command line, config file hashes).
strip() {
  python3 -c '
import json, os, sys
d = json.load(sys.stdin)
for k in ("tool", "version", "provenance"):
    d.pop(k, None)
if os.environ.get("NO_CANDIDATES") == "1":
    for r in d.get("results", []):
        r.pop("candidates", None)
json.dump(d, sys.stdout, indent=1, sort_keys=True)
print()'
}

for c in "${cases[@]}"; do
  name=${c%%|*}
  read -r -a args <<<"${c#*|}"
  "$bin" run --quiet --format json "${args[@]}" | strip >"$out/$name.json"
done
(cd "$out" && sha256sum -- *.json >SHA256SUMS && cat SHA256SUMS)

if [[ -n $ref ]]; then
  status=0
  for c in "${cases[@]}"; do
    name=${c%%|*}
    if ! cmp -s "$out/$name.json" "$ref/$name.json"; then
      echo "DIFFERS: $name" >&2
      diff <(grep -n . "$ref/$name.json") <(grep -n . "$out/$name.json") | head -20 >&2 || true
      status=1
    fi
  done
  [[ $status == 0 ]] && echo "identical to $ref"
  exit $status
fi
