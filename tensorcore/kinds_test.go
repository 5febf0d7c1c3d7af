package tensorcore

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestModeText(t *testing.T) {
	for _, m := range Modes {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back Mode
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Errorf("JSON %s -> %v, %v", b, back, err)
		}
	}
	if b, _ := json.Marshal(struct{ M Mode }{Sparse}); string(b) != `{"M":"sparse"}` {
		t.Errorf("JSON of Sparse: %s", b)
	}
	for _, bad := range []string{"", "Dense", "both", "2:4"} {
		if _, err := ParseMode(bad); err == nil ||
			!strings.Contains(err.Error(), "want dense or sparse") {
			t.Errorf("ParseMode(%q): %v", bad, err)
		}
	}
	if _, err := json.Marshal(Mode(5)); err == nil {
		t.Error("Mode(5) marshals")
	}
}

func TestPrecisionText(t *testing.T) {
	bytes := map[Precision]int{FP16: 2, BF16: 2, TF32: 4, INT8: 1}
	for _, p := range Precisions {
		got, err := ParsePrecision(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePrecision(%q) = %v, %v", p.String(), got, err)
		}
		var back Precision
		b, _ := json.Marshal(p)
		if err := json.Unmarshal(b, &back); err != nil || back != p {
			t.Errorf("JSON %s -> %v, %v", b, back, err)
		}
		if p.ElementBytes() != bytes[p] {
			t.Errorf("%v: %d bytes, want %d", p, p.ElementBytes(), bytes[p])
		}
	}
	var zero Precision
	if zero != FP16 {
		t.Error("the zero Precision is not fp16")
	}
	for _, bad := range []string{"", "FP16", "fp32", "fp8"} {
		if _, err := ParsePrecision(bad); err == nil ||
			!strings.Contains(err.Error(), "want fp16, bf16, tf32 or int8") {
			t.Errorf("ParsePrecision(%q): %v", bad, err)
		}
	}
	if Precision(9).Valid() || Precision(-1).Valid() {
		t.Error("out-of-range precision is valid")
	}
}

func TestCheckPattern(t *testing.T) {
	cfg := a100("batched")
	for _, tc := range []struct {
		p       Precision
		pattern string
		ok      bool
	}{
		{FP16, "2:4", true}, {BF16, "2:4", true}, {INT8, "2:4", true},
		{TF32, "1:2", true}, {FP16, "1:2", true}, {TF32, "2:4", true},
		{FP16, "2:8", true}, {FP16, "1:4", true}, {INT8, "4:8", true},
		{FP16, "3:8", false}, {TF32, "3:4", false}, {FP16, "dense", false},
		{Precision(9), "2:4", false},
	} {
		pat, err := ParsePattern(tc.pattern)
		if err == nil {
			err = cfg.CheckPattern(tc.p, pat)
		}
		if (err == nil) != tc.ok {
			t.Errorf("%v %s: %v", tc.p, tc.pattern, err)
		}
	}
	err := cfg.CheckPattern(FP16, Pattern{N: 3, M: 8})
	if err == nil || !strings.Contains(err.Error(), "tensorcore.fp16.dense_shape m16n8k16") {
		t.Errorf("message %v does not name the key", err)
	}
}
