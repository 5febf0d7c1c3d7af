package sm

import (
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/clock"
	"github.com/stcsim/stcsim/internal/engine"
	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
)

// Env is what an SM needs from the GPU it is part of, built once by
// the GPU: the engine and clock, the config, the memory hierarchy and
// the filler of cp.async copies, the kernel's plan, the calendar of
// sub-partition scans, the counters every SM adds to, the source of
// same-cycle tie offsets, the kernel's launch cycle, and what to call
// when a CTA finishes. The SM reaches nothing else above it.
type Env struct {
	Engine    *engine.Serial
	Clock     clock.Clock
	Config    *configs.Config
	Mem       memory.Hierarchy
	Filler    *memory.Filler
	Plan      *kernel.Plan
	Calendar  *Calendar
	Count     *Counters
	Tie       TieSource
	StartedAt uint64 // the kernel's launch cycle
	Serial    uint64 // distinguishes simulations in traces
	// Finished frees a finished CTA's slot (the GPU's dispatcher).
	Finished func(c *CTA, at uint64)
	// Flags are the flags in global memory that serial split-K and
	// stream-K CTAs wait on and signal (the GPU's; nil when the
	// schedule has none).
	Flags Flags
	// Hooks are the in-run fast paths watching the SM (empty when none
	// is on).
	Hooks []Hook

	// rfTables are the register-file uses of the programs the SMs run
	// (rfuse.go), made as warps start them.
	rfTables map[*isa.Program]*rfTable
}

// Flags are the values of the kernel's flags in global memory as the
// L2 holds them: Value is a flag's value now, Set and Add change it once a
// store or reduction reaches the L2.
type Flags interface {
	Value(flag int) int
	Set(flag, v int)
	Add(flag, v int)
}

// TieSource gives the sub-cycle offset of each event an SM schedules
// for itself (an ensemble run's jitter; 0 in the unperturbed model).
type TieSource interface{ Tie() float64 }

// Counters are the run's totals every SM adds to.
type Counters struct {
	Issued   uint64                 // warp instructions issued
	IssuedOp [isa.NumOpcodes]uint64 // the same by opcode class
	RFRead   uint64                 // register-file bytes read
	RFWrite  uint64                 // register-file bytes written
	Acct     Account                // the tensor cores' busy and idle cycles
	// The fix-up of serial split-K and stream-K: bytes its loads and
	// stores move (partial sums, the previous split's D, flags), the
	// cycles CTAs waited on flags, and the flag polls.
	FixupBytes uint64
	FixupWait  uint64
	FlagPolls  uint64
}

// mmas is the MMAs issued so far.
func (c *Counters) mmas() uint64 { return c.IssuedOp[isa.OpMMA] + c.IssuedOp[isa.OpMMASP] }

// Hook is a fast path watching the SMs of a run: it is told when a CTA
// starts, passes a k-step barrier and finishes, when a warp becomes
// resident and when an MMA issues, and keeps its own state. The SM calls
// hooks from a list that is empty when no fast path is on; the one thing
// a hook may change in the SM is a CTA's k-step (CTA.SkipKSteps).
type Hook interface {
	CTAStarted(c *CTA)
	KStepBarrier(c *CTA, k int, at uint64)
	CTAFinished(c *CTA, at uint64)
	WarpResident(sp *SubPartition, w *Warp)
	MMAIssued(sp *SubPartition, now uint64)
}

// HookBase is a Hook that does nothing, for hooks to embed.
type HookBase struct{}

// CTAStarted is part of Hook.
func (HookBase) CTAStarted(*CTA) {}

// KStepBarrier is part of Hook.
func (HookBase) KStepBarrier(*CTA, int, uint64) {}

// CTAFinished is part of Hook.
func (HookBase) CTAFinished(*CTA, uint64) {}

// WarpResident is part of Hook.
func (HookBase) WarpResident(*SubPartition, *Warp) {}

// MMAIssued is part of Hook.
func (HookBase) MMAIssued(*SubPartition, uint64) {}
