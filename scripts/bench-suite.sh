#!/usr/bin/env bash
# The reference suite of the speed target (docs/performance.md): ResNet-50
# batch 32 + BERT-Large seq 128 batch 32, dense and sparse, on a100-40gb,
# default config. Prints wall time and peak RSS of the command.
set -euo pipefail
export STCSIM_CACHE=off # measure the simulator, not the simulation cache
cd "$(dirname "$0")/.."
go build -o /tmp/stcsim-bench ./cmd/stcsim
/usr/bin/time -f "wall %e s, user %U s, peak RSS %M KB" \
  /tmp/stcsim-bench run --quiet --format csv "$@" > /dev/null
