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

func TestBound(t *testing.T) {
	if got := (Breakdown{Compute: 0.3, Smem: 0.5, Tail: 0.2}).Bound(); got != "smem" {
		t.Errorf("bound %s", got)
	}
	if got := (Breakdown{Compute: 0.5, Smem: 0.5}).Bound(); got != "compute" {
		t.Errorf("tie: %s", got)
	}
}
