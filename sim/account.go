package sim

// reason is what a warp, and through it a tensor core, was waiting for.
type reason uint8

const (
	whyCompute    reason = iota // the tensor core's issue slot was taken
	whySmem                     // a fragment from shared memory, or the MIO queue
	whyL2                       // a cp.async stage whose data came from L2
	whyDRAM                     // a cp.async stage whose data came from DRAM
	whyLatency                  // launch, tail, pipeline fill
	whyBarrier                  // BAR.SYNC: the CTA's other warps
	whyDependence               // a register written by an earlier instruction (accumulator, address)
	whyIssue                    // issue slots: the scheduler was issuing other instructions
	whyRegFile                  // register-file read ports
	whyStage                    // a cp.async group not yet back (resolved to L2, DRAM or smem)
	whyLaunch                   // waiting for the CTA's first instructions
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

// idleFor books gap idle cycles of unit u to the reasons in stall (the
// cycles the warp that ended the gap waited on each since its previous
// MMA), proportionally; cycles beyond what the warp waited are latency.
func (a *timeAccount) idleFor(u int, gap uint64, stall *[numReasons]uint64) {
	var sum uint64
	for _, v := range stall {
		sum += v
	}
	if sum <= gap {
		for i, v := range stall {
			a.idle[i] += v
		}
		a.idle[whyLatency] += gap - sum
		return
	}
	left := gap
	best := whyLatency
	for i, v := range stall {
		share := gap * v / sum
		a.idle[i] += share
		left -= share
		if v > stall[best] {
			best = reason(i)
		}
	}
	a.idle[best] += left
}

// breakdown closes the account at the kernel's end and returns the shares
// of compute, smem, L2, DRAM and latency in the tensor cores' total time.
func (a *timeAccount) breakdown(end uint64) Breakdown {
	return shares(a.busy, a.closed(end))
}

// closed is the idle account with each tensor core's tail after its last
// work added as latency.
func (a *timeAccount) closed(end uint64) [numReasons]uint64 {
	idle := a.idle
	for _, last := range a.lastEnd {
		if end > last {
			idle[whyLatency] += end - last
		}
	}
	return idle
}

// shares normalises busy and idle cycles into a breakdown: barrier,
// dependence, issue, register-file, launch and tail waits count as
// latency.
func shares(busy uint64, idle [numReasons]uint64) Breakdown {
	total := float64(busy)
	for _, v := range idle {
		total += float64(v)
	}
	if total == 0 {
		return Breakdown{}
	}
	f := func(v uint64) float64 { return float64(v) / total }
	lat := uint64(0)
	for _, r := range []reason{whyLatency, whyCompute, whyBarrier,
		whyDependence, whyIssue, whyRegFile, whyLaunch, whyStage} {
		lat += idle[r]
	}
	return Breakdown{Compute: f(busy), Smem: f(idle[whySmem]),
		L2: f(idle[whyL2]), DRAM: f(idle[whyDRAM]), Latency: f(lat)}
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

// note charges the cycles since the warp's last note to what it was
// waiting on, and records what it waits on from now.
func (w *warp) note(why reason, now uint64) {
	if now > w.since {
		w.stall[w.why] += now - w.since
	}
	w.since, w.why = now, why
}

// stageResolved books the warp's wait for cp.async groups, once its
// DEPBAR passes, to what the last group waited on.
func (w *warp) stageResolved(why reason) {
	if why != whyL2 && why != whyDRAM && why != whySmem {
		why = whyL2
	}
	w.stall[why] += w.stall[whyStage]
	w.stall[whyStage] = 0
}

// Causes splits a kernel's tensor-core time by cause (instruction-level
// SM only): busy, and idle by what the warps waited on. Sums to 1.
type Causes struct {
	Compute      float64 `json:"compute"`
	Smem         float64 `json:"smem"`
	L2           float64 `json:"l2"`
	DRAM         float64 `json:"dram"`
	Barrier      float64 `json:"barrier"`
	Dependence   float64 `json:"dependence"`
	Issue        float64 `json:"issue"`
	RegisterFile float64 `json:"register_file"`
	TensorQueue  float64 `json:"tensor_queue"`
	LaunchTail   float64 `json:"launch_tail"`
}

// causes normalises busy and idle cycles by cause.
func causes(busy uint64, idle [numReasons]uint64) *Causes {
	total := float64(busy)
	for _, v := range idle {
		total += float64(v)
	}
	if total == 0 {
		return &Causes{}
	}
	f := func(v uint64) float64 { return float64(v) / total }
	return &Causes{Compute: f(busy), Smem: f(idle[whySmem]), L2: f(idle[whyL2]),
		DRAM: f(idle[whyDRAM]), Barrier: f(idle[whyBarrier]),
		Dependence: f(idle[whyDependence]), Issue: f(idle[whyIssue]),
		RegisterFile: f(idle[whyRegFile]), TensorQueue: f(idle[whyCompute]),
		LaunchTail: f(idle[whyLatency] + idle[whyLaunch] + idle[whyStage])}
}

// bound names the largest cause.
func (c *Causes) bound() string {
	best, name := c.Compute, "compute"
	for _, x := range []struct {
		v float64
		n string
	}{{c.Smem, "smem"}, {c.L2, "l2"}, {c.DRAM, "dram"}, {c.Barrier, "barrier"},
		{c.Dependence, "dependence"}, {c.Issue, "issue"}, {c.RegisterFile, "register_file"},
		{c.TensorQueue, "tensor_queue"}, {c.LaunchTail, "launch_tail"}} {
		if x.v > best {
			best, name = x.v, x.n
		}
	}
	return name
}
