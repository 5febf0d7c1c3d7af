package sim

// reason is what a tensor core was waiting for when it sat idle.
type reason uint8

const (
	whyCompute reason = iota // queued behind other MMAs: the TC itself
	whySmem                  // fragments or cp.async stores in shared memory
	whyL2                    // tile data from L2
	whyDRAM                  // tile data from DRAM
	whyLatency               // barriers, pipeline fill, launch, tail
	numReasons
)

// timeAccount attributes every tensor-core cycle of a kernel: busy (issue
// slots occupied) or idle, and when idle, to the reason the run that ended
// the gap was late. Summed over all tensor cores, it is the kernel's time
// breakdown.
type timeAccount struct {
	lastEnd []uint64
	busy    uint64
	idle    [numReasons]uint64
}

// init opens the account for units tensor cores at the kernel's launch
// (the launch latency is idle time of every unit).
func (a *timeAccount) init(units int, launch uint64) {
	a.lastEnd = make([]uint64, units)
	for u := range a.lastEnd {
		a.lastEnd[u] = launch
	}
	a.idle[whyLatency] = launch * uint64(units)
}

// run records that unit u issued MMAs over [start, end) after waiting for
// why.
func (a *timeAccount) run(u int, start, end uint64, why reason) {
	if start > a.lastEnd[u] {
		a.idle[why] += start - a.lastEnd[u]
	}
	if end > start {
		a.busy += end - start
	}
	a.lastEnd[u] = max(a.lastEnd[u], end)
}

// breakdown closes the account at the kernel's end and returns the shares
// of compute, smem, L2, DRAM and latency in the tensor cores' total time.
func (a *timeAccount) breakdown(end uint64) Breakdown {
	idle := a.idle
	for _, last := range a.lastEnd {
		if end > last {
			idle[whyLatency] += end - last
		}
	}
	return shares(a.busy, idle)
}

// shares normalises busy and idle cycles into a breakdown; waiting behind
// other MMAs of the same tensor core counts as latency (the unit was not
// idle for want of work, but the warp's own run had to queue).
func shares(busy uint64, idle [numReasons]uint64) Breakdown {
	total := float64(busy)
	for _, v := range idle {
		total += float64(v)
	}
	if total == 0 {
		return Breakdown{}
	}
	f := func(v uint64) float64 { return float64(v) / total }
	return Breakdown{Compute: f(busy), Smem: f(idle[whySmem]),
		L2: f(idle[whyL2]), DRAM: f(idle[whyDRAM]),
		Latency: f(idle[whyLatency] + idle[whyCompute])}
}

// bound names the resource with the largest share of the time.
func (b Breakdown) bound() string {
	best, name := b.Compute, "compute"
	for _, c := range []struct {
		v float64
		n string
	}{{b.Smem, "smem"}, {b.L2, "l2"}, {b.DRAM, "dram"}, {b.Latency, "latency"}} {
		if c.v > best {
			best, name = c.v, c.n
		}
	}
	return name
}
