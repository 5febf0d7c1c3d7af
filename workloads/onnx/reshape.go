package onnx

import (
	"slices"

	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

// Slice and Reshape take their steps and shapes from the file's integer
// tensors: each is bounded (a step clamped to its dim, a rank to
// MaxRank) before it indexes or allocates.

func (g *graph) slice(n *onnxpb.NodeProto) []*value {
	x := g.in(n, 0)
	if x == nil || x.shape == nil {
		return []*value{{}}
	}
	starts, ends := attrInts(n, "starts"), attrInts(n, "ends")
	axes, steps := attrInts(n, "axes"), []int64(nil)
	if len(n.GetInput()) > 1 { // opset 10+: inputs
		starts, ends = g.intsOf(n, 1), g.intsOf(n, 2)
		axes, steps = g.intsOf(n, 3), g.intsOf(n, 4)
		if starts == nil || ends == nil || (g.in(n, 3) != nil && axes == nil) ||
			(g.in(n, 4) != nil && steps == nil) {
			return []*value{{shape: unknownDims(len(x.shape))}}
		}
	}
	if len(starts) != len(ends) {
		return []*value{{}}
	}
	shape := slices.Clone(x.shape)
	var ints []int64
	for i := range starts {
		a := int64(i)
		if axes != nil {
			if i >= len(axes) {
				return []*value{{}}
			}
			a = axes[i]
		}
		ax, ok := axis(a, len(shape))
		step := int64(1)
		if steps != nil && i < len(steps) {
			step = steps[i]
		}
		if !ok || step == 0 {
			return []*value{{}}
		}
		d := shape[ax]
		if d == unk {
			continue
		}
		// A step beyond the dim takes one element at most, as the dim's
		// own length does: clamping it keeps the index arithmetic in range.
		step = min(max(step, -max(d, 1)), max(d, 1))
		lo, _, cnt := sliceRange(starts[i], ends[i], step, d)
		shape[ax] = cnt
		if len(x.shape) == 1 && x.ints != nil && int64(len(x.ints)) == d {
			ints = make([]int64, 0, cnt)
			for j := range cnt {
				ints = append(ints, x.ints[lo+j*step])
			}
		}
	}
	return []*value{{shape: shape, ints: ints}}
}

// sliceRange clamps a slice of a dim of size d as ONNX's Slice does and
// returns the first index, the end and the count.
func sliceRange(start, end, step, d int64) (int64, int64, int64) {
	norm := func(v, lo, hi int64) int64 {
		if v < 0 {
			v += d
		}
		return min(max(v, lo), hi)
	}
	if step > 0 {
		s, e := norm(start, 0, d), norm(end, 0, d)
		if e <= s {
			return s, e, 0
		}
		return s, e, (e-s-1)/step + 1
	}
	s, e := norm(start, -1, d-1), norm(end, -1, d-1)
	if s <= e {
		return s, e, 0
	}
	return s, e, (s-e-1)/-step + 1
}

func unknownDims(r int) []int64 {
	s := make([]int64, r)
	for i := range s {
		s[i] = unk
	}
	return s
}

func (g *graph) reshape(n *onnxpb.NodeProto) ([]*value, error) {
	x := g.in(n, 0)
	target := g.intsOf(n, 1)
	if s := shapeOf(g.in(n, 1)); len(s) == 1 && s[0] != unk && s[0] > MaxRank {
		return nil, rankError("the shape input "+quote.Q(n.GetInput()[1])+" asks for an output that", s[0])
	}
	if target == nil {
		if s := shapeOf(g.in(n, 1)); len(s) == 1 && s[0] != unk {
			return []*value{{shape: unknownDims(int(s[0]))}}, nil
		}
		return []*value{{}}, nil
	}
	shape := slices.Clone(target)
	infer := -1
	known := int64(1)
	allowZero := attrInt(n, "allowzero", 0) != 0
	for i, d := range shape {
		switch {
		case d == 0 && !allowZero:
			if x == nil || x.shape == nil || i >= len(x.shape) {
				return []*value{{shape: unknownDims(len(shape))}}, nil
			}
			shape[i] = x.shape[i]
		case d == -1:
			if infer >= 0 {
				return []*value{{}}, nil
			}
			infer = i
			continue
		case d < 0:
			return []*value{{}}, nil
		}
		if shape[i] == unk {
			known = unk
		} else if known != unk {
			known *= shape[i]
		}
	}
	if infer >= 0 {
		total := numel(shapeOf(x))
		shape[infer] = unk
		if total != unk && known != unk && known > 0 && total%known == 0 {
			shape[infer] = total / known
		}
	}
	out := &value{shape: shape}
	if x != nil && x.ints != nil {
		out.ints = x.ints
	}
	return []*value{out}, nil
}
