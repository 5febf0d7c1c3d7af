package memory

// addressMap places lines in L2 slices and DRAM channels.
//
// Slices: the lines are cut into blocks of `slices` consecutive lines and
// each block is rotated by a hash of its index ("xor": the XOR-fold of the
// block index; "modulo": no rotation). The rotation is a permutation
// within a block, so (slice, block index) names a line uniquely, and the
// block index is the slice-local line number whose low bits pick the set,
// as in Akita's interleaving converter. XOR-folding spreads power-of-two
// strides (matrix row pitches) over all slices, as GPU L2 hashes do.
//
// Channels: the same construction over blocks of `channels` lines with a
// different fold, so each channel gets an equal share of any long stream.
type addressMap struct {
	slices, channels uint64
	xor              bool
}

func fold(x uint64, shift uint) uint64 {
	var h uint64
	for ; x != 0; x >>= shift {
		h ^= x
	}
	return h
}

func (m addressMap) rotation(block uint64, shift uint) uint64 {
	if !m.xor {
		return 0
	}
	return fold(block, shift)
}

// slice is the L2 slice of a line and its slice-local index.
func (m addressMap) slice(line uint64) (slice int, local uint64) {
	block := line / m.slices
	r := (line%m.slices + m.rotation(block, 7)) % m.slices
	return int(r), block
}

// lineOf inverts slice: the global line of a slice-local index.
func (m addressMap) lineOf(slice int, local uint64) uint64 {
	rot := m.rotation(local, 7) % m.slices
	r := (uint64(slice) + m.slices - rot) % m.slices
	return local*m.slices + r
}

// channel is the DRAM channel of a line.
func (m addressMap) channel(line uint64) int {
	block := line / m.channels
	return int((line%m.channels + m.rotation(block, 5)) % m.channels)
}
