package onnx

import (
	"fmt"
	"strings"
)

// The importer's bounds on what a graph may declare, checked before
// anything is allocated or indexed for it (docs/input-limits.md, "ONNX
// models"). A file is already bounded by MaxModelBytes, but a few bytes
// can declare a rank, a count or a step that the file does not hold.
const (
	// MaxRank bounds the rank of every tensor: a graph input, an
	// initializer, a constant and every inferred output. Real models stay
	// at 6 or below; 64 leaves room for any exporter's reshapes.
	MaxRank = 64
	// MaxWindow bounds a convolution's or pool's kernel, stride, dilation
	// and padding values (as the kernel must lie in a dim of at most
	// workloads.MaxDim, 2^20 is more than any network uses).
	MaxWindow = 1 << 20
)

// rankError is the message of a rank above MaxRank.
func rankError(what string, rank int64) error {
	return fmt.Errorf("%s has rank %d, above the limit of %d", what, rank, MaxRank)
}

// intsString prints at most 8 of a list of integers, with its length
// when cut, so that a message stays bounded whatever the file declares.
func intsString(v []int64) string {
	parts := make([]string, 0, min(len(v), 8)+1)
	for i, x := range v {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("... (%d values)", len(v)))
			break
		}
		parts = append(parts, fmt.Sprint(x))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
