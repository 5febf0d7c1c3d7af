package memory

import (
	"testing"

	"github.com/stcsim/stcsim/internal/clock"
)

// sparsifierKernel is the 2:4 fp16 sparsifier's traffic for in bytes of
// X: values half of X, metadata a sixteenth (2 bits per kept 2-byte
// value); both forms (X and X^T) with transposed.
func sparsifierKernel(in uint64, transposed bool) StreamKernel {
	k := StreamKernel{InBytes: in, InClass: BOperand, Chunk: 4096, InFlight: 8,
		Outs: []StreamOut{{AValues, in / 2}, {AMeta, in / 16}}}
	if transposed {
		k.Outs = append(k.Outs, k.Outs...)
	}
	return k
}

// The stream kernel moves exactly its bytes (cold L2: X read from DRAM
// once; the outputs written back by the flush), and its time is bounded
// below by the measured A100 DRAM read bandwidth (bw-dram, RRZE-HPC
// gpu-stream: no kernel reads faster) and above by twice that time
// plus the writes at the same rate (a streaming kernel near the
// memory's rate, as the sparsifier is, not one stalled on latency).
func TestStreamKernelTrafficAndRate(t *testing.T) {
	cfg := testConfig(t, "a100-80gb")
	const mhz = 1410
	in := uint64(64 << 20) // larger than the L2: it streams from DRAM
	for _, transposed := range []bool{false, true} {
		k := sparsifierKernel(in, transposed)
		r, err := RunStream(cfg, clock.MHz(mhz), 108, Fast, k)
		if err != nil {
			t.Fatal(err)
		}
		var out uint64
		for _, o := range k.Outs {
			out += o.Bytes
		}
		if r.Stats.DRAMReadBytes != in {
			t.Errorf("transposed=%v: DRAM read %d bytes, want X's %d", transposed, r.Stats.DRAMReadBytes, in)
		}
		if w := r.Stats.DRAMWriteBytes; w < out || w > out+out/100 {
			t.Errorf("transposed=%v: DRAM wrote %d bytes, want the outputs' %d", transposed, w, out)
		}
		sec := float64(r.Cycles) / (mhz * 1e6)
		readOnly := float64(in) / (readValidation(t)["bw-dram"] * 1e9)
		all := float64(in+out) / (readValidation(t)["bw-dram"] * 1e9)
		t.Logf("transposed=%v: %.1f us, %.0f GB/s of reads and writes", transposed, sec*1e6,
			float64(in+out)/sec/1e9)
		if sec < readOnly || sec > 2*all {
			t.Errorf("transposed=%v: %.1f us, want between %.1f and %.1f us", transposed,
				sec*1e6, readOnly*1e6, 2*all*1e6)
		}
	}
}

func TestStreamKernelRefusesEmpty(t *testing.T) {
	cfg := testConfig(t, "a100-80gb")
	if _, err := RunStream(cfg, clock.MHz(1410), 108, Fast, StreamKernel{Chunk: 4096, InFlight: 8}); err == nil {
		t.Error("an empty kernel ran")
	}
}
