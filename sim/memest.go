package sim

import (
	"fmt"
	"runtime"
	"sort"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/memory/memcfg"
	"github.com/stcsim/stcsim/sim/kernel"
)

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

// EstimateMemory is the peak Go heap a job needs, in bytes: MemBase and
// the simulations that run at once (sim.Run simulates GOMAXPROCS GEMMs
// side by side), the largest of them, each its GPU's SMs and L2 and the
// copies in flight of the kernel among its candidates that holds the
// most. It runs no simulation.
func EstimateMemory(cfg *configs.Config, job Job) float64 {
	_, sims := scan(cfg, job)
	return memoryOf(sims, job)
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
		stage := p.AStageB + p.MetaStageB + p.BStageB
		lines = max(lines, float64(resident*p.Tile.Stages*stage)/
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
