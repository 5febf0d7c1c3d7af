package memory

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/internal/clock"
)

// TestMicroMemMatchesA40: the GA102 memory model (a40: one L2
// partition, GDDR6) against RRZE's A40 rows of ga102-public.csv, within
// 10 % as the A100's check (bw-l2-a40 calibrates l2.bytes_per_clk,
// bw-dram-a40 dram.efficiency, the write and copy streams
// dram.write_efficiency and dram.turnaround_ns); the chase reports no far L2 partition
// (there is none to measure) and orders L1 < L2 < DRAM.
func TestMicroMemMatchesA40(t *testing.T) {
	rows := readPoints(t, "../validation/points/ga102-public.csv")
	res, err := MicroMem(testConfig(t, "a40"), clock.MHz(1740), 84, 150)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bandwidth/l1": "bw-l1-a40", "bandwidth/l2": "bw-l2-a40",
		"bandwidth/dram": "bw-dram-a40", "bandwidth/dram_write": "bw-dram-write-a40",
		"bandwidth/dram_copy": "bw-dram-copy-a40", "latency/l1": "lat-l1-a40",
		"latency/l2_near": "lat-l2-near-a40", "latency/dram": "lat-dram-a40"}
	seen := 0
	for _, r := range res {
		if r.Level == "l2_far" || r.Level == "far_home" {
			t.Errorf("one L2 partition, yet a far-partition figure: %+v", r)
		}
		id, ok := want[r.Kind+"/"+r.Level]
		if !ok {
			continue
		}
		seen++
		ref := rows[id]
		if e := math.Abs(r.Value/ref - 1); e > 0.10 {
			t.Errorf("%s: %.1f is %.1f %% from %.1f", id, r.Value, 100*e, ref)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d figures reported", seen, len(want))
	}
	lat := latencies(res)
	if !(lat["l1"] < lat["l2_near"] && lat["l2_near"] < lat["dram"]) {
		t.Errorf("latencies %v: want l1 < l2_near < dram", lat)
	}
}
