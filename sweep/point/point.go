// Package point holds what a sweep's planner and its results store both
// speak of: a point's identity (its place in the grid, its grid values,
// its config hash), a workload's (its name and the hash of its GEMM
// list), the unit of work that pairs them, and the grid keys with a
// meaning of their own. It is data and its small methods: the planner
// (sweep) makes these values, the store (sweep/store) keeps them, and
// neither imports the other through it.
package point

import (
	"strconv"
	"strings"
	"unicode"
)

// Assignment is one grid value of a point: key=value.
type Assignment struct {
	Key   string
	Value string
}

// Point is a point's identity: what the store keeps of one effective
// config of a sweep.
type Point struct {
	// Index is the point's place in the grid order (0-based).
	Index int
	// Grid are the point's grid values, in axis order, each as the
	// effective config holds it (the value that is simulated).
	Grid []Assignment
	// Hash identifies the effective config: the hex SHA-256 prefix of
	// its YAML, so two ways of writing the same config share results.
	Hash string
}

// Label is the point's grid values as "k=v k=v" (or "base" for an empty
// grid).
func (p Point) Label() string {
	if len(p.Grid) == 0 {
		return "base"
	}
	parts := make([]string, len(p.Grid))
	for i, a := range p.Grid {
		parts[i] = a.Key + "=" + a.Value
	}
	return printable(strings.Join(parts, " "))
}

// printable escapes the control characters and invalid UTF-8 of a label
// as Go quotes them (an ESC in a grid value is \x1b), so that printing
// it never drives the terminal; internal/quote.Text does the same for
// the packages this one may not import.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// Workload is a workload's identity: its name and the hash of its GEMM
// list.
type Workload struct {
	Name string
	Hash string
}

// Unit is one piece of work as the store keeps it: one point running one
// workload in all the sweep's modes.
type Unit struct {
	Point    Point
	Workload Workload
}

// GridValue returns the point's value of a grid key.
func GridValue(grid []Assignment, key string) (string, bool) {
	for _, a := range grid {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// WorkloadAxis is the grid-key prefix of a workload option.
const WorkloadAxis = "workload."

// FidelityKey is the config key a refined point changes.
const FidelityKey = "sim.fidelity"

// WorkloadBase is a workload's name without the "@k=v,..." of the
// workload options a point varies (the planner adds it), when each of
// them is the point's grid value: the model a line of a plot follows
// across those points.
func WorkloadBase(name string, grid []Assignment) string {
	i := strings.LastIndex(name, "@")
	if i < 0 {
		return name
	}
	for _, kv := range strings.Split(name[i+1:], ",") {
		k, v, _ := strings.Cut(kv, "=")
		if g, ok := GridValue(grid, WorkloadAxis+k); !ok || g != v {
			return name
		}
	}
	return name[:i]
}
