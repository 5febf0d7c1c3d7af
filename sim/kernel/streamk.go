package kernel

// StreamKMap is a stream-K kernel's decomposition as CUTLASS 2.x's
// ThreadblockSwizzleStreamK (threadblock_swizzle_streamk.h) computes it
// for sm80: the output tiles split into data-parallel tiles, each one
// CTA's whole K, and stream-K tiles whose MAC-loop iterations (k-steps)
// are dealt evenly over a wave of stream-K CTAs ("DP + SK"); when the
// tiles quantize into whole waves, or stream-K would not save
// iterations by CUTLASS's cost model, every tile is data-parallel.
//
// What is left out: the separate reduction wave CUTLASS launches when
// more than two stream-K CTAs share a tile on a partly occupied GPU
// (the peers here always fix up in turn, its turnstile reduction), the
// cohort rasterization of big data-parallel grids (the tiles run in the
// stream-K raster order below) and the block-index remap of
// multi-occupancy grids, whose purpose, one stream-K CTA per SM before
// any SM gets a second, the dispatcher's slot-major launch gives anyway.
type StreamKMap struct {
	SMs          int // avail_sms: the SMs the decomposition balances over
	ItersPerTile int
	Tiles        int // output tiles of one GEMM
	SKTiles      int // the first SKTiles tiles are stream-K's
	SKBlocks     int // stream-K CTAs
	SKWaves      int
	// SK CTAs are dealt iterations region by region (one region, or one
	// per tile when the CTAs divide the tiles evenly: split-K-like).
	Regions, BlocksPerRegion, ItersPerRegion int
	ItersPerBlock, BigBlocks                 int // per region: the first BigBlocks take one more
	DPBlocks                                 int
	DPFirstWaveTiles                         int // tiles each CTA of the first data-parallel wave runs
}

// CUTLASS's stream-K heuristics (ThreadblockSwizzleStreamK).
const (
	// minItersPerSKBlock: no stream-K CTA gets fewer MAC-loop iterations.
	minItersPerSKBlock = 2
)

// planStreamK decomposes the plan's tiles over sms SMs at its
// occupancy and sizes the grid.
func (p *Plan) planStreamK(sms int) {
	m := &StreamKMap{SMs: max(1, sms), ItersPerTile: CeilDiv(p.PaddedK, p.Tile.BK),
		Tiles: p.TilesM * p.TilesN, DPFirstWaveTiles: 1}
	p.streamK = m
	dpTiles, skBlocks := m.Tiles, 0
	if p.Shape.Batch == 1 { // CUTLASS balances only kGemm mode
		dpTiles, skBlocks = blocksFor(m.Tiles, m.ItersPerTile, m.SMs, p.Occupancy)
	}
	m.SKTiles = m.Tiles - dpTiles
	if skBlocks > 0 {
		m.SKWaves = CeilDiv(skBlocks, m.SMs)
		skIters := m.SKTiles * m.ItersPerTile
		skBlocks = min(skBlocks, skIters)
		m.Regions = 1
		if skBlocks > m.SKTiles && skBlocks%m.SKTiles == 0 {
			m.Regions = m.SKTiles
		}
		m.BlocksPerRegion = skBlocks / m.Regions
		m.ItersPerRegion = skIters / m.Regions
		m.ItersPerBlock = skIters / skBlocks
		m.BigBlocks = (skIters - m.ItersPerBlock*skBlocks) / m.Regions
	}
	m.SKBlocks = skBlocks
	m.DPBlocks = dpTiles * p.Shape.Batch
	if m.SKWaves > 0 { // whole wave sets: the first DP wave's CTAs take more tiles
		dpWaves := CeilDiv(dpTiles, m.SMs)
		excess := (m.SKWaves + dpWaves) % p.Occupancy
		if m.DPFirstWaveTiles+excess <= dpTiles/m.SMs {
			m.DPFirstWaveTiles += excess
			m.DPBlocks -= excess * m.SMs
		}
	}
	p.CTAs = m.SKBlocks + m.DPBlocks
	most := 0
	for i := 0; i < p.CTAs; i++ {
		n := 0
		for _, s := range m.segments(p, i) {
			n += s.Steps
		}
		most = max(most, n)
	}
	p.KSteps, p.LastKSteps = most, most
}

// blocksFor is CUTLASS's get_blocks: how many tiles stay data-parallel
// and how many stream-K CTAs take the rest, for tiles output tiles of
// iters k-steps on sms SMs of occupancy CTAs each.
func blocksFor(tiles, iters, sms, occupancy int) (dpTiles, skBlocks int) {
	fullWaves := tiles / sms
	fullWaveTiles := fullWaves * sms
	partial := tiles - fullWaveTiles
	if partial == 0 {
		return tiles, 0 // whole waves
	}
	if fullWaves < occupancy { // the stream-K CTAs fill the GPU's occupancy
		sk, score := skBlocksFor(partial, iters, sms, occupancy-fullWaves, true)
		if score < 0 {
			return tiles, 0
		}
		return fullWaveTiles, sk
	}
	if occupancy > 1 && fullWaves%occupancy == occupancy-1 {
		if sk, score := skBlocksFor(partial, iters, sms, 1, true); score >= 0 {
			return fullWaveTiles, sk
		}
	}
	// The last full wave and the partial one go stream-K together.
	sk, score := skBlocksFor(partial+sms, iters, sms,
		occupancy-(fullWaves-1)%occupancy, false)
	if score < 0 {
		return tiles, 0
	}
	return fullWaveTiles - sms, sk
}

// skBlocksFor is CUTLASS's get_sk_blocks: the stream-K CTA count that
// saves the most iterations over running skTiles data-parallel, by its
// cost model (fixup counted in iteration equivalents), and the saving.
func skBlocksFor(skTiles, iters, sms, maxOccupancy int, partialWave bool) (blocks, saving int) {
	saving = -1 << 31
	skIters := skTiles * iters
	dpEquiv := iters * CeilDiv(skTiles, sms)
	lo := sms
	if partialWave {
		lo = min(sms, skTiles+1)
	}
	hi := min(sms*maxOccupancy, skIters/minItersPerSKBlock)
	for b := lo; b <= hi; b++ {
		waves := CeilDiv(b, sms)
		equiv := CeilDiv(skIters, b) * waves
		peers := CeilDiv(b, skTiles) + 1 // one more for alignment skew
		iterCost := 0.02 * float64(peers) * float64(equiv)
		if b%skTiles == 0 {
			peers, iterCost = b/skTiles, 0
		}
		fixup := int(2*float64(waves) + iterCost + 2*float64(peers))
		if s := dpEquiv - equiv - fixup; s >= saving {
			saving, blocks = s, b
		}
	}
	return blocks, saving
}

// blockIdx is the stream-K block index of launch index i (CUTLASS's
// get_block_idx: stream-K CTAs interleaved over regions so that one
// region's peers do not wait on each other in launch order); data-parallel
// CTAs follow the stream-K ones.
func (m *StreamKMap) blockIdx(i int) int {
	if i < m.Regions*m.BlocksPerRegion {
		return (i%m.Regions)*m.BlocksPerRegion + i/m.Regions
	}
	return i
}

// iterExtents are stream-K CTA b's MAC-loop iterations [begin, end)
// over all stream-K tiles (get_iter_extents).
func (m *StreamKMap) iterExtents(b int) (begin, end int) {
	region, in := b/m.BlocksPerRegion, b%m.BlocksPerRegion
	begin = region*m.ItersPerRegion + in*m.ItersPerBlock
	n := m.ItersPerBlock
	if in < m.BigBlocks {
		begin += in
		n++
	} else {
		begin += m.BigBlocks
	}
	return begin, begin + n
}

// blockOf is the stream-K CTA that runs iteration it (get_sk_block_idx).
func (m *StreamKMap) blockOf(it int) int {
	region, in := it/m.ItersPerRegion, it%m.ItersPerRegion
	bigIters := m.BigBlocks * (m.ItersPerBlock + 1)
	b := in / (m.ItersPerBlock + 1)
	if b >= m.BigBlocks {
		b = m.BigBlocks + (in-bigIters)/m.ItersPerBlock
	}
	return region*m.BlocksPerRegion + b
}

// tileCoord is linear tile t's (m, n): CUTLASS's stream-K raster, row
// by row, or column by column when the grid is taller than wide... as
// get_tile_offset has it: column-major when there are fewer tile rows
// than columns.
func (p *Plan) tileCoord(t int) (tm, tn int) {
	if p.TilesM < p.TilesN {
		return t % p.TilesM, t / p.TilesM
	}
	return t / p.TilesN, t % p.TilesN
}

// segments are launch i's segments: a stream-K CTA walks its
// iterations' tiles from the last back to the first (CUTLASS's SK
// blocks consume their tiles in backwards order), a data-parallel one
// runs its tiles at a stride of the SM count.
func (m *StreamKMap) segments(p *Plan, i int) []Segment {
	if i >= m.SKBlocks {
		return m.dpSegments(p, i-m.SKBlocks)
	}
	b := m.blockIdx(i)
	begin, end := m.iterExtents(b)
	var segs []Segment
	for t := (end - 1) / m.ItersPerTile; end > begin; t-- {
		tileBegin := t * m.ItersPerTile
		k0 := max(begin, tileBegin) - tileBegin
		k1 := end - tileBegin
		tm, tn := p.tileCoord(t)
		s := Segment{TileM: tm, TileN: tn, KStart: k0, Steps: k1 - k0}
		s.Epi = m.fixup(p, b, t, k0 == 0, k1 == m.ItersPerTile)
		segs = append(segs, s)
		end = tileBegin
	}
	return segs
}

// fixup is the epilogue of stream-K CTA b's share of tile t (CUTLASS's
// process_tile with the turnstile reduction): a CTA that does not reach
// the tile's end shares its partial sums through the workspace slot of
// the tile's first peer (the first stores them; each later one waits its
// turn on the first peer's barrier, adds the partials there and stores
// them back) and arrives on the barrier; the CTA that ends the tile, if
// it did not start it, waits until every earlier peer has arrived, adds
// their partials and writes D (resetting the barrier); one that runs the
// whole tile writes D as a data-parallel CTA does.
func (m *StreamKMap) fixup(p *Plan, b, t int, started, finished bool) Epilogue {
	first := m.blockOf(t * m.ItersPerTile)
	e := Epilogue{Wait: -1, Flag: first}
	if p.beta != 0 && finished {
		e.Source = SourceC
	}
	switch {
	case !finished:
		e.Dest, e.Signal = DestPartials, SignalAdd
		if b != first {
			e.Wait, e.Source = b-first, SourcePartials
		}
	case !started:
		e.Wait, e.Source = b-first, e.Source|SourcePartials
		e.Signal, e.Value = SignalSet, 0
	}
	return e
}

// dpSegments are data-parallel CTA d's tiles: the first wave's CTAs take
// DPFirstWaveTiles tiles each at a stride of the SM count, later ones
// one each (batched GEMMs: one tile per CTA, batch by batch).
func (m *StreamKMap) dpSegments(p *Plan, d int) []Segment {
	plain := p.plainEpilogue()
	one := func(b, t int) Segment {
		tm, tn := p.tileCoord(t)
		return Segment{Batch: b, TileM: tm, TileN: tn, Steps: m.ItersPerTile, Epi: plain}
	}
	if p.Shape.Batch > 1 {
		return []Segment{one(d/m.Tiles, d%m.Tiles)}
	}
	t, n := m.SKTiles+d, m.DPFirstWaveTiles
	if d >= m.SMs {
		t, n = t+(m.DPFirstWaveTiles-1)*m.SMs, 1
	}
	var segs []Segment
	for j := 0; j < n; j++ {
		segs = append(segs, one(0, t+j*m.SMs))
	}
	return segs
}

// StreamK is the plan's stream-K decomposition (nil for other schedules).
func (p *Plan) StreamK() *StreamKMap { return p.streamK }
