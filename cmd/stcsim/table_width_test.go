package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stcsim/stcsim/workloads"
)

// Every built-in model's run prints no line over 120 columns on a
// 120-column terminal (stdout here is a pipe, which gets the default
// 120), on the fast tier (its rows carry "-" where the instruction tier's
// carry bound, fixed and why-not-2x cells; report.TestTableFitsWithTheWidestCells
// holds the widest of those), and --wide shows the columns left out.
func TestRunTableFits120Columns(t *testing.T) {
	t.Setenv("COLUMNS", "120")
	for _, m := range workloads.Models() {
		out, code := captureStdout(t, func() int {
			return runRun([]string{"--workload", m, "--set", "sim.fidelity=fast", "--quiet"})
		})
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s", m, code, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 120 {
				t.Errorf("%s: line of %d columns: %q", m, n, line)
			}
		}
		if !strings.Contains(out, "--wide shows them") {
			t.Errorf("%s: the legend does not say what --wide adds:\n%s", m, out)
		}
	}
	out, _ := captureStdout(t, func() int {
		return runRun([]string{"--workload", "bert-base", "--set", "sim.fidelity=fast", "--quiet", "--wide"})
	})
	for _, want := range []string{"TC busy", "of dense", "mJ", "encoder.{0-11}.attention.qkv"} {
		if !strings.Contains(out, want) {
			t.Errorf("--wide lacks %q:\n%s", want, out)
		}
	}
}
