package memory

// streamOp is what a streaming kernel does with each chunk, as the
// kernels of RRZE-HPC gpu-benches gpu-stream: read it (read: one load
// stream), write it (init: one store stream), or read it and write it to
// a second buffer (scale: a load and a store stream).
type streamOp int

const (
	streamRead streamOp = iota
	streamWrite
	streamCopy
)

// dramStreamBuffers is the size of each buffer of the DRAM store
// streams, in L2 sizes.
const dramStreamBuffers = 4

// dramStream is the DRAM bandwidth of a stream that writes (streamWrite
// or streamCopy): every SM takes its part of buffers of
// dramStreamBuffers L2 sizes; an untimed pass leaves the L2 full of
// dirty lines, as the previous of gpu-stream's repeated passes does, and
// the next pass is timed, in which every line written evicts one to
// DRAM. Bytes count as gpu-stream counts them: every byte loaded and
// every byte stored.
func (m micro) dramStream(level string, op streamOp) MicroResult {
	e, h, _ := m.build()
	ws := dramStreamBuffers * m.l2Bytes()
	per := ws / uint64(m.numSMs) / streamChunk * streamChunk
	pass := func(at uint64) (end, bytes uint64) {
		end = at
		for sm := 0; sm < m.numSMs; sm++ {
			base := uint64(sm) * per
			s := &streamer{h: h, sm: sm, class: BOperand, op: op, base: base,
				dst: ws + base, bytes: per, inFlight: streamInFlight,
				chunk: streamChunk}
			s.onDone = func(c uint64) { end = max(end, c); bytes += s.bytes }
			s.start(at)
		}
		_ = e.Run()
		return end, bytes
	}
	t0, _ := pass(0)
	t1, bytes := pass(t0)
	if op == streamCopy {
		bytes *= 2
	}
	gbps := float64(bytes) / float64(t1-t0) * float64(m.clk.Freq) / 1e9
	return MicroResult{Kind: "bandwidth", Level: level, Unit: "GB/s",
		Value: gbps, WorkingSetBytes: ws}
}
