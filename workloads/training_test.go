package workloads

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/tensorcore"
)

// rowsByName indexes a trace's rows.
func rowsByName(t *testing.T, tr *Trace) map[string]GEMM {
	t.Helper()
	out := map[string]GEMM{}
	for _, g := range tr.GEMMs {
		out[g.Name] = g
	}
	return out
}

// The three GEMMs of a linear layer, from the layer's own dimensions
// (BERT-Large's FFN1: out 4096, in 1024, tokens 32 x 128), not from the
// forward row: Y = W X is out x tokens x in, dX = W^T dY in x tokens x
// out, dW = dY X^T out x in x tokens.
func TestTrainingLinearShapes(t *testing.T) {
	tr, err := Model("bert-large", 32, 128)
	if err != nil {
		t.Fatal(err)
	}
	for _, transposable := range []bool{false, true} {
		st, err := tr.Training(Training{Pass: PassStep, Transposable: transposable})
		if err != nil {
			t.Fatal(err)
		}
		rows := rowsByName(t, st)
		const out, in, tokens = 4096, 1024, 32 * 128
		fwd, dX, dW := rows["encoder.{0-23}.ffn1.fwd"], rows["encoder.{0-23}.ffn1.dX"],
			rows["encoder.{0-23}.ffn1.dW"]
		for _, c := range []struct {
			name    string
			g       GEMM
			m, n, k int
			sparse  bool
			along   string
		}{
			{"fwd", fwd, out, tokens, in, true, "W along K (1024)"},
			{"dX", dX, in, tokens, out, transposable, "W^T along K (W's M, 4096)"},
			{"dW", dW, out, in, tokens, false, ""},
		} {
			if c.g.M != c.m || c.g.N != c.n || c.g.K != c.k || c.g.Count != 24 {
				t.Errorf("transposable=%v %s: %dx%dx%d count %d, want %dx%dx%d count 24",
					transposable, c.name, c.g.M, c.g.N, c.g.K, c.g.Count, c.m, c.n, c.k)
			}
			if got := c.g.Sparsity != Dense; got != c.sparse {
				t.Errorf("transposable=%v %s: sparse %v, want %v", transposable, c.name, got, c.sparse)
			}
			if c.sparse && c.g.SparseAlong != c.along {
				t.Errorf("transposable=%v %s: sparse along %q, want %q", transposable,
					c.name, c.g.SparseAlong, c.along)
			}
			if !c.sparse && c.g.SparseAlong != "" {
				t.Errorf("%s: dense row names a sparse operand %q", c.name, c.g.SparseAlong)
			}
		}
	}
}

// Every backward GEMM does the forward GEMM's multiply-adds (each is the
// same triple product, reordered), per row and so per step: a step is 3x
// the forward pass's own MACs.
func TestTrainingMACsTriple(t *testing.T) {
	for _, model := range []string{"bert-base", "resnet18"} {
		tr, err := Model(model, 2, 64)
		if err != nil {
			t.Fatal(err)
		}
		st, err := tr.Training(Training{Pass: PassStep, Transposable: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := st.UsefulMACs(), 3*tr.UsefulMACs(); got != want {
			t.Errorf("%s: step MACs %d, want 3 x forward = %d", model, got, want)
		}
		if got := len(st.GEMMs); got != 3*len(tr.GEMMs) {
			t.Errorf("%s: %d step rows, want %d", model, got, 3*len(tr.GEMMs))
		}
	}
}

// The attention products' backward GEMMs: scores S = K Q^T (keys x
// queries x head dim, batch x heads of them) give dQ-side and dK-side
// products, both dense, each batched like the forward.
func TestTrainingAttentionProducts(t *testing.T) {
	tr, err := Model("bert-base", 2, 64)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tr.Training(Training{Pass: PassBackward, Transposable: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsByName(t, st)
	const seq, d, bh = 64, 64, 2 * 12
	for name, want := range map[string][3]int{
		"encoder.{0-11}.attention.scores.dB":  {d, seq, seq},
		"encoder.{0-11}.attention.scores.dA":  {seq, d, seq},
		"encoder.{0-11}.attention.context.dB": {seq, seq, d},
		"encoder.{0-11}.attention.context.dA": {d, seq, seq},
	} {
		g, ok := rows[name]
		if !ok {
			t.Fatalf("no row %s in %v", name, st.GEMMs)
		}
		if [3]int{g.M, g.N, g.K} != want || g.Batch != bh || g.Sparsity != Dense {
			t.Errorf("%s: %dx%dx%d batch %d %s, want %v batch %d dense", name,
				g.M, g.N, g.K, g.Batch, g.Sparsity, want, bh)
		}
	}
	if _, ok := rows["encoder.{0-11}.ffn1.fwd"]; ok {
		t.Error("--pass backward kept the forward row")
	}
}

// Activation sparsity: the FFN2's forward reads X sparse; in step mode
// its dW reads X^T sparse along the tokens, and one sparsifier per layer
// writes both compressed forms.
func TestTrainingActivations(t *testing.T) {
	tr, err := Model("bert-base", 2, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{ActivationsForward, ActivationsStep} {
		st, err := tr.Training(Training{Pass: PassStep, Activations: mode})
		if err != nil {
			t.Fatal(err)
		}
		rows := rowsByName(t, st)
		fwd, dW := rows["encoder.{0-11}.ffn2.fwd"], rows["encoder.{0-11}.ffn2.dW"]
		if fwd.SparseOperand != OperandActivations || fwd.SparseAlong != "X along K (3072)" {
			t.Errorf("%s: ffn2 forward %s %q, want X sparse along K", mode, fwd.SparseOperand, fwd.SparseAlong)
		}
		wantDW := mode == ActivationsStep
		if (dW.Sparsity != Dense) != wantDW {
			t.Errorf("%s: ffn2 dW sparse %v, want %v", mode, dW.Sparsity != Dense, wantDW)
		}
		if len(st.Sparsifiers) != 1 {
			t.Fatalf("%s: %d sparsifiers, want 1 (ffn2): %+v", mode, len(st.Sparsifiers), st.Sparsifiers)
		}
		s := st.Sparsifiers[0]
		if s.Rows != 3072 || s.Cols != 128 || s.Count != 12 || s.Transposed != wantDW {
			t.Errorf("%s: sparsifier %+v, want 3072 x 128, count 12, transposed %v", mode, s, wantDW)
		}
		if q := rows["encoder.{0-11}.ffn1.fwd"]; q.SparseOperand == OperandActivations {
			t.Errorf("%s: ffn1 sparsified, only ffn2 matches", mode)
		}
	}
}

// Bad options and passes a workload cannot give.
func TestTrainingRefusals(t *testing.T) {
	tr, err := Model("bert-base", 1, 32)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Training(Training{Pass: "sideways"}); err == nil {
		t.Error("unknown pass accepted")
	}
	if _, err := tr.Training(Training{Pass: PassStep, Activations: "always"}); err == nil {
		t.Error("unknown activation mode accepted")
	}
	st, err := tr.Training(Training{Pass: PassStep})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Training(Training{Pass: PassStep}); err == nil ||
		!strings.Contains(err.Error(), "already a dgrad GEMM") {
		t.Errorf("a step trace made into a step again: %v", err)
	}
	o := Training{Pass: PassBackward}
	if err := o.CheckPass("prof", "torch-profiler"); err == nil {
		t.Error("a profiler trace's backward accepted")
	}
	if err := (Training{Pass: PassForward}).CheckPass("prof", "torch-profiler"); err != nil {
		t.Errorf("a profiler trace's forward refused: %v", err)
	}
}

// The forward pass without activation sparsity is the trace itself.
func TestTrainingForwardIdentity(t *testing.T) {
	tr, err := Model("resnet18", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.Training(Training{Pass: PassForward})
	if err != nil || got != tr {
		t.Errorf("forward pass changed the trace: %v", err)
	}
}

// Layouts: a tn forward (W row-major, X K-contiguous) gives dX nn (W^T
// is W's bytes read M-contiguous; dY as stored, K-contiguous) and dW nt
// (dY M-contiguous, X^T row-major); int8 stays tn, its kernels' only one.
func TestTrainingLayouts(t *testing.T) {
	g := GEMM{Name: "l", M: 64, N: 32, K: 128, Precision: tensorcore.FP16, Sparsity: Dense,
		Count: 1, Batch: 1}
	tr := &Trace{Name: "t", GEMMs: []GEMM{g}}
	st, err := tr.Training(Training{Pass: PassBackward, Activations: ActivationsStep,
		ActivationLayers: regexp.MustCompile("nothing")})
	if err != nil {
		t.Fatal(err)
	}
	if st.GEMMs[0].Layout != "nn" || st.GEMMs[1].Layout != "nt" {
		t.Errorf("layouts %s, %s; want nn, nt", st.GEMMs[0].Layout, st.GEMMs[1].Layout)
	}
	g.Precision = tensorcore.INT8
	tr.GEMMs[0] = g
	if st, err = tr.Training(Training{Pass: PassBackward}); err != nil {
		t.Fatal(err)
	}
	if st.GEMMs[0].Layout != LayoutDefault || st.GEMMs[1].Layout != LayoutDefault {
		t.Errorf("int8 layouts %s, %s; want tn", st.GEMMs[0].Layout, st.GEMMs[1].Layout)
	}
}

// A refused training option names its field, not a command's flag: the
// command maps OptionError.Field to its own spelling.
func TestTrainingErrorsNameTheirField(t *testing.T) {
	for _, c := range []struct {
		o      Training
		option field.Name
	}{
		{Training{Pass: "sideways"}, OptionPass},
		{Training{Pass: PassStep, Activations: "sometimes"}, OptionActivations},
	} {
		err := c.o.Check()
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Field != c.option || strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: %v; want an OptionError of %s naming no flag", c.o, err, c.option)
		}
	}
}
