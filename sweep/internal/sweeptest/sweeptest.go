// Package sweeptest holds what the tests of sweep and sweep/store share:
// a small sweep file and a stand-in for the simulator, so that a store
// of known points is made in milliseconds.
package sweeptest

import (
	"os"
	"strconv"
	"time"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
)

// Spec varies three keys (one grid axis of two values, one zipped
// pair of two) over two workloads: 2 x 2 points x 2 workloads = 8 units.
const Spec = `
name: test
configs: [a100-40gb]
set: ["sim.seed=7"]
workloads:
  - name: small
    gemms: [256x256x256, 512x256x1024]
  - name: big
    gemms: [2048x2048x2048]
    precision: bf16
modes: [dense, sparse]
grid:
  shared_memory.bytes_per_clk: [64, 128]
zip:
  - l2.size_kb: [20480, 40960]
    dram.bandwidth_gbps: [1000, 1555]
`

// FakeRun stands in for sim.Run: a deterministic report whose numbers
// depend on the config and the GEMMs, so that results differ per point.
// STCSIM_FAKE_DELAY_MS slows it down for the interruption tests.
func FakeRun(ld *configs.Loaded, job sim.Job) (*sim.Report, error) {
	if ms, _ := strconv.Atoi(os.Getenv("STCSIM_FAKE_DELAY_MS")); ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	c := ld.Config
	rep := &sim.Report{Tool: "stcsim", Version: sim.Version, Config: c.Name}
	for _, tr := range job.Workloads {
		totals := map[tensorcore.Mode]float64{}
		for _, g := range tr.GEMMs {
			flops := 2 * float64(g.M) * float64(g.N) * float64(g.K)
			bytes := 2 * float64(g.M*g.K+g.K*g.N+g.M*g.N)
			dense := flops/(float64(c.GPU.SMCount)*1e6) +
				bytes/(c.Memory.DRAM.BandwidthGBps*1e3) +
				float64(c.Memory.L2.SizeKB)/1e6 + 1e3/float64(c.Memory.SharedMemory.BytesPerClk)
			fifth := max(1, uint64(dense*float64(c.GPU.ClockMHz)/5))
			dense = float64(5*fifth) / float64(c.GPU.ClockMHz)
			for _, m := range job.Modes {
				// whole cycles, the sparse 3/5 of the dense (a 5/3 speedup),
				// and every derived field as sim derives it
				// (LayerResult.CheckDerived)
				cycles := 5 * fifth
				if m == tensorcore.Sparse {
					cycles = 3 * fifth
				}
				t := float64(cycles) / float64(c.GPU.ClockMHz)
				sec := t / 1e6
				r := sim.LayerResult{Workload: tr.Name, Layer: g.Name, M: g.M,
					N: g.N, K: g.K, Batch: 1, Precision: g.Precision, Mode: m,
					Count: 1, Cycles: cycles, TimeUS: sec * 1e6,
					DRAMReadBytes: uint64(bytes)}
				r.TFLOPS = r.FLOPs() / sec / 1e12
				r.DRAMGBps = float64(r.DRAMReadBytes) / sec / 1e9
				watts := 200 + flops/1e9 // energy fields, as sim fills them
				if m == tensorcore.Sparse {
					watts *= 0.8
				}
				r.Power = sim.Power{ClockMHz: c.GPU.ClockMHz, EnergyUJ: watts * t,
					AvgPowerW: watts}
				if m == tensorcore.Sparse {
					r.Speedup = dense / t
					r.EnergySaving = (200 + flops/1e9) * dense / r.EnergyUJ
				}
				rep.Results = append(rep.Results, r)
				totals[m] += t
			}
		}
		for _, m := range job.Modes {
			t := sim.Total{Workload: tr.Name, Mode: m, TimeUS: totals[m]}
			if m == tensorcore.Sparse {
				t.Speedup = totals[tensorcore.Dense] / totals[m]
			}
			rep.Totals = append(rep.Totals, t)
		}
	}
	return rep, nil
}
