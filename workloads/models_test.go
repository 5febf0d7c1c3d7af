package workloads

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// perImage builds a model at batch 1 with one row per layer.
func perImage(t *testing.T, name string, o Options) *Trace {
	t.Helper()
	o.Batch, o.PerLayer = 1, true
	tr, err := Build(name, o)
	if err != nil {
		t.Fatalf("Build(%s): %v", name, err)
	}
	return tr
}

func TestModelMACs(t *testing.T) {
	encoder := func(tr *Trace) int64 {
		var s int64
		for _, g := range tr.GEMMs {
			if strings.HasPrefix(g.Name, "encoder.") {
				s += g.UsefulMACs() * int64(g.Count)
			}
		}
		return s
	}
	all := func(tr *Trace) int64 { return tr.UsefulMACs() }
	cases := []struct {
		model string
		o     Options
		what  func(*Trace) int64
		wantG float64 // G MACs per image or sequence
		tol   float64
	}{
		// torchvision / fvcore figure for ResNet-50 at 224x224: 4.089 G.
		{"resnet50", Options{}, all, 4.089, 0.0005},
		// BERT-Large encoder at seq 128: 24 x (4 h^2 + 2 h f) s + attention.
		{"bert-large", Options{Seq: 128}, encoder, 39.46, 0.005},
		// torchvision's model docs ("GFLOPS", meaning G multiply-adds):
		// ResNet-18 1.81, ResNet-34 3.66, ResNet-101 7.80 at 224x224.
		{"resnet18", Options{}, all, 1.81, 0.005},
		{"resnet34", Options{}, all, 3.66, 0.005},
		{"resnet101", Options{}, all, 7.80, 0.005},
		// BERT-Base encoder from the layer formula: layers x (4 h^2 s +
		// 2 h f s + 2 s^2 h) with h 768, f 3072, s 128.
		{"bert-base", Options{Seq: 128}, encoder,
			12 * (4*768*768*128 + 2*768*3072*128 + 2*128*128*768) / 1e9, 1e-9},
		{"bert-large", Options{Seq: 384}, encoder,
			24 * (4*1024*1024*384 + 2*1024*4096*384 + 2*384*384*1024) / 1e9, 1e-9},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			got := float64(c.what(perImage(t, c.model, c.o))) / 1e9
			if got < c.wantG-c.tol || got > c.wantG+c.tol {
				t.Errorf("%s: %.4f G MACs, want %.4f +- %g", c.model, got,
					c.wantG, c.tol)
			}
		})
	}
}

func TestResNet50Structure(t *testing.T) {
	tr := perImage(t, "resnet50", Options{})
	convs := 0
	for _, g := range tr.GEMMs {
		if g.Name != "fc" {
			convs++
		}
	}
	if convs != 53 || tr.GEMMs[len(tr.GEMMs)-1].Name != "fc" {
		t.Fatalf("%d convolutions (want 53) and last row %q (want fc)",
			convs, tr.GEMMs[len(tr.GEMMs)-1].Name)
	}
	first, fc := tr.GEMMs[0], tr.GEMMs[len(tr.GEMMs)-1]
	if first.Name != "conv1" || first.Sparsity != Dense || first.K != 147 ||
		first.N != 112*112 || first.M != 64 {
		t.Errorf("stem conv = %+v, want dense 64 x 12544 x 147", first)
	}
	if fc.M != 1024 || fc.UnpaddedM != 1000 || fc.K != 2048 || fc.N != 1 ||
		fc.Sparsity != Sparse24 || !strings.Contains(fc.Note, "padded M 1000->1024") {
		t.Errorf("fc = %+v, want 2:4 padded 1000->1024 x 1 x 2048", fc)
	}
	for _, g := range tr.GEMMs[1 : len(tr.GEMMs)-1] {
		if g.Sparsity != Sparse24 || !g.SparseApplied(ASPOutMultiple, ASPInMultiple) {
			t.Errorf("%s is %s, want 2:4 under the ASP rule", g.Name, g.Sparsity)
		}
	}
	// v1.5: the stride sits on the 3x3 conv, so layer2.0.conv1 still sees
	// 56x56 and layer2.0.conv2 produces 28x28.
	byName := map[string]GEMM{}
	for _, g := range tr.GEMMs {
		byName[g.Name] = g
	}
	if g := byName["layer2.0.conv1"]; g.N != 56*56 || g.K != 256 {
		t.Errorf("layer2.0.conv1 = %+v, want N 3136, K 256 (v1.5)", g)
	}
	if g := byName["layer2.0.conv2"]; g.N != 28*28 || g.K != 128*9 {
		t.Errorf("layer2.0.conv2 = %+v, want N 784, K 1152", g)
	}
}

func TestBERTStructure(t *testing.T) {
	tr, err := Build("bert-large", Options{Batch: 2, Seq: 384})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		suffix     string
		m, n, k, b int
		sparsity   string
	}{
		{"attention.qkv", 3072, 768, 1024, 1, Sparse24},
		{"attention.scores", 384, 384, 64, 32, Dense},
		{"attention.context", 64, 384, 384, 32, Dense},
		{"attention.output", 1024, 768, 1024, 1, Sparse24},
		{"ffn1", 4096, 768, 1024, 1, Sparse24},
		{"ffn2", 1024, 768, 4096, 1, Sparse24},
	}
	if len(tr.GEMMs) != len(want)+1 {
		t.Fatalf("%d rows, want %d (merged layers + pooler)", len(tr.GEMMs), len(want)+1)
	}
	for i, w := range want {
		g := tr.GEMMs[i]
		if g.Name != "encoder.{0-23}."+w.suffix || g.Count != 24 ||
			g.M != w.m || g.N != w.n || g.K != w.k || g.Batch != w.b ||
			g.Sparsity != w.sparsity {
			t.Errorf("row %d = %+v, want %s %dx%dx%d batch %d %s x24", i, g,
				w.suffix, w.m, w.n, w.k, w.b, w.sparsity)
		}
	}
	if p := tr.GEMMs[len(want)]; p.Name != "pooler" || p.N != 2 || p.Count != 1 {
		t.Errorf("pooler = %+v", p)
	}
}

func TestMergeKeepsWork(t *testing.T) {
	for _, name := range Models() {
		merged, err := Build(name, Options{Batch: 3, Seq: 64, Resolution: 160})
		if err != nil {
			t.Fatal(err)
		}
		per, err := Build(name, Options{Batch: 3, Seq: 64, Resolution: 160, PerLayer: true})
		if err != nil {
			t.Fatal(err)
		}
		if merged.MACs() != per.MACs() || len(merged.GEMMs) >= len(per.GEMMs) {
			t.Errorf("%s: merged %d rows %d MACs, per-layer %d rows %d MACs",
				name, len(merged.GEMMs), merged.MACs(), len(per.GEMMs), per.MACs())
		}
		// MACs grow linearly with batch for every model but a MoE's
		// grouped launch, whose problems are padded to the busiest
		// expert's tokens (routing changes with the tokens).
		if IsMoE(name) {
			continue
		}
		one, _ := Build(name, Options{Batch: 1, Seq: 64, Resolution: 160})
		if 3*one.UsefulMACs() != merged.UsefulMACs() {
			t.Errorf("%s: batch 3 has %d MACs, 3 x batch 1 = %d", name,
				merged.UsefulMACs(), 3*one.UsefulMACs())
		}
	}
}

func TestBuildErrors(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"resnet51", Options{}, `unknown model "resnet51"`},
		{"resnet50", Options{Batch: -1}, "batch must be in 1.."},
		{"bert-base", Options{Seq: -5}, "sequence length must be in"},
		{"resnet50", Options{Resolution: 1 << 20}, "resolution must be in"},
		{"resnet50", Options{Precision: tensorcore.Precision(9)}, `unknown precision Precision(9)`},
		{"bert-large", Options{Batch: 1 << 20, Seq: 1 << 20}, "above the limit"},
	}
	for _, c := range cases {
		_, err := Build(c.name, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Build(%s, %+v) error %v, want %q", c.name, c.o, err, c.want)
		}
	}
}

func TestPrecisionPadding(t *testing.T) {
	cases := []struct {
		precision tensorcore.Precision
		sparsity  string
		fcM       int
		kPadded   bool // int8 wants K % 128: 3x3 convs at C=64 (K 576) pad
	}{
		{tensorcore.FP16, Sparse24, 1024, false},
		{tensorcore.BF16, Sparse24, 1024, false},
		{tensorcore.TF32, Sparse12, 1024, false},
		{tensorcore.INT8, Sparse24, 1008, true},
	}
	for _, c := range cases {
		tr, err := Build("resnet50", Options{Batch: 1, Precision: c.precision, PerLayer: true})
		if err != nil {
			t.Fatal(err)
		}
		fc := tr.GEMMs[len(tr.GEMMs)-1]
		if fc.M != c.fcM || fc.Sparsity != c.sparsity {
			t.Errorf("%s: fc M %d %s, want %d %s", c.precision, fc.M, fc.Sparsity, c.fcM, c.sparsity)
		}
		l1 := tr.GEMMs[2] // layer1.0.conv2, K = 576
		if (l1.UnpaddedK == 576 && l1.K == 640) != c.kPadded {
			t.Errorf("%s: %s K %d (unpadded %d)", c.precision, l1.Name, l1.K, l1.UnpaddedK)
		}
	}
}

func TestModelsRoundTrip(t *testing.T) {
	for _, name := range Models() {
		tr, err := Model(name, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			ext   string
			write func(*Trace, *bytes.Buffer) error
			parse func(*bytes.Buffer) (*Trace, error)
		}{
			{"csv", func(t *Trace, b *bytes.Buffer) error { return t.WriteCSV(b) },
				func(b *bytes.Buffer) (*Trace, error) { return ParseCSV(b, name) }},
			{"json", func(t *Trace, b *bytes.Buffer) error { return t.WriteJSON(b) },
				func(b *bytes.Buffer) (*Trace, error) { return ParseJSON(b, "x.json") }},
		} {
			var b bytes.Buffer
			if err := f.write(tr, &b); err != nil {
				t.Fatal(err)
			}
			back, err := f.parse(&b)
			if err != nil {
				t.Fatalf("%s %s: %v", name, f.ext, err)
			}
			back.Lines = nil // where the file's rows are; a model has none
			if !reflect.DeepEqual(back, tr) {
				t.Errorf("%s %s round trip differs", name, f.ext)
			}
		}
	}
}

func TestCompactNames(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{[]string{"fc"}, "fc"},
		{[]string{"a.0.b", "a.1.b", "a.2.b", "a.4.b"}, "a.{0-2,4}.b"},
		{[]string{"l.0.conv3", "l.0.downsample", "l.1.conv3"}, "l.{0-1}.conv3+l.0.downsample"},
		{[]string{"x", "y"}, "x+y"},
	}
	for _, c := range cases {
		if got := compactNames(c.in); got != c.want {
			t.Errorf("compactNames(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWithPrecision(t *testing.T) {
	fp16, _ := Build("resnet50", Options{Batch: 1})
	int8, _ := Build("resnet50", Options{Batch: 1, Precision: tensorcore.INT8})
	tf32, _ := Build("resnet50", Options{Batch: 1, Precision: tensorcore.TF32})
	for _, c := range []struct {
		p    tensorcore.Precision
		want *Trace
	}{{tensorcore.INT8, int8}, {tensorcore.TF32, tf32}, {tensorcore.FP16, fp16}} {
		got, err := fp16.WithPrecision(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("WithPrecision(%s) differs from building in %s", c.p, c.p)
		}
		back, _ := got.WithPrecision(tensorcore.FP16)
		if !reflect.DeepEqual(back, fp16) {
			t.Errorf("WithPrecision(%s) then fp16 differs from fp16", c.p)
		}
	}
	if _, err := fp16.WithPrecision(tensorcore.Precision(9)); err == nil {
		t.Error("WithPrecision(fp64) accepted")
	}
}

// Every built-in layer names its layout: tn for weights x activations
// (W row-major, x read K-major) and the attention scores (K x Q^T), nn
// for the attention context (V^T x P^T: V read along M, P along K).
func TestModelLayouts(t *testing.T) {
	for _, name := range Models() {
		tr, err := Model(name, 2, 16)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range tr.GEMMs {
			want := LayoutTN
			if strings.Contains(g.Name, "attention.context") || strings.Contains(g.Name, "self_attn.context") {
				want = LayoutNN
			}
			if g.Layout != want {
				t.Errorf("%s %s: layout %q, want %s", name, g.Name, g.Layout, want)
			}
		}
	}
}
