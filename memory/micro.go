package memory

import (
	"fmt"
	"math/rand/v2"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// MicroResult is one microbenchmark figure: a latency plateau, a
// bandwidth, or (Kind "latency_curve") one point of the latency sweep.
type MicroResult struct {
	Kind  string  `json:"kind"`  // latency | bandwidth | latency_curve
	Level string  `json:"level"` // l1 | l2_near | l2_far | l2 | dram; curve: all | near_home | far_home
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // cycles | GB/s
	// WorkingSetBytes is the footprint the figure was measured with.
	WorkingSetBytes uint64 `json:"working_set_bytes,omitempty"`
}

// microSM is the SM the latency benchmarks run on (partition 0).
const microSM = 0

// MicroMem runs the memory microbenchmarks on the fast model, as
// RRZE-HPC gpu-benches does on hardware: pointer-chase latency over
// working sets (a sweep, and one plateau per level) and streaming
// bandwidth of all SMs per level, and gpu-l2-stream's read and store
// kernels (microl2stream.go), whose CTAs relaunch ctaLaunch cycles
// (sm.cta_launch_latency) after their slot frees. Shared memory is set to
// its smallest carve-out, as those kernels use none, so L1 has its full
// size.
func MicroMem(cfg Config, clk clock.Clock, numSMs, ctaLaunch int) ([]MicroResult, error) {
	m, err := newMicro(cfg, clk, numSMs, ctaLaunch)
	if err != nil {
		return nil, err
	}
	var out []MicroResult
	for _, f := range m.figures() {
		out = append(out, f.measure())
	}
	return append(out, m.sweep()...), nil
}

// MicroFigure is MicroMem's one figure of kind "latency" (a plateau) or
// "bandwidth" at level, measured alone: each figure runs on a hierarchy
// of its own, so it is the figure MicroMem reports. ok is false where
// MicroMem has no such figure.
func MicroFigure(cfg Config, clk clock.Clock, numSMs, ctaLaunch int, kind, level string) (r MicroResult, ok bool, err error) {
	m, err := newMicro(cfg, clk, numSMs, ctaLaunch)
	if err != nil {
		return MicroResult{}, false, err
	}
	for _, f := range m.figures() {
		if f.kind == kind && f.level == level {
			return f.measure(), true, nil
		}
	}
	return MicroResult{}, false, nil
}

// MicroChase is the pointer-chase latency in cycles over every line of a
// footprint of ws bytes, whatever the lines' home partition, as RRZE
// gpu-latency's one thread chases them: a point of MicroMem's "all"
// curve (level l2_all, whatever level the footprint reaches).
func MicroChase(cfg Config, clk clock.Clock, numSMs, ctaLaunch int, ws uint64) (MicroResult, error) {
	if ws == 0 {
		return MicroResult{}, fmt.Errorf("pointer chase: an empty footprint")
	}
	m, err := newMicro(cfg, clk, numSMs, ctaLaunch)
	if err != nil {
		return MicroResult{}, err
	}
	return MicroResult{Kind: "latency", Level: "l2_all", Unit: "cycles",
		Value: m.chase(ws, homeAny), WorkingSetBytes: ws}, nil
}

// newMicro is the microbenchmarks' setting of cfg at the smallest
// shared-memory carve-out, its hierarchy checked to build.
func newMicro(cfg Config, clk clock.Clock, numSMs, ctaLaunch int) (micro, error) {
	cfg.SharedMemory.CarveoutKB = minInt(cfg.SharedMemory.CarveoutOptionsKB)
	m := micro{cfg: cfg, clk: clk, numSMs: numSMs, ctaLaunch: ctaLaunch}
	if _, err := m.builder().Build("Memory"); err != nil {
		return micro{}, err
	}
	return m, nil
}

func minInt(xs []int) int {
	m := 0
	for i, x := range xs {
		if i == 0 || x < m {
			m = x
		}
	}
	return m
}

type micro struct {
	cfg    Config
	clk    clock.Clock
	numSMs int
	gran   string // "" = fast
	// ctaLaunch is sm.cta_launch_latency, the gpu-l2-stream kernels'
	// gap between a CTA slot freeing and the next CTA starting in it.
	ctaLaunch int
}

func (m micro) builder() Builder {
	return MakeBuilder().WithEngine(akita.NewSerialEngine()).
		WithFreq(m.clk.Freq).WithConfig(m.cfg).WithNumSMs(m.numSMs).
		WithGranularity(m.gran)
}

func (m micro) build() (akita.Engine, Hierarchy, params) {
	e := akita.NewSerialEngine()
	h, _ := m.builder().WithEngine(e).Build("Memory")
	return e, h, deriveParams(m.cfg, m.clk, m.numSMs)
}

// Working sets of the plateaus, relative to the level's capacity.
func (m micro) l1Bytes() uint64 {
	return uint64(m.cfg.L1.TotalKB-m.cfg.SharedMemory.CarveoutKB) * 1024
}

func (m micro) l2Bytes() uint64 { return uint64(m.cfg.L2.SizeKB) * 1024 }

// figure is one latency plateau or bandwidth of MicroMem, measured when
// asked.
type figure struct {
	kind, level string
	measure     func() MicroResult
}

// figures are the latency plateaus (l1, l2_near, l2_far when the L2 is
// partitioned, dram) and the bandwidths (l1, l2, dram, dram_write,
// dram_copy, l2_stream_read, l2_stream_store), in MicroMem's order.
func (m micro) figures() []figure {
	l1, l2 := m.l1Bytes()/2, m.l2Bytes()/4
	lat := func(level string, ws uint64, home homeFilter) figure {
		return figure{"latency", level, func() MicroResult { return m.latency(level, ws, home) }}
	}
	bw := func(level string, measure func() MicroResult) figure {
		return figure{"bandwidth", level, measure}
	}
	out := []figure{lat("l1", l1, homeAny), lat("l2_near", l2, homeNear)}
	if m.partitioned() {
		out = append(out, lat("l2_far", l2, homeFar))
	}
	return append(out, lat("dram", m.l2Bytes()*4, homeAny),
		bw("l1", func() MicroResult { return m.bandwidth("l1", l1, true, true) }),
		bw("l2", func() MicroResult { return m.bandwidth("l2", l2, false, false) }),
		bw("dram", func() MicroResult { return m.bandwidth("dram", 2*m.l2Bytes(), false, false) }),
		bw("dram_write", func() MicroResult { return m.dramStream("dram_write", streamWrite) }),
		bw("dram_copy", func() MicroResult { return m.dramStream("dram_copy", streamCopy) }),
		bw("l2_stream_read", func() MicroResult { return m.l2Stream(false, m.ctaLaunch) }),
		bw("l2_stream_store", func() MicroResult { return m.l2Stream(true, m.ctaLaunch) }))
}

// partitioned says whether the L2 has a far partition to measure: with
// one partition (GA102) every line is near, and a chase over far-homed
// lines would find none.
func (m micro) partitioned() bool { return m.cfg.L2.Partitions > 1 }

func (m micro) latency(level string, ws uint64, home homeFilter) MicroResult {
	return MicroResult{Kind: "latency", Level: level, Unit: "cycles",
		Value: m.chase(ws, home), WorkingSetBytes: ws}
}

// sweep is the latency-vs-working-set curve, for all lines and for lines
// homed in the near and in the far L2 partition.
func (m micro) sweep() []MicroResult {
	var out []MicroResult
	curves := []struct {
		name string
		home homeFilter
	}{{"all", homeAny}, {"near_home", homeNear}, {"far_home", homeFar}}
	for _, c := range curves {
		if c.home == homeFar && !m.partitioned() {
			continue
		}
		for ws := uint64(16 << 10); ws <= sweepMax; ws *= 2 {
			out = append(out, MicroResult{Kind: "latency_curve",
				Level: c.name, Unit: "cycles", WorkingSetBytes: ws,
				Value: m.chase(ws, c.home)})
		}
	}
	return out
}

// sweepMax is the largest working set of the sweep: beyond the 40-50 MB
// L2s of the configs, so the DRAM plateau shows.
const sweepMax = 64 << 20

type homeFilter int

const (
	homeAny homeFilter = iota
	homeNear
	homeFar
)

// chaseMeasured is how many loads of the second pass are timed.
const chaseMeasured = 4096

// chase is a pointer chase from SM microSM over ws bytes of lines (one
// 8-byte pointer per line, in a random cyclic order): one pass to warm the
// caches, then the mean latency of the next loads. A working set larger
// than L2 is not warmed: with LRU a cyclic chase over it misses on every
// load, as a cold one does.
func (m micro) chase(ws uint64, home homeFilter) float64 {
	e, h, p := m.build()
	lines := m.chaseLines(p, ws, home)
	var total, count uint64
	warm := len(lines)
	if ws > m.l2Bytes() {
		warm = 0
	}
	n := warm + min(len(lines), chaseMeasured)
	var step func(i int, now uint64)
	step = func(i int, now uint64) {
		if i == n {
			return
		}
		r := Region{Base: lines[i%len(lines)] * p.lineBytes, Rows: 1,
			RowBytes: 8, Pitch: 8}
		h.Read(now, microSM, AValues, r, true, func(c uint64) {
			if i >= warm {
				total += c - now
				count++
			}
			step(i+1, c)
		})
	}
	step(0, 0)
	_ = e.Run()
	return float64(total) / float64(count)
}

// chaseLines are ws bytes' worth of lines (homed as asked) in a fixed
// random order.
func (m micro) chaseLines(p params, ws uint64, home homeFilter) []uint64 {
	want := int(max(1, ws/p.lineBytes))
	lines := make([]uint64, 0, want)
	for l := uint64(0); len(lines) < want; l++ {
		if m.homeOK(p, l, home) {
			lines = append(lines, l)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(lines), func(i, j int) {
		lines[i], lines[j] = lines[j], lines[i]
	})
	return lines
}

func (m micro) homeOK(p params, line uint64, home homeFilter) bool {
	if home == homeAny {
		return true
	}
	s, _ := p.amap.slice(line)
	near := s/p.slicesPerPart == p.partitionOf(microSM)
	return near == (home == homeNear)
}

// Streaming kernel shape: every SM keeps streamInFlight requests of
// streamChunk bytes outstanding (gpu-stream style: enough loads in flight
// to cover the latency).
const (
	streamChunk    = 4096
	streamInFlight = 8
)

// bandwidth streams: every SM reads chunks of a buffer of ws bytes. With
// private, each SM has its own ws-byte buffer (the L1 test); otherwise the
// SMs share one buffer, each taking its part. For levels the buffer fits
// in, one untimed pass warms the caches first; then one pass is timed.
func (m micro) bandwidth(level string, ws uint64, private, viaL1 bool) MicroResult {
	cycles, bytes, _ := m.stream(ws, private, viaL1)
	gbps := float64(bytes) / float64(cycles) * float64(m.clk.Freq) / 1e9
	return MicroResult{Kind: "bandwidth", Level: level, Unit: "GB/s",
		Value: gbps, WorkingSetBytes: ws}
}

// stream times one pass of the streaming kernel over ws bytes (after an
// untimed warming pass when the buffer fits in L2) and returns its cycles,
// the bytes read and the hierarchy's traffic counters of the timed pass.
func (m micro) stream(ws uint64, private, viaL1 bool) (uint64, uint64, Stats) {
	e, h, _ := m.build()
	per := ws / uint64(m.numSMs) / streamChunk * streamChunk
	if private {
		per = ws / streamChunk * streamChunk
	}
	run := func(at uint64) (end, bytes uint64) {
		for sm := 0; sm < m.numSMs; sm++ {
			base := uint64(sm) * per
			if private {
				base = uint64(sm) * (per + 1<<20)
			}
			s := &streamer{h: h, sm: sm, class: BOperand, viaL1: viaL1,
				base: base, bytes: per, inFlight: streamInFlight,
				chunk: streamChunk}
			s.onDone = func(c uint64) { end = max(end, c); bytes += s.bytes }
			s.start(at)
		}
		_ = e.Run()
		return end, bytes
	}
	var t0 uint64
	if ws <= m.l2Bytes() {
		t0, _ = run(0)
	}
	t1, bytes := run(t0)
	return t1 - t0, bytes, h.Stats()
}

// StreamDRAM runs the DRAM bandwidth microbenchmark's streaming kernel
// (every SM reading its part of a buffer twice the L2's size, cold) and
// returns its cycles and the hierarchy's traffic counters, for the energy
// model's DRAM-streaming power point.
func StreamDRAM(cfg Config, clk clock.Clock, numSMs int) (uint64, Stats, error) {
	m := micro{cfg: cfg, clk: clk, numSMs: numSMs}
	if _, err := m.builder().Build("Memory"); err != nil {
		return 0, Stats{}, err
	}
	cycles, _, st := m.stream(2*m.l2Bytes(), false, false)
	return cycles, st, nil
}

// streamer reads bytes from base in chunk-sized rows with at most
// inFlight chunks outstanding, then calls onDone with the last
// completion; op says what it does with a chunk (streamRead: read it).
type streamer struct {
	h        Hierarchy
	sm       int
	class    Class
	viaL1    bool
	op       streamOp
	dst      uint64 // streamCopy: where the copy of base begins
	base     uint64
	bytes    uint64
	chunk    uint64
	inFlight int
	next     uint64 // offset of the next chunk
	pending  int
	last     uint64
	onDone   func(cycle uint64)
}

func (s *streamer) start(now uint64) {
	for i := 0; i < s.inFlight; i++ {
		s.issue(now)
	}
	if s.pending == 0 {
		s.onDone(now)
	}
}

func (s *streamer) issue(now uint64) {
	if s.next >= s.bytes {
		return
	}
	n := min(s.chunk, s.bytes-s.next)
	r := Region{Base: s.base + s.next, Rows: 1, RowBytes: int(n), Pitch: n}
	s.next += n
	s.pending++
	done := func(c uint64) {
		s.pending--
		s.last = max(s.last, c)
		s.issue(c)
		if s.pending == 0 {
			s.onDone(s.last)
		}
	}
	switch s.op {
	case streamWrite:
		s.h.Write(now, s.sm, DWrite, r, done)
	case streamCopy:
		s.h.Read(now, s.sm, s.class, r, s.viaL1, func(c uint64) {
			w := r
			w.Base += s.dst - s.base
			s.h.Write(c, s.sm, DWrite, w, done)
		})
	default:
		s.h.Read(now, s.sm, s.class, r, s.viaL1, done)
	}
}
