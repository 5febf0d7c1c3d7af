package memory

// dramBus is the direction of a DRAM channel's data bus. A channel moves
// data one way at a time: changing from reads to writes or back leaves
// the bus idle for a turnaround (tWTR and tRTW in a DRAM's timing), so a
// controller buffers writes and sends them in batches while reads wait.
// A stream of reads alone or of writes alone never turns the bus; a mix
// pays two turns (to writes and back) per batch of writes. Each transfer
// is charged in channel time, counted in read bytes (the channel's
// servers run at the read efficiency): a written byte costs writeCost
// (dram.efficiency / dram.write_efficiency), and the first write of a
// batch that follows reads costs the two turns, turnBytes, as well.
type dramBus struct {
	writeCost  float64 // channel time of a written byte, in read bytes
	turnBytes  float64 // channel time of two turns, in read bytes
	batchBytes float64 // writes per batch
	inBatch    float64 // bytes written in the current batch
	readSince  bool    // a read was served since the current batch began
}

func newDRAMBuses(n int, p params) []dramBus {
	b := make([]dramBus, n)
	for i := range b {
		b[i] = dramBus{writeCost: p.dramWriteCost, turnBytes: p.dramTurnBytes,
			batchBytes: p.dramBatchBytes}
	}
	return b
}

// cost is the channel time, in read bytes, of moving bytes one way.
func (b *dramBus) cost(write bool, bytes float64) float64 {
	if !write {
		b.readSince = true
		return bytes
	}
	c := bytes * b.writeCost
	if b.inBatch == 0 || b.inBatch >= b.batchBytes {
		b.inBatch = 0
		if b.readSince {
			c += b.turnBytes
			b.readSince = false
		}
	}
	b.inBatch += bytes
	return c
}
