package tensorcore

import (
	"fmt"
	"strings"

	"github.com/stcsim/stcsim/internal/quote"
)

// Mode selects the dense or the N:M-sparse datapath. Its text form
// ("dense", "sparse") is what configs, traces, flags and results carry;
// Parse and String convert, in the shape of log/slog's Level.
type Mode int

// The datapaths of the tensor core. DualSide is the hypothetical
// dual-side datapath (both operands N:M): not a run mode of its own (the
// sparse mode runs on it when tensorcore.dual_side is set), so it is not
// in Modes and ParseMode does not read it.
const (
	Dense Mode = iota
	Sparse
	DualSide
)

// Modes lists the run modes in their fixed order.
var Modes = []Mode{Dense, Sparse}

var modeNames = []string{"dense", "sparse"}

func (m Mode) String() string {
	if m == DualSide {
		return "dual"
	}
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads "dense" or "sparse".
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return Dense, fmt.Errorf("unknown mode %q (want %s)", s, orList(modeNames))
}

// ModeNames lists the text forms of Modes, in order.
func ModeNames() []string { return append([]string(nil), modeNames...) }

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool { return m >= 0 && int(m) < len(modeNames) }

// MarshalText writes the mode's name.
func (m Mode) MarshalText() ([]byte, error) {
	if !m.Valid() {
		return nil, fmt.Errorf("unknown mode %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText reads a mode's name.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Precision is an input precision of the tensor core. The zero value is
// FP16, the default precision of every workload.
type Precision int

// The input precisions, in their fixed order (the tensor-core config has a
// section for each).
const (
	FP16 Precision = iota
	BF16
	TF32
	INT8
)

// Precisions lists the precisions in their fixed order.
var Precisions = []Precision{FP16, BF16, TF32, INT8}

var precisionNames = []string{"fp16", "bf16", "tf32", "int8"}

func (p Precision) String() string {
	if p.Valid() {
		return precisionNames[p]
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// ParsePrecision reads "fp16", "bf16", "tf32" or "int8".
func ParsePrecision(s string) (Precision, error) {
	for i, n := range precisionNames {
		if s == n {
			return Precision(i), nil
		}
	}
	return FP16, fmt.Errorf("unknown precision %s (want %s)", quote.Q(s),
		orList(precisionNames))
}

// PrecisionNames lists the text forms of Precisions, in order.
func PrecisionNames() []string { return append([]string(nil), precisionNames...) }

// Valid reports whether p is one of Precisions.
func (p Precision) Valid() bool { return p >= 0 && int(p) < len(precisionNames) }

// MarshalText writes the precision's name.
func (p Precision) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("unknown precision %d", int(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText reads a precision's name.
func (p *Precision) UnmarshalText(b []byte) error {
	v, err := ParsePrecision(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// ElementBytes is the storage size of one input element.
func (p Precision) ElementBytes() int {
	switch p {
	case TF32:
		return 4
	case INT8:
		return 1
	}
	return 2
}

// orList joins names as "a, b, c or d".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
