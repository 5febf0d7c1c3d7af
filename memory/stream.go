package memory

import (
	"fmt"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
)

// StreamKernel is a memory-bound elementwise kernel, such as the
// run-time activation sparsifier of a sparse training step: every SM
// takes its contiguous share of one input buffer, reads it chunk by chunk
// through L1, and as each chunk arrives writes its part of every output
// (an output of Bytes bytes gets Bytes/InBytes of each chunk), at most
// InFlight chunks outstanding per SM (a chunk's slot frees when L2 has
// accepted its writes). The SMs' own work per element is not simulated:
// the kernel is its bytes through the modelled L1, crossbar, L2 and DRAM.
type StreamKernel struct {
	InBytes  uint64
	InClass  Class
	Outs     []StreamOut
	Chunk    uint64
	InFlight int
}

// StreamOut is one output of a StreamKernel.
type StreamOut struct {
	Class Class
	Bytes uint64
}

// StreamResult is a StreamKernel's time (from its first request to the
// last write L2 accepted) and its traffic, the write-back of its dirty
// lines to DRAM included (Flush after the kernel, as a GEMM's output).
type StreamResult struct {
	Cycles uint64
	Stats  Stats
}

// RunStream runs k on a fresh hierarchy of cfg (cold L2) with numSMs
// SMs at clk, in granularity gran (Fast or Detailed).
func RunStream(cfg Config, clk clock.Clock, numSMs int, gran string, k StreamKernel) (StreamResult, error) {
	if k.Chunk == 0 || k.InFlight <= 0 || k.InBytes == 0 {
		return StreamResult{}, fmt.Errorf("stream kernel: chunk %d, in flight %d, "+
			"input %d bytes: all must be > 0", k.Chunk, k.InFlight, k.InBytes)
	}
	e := akita.NewSerialEngine()
	h, err := MakeBuilder().WithEngine(e).WithFreq(clk.Freq).WithConfig(cfg).
		WithNumSMs(numSMs).WithGranularity(gran).Build("Memory")
	if err != nil {
		return StreamResult{}, fmt.Errorf("stream kernel: %w", err)
	}
	chunks := (k.InBytes + k.Chunk - 1) / k.Chunk
	per := (chunks + uint64(numSMs) - 1) / uint64(numSMs) // chunks per SM
	var end uint64
	for sm := 0; sm < numSMs; sm++ {
		first := uint64(sm) * per
		if first >= chunks {
			break
		}
		s := &chunkStreamer{h: h, k: k, sm: sm, next: first, last: min(first+per, chunks)}
		s.onDone = func(c uint64) { end = max(end, c) }
		s.start(0)
	}
	if err := e.Run(); err != nil {
		return StreamResult{}, fmt.Errorf("stream kernel: %w", err)
	}
	h.Flush(end, func(uint64) {})
	if err := e.Run(); err != nil {
		return StreamResult{}, fmt.Errorf("stream kernel flush: %w", err)
	}
	return StreamResult{Cycles: end, Stats: h.Stats()}, nil
}

// chunkStreamer is one SM's share of a StreamKernel: chunks next..last-1.
type chunkStreamer struct {
	h          Hierarchy
	k          StreamKernel
	sm         int
	next, last uint64
	pending    int
	end        uint64
	onDone     func(cycle uint64)
}

func (s *chunkStreamer) start(now uint64) {
	for i := 0; i < s.k.InFlight; i++ {
		s.issue(now)
	}
}

// issue reads the next chunk; its writes follow its arrival, and the
// slot goes to the next chunk once they are accepted.
func (s *chunkStreamer) issue(now uint64) {
	if s.next >= s.last {
		return
	}
	c := s.next
	s.next++
	s.pending++
	off := c * s.k.Chunk
	n := min(s.k.Chunk, s.k.InBytes-off)
	in := Region{Base: off, Rows: 1, RowBytes: int(n), Pitch: n}
	s.h.Read(now, s.sm, s.k.InClass, in, true, func(at uint64) {
		s.write(at, off, n)
	})
}

// write stores chunk (off, n)'s share of every output, each output in
// its own buffer after the input's.
func (s *chunkStreamer) write(at, off, n uint64) {
	base := align(s.k.InBytes)
	var regions []Region
	var classes []Class
	for _, o := range s.k.Outs {
		from, to := share(off, o.Bytes, s.k.InBytes), share(off+n, o.Bytes, s.k.InBytes)
		if to > from {
			regions = append(regions, Region{Base: base + from, Rows: 1,
				RowBytes: int(to - from), Pitch: to - from})
			classes = append(classes, o.Class)
		}
		base += align(o.Bytes)
	}
	if len(regions) == 0 {
		s.finish(at)
		return
	}
	left := len(regions)
	for i, r := range regions {
		s.h.Write(at, s.sm, classes[i], r, func(done uint64) {
			s.end = max(s.end, done)
			if left--; left == 0 {
				s.finish(done)
			}
		})
	}
}

// finish frees a chunk's slot.
func (s *chunkStreamer) finish(at uint64) {
	s.end = max(s.end, at)
	s.pending--
	s.issue(at)
	if s.pending == 0 {
		s.onDone(s.end)
	}
}

// share is the output offset that input offset off maps to, for an
// output of out bytes per in input bytes (rounded down to 16 B, a
// vector store, except at the end).
func share(off, out, in uint64) uint64 {
	if off >= in {
		return out
	}
	return off * out / in / 16 * 16
}

// align rounds a buffer size up to 1 MiB, so that buffers do not share
// lines.
func align(b uint64) uint64 { return (b + 1<<20 - 1) >> 20 << 20 }
