package sim

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/internal/engine"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
)

// smEnv is what an SM needs from the GPU it is part of, built once by
// the GPU: the engine and clock, the config, the memory hierarchy and
// the filler of cp.async copies, the kernel's plan, the calendar of
// sub-partition scans, the counters every SM adds to, the source of
// same-cycle tie offsets, the kernel's launch cycle, and what to call
// when a CTA finishes. The SM reaches nothing else above it.
type smEnv struct {
	engine    *engine.Serial
	clk       clock.Clock
	cfg       *configs.Config
	mem       memory.Hierarchy
	filler    *memory.Filler
	plan      *kernel.Plan
	cal       *calendar
	count     *counters
	tie       tieSource
	startedAt uint64 // the kernel's launch cycle
	serial    uint64 // distinguishes simulations in traces
	// finished frees a finished CTA's slot (the GPU's dispatcher).
	finished func(c *cta, at uint64)
	// hooks are the in-run fast paths watching the SM (empty when none
	// is on).
	hooks []Hook
}

// tieSource gives the sub-cycle offset of each event an SM schedules
// for itself (an ensemble run's jitter; 0 in the unperturbed model).
type tieSource interface{ Tie() float64 }

// counters are the run's totals every SM adds to.
type counters struct {
	issued   uint64                 // warp instructions issued
	issuedOp [isa.NumOpcodes]uint64 // the same by opcode class
	rfRead   uint64                 // register-file bytes read
	rfWrite  uint64                 // register-file bytes written
	acct     timeAccount            // the tensor cores' busy and idle cycles
}

// mmas is the MMAs issued so far.
func (c *counters) mmas() uint64 { return c.issuedOp[isa.OpMMA] + c.issuedOp[isa.OpMMASP] }

// Hook is a fast path watching the SMs of a run: it is told when a CTA
// starts, passes a k-step barrier and finishes, when a warp becomes
// resident and when an MMA issues, and keeps its own state. The SM calls
// hooks from a list that is empty when no fast path is on; the one thing
// a hook may change in the SM is a CTA's k-step (CTA.SkipKSteps).
type Hook interface {
	CTAStarted(c *cta)
	KStepBarrier(c *cta, k int, at uint64)
	CTAFinished(c *cta, at uint64)
	WarpResident(sp *subPartition, w *warp)
	MMAIssued(sp *subPartition, now uint64)
}

// HookBase is a Hook that does nothing, for hooks to embed.
type HookBase struct{}

// CTAStarted is part of Hook.
func (HookBase) CTAStarted(*cta) {}

// KStepBarrier is part of Hook.
func (HookBase) KStepBarrier(*cta, int, uint64) {}

// CTAFinished is part of Hook.
func (HookBase) CTAFinished(*cta, uint64) {}

// WarpResident is part of Hook.
func (HookBase) WarpResident(*subPartition, *warp) {}

// MMAIssued is part of Hook.
func (HookBase) MMAIssued(*subPartition, uint64) {}
