package memory

import (
	"math"
	"testing"

	"github.com/stcsim/stcsim/internal/clock"
)

// TestDRAMBusTurnsOnlyWhenMixed: a stream of writes alone never turns
// the bus, nor one of reads; writes among reads pay two turns per batch.
func TestDRAMBusTurnsOnlyWhenMixed(t *testing.T) {
	newBus := func() dramBus { return dramBus{writeCost: 0.5, turnBytes: 100, batchBytes: 256} }
	b := newBus()
	var writes float64
	for i := 0; i < 64; i++ {
		writes += b.cost(true, 128)
	}
	if writes != 64*64 {
		t.Errorf("64 lone writes of 128 B cost %g read bytes, want %d", writes, 64*64)
	}
	b = newBus()
	var mixed float64
	for i := 0; i < 64; i++ {
		mixed += b.cost(false, 128) + b.cost(true, 128)
	}
	// 32 batches of two writes, each after reads: 32 pairs of turns.
	if want := 64*128 + 64*64 + 32*100.0; mixed != want {
		t.Errorf("64 reads and writes in turn cost %g read bytes, want %g", mixed, want)
	}
}

// TestDRAMStoreStreamsMatchA100: the a100-40gb DRAM streams that store,
// against RRZE gpu-stream on an A100-40GB (bw-dram-write-40gb, init, sets
// dram.write_efficiency; bw-dram-copy-40gb, scale, dram.turnaround_ns):
// within 3 %. Without the bus turns the copy runs at the mean of the read
// and write rates, about 10 % above the measured one, so the test fails.
func TestDRAMStoreStreamsMatchA100(t *testing.T) {
	rows := readValidation(t)
	cfg := testConfig(t, "a100-40gb")
	m := micro{cfg: cfg, clk: clock.MHz(1410), numSMs: 108}
	for _, c := range []struct {
		id, level string
		op        streamOp
	}{{"bw-dram-write-40gb", "dram_write", streamWrite}, {"bw-dram-copy-40gb", "dram_copy", streamCopy}} {
		r := m.dramStream(c.level, c.op)
		ref := rows[c.id]
		err := r.Value/ref - 1
		t.Logf("%s: %.1f vs %.1f GB/s (%+.1f %%)", c.id, r.Value, ref, 100*err)
		if math.Abs(err) > 0.03 {
			t.Errorf("%s: %.1f GB/s is %+.1f %% from %.1f", c.id, r.Value, 100*err, ref)
		}
	}
	none := cfg
	none.DRAM.TurnaroundNs = 0
	m.cfg = none
	if r, ref := m.dramStream("", streamCopy), rows["bw-dram-copy-40gb"]; r.Value < 1.05*ref {
		t.Errorf("copy stream without bus turns: %.1f GB/s, want over 5 %% above the measured %.1f "+
			"(else the turns are not what the row measures)", r.Value, ref)
	}
}
