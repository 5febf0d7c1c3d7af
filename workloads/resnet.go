package workloads

import "fmt"

// resnetSpec describes a torchvision-style ResNet: four stages of blocks
// with widths 64, 128, 256, 512; bottleneck blocks (1x1, 3x3, 1x1 with 4x
// expansion) or basic blocks (3x3, 3x3).
type resnetSpec struct {
	blocks     [4]int
	bottleneck bool
}

// conv is one convolution layer description.
type conv struct {
	name            string
	c, kOut         int // input and output channels
	r               int // square kernel size
	stride, pad     int
	inH, inW, batch int
}

func (c conv) outHW() (int, int) {
	return (c.inH+2*c.pad-c.r)/c.stride + 1, (c.inW+2*c.pad-c.r)/c.stride + 1
}

// layer is the convolution as an implicit GEMM with the weight as A:
// M = output channels, N = batch x P x Q, K = C x R x S; the ASP rule
// looks at the output and input channels.
func (c conv) layer() layer {
	p, q := c.outHW()
	return layer{name: c.name, m: c.kOut, n: c.batch * p * q,
		k: c.c * c.r * c.r, out: c.kOut, in: c.c, prunable: true}
}

// resnetGen builds ResNet v1.5 (the stride of a downsampling bottleneck
// block sits on its 3x3 conv, as in torchvision) at any batch and input
// resolution; 1000-class FC head.
func resnetGen(s resnetSpec) generator {
	return func(o Options) ([]layer, error) {
		h := o.Resolution
		stem := conv{name: "conv1", c: 3, kOut: 64, r: 7, stride: 2, pad: 3,
			inH: h, inW: h, batch: o.Batch}
		ls := []layer{stem.layer()}
		h, _ = stem.outHW()
		h = (h+2*1-3)/2 + 1 // max pool 3x3, stride 2, pad 1
		in := 64
		for st := range 4 {
			width := 64 << st
			for b := range s.blocks[st] {
				stride := 1
				if b == 0 && st > 0 {
					stride = 2
				}
				var block []layer
				block, in, h = resnetBlock(s.bottleneck,
					fmt.Sprintf("layer%d.%d", st+1, b), in, width, stride, h,
					o.Batch)
				ls = append(ls, block...)
			}
		}
		ls = append(ls, layer{name: "fc", m: 1000, n: o.Batch, k: in,
			out: 1000, in: in, prunable: true})
		return ls, nil
	}
}

// resnetBlock returns one residual block's convolutions, its output
// channel count and output size.
func resnetBlock(bottleneck bool, name string, in, width, stride, h,
	batch int) ([]layer, int, int) {
	mk := func(n string, c, k, r, s, pad, inH int) conv {
		return conv{name: name + "." + n, c: c, kOut: k, r: r, stride: s,
			pad: pad, inH: inH, inW: inH, batch: batch}
	}
	var convs []conv
	out := width
	if bottleneck {
		out = 4 * width
		c1 := mk("conv1", in, width, 1, 1, 0, h)
		c2 := mk("conv2", width, width, 3, stride, 1, h)
		h2, _ := c2.outHW()
		convs = append(convs, c1, c2, mk("conv3", width, out, 1, 1, 0, h2))
	} else {
		c1 := mk("conv1", in, width, 3, stride, 1, h)
		h2, _ := c1.outHW()
		convs = append(convs, c1, mk("conv2", width, width, 3, 1, 1, h2))
	}
	if stride != 1 || in != out {
		convs = append(convs, mk("downsample", in, out, 1, stride, 0, h))
	}
	var ls []layer
	for _, c := range convs {
		ls = append(ls, c.layer())
	}
	hOut, _ := convs[len(convs)-1].outHW()
	return ls, out, hOut
}
