package memory

// l2StreamKernel is RRZE-HPC gpu-benches gpu-l2-stream's read or write
// kernel as it runs (gpu-l2-stream/main.cu): a grid of 2^30 threads in
// CTAs of l2StreamCTAThreads, l2StreamCTAsPerSM resident per SM (the
// kernel's shared-memory "spoiler" sets the occupancy; at 1024 x 2 every
// thread slot of the SM is taken); thread t makes one 8-byte access to
// element t % length of one buffer and exits. A warp's 32 accesses are
// one coalesced 256-byte request; a CTA's slot frees when its last
// warp's access is done (a load returned, a store accepted by L2) and
// the next CTA of the grid takes it launch cycles later. All CTAs sweep
// the same buffer, so it stays in L2.
//
// It runs in the memory tier: what a thread does besides its access (its
// index arithmetic, the modulo, the compare and the exit, issued by the
// SM's schedulers) is not modelled, only the CTA slot's launch cycles.
// docs/log/2026-12-07-l2-store.md: against a100_80.txt the read kernel
// comes out 10-23 % fast over the occupancy sweep, so it does not yet
// calibrate l2.write_ratio; it is kept for that log's figures and tests.
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

// gpu-l2-stream's shape at 100 % occupancy and its elements' size.
const (
	l2StreamCTAThreads = 1024
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

func (m micro) l2StreamKernel(store bool, launch uint64) l2StreamKernel {
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
