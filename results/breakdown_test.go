package results

import (
	"reflect"
	"strings"
	"testing"
)

// CauseNames, Shares and BreakdownOf list the struct's fields by hand;
// this holds them to the struct, so a cause added to Breakdown and
// forgotten in the lists fails here.
func TestCauseNamesAreTheFields(t *testing.T) {
	typ := reflect.TypeOf(Breakdown{})
	if typ.NumField() != len(CauseNames) {
		t.Fatalf("Breakdown has %d fields, CauseNames %d", typ.NumField(), len(CauseNames))
	}
	var b Breakdown
	v := reflect.ValueOf(&b).Elem()
	for i := 0; i < typ.NumField(); i++ {
		if name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]; name != CauseNames[i] {
			t.Errorf("field %d: json %q, CauseNames %q", i, name, CauseNames[i])
		}
		v.Field(i).SetFloat(float64(i + 1))
	}
	for i, s := range b.Shares() {
		if s != float64(i+1) {
			t.Errorf("Shares()[%d] = %g, want field %s (%d)", i, s, typ.Field(i).Name, i+1)
		}
	}
	if got := BreakdownOf(b.Shares()); got != b {
		t.Errorf("BreakdownOf(Shares()) = %+v, want %+v", got, b)
	}
}

// PhaseNames name Phases' fields in order, and Shares returns them so.
func TestPhaseNamesAreTheFields(t *testing.T) {
	typ := reflect.TypeOf(Phases{})
	if typ.NumField() != len(PhaseNames) {
		t.Fatalf("Phases has %d fields, PhaseNames %d", typ.NumField(), len(PhaseNames))
	}
	var p Phases
	v := reflect.ValueOf(&p).Elem()
	for i := 0; i < typ.NumField(); i++ {
		if name := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]; name != PhaseNames[i] {
			t.Errorf("field %d: json %q, PhaseNames %q", i, name, PhaseNames[i])
		}
		v.Field(i).SetFloat(float64(i + 1))
	}
	for i, s := range p.Shares() {
		if s != float64(i+1) {
			t.Errorf("Shares()[%d] = %g, want field %s (%d)", i, s, typ.Field(i).Name, i+1)
		}
	}
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
