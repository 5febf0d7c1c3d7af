#!/usr/bin/env bash
# Refreshes cmd/stcsim/default.pgo, the CPU profile that `go build` and
# `go run` of ./cmd/stcsim use for profile-guided optimization (Go's
# -pgo=auto): a profile of the reference suite (BenchmarkReferenceSuite,
# what `stcsim run` runs with no flags). PGO changes only how the code is
# compiled (inlining, devirtualization), never a simulated result:
# scripts/instr-golden.sh gives byte-identical outputs with and without
# it. A profile older than the code still applies, with less benefit;
# refresh it after large changes to the SM or the memory model
# (docs/performance.md).
#
#   scripts/pgo-profile.sh      takes about two minutes of both cores
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -run XXX -bench ReferenceSuite -benchtime 1x \
  -cpuprofile "$tmp/cpu.pprof" -o "$tmp/sim.test" ./sim
cp "$tmp/cpu.pprof" cmd/stcsim/default.pgo
ls -l cmd/stcsim/default.pgo
