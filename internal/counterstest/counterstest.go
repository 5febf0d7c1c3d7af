// Package counterstest checks, for tests, that a type's Counters method
// lists every uint64 counter of the type exactly once: the code that
// extends a run's counts to work it did not simulate walks those lists,
// so a counter left out of one would silently stay at its simulated value.
package counterstest

import (
	"reflect"
	"testing"
)

// Covers fails t unless counters(v) returns a pointer to every uint64
// field of *v (nested structs and arrays included) and to nothing twice.
func Covers[T any](t testing.TB, v *T, counters func(*T) []*uint64) {
	t.Helper()
	var next uint64
	n := number(reflect.ValueOf(v).Elem(), &next)
	c := counters(v)
	if len(c) != n {
		t.Fatalf("%T: Counters lists %d counters, the type has %d", *v, len(c), n)
	}
	seen := map[uint64]bool{}
	for _, p := range c {
		if seen[*p] {
			t.Fatalf("%T: counter %d listed twice", *v, *p)
		}
		seen[*p] = true
	}
}

// number gives every uint64 under v a distinct value (1, 2, ...) and
// returns how many there are.
func number(v reflect.Value, next *uint64) int {
	switch v.Kind() {
	case reflect.Uint64:
		*next++
		v.SetUint(*next)
		return 1
	case reflect.Struct:
		n := 0
		for i := 0; i < v.NumField(); i++ {
			n += number(v.Field(i), next)
		}
		return n
	case reflect.Array:
		n := 0
		for i := 0; i < v.Len(); i++ {
			n += number(v.Index(i), next)
		}
		return n
	}
	return 0
}
