package sm

import (
	"fmt"

	"github.com/stcsim/stcsim/memory/smem"
	"github.com/stcsim/stcsim/sim/internal/isa"
	"github.com/stcsim/stcsim/sim/kernel"
	"github.com/stcsim/stcsim/tensorcore/unit"
)

// SubPartition is one SM processing block: warp schedulers over its
// resident warps, the tensor core, an ALU pipe, the register file's
// banks, and the MIO queue into the SM's shared memory.
//
// It is event-driven: a scan at cycle t issues what can issue and
// schedules the next scan at the earliest cycle any warp's next
// instruction can issue (t+1 while something issued); a warp waiting on
// an event (a load, a barrier) is woken by that event, so cycles where
// nothing can issue cost nothing.
type SubPartition struct {
	sm         *SM
	id         int
	Unit       int // index among all tensor cores of the GPU (accounting)
	tc         *unit.Unit
	warps      []*Warp // resident, oldest first
	sched      policy  // orders each warp scheduler's warps (sched.go)
	schedulers int     // warp schedulers
	dealt      int     // warps made resident so far (scheduler assignment)
	// issuePerClk is sm.issue_per_clk: instructions a warp scheduler
	// issues per cycle.
	issuePerClk int

	exited   bool         // a warp has exited since the last scan
	wakeAt   uint64       // pending scan (never: none)
	scanned  uint64       // cycle of the last scan (+1), so a cycle scans once
	lastMMA  uint64       // tensor core's issue slot ends (accounting)
	epoch    uint64       // MMAs issued: a warp's stall window is the current gap
	mma      unit.Request // one MMA of the plan's datapath
	tcFree   uint64       // tc.FreeAt of mma, valid while tcFreeOK
	tcFreeOK bool
	interval uint64
	aluFree  uint64 // ALU pipe accepts the next instruction
	fmaFree  uint64 // FP32 (FMA) pipe accepts the next instruction
	// fmaInterval is the FP32 pipe's cycles per warp instruction (32 /
	// sm.fp32_lanes, kernel.FMAInterval).
	fmaInterval uint64

	// mio holds the cycles the last mioQueue shared-memory instructions
	// start being served: the queue takes another once the oldest has.
	mio     [mioQueue]uint64
	mioHead int
	rf      regFile
}

func newSubPartition(s *SM, id int) *SubPartition {
	cfg := s.env.Config.SM
	sp := &SubPartition{sm: s, id: id, Unit: s.ID*cfg.SubPartitions + id,
		tc: s.TCs[id], sched: newPolicy(cfg.SchedulerPolicy, cfg.WarpSchedulers),
		schedulers: cfg.WarpSchedulers,
		rf:         newRegFile(cfg.RegisterFileBanks, cfg.RegisterFileBytesPerClk), issuePerClk: cfg.IssuePerClk, wakeAt: Never,
		lastMMA: s.env.StartedAt}
	sp.interval = uint64(s.env.Plan.Datapath.Interval)
	sp.fmaInterval = uint64(kernel.FMAInterval(s.env.Config))
	if s.env.Plan.Schedule == kernel.GEMV {
		// The CUDA-core GEMV issues no MMA: its account is the FP32
		// pipe's (each FFMA busy for its interval, the gaps between
		// booked to what the warp that ended them waited on).
		sp.interval = sp.fmaInterval
	}
	sp.mma = s.env.Plan.MMARequest(1)
	return sp
}

// add makes w resident at cycle now.
func (sp *SubPartition) add(w *Warp, now uint64) {
	w.SP = sp
	// Warps are dealt over the schedulers in arrival order (one
	// CTA's warps, then the next CTA's), so every scheduler gets warps
	// even when a CTA has one warp per sub-partition.
	w.sched = sp.dealt % sp.schedulers
	sp.dealt++
	sp.warps = append(sp.warps, w)
	for _, h := range sp.sm.env.Hooks {
		h.WarpResident(sp, w)
	}
	sp.wake(now)
}

// wake makes sure the sub-partition scans at cycle c (or earlier).
func (sp *SubPartition) wake(c uint64) {
	c = max(c, sp.scanned)
	if c >= sp.wakeAt {
		return
	}
	sp.wakeAt = c
	sp.sm.env.Calendar.schedule(c, sp)
}

// pipeFree is when in's functional unit, and the register-file banks it
// reads and writes, accept it.
func (sp *SubPartition) pipeFree(w *Warp, in *isa.Instr) (uint64, Reason) {
	at, why := sp.rf.freeAt(w.rfUse(in)), WhyRegFile
	var t uint64
	wy := WhyCompute
	switch in.Op {
	case isa.OpMMA, isa.OpMMASP:
		t = sp.tcFreeAt()
	case isa.OpALU:
		t, wy = sp.aluFree, WhyIssue
	case isa.OpFMA:
		t, wy = sp.fmaFree, WhyIssue
	case isa.OpLDSM, isa.OpLDS, isa.OpSTS, isa.OpSHFL:
		t, wy = sp.mio[sp.mioHead], WhySmem
	}
	if t > at {
		return t, wy
	}
	return at, why
}

// tcFreeAt is when the tensor core takes the plan's next MMA; only this
// sub-partition issues to it, so the answer holds until its next Issue.
func (sp *SubPartition) tcFreeAt() uint64 {
	if !sp.tcFreeOK {
		sp.tcFree, _ = sp.tc.FreeAt(0, sp.mma)
		sp.tcFreeOK = true
	}
	return sp.tcFree
}

// issueMMA issues one MMA of the plan to the tensor core at now and
// returns the cycle its result is written back.
func (sp *SubPartition) issueMMA(now uint64) uint64 {
	_, done, err := sp.tc.Issue(now, sp.mma)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", sp.sm.Name(), err)) // the plan's own datapath: a programming error
	}
	sp.tcFreeOK = false
	return done
}

// smemAccess sends a shared-memory instruction through the MIO queue
// and returns the cycle its data is in registers (or in shared memory).
func (sp *SubPartition) smemAccess(now uint64, p smem.Pattern, bytes int) uint64 {
	start := max(now, sp.sm.Smem.BusyUntil(now))
	done := sp.sm.Smem.Access(now, p, bytes)
	sp.mio[sp.mioHead] = start
	sp.mioHead = (sp.mioHead + 1) % mioQueue
	return done
}

// regFile is a sub-partition's register file: sm.register_file_banks
// banks, register r in bank r mod banks, each moving bankBytes per cycle.
// An instruction's operands come from their banks in parallel; operands
// in one bank take turns, so an instruction holds each bank it uses for
// ceil(its registers there x 128 B / bankBytes) cycles, and the next
// instruction using that bank issues once it is free. A load's
// write-back takes its destination's banks the same way.
type regFile struct {
	// free is, per bank, the last cycle it is held through (banks of
	// them; an array, so that it sits in the sub-partition beside the
	// rest of what a scan reads).
	free      [maxRFBanks]uint64
	banks     int
	bankBytes int
}

func newRegFile(banks, bytesPerClk int) regFile {
	banks = min(max(1, banks), maxRFBanks)
	return regFile{banks: banks, bankBytes: max(1, bytesPerClk/banks)}
}

// rfSpans is what one instruction moves through the register file's
// ports: the registers it reads, and (an LDSM's or LDS's fragment) the
// ones its write-back writes. An MMA's A fragment equal to the previous
// MMA's comes from the operand reuse cache; ALU results and MMA
// accumulators are written back through the pipes' own result ports.
type rfSpans struct {
	read  [4]isa.RegSpan
	write isa.RegSpan
}

// spansOf is the spans of in, its A fragment (an MMA's) from the reuse
// cache when reusedA.
func spansOf(in *isa.Instr, reusedA bool) (s rfSpans) {
	switch in.Op {
	case isa.OpMMA, isa.OpMMASP:
		s.read = in.Src
		if reusedA {
			s.read[0] = isa.RegSpan{}
		}
	case isa.OpLDSM, isa.OpLDS:
		s.read[0], s.write = in.Src[0], in.Dst
	case isa.OpSTS, isa.OpSTG, isa.OpLDGSTS:
		s.read[0] = in.Src[0]
	case isa.OpALU, isa.OpFMA, isa.OpSHFL:
		s.read = in.Src
	}
	return s
}

// count adds r's registers to their banks' counts and returns how many
// there are.
func (rf *regFile) count(regs *[maxRFBanks]int, r isa.RegSpan) int {
	if r.N == 0 {
		return 0
	}
	b := int(r.First) % rf.banks
	for range r.N {
		regs[b]++
		if b++; b == rf.banks {
			b = 0
		}
	}
	return int(r.N)
}

// maxRFBanks is the most sm.register_file_banks may be (configs/bounds.go).
const maxRFBanks = 32

// regBytes is one warp register: 32 threads x 4 B.
const regBytes = 128

// scan issues, per warp scheduler, up to issue_per_clk instructions from
// its warps at cycle now, in the scheduling policy's order.
func (sp *SubPartition) scan(now uint64) {
	sp.scanned = now + 1
	next := uint64(Never)
	if sp.exited {
		sp.dropExited()
	}
	for s := range sp.schedulers {
		next = min(next, sp.scanScheduler(s, now))
	}
	if next != Never {
		sp.wake(next)
	}
}

// scanScheduler offers scheduler s's issue slots at now to its warps in
// the policy's order and returns the earliest cycle one of them may
// issue next.
func (sp *SubPartition) scanScheduler(s int, now uint64) uint64 {
	next := uint64(Never)
	issued := 0
	wk := sp.sched.order(sp, s)
	for i := 0; i <= wk.n; i++ {
		w := wk.at(sp, s, i)
		if w == nil {
			continue
		}
		in := w.current()
		if in == nil {
			continue
		}
		at, why := w.readyAt(in, now)
		if at <= now && issued >= sp.issuePerClk {
			at, why = now+1, WhyIssue
		}
		if at > now {
			w.note(why, now)
			next = min(next, at)
			continue
		}
		w.note(WhyIssue, now)
		if in.Op == isa.OpDEPBAR {
			w.stageResolved(why)
		}
		if in.Op != isa.OpDEPBAR && w.stall[WhyStage] > 0 {
			w.loadResolved(in) // a GEMV's wait for an operand load
		}
		w.issue(in, now)
		issued++
		sp.sched.issued(s, w)
		next = min(next, now+1)
	}
	return next
}

// dropExited removes the warps that have run EXIT, keeping the others'
// order.
func (sp *SubPartition) dropExited() {
	live := sp.warps[:0]
	for _, w := range sp.warps {
		if w.section < 3 {
			live = append(live, w)
		}
	}
	for i := len(live); i < len(sp.warps); i++ {
		sp.warps[i] = nil
	}
	sp.warps = live
	sp.exited = false
}

// mmaIssued books the tensor core's idle time before an MMA that warp w
// issued at now to what w waited on since its previous MMA.
func (sp *SubPartition) mmaIssued(w *Warp, now uint64) {
	acct := &sp.sm.env.Count.Acct
	sp.chargeIdle(w, now)
	acct.Busy += sp.interval
	sp.lastMMA = now + sp.interval
	acct.LastEnd[sp.Unit] = sp.lastMMA
	for _, h := range sp.sm.env.Hooks {
		h.MMAIssued(sp, now)
	}
}
