package results

import (
	"reflect"
	"strings"
	"testing"
)

// numberFields sets a struct of float64 fields (ptr points to it) to 1,
// 2, ... in field order, checking each field's JSON name against names;
// shares is then read back and must give the fields in that order.
func numberFields(t *testing.T, ptr any, names []string, shares func() []float64) {
	t.Helper()
	v := reflect.ValueOf(ptr).Elem()
	typ := v.Type()
	if typ.NumField() != len(names) {
		t.Fatalf("%s has %d fields, its names %d", typ.Name(), typ.NumField(), len(names))
	}
	for i := 0; i < typ.NumField(); i++ {
		if name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]; name != names[i] {
			t.Errorf("%s field %d: json %q, names %q", typ.Name(), i, name, names[i])
		}
		v.Field(i).SetFloat(float64(i + 1))
	}
	for i, s := range shares() {
		if s != float64(i+1) {
			t.Errorf("%s Shares()[%d] = %g, want field %s (%d)", typ.Name(), i, s, typ.Field(i).Name, i+1)
		}
	}
}

// CauseNames, Shares and BreakdownOf list the struct's fields by hand;
// this holds them to the struct, so a cause added to Breakdown and
// forgotten in the lists fails here. PhaseNames and Phases.Shares the
// same for Phases.
func TestNamesAreTheFields(t *testing.T) {
	var b Breakdown
	numberFields(t, &b, CauseNames, func() []float64 { return b.Shares() })
	if got := BreakdownOf(b.Shares()); got != b {
		t.Errorf("BreakdownOf(Shares()) = %+v, want %+v", got, b)
	}
	var p Phases
	numberFields(t, &p, PhaseNames, func() []float64 { return p.Shares() })
}

// A kernel is compute bound only near its peak; below it, the bound is
// what the tensor cores waited on most, even when busy is the largest
// single share.
func TestBound(t *testing.T) {
	for _, c := range []struct {
		b    Breakdown
		want string
	}{
		{Breakdown{Compute: 0.3, Smem: 0.5, Tail: 0.2}, "smem"},
		{Breakdown{Compute: 0.62, Smem: 0.25, Tail: 0.13}, "smem"},
		{Breakdown{Compute: 0.85, Smem: 0.1, Tail: 0.05}, "compute"},
		{Breakdown{Compute: 0.5, Barrier: 0.25, Tail: 0.25}, "barrier"},
		{Breakdown{Compute: 1}, "compute"},
	} {
		if got := c.b.Bound(); got != c.want {
			t.Errorf("%+v: bound %s, want %s", c.b, got, c.want)
		}
	}
}
