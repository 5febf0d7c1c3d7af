package onnx

import (
	"fmt"

	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/workloads/onnx/onnxpb"
)

// The windows of convolutions and pools: kernel, strides, dilations and
// padding, each bounded (MaxWindow) before any output size is computed.

// window is the output size of a convolution or pooling window along
// one spatial dim.
func window(in, k, stride, dil, padLo, padHi int64, ceil bool) int64 {
	span := dil*(k-1) + 1
	num := in + padLo + padHi - span
	if num < 0 || stride <= 0 {
		return 0
	}
	if ceil {
		out := (num+stride-1)/stride + 1
		if (out-1)*stride >= in+padLo { // the last window starts in the padding
			out--
		}
		return out
	}
	return num/stride + 1
}

// spatial computes a convolution's or pool's output spatial dims from
// its attributes (kernel from the weight for Conv).
func spatial(n *onnxpb.NodeProto, in []int64, kernel []int64, ceil bool) ([]int64, error) {
	r := len(in)
	get := func(name string, def int64, size int) ([]int64, error) {
		v := attrInts(n, name)
		if v == nil {
			v = make([]int64, size)
			for i := range v {
				v[i] = def
			}
		}
		if len(v) != size {
			return nil, fmt.Errorf("attribute %s has %d values, want %d", name, len(v), size)
		}
		for _, x := range v {
			if x < 0 || x > MaxWindow || (def == 1 && x == 0) {
				return nil, fmt.Errorf("attribute %s value %d is out of range (want %d..%d)",
					name, x, min(def, 1), MaxWindow)
			}
		}
		return v, nil
	}
	for _, k := range kernel {
		if k < 1 || k > MaxWindow {
			return nil, fmt.Errorf("kernel %s: a kernel dim of %d is out of range (want 1..%d)",
				intsString(kernel), k, MaxWindow)
		}
	}
	strides, err := get("strides", 1, r)
	if err != nil {
		return nil, err
	}
	dil, err := get("dilations", 1, r)
	if err != nil {
		return nil, err
	}
	pads, err := get("pads", 0, 2*r)
	if err != nil {
		return nil, err
	}
	autoPad := string(attrBytes(n, "auto_pad"))
	out := make([]int64, r)
	for i := range r {
		if in[i] == unk {
			out[i] = unk
			continue
		}
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			out[i] = (in[i] + strides[i] - 1) / strides[i]
		case "VALID":
			out[i] = window(in[i], kernel[i], strides[i], dil[i], 0, 0, false)
		case "", "NOTSET":
			out[i] = window(in[i], kernel[i], strides[i], dil[i], pads[i], pads[i+r], ceil)
		default:
			return nil, fmt.Errorf("auto_pad %s is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", quote.Q(autoPad))
		}
	}
	return out, nil
}

func attrBytes(n *onnxpb.NodeProto, name string) []byte {
	if a := attr(n, name); a != nil {
		return a.GetS()
	}
	return nil
}

func pool(n *onnxpb.NodeProto, x *value) ([]*value, error) {
	if x == nil || len(x.shape) < 3 {
		return []*value{{}}, nil
	}
	kernel := attrInts(n, "kernel_shape")
	if len(kernel) != len(x.shape)-2 {
		return nil, fmt.Errorf("%s: kernel_shape has %d values for a rank-%d input",
			n.GetOpType(), len(kernel), len(x.shape))
	}
	sp, err := spatial(n, x.shape[2:], kernel, attrInt(n, "ceil_mode", 0) != 0)
	if err != nil {
		return nil, err
	}
	return []*value{{shape: cat(x.shape[:2], sp)}}, nil
}
