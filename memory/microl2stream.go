package memory

import (
	"fmt"

	"github.com/stcsim/stcsim/internal/clock"
)

// l2StreamKernel is RRZE-HPC gpu-benches gpu-l2-stream's read or write
// kernel as it runs (gpu-l2-stream/main.cu): a grid of 2^30 threads in
// CTAs of l2StreamCTAThreads, l2StreamCTAsPerSM resident per SM (the
// kernel's shared-memory "spoiler" sets the occupancy; at 1024 x 2 every
// thread slot of the SM is taken, at 640 x 2 62.5 %); thread t makes one 8-byte access to
// element t % length of one buffer and exits. A warp's 32 accesses are
// one coalesced 256-byte request; a CTA's slot frees when its last
// warp's access is done (a load returned, a store accepted by L2) and
// the next CTA of the grid takes it launch cycles later: the SM's
// sm.cta_launch_latency plus l2StreamThreadCycles. All CTAs sweep the
// same buffer, so it stays in L2.
type l2StreamKernel struct {
	m        micro
	store    bool
	threads  int    // per CTA
	perSM    int    // resident CTAs per SM
	buffer   uint64 // bytes (length doubles)
	launch   uint64 // cycles from a slot freeing to its next CTA's accesses
	ctas     int    // CTAs run, warming ones included
	warmCTAs int    // CTAs run before the timed part begins
}

// l2StreamThreadCycles is what a CTA of the kernel spends besides
// sm.cta_launch_latency and its accesses: its threads' index arithmetic,
// the modulo by length, the bound check, the compare and the exit, which
// this tier does not run as instructions. Fitted on one line,
// a100_80.txt's read kernel at its lowest occupancy (96 threads x 1 CTA,
// size 8063: 202 GB/s, 579 cycles a CTA at 1410 MHz, 62 more than the
// model gives without it); the write kernel's line there (303 GB/s, the
// store path idle) agrees within 4 % (docs/log/2026-12-07-l2-store.md).
const l2StreamThreadCycles = 62

// gpu-l2-stream's shape of the rows (640 threads x 2 CTAs per SM, 62.5 %
// occupancy: the read kernel still bound per thread and within 3 %, the
// store kernel already bound by the L2's store path; docs/log/
// 2026-12-07-l2-store.md) and its elements' size.
const (
	l2StreamCTAThreads = 640
	l2StreamCTAsPerSM  = 2
	l2StreamElemBytes  = 8
	l2StreamWarp       = 32
)

// l2StreamLength is the buffer of the calibration rows: the a100_80.txt
// block whose size column (length x 8 x 2 / 1024) reads 8063, inside the
// plateau of both kernels (buffers of 2 to 16 MB).
const l2StreamLength = 8063*1024/16 + 1

// l2StreamWaves is how many times every resident CTA slot is filled: the
// first l2StreamWarmWaves untimed (the buffer into L2, the slots out of
// step), the rest timed.
const (
	l2StreamWaves     = 24
	l2StreamWarmWaves = 4
)

// l2StreamKernel is the kernel of the rows, with ctaLaunch the SM's
// sm.cta_launch_latency.
func (m micro) l2StreamKernel(store bool, ctaLaunch int) l2StreamKernel {
	launch := uint64(max(0, ctaLaunch)) + l2StreamThreadCycles
	k := l2StreamKernel{m: m, store: store, buffer: l2StreamLength * l2StreamElemBytes,
		launch: launch}
	return k.shape(l2StreamCTAThreads, l2StreamCTAsPerSM)
}

// shape sets the CTA size and the CTAs resident per SM, and how many
// CTAs run: l2StreamWarmWaves waves, or more if they would not touch the
// whole buffer (the benchmark's earlier calls leave all of it in L2),
// untimed, then l2StreamWaves - l2StreamWarmWaves timed waves.
func (k l2StreamKernel) shape(threads, perSM int) l2StreamKernel {
	k.threads, k.perSM = threads, perSM
	slots := k.m.numSMs * perSM
	ctaBytes := uint64(threads * l2StreamElemBytes)
	warm := max(l2StreamWarmWaves, int((k.buffer/ctaBytes+1)/uint64(slots))+1)
	k.warmCTAs = warm * slots
	k.ctas = k.warmCTAs + (l2StreamWaves-l2StreamWarmWaves)*slots
	return k
}

// run returns the kernel's bandwidth in bytes per cycle over its timed
// CTAs: their bytes over the cycles from the first timed CTA's launch to
// the last one's end, as the benchmark counts one 8-byte access a thread.
func (k l2StreamKernel) run() float64 {
	e, h, _ := k.m.build()
	ctaBytes := uint64(k.threads * l2StreamElemBytes)
	warpBytes := uint64(l2StreamWarp * l2StreamElemBytes)
	warps := k.threads / l2StreamWarp
	next := 0
	var t0, end uint64
	timed := false
	var startCTA func(sm int, now uint64)
	startCTA = func(sm int, now uint64) {
		if next == k.ctas {
			return
		}
		cta := next
		next++
		if cta == k.warmCTAs {
			t0, timed = now, true
		}
		base := uint64(cta) * ctaBytes % k.buffer
		left := warps
		done := func(c uint64) {
			left--
			if left > 0 {
				return
			}
			if timed && cta >= k.warmCTAs {
				end = max(end, c)
			}
			startCTA(sm, c+k.launch)
		}
		for w := 0; w < warps; w++ {
			off := (base + uint64(w)*warpBytes) % k.buffer
			r := Region{Base: off, Rows: 1, RowBytes: int(warpBytes), Pitch: warpBytes}
			if k.store {
				h.Write(now, sm, DWrite, r, done)
			} else {
				h.Read(now, sm, BOperand, r, false, done)
			}
		}
	}
	for slot := 0; slot < k.perSM; slot++ {
		for sm := 0; sm < k.m.numSMs; sm++ {
			startCTA(sm, k.launch)
		}
	}
	_ = e.Run()
	bytes := uint64(k.ctas-k.warmCTAs) * ctaBytes
	return float64(bytes) / float64(end-t0)
}

// l2Stream is the kernel's bandwidth in GB/s (level l2_stream_read or
// l2_stream_store) at the rows' shape, with ctaLaunch the SM's
// sm.cta_launch_latency.
func (m micro) l2Stream(store bool, ctaLaunch int) MicroResult {
	return m.l2StreamAt(store, ctaLaunch, L2StreamShape{Threads: l2StreamCTAThreads,
		PerSM: l2StreamCTAsPerSM, Length: l2StreamLength})
}

// L2StreamShape is one line of gpu-l2-stream's output: CTAs of Threads
// threads, PerSM of them resident per SM, all sweeping one buffer of
// Length doubles (the file's size column is Length x 16 / 1024, twice
// the buffer in kB).
type L2StreamShape struct {
	Threads, PerSM int
	Length         uint64
}

// check rejects a shape the kernel cannot run: whole warps of at most
// 1024 threads, at least one CTA per SM, a buffer of at least one warp's
// 32 doubles.
func (s L2StreamShape) check() error {
	if s.Threads < l2StreamWarp || s.Threads > 1024 || s.Threads%l2StreamWarp != 0 {
		return fmt.Errorf("gpu-l2-stream: %d threads per CTA: want a multiple of 32 in 32..1024", s.Threads)
	}
	if s.PerSM < 1 {
		return fmt.Errorf("gpu-l2-stream: %d CTAs per SM: want at least 1", s.PerSM)
	}
	if s.Length < l2StreamWarp {
		return fmt.Errorf("gpu-l2-stream: a buffer of %d doubles: want at least 32", s.Length)
	}
	return nil
}

// l2StreamAt is the kernel's bandwidth in GB/s at shape s.
func (m micro) l2StreamAt(store bool, ctaLaunch int, s L2StreamShape) MicroResult {
	level := "l2_stream_read"
	if store {
		level = "l2_stream_store"
	}
	k := m.l2StreamKernel(store, ctaLaunch)
	k.buffer = s.Length * l2StreamElemBytes
	bpc := k.shape(s.Threads, s.PerSM).run()
	return MicroResult{Kind: "bandwidth", Level: level, Unit: "GB/s",
		Value:           bpc * float64(m.clk.Freq) / 1e9,
		WorkingSetBytes: k.buffer}
}

// MicroL2Stream runs gpu-l2-stream's read kernel (store false) or write
// kernel at shape s on the fast model, with ctaLaunch the SM's
// sm.cta_launch_latency: the kernel of the bw-l2-stream-* rows at
// another occupancy or buffer size. A buffer larger than what stays in
// the L2 streams from DRAM, as the benchmark's larger sizes do.
func MicroL2Stream(cfg Config, clk clock.Clock, numSMs, ctaLaunch int, store bool, s L2StreamShape) (MicroResult, error) {
	if err := s.check(); err != nil {
		return MicroResult{}, err
	}
	m, err := newMicro(cfg, clk, numSMs, ctaLaunch)
	if err != nil {
		return MicroResult{}, err
	}
	return m.l2StreamAt(store, ctaLaunch, s), nil
}
