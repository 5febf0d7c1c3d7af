package kernel

import (
	"sync"
	"sync/atomic"

	"github.com/stcsim/stcsim/memory"
	"github.com/stcsim/stcsim/memory/smem"
	"github.com/stcsim/stcsim/tensorcore"
)

// The shared-memory access patterns of a plan (smemPatterns) walk every
// address of a warp's fragment loads and of a stage's fill: most of the
// cost of New. They depend only on the tile, the element type, the
// pattern, the layout and the shared-memory and fill geometry, never on
// the GEMM's size nor on the rest of the config, so one computation
// serves every plan that shares those: kernel selection's candidates over
// a workload's GEMMs, and every point of a sweep that varies other keys
// (a 10^4-point `sweep --dry-run` planned each point's candidates anew:
// docs/log/2026-12-04-bad-input.md).

// patternKey is everything smemPatterns reads.
type patternKey struct {
	bm, bn, bk, warpM, warpN int
	elemBytes                int
	pattern                  tensorcore.Pattern
	layout                   Layout
	sparse, dual             bool
	metaFragB, metaStageB    int
	// Every scalar of shared_memory (TestPatternKeyCoversSharedMemory).
	carveoutKB, banks, bankBytes, ports int
	bytesPerClk, latency                int
	fillArbitration                     string
	fillPacking                         bool
	// The fill's packets (memory.NewFiller).
	packet, lineBytes int
}

// smemPatterns is what smemPatterns sets on a plan.
type smemPatterns struct {
	layoutA, layoutB, layoutE smem.Layout
	ldsm, metaLDSM            smem.Pattern
	ldsmA, ldsmB              smem.Pattern
	fillWaves                 int
}

// patternMemo maps a patternKey to its smemPatterns; at most
// patternMemoMax entries are kept (a process meets a handful: one per
// tile, precision, mode and layout of the shared-memory geometries it
// runs).
var (
	patternMemo     sync.Map
	patternMemoSize atomic.Int64
)

const patternMemoMax = 1 << 14

func (p *Plan) patternKey(mc memory.Config) patternKey {
	t, s := p.Tile, mc.SharedMemory
	return patternKey{bm: t.BM, bn: t.BN, bk: t.BK, warpM: t.WarpM, warpN: t.WarpN,
		elemBytes: p.ElemBytes, pattern: p.Pattern, layout: p.Shape.Layout,
		sparse: p.Shape.Sparse, dual: p.Shape.Dual,
		metaFragB: p.metaFragB, metaStageB: p.MetaStageB,
		carveoutKB: s.CarveoutKB, latency: s.Latency, banks: s.Banks, bankBytes: s.BankBytes, ports: s.Ports,
		bytesPerClk: s.BytesPerClk, fillArbitration: s.FillArbitration,
		fillPacking: s.FillPacking,
		packet:      min(mc.Crossbar.PortBytesPerClk, mc.L2.LineBytes),
		lineBytes:   mc.L2.LineBytes}
}

func (p *Plan) patterns() smemPatterns {
	return smemPatterns{layoutA: p.layoutA, layoutB: p.layoutB, layoutE: p.layoutE,
		ldsm: p.LDSM, metaLDSM: p.MetaLDSM, ldsmA: p.LDSMA, ldsmB: p.LDSMB,
		fillWaves: p.FillWaves}
}

func (p *Plan) setPatterns(s smemPatterns) {
	p.layoutA, p.layoutB, p.layoutE = s.layoutA, s.layoutB, s.layoutE
	p.LDSM, p.MetaLDSM, p.LDSMA, p.LDSMB = s.ldsm, s.metaLDSM, s.ldsmA, s.ldsmB
	p.FillWaves = s.fillWaves
}
