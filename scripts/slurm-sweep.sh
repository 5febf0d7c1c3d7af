#!/usr/bin/env bash
# Submit a stcsim sweep to Slurm: an array job of N shards, each writing
# its own results store, and a merge job that runs when all shards
# succeeded.
#
#   scripts/slurm-sweep.sh [--print-only] SPEC.yaml N [OUT.db]
#
# --print-only checks the sweep and prints the two sbatch commands it would
# submit, one per line, without submitting anything or creating any file.
# OUT.db defaults to NAME.db in the current directory (NAME: the sweep
# file's base name); shard stores and logs go to OUT.db.shards/.
# Environment: STCSIM, the stcsim binary (default: stcsim on PATH);
# SBATCH_OPTS, extra sbatch options for both jobs (e.g. "-p batch -t 1:00:00");
# CPUS, CPUs per shard (default 1; passed to --jobs).
# Prints the two job ids, "ARRAY_ID MERGE_ID", on the last line.
set -euo pipefail

usage() {
	echo "usage: $0 [--print-only] SPEC.yaml N [OUT.db]" >&2
	exit 2
}
print_only=0
if [ "${1:-}" = --print-only ]; then
	print_only=1
	shift
fi
[ $# -ge 2 ] && [ $# -le 3 ] || usage
spec=$1
n=$2
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "$0: N must be a positive integer, got '$n'" >&2; exit 2; }
[ -r "$spec" ] || { echo "$0: cannot read sweep file '$spec'" >&2; exit 2; }
name=$(basename "${spec%.*}")
out=${3:-$PWD/$name.db}
stcsim=${STCSIM:-$(command -v stcsim || true)}
[ -n "$stcsim" ] && [ -x "$stcsim" ] || { echo "$0: stcsim binary not found: set STCSIM" >&2; exit 2; }
cpus=${CPUS:-1}
[[ $cpus =~ ^[1-9][0-9]*$ ]] || { echo "$0: CPUS must be a positive integer, got '$cpus'" >&2; exit 2; }
if [ $print_only = 0 ] && ! command -v sbatch >/dev/null; then
	echo "$0: sbatch not found on PATH (no Slurm here?); --print-only shows what would be submitted" >&2
	exit 2
fi

abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$PWD" "$(basename "$1")"); }
spec=$(abs "$spec")
out=$(abs "$out")
stcsim=$(abs "$stcsim")
shards=$out.shards

# Check the sweep before submitting anything: a bad key fails here, not
# in N jobs.
"$stcsim" sweep "$spec" --dry-run --quiet

q() { printf '%q' "$1"; }
shard_cmd="$(q "$stcsim") sweep $(q "$spec") --shard \${SLURM_ARRAY_TASK_ID}/$n \
--db $(q "$shards")/shard-\${SLURM_ARRAY_TASK_ID}.db --jobs $cpus --quiet"
inputs=""
for i in $(seq 1 "$n"); do
	inputs+=" $(q "$shards/shard-$i.db")"
done
merge_cmd="$(q "$stcsim") merge $(q "$out")$inputs"

if [ $print_only = 1 ]; then
	# shellcheck disable=SC2086
	printf 'sbatch --parsable %s--job-name=%s --array=1-%s --cpus-per-task=%s --output=%s --wrap=%s\n' \
		"${SBATCH_OPTS:+$SBATCH_OPTS }" "$(q "stcsim-$name")" "$n" "$cpus" \
		"$(q "$shards/shard-%a.log")" "$(q "$shard_cmd")"
	printf 'sbatch --parsable %s--job-name=%s --dependency=afterok:ARRAY_ID --kill-on-invalid-dep=yes --output=%s --wrap=%s\n' \
		"${SBATCH_OPTS:+$SBATCH_OPTS }" "$(q "stcsim-$name-merge")" \
		"$(q "$shards/merge.log")" "$(q "$merge_cmd")"
	exit 0
fi
mkdir -p "$shards"
# shellcheck disable=SC2086
array_id=$(sbatch --parsable ${SBATCH_OPTS:-} --job-name="stcsim-$name" \
	--array="1-$n" --cpus-per-task="$cpus" \
	--output="$shards/shard-%a.log" --wrap="$shard_cmd")
array_id=${array_id%%;*}
# shellcheck disable=SC2086
merge_id=$(sbatch --parsable ${SBATCH_OPTS:-} --job-name="stcsim-$name-merge" \
	--dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
	--output="$shards/merge.log" --wrap="$merge_cmd")
merge_id=${merge_id%%;*}

echo "submitted $n shards as array job $array_id and the merge as job $merge_id; results: $out" >&2
echo "$array_id $merge_id"
