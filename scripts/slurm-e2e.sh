#!/usr/bin/env bash
# End-to-end test of scripts/slurm-sweep.sh on a real, one-node Slurm
# cluster on localhost: installs Debian's slurm-wlm and munge (needs root),
# starts munged, slurmctld and slurmd with a minimal slurm.conf in a
# temporary directory, builds stcsim, runs a small sweep as a 2-shard array
# job plus the dependent merge job, and checks that the merged store
# exports exactly what an unsharded run of the same sweep does. Stops the
# daemons it started and removes its files on exit.
#
# If no package mirror can be reached it prints a SKIP line and exits 0;
# any other failure exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

say() { echo "slurm-e2e: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
skip() { echo "SKIP slurm-e2e: $*"; exit 0; }

[ "$(id -u)" -eq 0 ] || skip "not root: cannot install packages or start the Slurm daemons"

# Network failures of apt, as opposed to real errors.
offline_re='Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Connection timed out|Network is unreachable|No route to host|Could not connect'

# SLURM_E2E_APT_OPTS adds apt-get options (e.g. another sources list, to
# try the offline path); SLURM_E2E_FORCE_INSTALL=1 installs even when the
# tools are present.
install_packages() {
	if [ "${SLURM_E2E_FORCE_INSTALL:-0}" != 1 ] &&
		command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
		command -v sbatch >/dev/null && command -v munged >/dev/null; then
		say "slurm-wlm and munge already installed"
		return
	fi
	local log rc=0
	log=$(mktemp)
	say "apt-get update"
	# shellcheck disable=SC2086
	timeout 300 apt-get update ${SLURM_E2E_APT_OPTS:-} >"$log" 2>&1 || rc=$?
	say "apt-get install slurm-wlm munge"
	# shellcheck disable=SC2086
	if [ $rc -eq 0 ] && DEBIAN_FRONTEND=noninteractive timeout 900 \
		apt-get install -y --no-install-recommends ${SLURM_E2E_APT_OPTS:-} \
		slurm-wlm munge >>"$log" 2>&1; then
		rm -f "$log"
		return
	fi
	tail -n 20 "$log" >&2
	if grep -Eq "$offline_re" "$log"; then
		rm -f "$log"
		skip "no package mirror reachable (apt-get could not download slurm-wlm and munge)"
	fi
	rm -f "$log"
	fail "apt-get could not install slurm-wlm and munge"
}

install_packages

work=$(mktemp -d /tmp/stcsim-slurm-e2e.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null || true
	done
	if [ $rc -ne 0 ]; then
		for f in "$work"/*.log "$work"/out/*.db.shards/*.log; do
			[ -f "$f" ] && { say "--- $f"; tail -n 30 "$f" >&2; }
		done
	fi
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Ports away from the defaults (6817/6818) so an existing Slurm is left
# alone.
ctld_port=${SLURM_E2E_CTLD_PORT:-16817}
slurmd_port=${SLURM_E2E_SLURMD_PORT:-16818}
host=$(hostname -s)
cpus=$(nproc)

say "starting munged"
mkdir -p "$work/munge"
chmod 755 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munge_sock=$work/munge/munge.socket
# A private munged as root (--force) on its own socket and key, so the
# host's munge, if any, is left alone.
/usr/sbin/munged --foreground --force \
	--key-file="$work/munge/munge.key" --socket="$munge_sock" \
	--pid-file="$work/munge/munged.pid" --log-file="$work/munged.log" \
	--seed-file="$work/munge/munged.seed" >"$work/munged.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	[ -S "$munge_sock" ] && break
	sleep 0.1
done
[ -S "$munge_sock" ] || fail "munged did not start"
munge --socket="$munge_sock" -n </dev/null | unmunge --socket="$munge_sock" >/dev/null ||
	fail "munge credential round trip failed"

say "starting slurmctld and slurmd (node $host, $cpus CPUs)"
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=stcsim-e2e
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=e2e Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out.log" 2>&1 &
pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 120); do
	state=$(sinfo -h -N -o '%t' 2>/dev/null | head -n1 || true)
	[ "$state" = idle ] && break
	sleep 0.5
done
[ "$state" = idle ] || fail "node did not become idle (state '$state')"

say "building stcsim"
go build -o "$work/stcsim" ./cmd/stcsim

# A small sweep: 2 x 2 points of one small GEMM list.
cat >"$work/sweep.yaml" <<EOF
name: e2e
configs: [a100-40gb]
workloads:
  - name: small
    gemms: [256x256x256, 512x256x512]
modes: [dense, sparse]
grid:
  gpu.sm_count: [54, 108]
  shared_memory.bytes_per_clk: [64, 128]
EOF

mkdir -p "$work/out"
say "submitting the sweep as 2 shards + merge"
ids=$(STCSIM="$work/stcsim" "$repo/scripts/slurm-sweep.sh" "$work/sweep.yaml" 2 \
	"$work/out/merged.db" | tail -n1)
read -r array_id merge_id <<<"$ids"
[ -n "$merge_id" ] || fail "slurm-sweep.sh printed no job ids"

job_state() {
	scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' |
		head -n1 | cut -d= -f2
}
deadline=$((SECONDS + ${SLURM_E2E_TIMEOUT:-900}))
while :; do
	st=$(job_state "$merge_id")
	case $st in
	COMPLETED) break ;;
	FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | "")
		scontrol show job "$array_id" >&2 || true
		fail "merge job $merge_id ended in state '$st'"
		;;
	esac
	[ $SECONDS -lt $deadline ] || fail "timed out waiting for job $merge_id (state $st)"
	sleep 2
done
for task in 1 2; do
	st=$(job_state "${array_id}_$task")
	[ "$st" = COMPLETED ] || fail "shard $task ended in state '$st'"
done
say "array job $array_id and merge job $merge_id completed"

say "running the same sweep unsharded"
"$work/stcsim" sweep "$work/sweep.yaml" --db "$work/out/single.db" --quiet
"$work/stcsim" results export "$work/out/merged.db" >"$work/merged.csv"
"$work/stcsim" results export "$work/out/single.db" >"$work/single.csv"
rows=$(($(wc -l <"$work/single.csv") - 1))
[ "$rows" -eq 16 ] || fail "unsharded export has $rows rows, want 16 (4 points x 2 GEMMs x 2 modes)"
if ! cmp -s "$work/merged.csv" "$work/single.csv"; then
	diff "$work/merged.csv" "$work/single.csv" >&2 || true
	fail "merged shards differ from the unsharded run"
fi
echo "PASS slurm-e2e: 2-shard Slurm array + merge equals the unsharded sweep ($rows rows)"
