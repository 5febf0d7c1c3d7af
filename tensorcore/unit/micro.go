package unit

import (
	"fmt"

	akita "github.com/sarchlab/akita/v3/sim"

	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/tensorcore"
)

// MicroResult is one line of the tensor-core microbenchmark.
type MicroResult struct {
	Precision tensorcore.Precision `json:"precision"`
	Mode      tensorcore.Mode      `json:"mode"`
	// TFLOPS is dense-equivalent (TOPS for int8): a sparse MMA counts
	// every product of its logical shape, skipped ones included, as
	// NVIDIA's peak figures do.
	TFLOPS         float64 `json:"tflops"`
	FMAPerClkPerSM float64 `json:"fma_per_clk_per_sm"`
	// LatencyCycles is the mean issue-to-result time of a dependent chain.
	LatencyCycles float64 `json:"latency_cycles"`
	// ThroughputCycles is the length of the throughput run, from the first
	// issue to the last write-back (the drain tail included).
	ThroughputCycles uint64 `json:"throughput_cycles"`
	// IssueInterval, DerivedLatency and Binding are the datapath's derived
	// figures (Derive) the run should reproduce: the measured throughput
	// is FMAs per instruction / IssueInterval per tensor core and the
	// measured latency DerivedLatency.
	Pattern        string   `json:"pattern,omitempty"`
	IssueInterval  int      `json:"issue_interval"`
	DerivedLatency int      `json:"derived_latency"`
	Binding        []string `json:"binding"`
	MMAsPerTC      int      `json:"mmas_per_tc"`
	TensorCores    int      `json:"tensor_cores"`
	Fidelity       string   `json:"fidelity"`
}

// MicroOptions sizes the microbenchmark.
type MicroOptions struct {
	// MMAsPerTC is the number of independent MMAs every tensor core runs
	// in the throughput phase; the drain tail (latency - interval cycles)
	// costs about that / (MMAsPerTC * interval) of the peak.
	MMAsPerTC int
	// Chain is the length of the dependent chain of the latency phase.
	Chain int
}

// DefaultMicroOptions: 4096 MMAs per tensor core (tail under 0.1 %), a
// 64-long chain.
var DefaultMicroOptions = MicroOptions{MMAsPerTC: 4096, Chain: 64}

// MicroTC runs the microbenchmark with DefaultMicroOptions.
func MicroTC(cfg tensorcore.Config, smCount, subPartitions, clockMHz int, precision tensorcore.Precision, mode tensorcore.Mode) (MicroResult, error) {
	return MicroTCWith(cfg, smCount, subPartitions, clockMHz, precision, mode, DefaultMicroOptions)
}

// MicroTCWith keeps every tensor core of the GPU (smCount x subPartitions
// Units) busy with independent MMAs of one precision and mode, all
// submitted at cycle 0, and measures dense-equivalent throughput over the
// run; then it runs a dependent chain on one Unit (each MMA submitted when
// the previous result is written back) for the latency.
func MicroTCWith(cfg tensorcore.Config, smCount, subPartitions, clockMHz int, precision tensorcore.Precision, mode tensorcore.Mode, opt MicroOptions) (MicroResult, error) {
	if l := cfg.Validate(); len(l) > 0 {
		return MicroResult{}, fmt.Errorf("micro tc: tensorcore config: %v", l[0])
	}
	if smCount < 1 || subPartitions < 1 || clockMHz < 1 {
		return MicroResult{}, fmt.Errorf("micro tc: need sm_count, sub_partitions and "+
			"clock_mhz >= 1 (got %d, %d, %d)", smCount, subPartitions, clockMHz)
	}
	if opt.MMAsPerTC < 1 || opt.Chain < 1 {
		return MicroResult{}, fmt.Errorf("micro tc: MMAs per tensor core (%d) and "+
			"chain length (%d) must be >= 1", opt.MMAsPerTC, opt.Chain)
	}
	if _, err := cfg.Get(precision); err != nil {
		return MicroResult{}, fmt.Errorf("micro tc: %w", err)
	}
	clk := clock.MHz(clockMHz)
	cycles, fmas, err := microThroughput(cfg, clk, smCount, subPartitions, precision, mode, opt.MMAsPerTC)
	if err != nil {
		return MicroResult{}, err
	}
	lat, err := microLatency(cfg, clk, precision, mode, opt.Chain)
	if err != nil {
		return MicroResult{}, err
	}
	fidelity := cfg.Fidelity
	if fidelity == "" {
		fidelity = "batched"
	}
	perClk := float64(fmas) / float64(cycles)
	prec, _ := cfg.Get(precision)
	dp, err := tensorcore.Derive(prec, precision, mode, prec.Pattern(), 0)
	if err != nil {
		return MicroResult{}, fmt.Errorf("micro tc: %w", err)
	}
	pattern := ""
	if mode != tensorcore.Dense {
		pattern = dp.Pattern.String()
	}
	return MicroResult{
		Pattern:          pattern,
		IssueInterval:    dp.Interval,
		DerivedLatency:   dp.Latency,
		Binding:          dp.Binding,
		Precision:        precision,
		Mode:             mode,
		TFLOPS:           2 * perClk * float64(clockMHz) * 1e6 / 1e12,
		FMAPerClkPerSM:   perClk / float64(smCount),
		LatencyCycles:    lat,
		ThroughputCycles: cycles,
		MMAsPerTC:        opt.MMAsPerTC,
		TensorCores:      smCount * subPartitions,
		Fidelity:         fidelity,
	}, nil
}

// kick runs fn at time 0 from outside any component (the simulation's
// start).
type kick struct{ fn func() }

func (k kick) Handle(akita.Event) error { k.fn(); return nil }

func microThroughput(cfg tensorcore.Config, clk clock.Clock, sms, subs int, precision tensorcore.Precision, mode tensorcore.Mode, n int) (cycles, fmas uint64, err error) {
	e := akita.NewSerialEngine()
	units := make([]*Unit, 0, sms*subs)
	var last uint64
	for s := 0; s < sms; s++ {
		for t := 0; t < subs; t++ {
			name := fmt.Sprintf("GPU.SM[%d].TC[%d]", s, t)
			units = append(units, MakeBuilder().WithEngine(e).WithFreq(clk.Freq).WithConfig(cfg).Build(name))
		}
	}
	start := kick{fn: func() {
		for _, u := range units {
			u.Submit(0, Request{Mode: mode, Precision: precision, Count: n,
				Done: func(c uint64) { last = max(last, c) }})
		}
	}}
	e.Schedule(clock.NewEvent(0, start, nil))
	if err := e.Run(); err != nil {
		return 0, 0, fmt.Errorf("micro tc: %w", err)
	}
	for _, u := range units {
		fmas += u.Stats().DenseEquivFMAs
	}
	if last == 0 {
		return 0, 0, fmt.Errorf("micro tc: run did not complete")
	}
	return last, fmas, nil
}

func microLatency(cfg tensorcore.Config, clk clock.Clock, precision tensorcore.Precision, mode tensorcore.Mode, chain int) (float64, error) {
	e := akita.NewSerialEngine()
	u := MakeBuilder().WithEngine(e).WithFreq(clk.Freq).WithConfig(cfg).Build("GPU.SM[0].TC[0]")
	var end uint64
	left := chain
	var step func(c uint64)
	step = func(c uint64) {
		if left == 0 {
			end = c
			return
		}
		left--
		u.Submit(c, Request{Mode: mode, Precision: precision, Count: 1, Done: step})
	}
	e.Schedule(clock.NewEvent(0, kick{fn: func() { step(0) }}, nil))
	if err := e.Run(); err != nil {
		return 0, fmt.Errorf("micro tc latency: %w", err)
	}
	return float64(end) / float64(chain), nil
}
