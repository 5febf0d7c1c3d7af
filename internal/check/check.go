package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stcsim/stcsim/internal/quote"
)

// Error is one invalid value. Path is relative to the section that found it
// (for example "bytes_per_clk"); the loader prefixes the section's own path.
type Error struct {
	Path string
	Msg  string
	// With are the other keys whose values the check compared Path's
	// with, relative like Path unless they start with "/" (a key outside
	// the section, from the config's root): the loader says where each
	// was set, so that an error caused by a --set of one of them names
	// that --set.
	With []string
}

func (e Error) Error() string { return e.Path + ": " + e.Msg }

// List collects errors of one section.
type List []Error

// Add records one error.
func (l *List) Add(path, format string, args ...any) {
	*l = append(*l, Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// AddWith records one error of path's value against the values of the
// keys in with.
func (l *List) AddWith(path string, with []string, format string, args ...any) {
	*l = append(*l, Error{Path: path, Msg: fmt.Sprintf(format, args...), With: with})
}

// Prefix returns the errors with prefix+"." put before every path.
func (l List) Prefix(prefix string) List {
	out := make(List, len(l))
	for i, e := range l {
		out[i] = Error{Path: join(prefix, e.Path), Msg: e.Msg}
		for _, w := range e.With {
			if !strings.HasPrefix(w, "/") {
				w = join(prefix, w)
			}
			out[i].With = append(out[i].With, w)
		}
	}
	return out
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// Positive requires v > 0.
func (l *List) Positive(path string, v int) {
	if v <= 0 {
		l.Add(path, "must be > 0 (got %d)", v)
	}
}

// PositiveF requires v > 0.
func (l *List) PositiveF(path string, v float64) {
	if !(v > 0) {
		l.Add(path, "must be > 0 (got %g)", v)
	}
}

// NonNegative requires v >= 0.
func (l *List) NonNegative(path string, v int) {
	if v < 0 {
		l.Add(path, "must be >= 0 (got %d)", v)
	}
}

// Range requires lo <= v <= hi.
func (l *List) Range(path string, v, lo, hi int) {
	if v < lo || v > hi {
		l.Add(path, "must be in [%d, %d] (got %d)", lo, hi, v)
	}
}

// PowerOfTwo requires v to be a positive power of two.
func (l *List) PowerOfTwo(path string, v int) {
	if v <= 0 || v&(v-1) != 0 {
		l.Add(path, "must be a power of two (got %d)", v)
	}
}

// OneOf requires v to be one of allowed.
func (l *List) OneOf(path, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	l.Add(path, "must be one of %s (got %s)", strings.Join(allowed, ", "), quote.Q(v))
}

// OneOfInt requires v to be one of allowed.
func (l *List) OneOfInt(path string, v int, allowed []int) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	s := make([]string, len(allowed))
	for i, a := range allowed {
		s[i] = fmt.Sprint(a)
	}
	l.Add(path, "must be one of %s (got %d)", strings.Join(s, ", "), v)
}

// Sorted returns the errors ordered by path, for stable messages.
func (l List) Sorted() List {
	out := append(List(nil), l...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
