package sim

import (
	"fmt"
	"runtime"
	"sort"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory/memcfg"
	"github.com/stcsim/stcsim/sim/demand"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/sim/selection"
	"github.com/stcsim/stcsim/sim/sm"
)

// WarpStepsPerSecond is the simulation speed the work estimate converts
// with: warp k-steps (one warp's instructions of one k-step, about 100 on
// the instruction-level SM) simulated per second of one core. Measured on
// the instruction-level SM: the default suite's estimate of 3.56e6 warp
// k-steps took 470 s of user CPU, 7.6e3 per second (docs/input-limits.md).
const WarpStepsPerSecond = 8e3

// DetailedMemoryFactor is the cost of a warp k-step under
// sim.memory_granularity=detailed (every line request through Akita
// caches and DRAM) in units of WarpStepsPerSecond's. Measured 2026-12-04
// on the 2-core machine with `stcsim run --gemm G --mode sparse
// --no-cache --set sim.memory_granularity=detailed`: 512^3 took 7.98 s
// of user CPU for 4.1e3 estimated warp k-steps (15.6x), 1024^3 25.1 s
// for 1.02e4 (19.7x); docs/log/2026-12-04-work.md.
const DetailedMemoryFactor = 18

// TouchCost is the cost of one CTA k-step the fast-forward leaves out, in
// warp k-steps: its tiles are still looked up in the L2 tags
// (memory.Toucher), so that what later waves find there is the full
// run's. Measured 2026-12-04 on the 2-core machine (loaded, about 10
// runnable jobs) with 256x256xK sparse, 128x128x64_64x64_s3 pinned, K
// extrapolation off: K = 262144 left out 16308 CTA k-steps in 0.39 s of
// CPU, K = 1048576 65460 in 0.98 s, both simulating 2608 warp k-steps:
// 12 us per k-step left out, 0.096 of a warp k-step at
// WarpStepsPerSecond (docs/log/2026-12-04-bad-input.md).
const TouchCost = 0.1

// Work is the simulated work of the prepared job, in warp k-steps of the
// fast memory path: the warp k-steps KSteps counts, each costing
// DetailedMemoryFactor under sim.memory_granularity=detailed, and the
// CTA k-steps the fast-forward leaves out at TouchCost each.
func (p *Prepared) Work() float64 { return workOf(p.cfg, p.total(p.shapes)) }

func workOf(cfg *configs.Config, w work) float64 {
	steps := w.steps
	if cfg.Sim.MemoryGranularity == "detailed" {
		steps *= DetailedMemoryFactor
	}
	return steps + TouchCost*w.touched
}

// KSteps is the number of warp k-steps the prepared job simulates: for
// each distinct GEMM, the simulations kernel selection lists for it
// (selection.BudgetOf: the candidates' samples, the record of the
// costliest candidate that may be picked and, power-capped, its
// re-timings), each counting the CTAs that are simulated (the first
// waves only where extrapolated) and its runs (the sim.jitter_runs
// ensemble). It runs no simulation.
func (p *Prepared) KSteps() float64 { return p.total(p.shapes).steps }

// work is an estimate: warp k-steps simulated, and CTA k-steps the
// fast-forward leaves out (whose tiles are touched in the L2 tags).
type work struct{ steps, touched float64 }

func (w *work) add(x work) { w.steps += x.steps; w.touched += x.touched }

func (w work) times(f float64) work { return work{w.steps * f, w.touched * f} }

// most is the costlier of two runs.
func most(a, b work) work {
	if b.steps+TouchCost*b.touched > a.steps+TouchCost*a.touched {
		return b
	}
	return a
}

// total is the work of the shapes (each sized once).
func (p *Prepared) total(shapes []*shapePlan) work {
	var total work
	for _, s := range shapes {
		total.add(p.shapeTotal(s))
	}
	return total
}

// shapeTotal is one shape's work: its selection's and, under
// Job.PowerCappedTotals, the re-timing of the costliest candidate the
// pre-model puts above the power limit (selection.LockedRetimes).
func (p *Prepared) shapeTotal(s *shapePlan) work {
	w := s.size(p.cfg).work
	if p.Job.PowerCappedTotals {
		var retime work
		for _, sims := range selection.LockedRetimes(p.cfg, s.plans) {
			retime = most(retime, simsWork(sims))
		}
		w.add(retime)
	}
	return w
}

// sized is what the estimates count of one shape: its work and the
// memory its simulation holds, from its ranked candidates.
type sized struct {
	work   work
	memory float64
}

// size is the shape's work and memory, counted on first use.
func (s *shapePlan) size(cfg *configs.Config) sized {
	s.once.Do(func() {
		s.sized = sized{shapeWork(cfg, s.plans), simulationMemory(cfg, s.plans)}
	})
	return s.sized
}

// WarpStepsSimulated is the number of warp k-steps the process's SMs have
// simulated so far (sim/sm's work meter): progress lines compare its
// growth with Prepared.KSteps.
func WarpStepsSimulated() uint64 { return sm.WarpStepsSimulated() }

// EstimateSeconds converts simulated work to seconds on one core.
func EstimateSeconds(work float64) float64 { return work / WarpStepsPerSecond }

// DescribeWork renders an estimate for messages.
func DescribeWork(work float64) string {
	sec := EstimateSeconds(work)
	t := fmt.Sprintf("%.0f s", sec)
	switch {
	case sec >= 7200:
		t = fmt.Sprintf("%.1f h", sec/3600)
	case sec >= 120:
		t = fmt.Sprintf("%.0f min", sec/60)
	}
	return fmt.Sprintf("%.3g warp k-steps, about %s of one core", work, t)
}

// shapeWork counts the simulations kernel selection lists for a shape's
// ranked candidates (selection.BudgetOf): every candidate's samples, and
// of the records and power-cap re-timings, which only the runs choose
// among, the costliest candidate's.
func shapeWork(cfg *configs.Config, plans []*kernel.Plan) work {
	b := selection.BudgetOf(cfg, plans)
	var total, record, retime work
	for _, s := range b.Samples {
		total.add(simWork(s))
	}
	for i := range b.Records {
		record = most(record, simsWork(b.Records[i]))
		retime = most(retime, simsWork(b.Retimes[i]))
	}
	total.add(record)
	total.add(retime)
	return total
}

// simsWork is the work of a list of simulations.
func simsWork(sims []selection.Sim) work {
	var w work
	for _, s := range sims {
		w.add(simWork(s))
	}
	return w
}

// simWork is the work of one simulation, all its runs: every simulated
// CTA's k-steps, but where the run is fast-forwarded the CTAs of its
// last wave, which run with no CTA left to launch, simulate only Kept
// of theirs and the rest are touched. (The earlier waves' CTAs start and
// end while others wait to launch, which the fast-forward's window does
// not allow; some of them are shortened too where their wave holds
// still, which this leaves counted.)
func simWork(s selection.Sim) work {
	warps := float64(s.Plan.Warps)
	full := float64(s.CTAs - s.LastWave)
	last := float64(s.LastWave)
	return work{steps: (full*s.KSteps + last*s.Kept) * warps,
		touched: last * (s.KSteps - s.Kept)}.times(float64(s.Runs))
}

// The work of `stcsim micro tc` in warp k-steps (WarpStepsPerSecond's
// unit), per tensor-core event. Measured 2026-12-04 on the 2-core
// machine (loaded) over the 8 precisions and modes, A100-40GB (432
// tensor cores), with /usr/bin/time: under tensorcore.fidelity=instruction
// --mmas 16384 took 22.2 s of user CPU and 65536 89.2 s (1.70e8 more
// MMAs: 0.39 us each); --chain 1048576 10.4 s against 0.35 s for the
// default 64 (8.4e6 more: 1.2 us each); batched, --mmas 1 --chain
// 1048576 2.63 s and 262144 0.88 s (6.3e6 more: 0.28 us each). A batched
// throughput run is one event per tensor core.
const (
	MicroMMACost          = 0.0031 // an MMA through the stages (instruction fidelity)
	MicroChainCost        = 0.0096 // a dependent MMA, instruction fidelity
	MicroBatchedChainCost = 0.0022 // a dependent MMA, batched
)

// EstimateMicroTC is the work of `stcsim micro tc` over runs
// precision x mode combinations with mmas independent MMAs per tensor
// core and a dependent chain of chain MMAs.
func EstimateMicroTC(cfg *configs.Config, runs, mmas, chain int) float64 {
	tcs := float64(cfg.GPU.SMCount * cfg.SM.SubPartitions)
	w := tcs*MicroBatchedChainCost + float64(chain)*MicroBatchedChainCost
	if cfg.TensorCore.Fidelity == "instruction" {
		w = tcs*float64(mmas)*MicroMMACost + float64(chain)*MicroChainCost
	}
	return float64(runs) * w
}

// The memory a run needs: the Go heap at its peak (live data and the
// garbage the collector has not reclaimed yet, as runtime.ReadMemStats'
// HeapAlloc samples it), built from what a simulation holds. Fitted
// 2026-12-04 to the peak heap of 15 runs on the 2-core machine (one
// sparse GEMM each; the same run's peak moves by up to a third between
// processes with what the collector has left; `go test ./sim -run
// TestMemoryEstimateMatchesPeakHeap -v` holds 8 of them within 2x;
// docs/log/2026-12-04-bad-input.md):
//
//   - fast memory, 256^3 on 108 SMs: 28 MB at a 10 MB L2, 51 MB at 40 MB,
//     102 MB at 160 MB (MemPerL2Byte, the tag arrays); 87 MB on 1024 SMs
//     at 10 MB (MemPerSM, an SM's warps, scoreboards, register file and
//     queues);
//   - 1024^3 (64 resident CTAs) 56 MB, 2048x2048x1024 and
//     4096x4096x1024 (216 resident, 3 stages of 24 KB) 78.5 and 80.5 MB
//     (MemPerInFlightLine: the copies in flight, stages x stage bytes per
//     resident CTA, in L2 lines);
//   - detailed memory (Akita caches with their data storage), 256^3:
//     349 MB at a 40 MB L2, 117 MB at 10 MB (DetailedPerL2Byte), 142 MB
//     at 10 MB on 432 SMs (DetailedPerSM: the L1 caches).
const (
	MemBase            = 5e6  // the process: config, kernel library, tables
	MemPerSM           = 60e3 // bytes per SM, fast memory
	MemPerL2Byte       = 0.6  // bytes per byte of L2, fast memory (tags)
	MemPerInFlightLine = 400  // bytes per L2 line of copies in flight
	DetailedPerL2Byte  = 7.7  // bytes per byte of L2 more, detailed memory
	DetailedPerSM      = 80e3 // bytes per SM more, detailed memory
)

// Memory is the peak Go heap the prepared job needs, in bytes: MemBase
// and the simulations that run at once (Run simulates GOMAXPROCS GEMMs
// side by side; one with an Observer), the largest of them, each its
// GPU's SMs and L2 and the copies in flight of the kernel among its
// candidates that holds the most. It runs no simulation.
func (p *Prepared) Memory() float64 {
	var sims []float64
	for _, s := range p.shapes {
		sims = append(sims, s.size(p.cfg).memory)
	}
	return memoryOf(sims, p.Job)
}

// memoryOf is MemBase and the largest simulations that run at once.
func memoryOf(sims []float64, job Job) float64 {
	sort.Sort(sort.Reverse(sort.Float64Slice(sims)))
	workers := runtime.GOMAXPROCS(0)
	if job.Observer != nil {
		workers = 1
	}
	total := MemBase
	for _, b := range sims[:min(len(sims), workers)] {
		total += b
	}
	return total
}

// simulationMemory is the heap one GEMM's simulation holds (plans: its
// ranked candidates).
func simulationMemory(cfg *configs.Config, plans []*kernel.Plan) float64 {
	sms := float64(cfg.GPU.SMCount)
	l2 := float64(cfg.Memory.L2.SizeKB) * 1024
	b := sms*MemPerSM + l2*MemPerL2Byte
	if cfg.Sim.MemoryGranularity == memcfg.Detailed {
		b += sms*DetailedPerSM + l2*DetailedPerL2Byte
	}
	lines := 0.0
	for _, p := range plans {
		resident := min(p.CTAs, cfg.GPU.SMCount*p.Occupancy)
		stage := demand.Of(cfg, p).Stage.Bytes()
		lines = max(lines, float64(resident*p.Tile.Stages)*stage/
			float64(cfg.Memory.L2.LineBytes))
	}
	return b + lines*MemPerInFlightLine
}

// DescribeMemory renders a memory estimate for messages.
func DescribeMemory(b float64) string {
	if b >= 1e9 {
		return fmt.Sprintf("%.1f GB", b/1e9)
	}
	return fmt.Sprintf("%.0f MB", b/1e6)
}
