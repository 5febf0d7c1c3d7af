#!/usr/bin/env bash
# Docs from runs: runs each documented command whose numbers a page of
# docs/ states beside it, and fails when a stated number is not what the
# command gives today. With --update it writes today's numbers into the
# pages instead, and regenerates the figures the same commands draw
# (docs/sweeps-example-*.png).
#
#   scripts/docs-numbers.sh            # check (CI runs this)
#   scripts/docs-numbers.sh --update   # rewrite the numbers and figures
#
# Each check names the page, the sentence with {} where each number goes
# (whitespace and line breaks in the page match any whitespace), and the
# numbers the command gives. A new number in the docs beside a command
# gets a check here. Cost: the worked sweep of docs/sweeps.md and the
# five format points of docs/exploration.md (a minute each) are most of
# it (10 s wall on the idle 2-core machine per that page; the whole
# script took 13.5 min under a load average of about 28 on 2026-12-07);
# the simulation cache is off, so the numbers are the model's, not a
# cache's.
set -euo pipefail
cd "$(dirname "$0")/.."

update=0
case "${1:-}" in
"") ;;
--update) update=1 ;;
*)
	echo "usage: scripts/docs-numbers.sh [--update]" >&2
	exit 2
	;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export STCSIM_CACHE=off
go build -o "$work/stcsim" ./cmd/stcsim
stcsim() { "$work/stcsim" "$@"; }

drift=0

# stated FILE SENTENCE NUMBER...: the page states the sentence with the
# numbers in place of its {}s; otherwise it reports what the page says
# (and with --update, rewrites it).
stated() {
	local file=$1 sentence=$2
	shift 2
	SENTENCE=$sentence perl -0 -e '
		my ($file, @nums) = @ARGV;
		my $s = $ENV{SENTENCE};
		my @parts = split /\{\}/, $s, -1;
		die "$file: check has " . (@parts - 1) . " {} for " . scalar(@nums) . " numbers\n" if @parts - 1 != @nums;
		my $ws = sub { my $p = quotemeta(shift); $p =~ s/(\\\s)+/\\s+/g; $p };
		my $any = join "([-+]?[0-9][0-9.]*)", map { $ws->($_) } @parts;
		open my $fh, "<", $file or die "$file: $!\n";
		local $/; my $text = <$fh>; close $fh;
		if ($text !~ /$any/) { print "MISSING\n"; exit 0 }
		my @old = map { substr($text, $-[$_], $+[$_] - $-[$_]) } 1 .. $#-;
		print join(" ", @old), "\n";
	' "$file" "$@" >"$work/old"
	local old want
	old=$(cat "$work/old")
	want="$*"
	if [[ $old == MISSING ]]; then
		echo "docs-numbers: $file: no sentence like \"$sentence\" (the check or the page changed)" >&2
		drift=1
		return
	fi
	if [[ $old == "$want" ]]; then
		echo "ok   $file: ${sentence//\{\}/#}: $want"
		return
	fi
	if ((update)); then
		SENTENCE=$sentence perl -0 -i -e '
			my ($file, @nums) = @ARGV; @ARGV = ($file);
			my @parts = split /\{\}/, $ENV{SENTENCE}, -1;
			my $ws = sub { my $p = quotemeta(shift); $p =~ s/(\\\s)+/\\s+/g; $p };
			my $any = join "([-+]?[0-9][0-9.]*)", map { $ws->($_) } @parts;
			local $/; my $text = <>;
			if ($text =~ /$any/) {
				my @pos = map { [$-[$_], $+[$_]] } 1 .. $#-;
				for my $i (reverse 0 .. $#pos) {
					substr($text, $pos[$i][0], $pos[$i][1] - $pos[$i][0]) = $nums[$i];
				}
			}
			print $text;
		' "$file" "$@"
		echo "upd  $file: ${sentence//\{\}/#}: $old -> $want"
		return
	fi
	echo "DRIFT $file: \"${sentence//\{\}/#}\" states $old; the command gives $want" >&2
	drift=1
}

# power.md: the throughput microbenchmark's board power against Luo et al.
stcsim micro power --config a100-pcie-40gb >"$work/power.txt"
read -r watts err < <(awk '$1 == "tc-dense-fp16-const" { sub(/%$/, "", $5); print $3, $5 }' "$work/power.txt")
stated docs/power.md 'is compared with `tc-dense-fp16-const`: {} W, {} % (`stcsim' "$watts" "$err"

# power.md: the locked and the power-capped speedup of a GEMM above a
# lowered limit.
stcsim run --gemm 1024x1024x1024 --set power.limit_w=200 --set sim.jitter_runs=1 \
	--set kernel.simulated_candidates=1 --format json --quiet >"$work/capped.json"
read -r locked capped dense sparse < <(tr -d ' \n' <"$work/capped.json" | perl -ne '
	my ($t) = /"totals":\[(.*?)\]/; my ($c) = /"power_capped_totals":\[(.*?)\]/;
	my ($ls) = $t =~ /"mode":"sparse".*?"speedup":([0-9.]+)/;
	my ($cd) = $c =~ /"mode":"dense".*?"max_clock_mhz":([0-9]+)/;
	my ($cs, $cc) = $c =~ /"mode":"sparse".*?"speedup":([0-9.]+).*?"max_clock_mhz":([0-9]+)/;
	printf "%.3f %.3f %d %d\n", $ls, $cs, $cd, $cc;')
stated docs/power.md 'gives {}x locked and {}x capped (dense at {} MHz, sparse at {} MHz)' "$locked" "$capped" "$dense" "$sparse"

# exploration.md, section 5: four formats at equal density on one GEMM
# (the run's sparse record, and micro area's tensor core and per-MMA
# fp16 sparse energies with the pattern set for fp16, bf16 and int8).
declare -A runs_on=([1:4]="what-if datapath" [2:8]="what-if datapath"
	[2:4/2:4]="what-if datapath, block muxes" [64:2:8]="the A100's 2:4, gather kernel"
	[128:2:8]="the A100's 2:4, gather kernel")
for p in 1:4 2:8 2:4/2:4 64:2:8 128:2:8; do
	stcsim run --gemm 2048x4096x2048 --layout tt --set tensorcore.fp16.sparse_pattern="$p" \
		--format json --quiet >"$work/format.json"
	stcsim micro area --set tensorcore.fp16.sparse_pattern="$p" --set tensorcore.bf16.sparse_pattern="$p" \
		--set tensorcore.int8.sparse_pattern="$p" >"$work/format-area.txt"
	read -r kernel rest < <(perl -MJSON::PP -e '
		local $/; my $d = decode_json(<STDIN>);
		my ($s) = grep { $_->{mode} eq "sparse" } @{ $d->{results} };
		printf "%s %.2f %s %.1f %.2f %.2f\n", $s->{kernel}, $s->{speedup}, $s->{bound},
			$s->{energy_uj} / 1000, $s->{energy_saving}, $s->{tflops_per_w};' <"$work/format.json")
	read -r speedup bound mj saving tpw <<<"$rest"
	dense=$(perl -MJSON::PP -e '
		local $/; my $d = decode_json(<STDIN>);
		my ($r) = grep { $_->{mode} eq "dense" } @{ $d->{results} };
		printf "%.1f %s %.1f\n", $r->{time_us}, $r->{kernel}, $r->{energy_uj} / 1000;' <"$work/format.json")
	if [[ -n ${dense_all:-} && $dense != "$dense_all" ]]; then
		echo "docs-numbers: exploration.md section 5: the dense record differs between patterns ($dense_all, $dense)" >&2
		drift=1
	fi
	dense_all=$dense
	read -r tcmm ops meta passes < <(awk '
		/^tensor core [0-9.]+ mm2/ { tc = $3 }
		$1 == "fp16" && $2 == "sparse" { o = $3; m = $4; p = $5 }
		END { print tc, o, m, p }' "$work/format-area.txt")
	# The kernel and the bound are words: a change shows as "no sentence like".
	stated docs/exploration.md "| $p | ${runs_on[$p]} | $kernel | {}x | $bound | {} | {}x | {} | {} | {}, {}, {} |" \
		"$speedup" "$mj" "$saving" "$tpw" "$tcmm" "$ops" "$meta" "$passes"
done
read -r dus dkernel dmj <<<"$dense_all"
stated docs/exploration.md "(the dense record is the same in all: {} µs, $dkernel, {} mJ)" "$dus" "$dmj"

# user-guide.md: the config file line an inconsistent --set is reported at.
line=$( (stcsim run --set l2.far_latency=800 2>&1 || true) | sed -n 's/.*a100-40gb.yaml (built-in):\([0-9]*\): key dram.latency.*/\1/p')
stated docs/user-guide.md 'a100-40gb.yaml (built-in):{}: key dram.latency' "$line"

# sweeps.md: the worked example sweep, its aggregate throughput and the
# per-layer speedup ranges (the two figures come from the same store).
root=$PWD
# In the scratch directory, so that the figures' captions name example.db
# as the page's commands do.
(cd "$work" && stcsim sweep "$root/configs/sweeps/example.yaml" --db example.db --quiet >/dev/null)
stcsim results export "$work/example.db" --format csv >"$work/example.csv"
# tflops BW SMS MODE: the three GEMMs' aggregate TFLOPS at 128 B/clock.
tflops() {
	awk -F, -v bw="$1" -v sms="$2" -v mode="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["dram.bandwidth_gbps"] == bw && $col["gpu.sm_count"] == sms &&
		$col["shared_memory.bytes_per_clk"] == 128 && $col["mode"] == mode {
			c = $col["count"]
			flops += 2 * $col["m"] * $col["n"] * $col["k"] * $col["batch"] * c
			us += $col["time_us"] * c
		}
		END { printf "%.1f\n", flops / us / 1e6 }' "$work/example.csv"
}
# speedups SMS: the sparse rows' lowest and highest speedup at 2039 GB/s.
speedups() {
	awk -F, -v sms="$1" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["dram.bandwidth_gbps"] == 2039 && $col["gpu.sm_count"] == sms &&
		$col["shared_memory.bytes_per_clk"] == 128 && $col["mode"] == "sparse" {
			s = $col["speedup"] + 0
			if (lo == "" || s < lo) lo = s
			if (hi == "" || s > hi) hi = s
		}
		END { printf "%.2f %.2f\n", lo, hi }' "$work/example.csv"
}
# shellcheck disable=SC2046 # the numbers are words
stated docs/sweeps.md '(aggregate over the three GEMMs: dense {} -> {} TFLOPS, sparse {} -> {} from 2039 to 400 GB/s; 54 SMs: dense {} -> {}, sparse {} -> {})' \
	$(tflops 2039 108 dense) $(tflops 400 108 dense) $(tflops 2039 108 sparse) $(tflops 400 108 sparse) \
	$(tflops 2039 54 dense) $(tflops 400 54 dense) $(tflops 2039 54 sparse) $(tflops 400 54 sparse)
read -r lo54 hi54 < <(speedups 54)
read -r lo108 hi108 < <(speedups 108)
stated docs/sweeps.md 'sparsity gains {}-{}x per layer at 54 SMs and {}-{}x at 108 SMs' "$lo54" "$hi54" "$lo108" "$hi108"
if ((update)); then
	(
		cd "$work"
		stcsim plot example.db --x dram.bandwidth_gbps --y tflops \
			--where shared_memory.bytes_per_clk=128 --out sweeps-example-tflops.png >/dev/null
		stcsim plot example.db --x gpu.sm_count --y speedup --by layer \
			--where dram.bandwidth_gbps=2039 --where shared_memory.bytes_per_clk=128 \
			--out sweeps-example-speedup.png >/dev/null
	)
	cp "$work/sweeps-example-tflops.png" "$work/sweeps-example-speedup.png" docs/
	echo "upd  docs/sweeps-example-tflops.png, docs/sweeps-example-speedup.png"
fi

if ((drift)); then
	echo "docs-numbers: a documented number drifted; run scripts/docs-numbers.sh --update and review the diff" >&2
	exit 1
fi
echo "docs-numbers: every checked number is what its command gives"
