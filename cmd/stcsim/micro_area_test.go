package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// micro area lists every component of the model, each with the source of
// every figure it uses (the line comment of its area keys), and the
// totals.
func TestMicroAreaListsEveryComponentWithItsSource(t *testing.T) {
	out, code := captureStdout(t, func() int {
		return dispatch([]string{"micro", "area", "--format", "json"})
	})
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var doc microAreaOutput
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"multipliers", "adder tree", "A operand path", "B operand path",
		"selector muxes", "metadata path and decode", "accumulators", "tensor cores",
		"register file", "register-file ports", "L1 / shared-memory SRAM",
		"shared-memory banks and ports", "rest of the SM", "SMs on the die", "uncore"}
	if len(doc.Components) != len(want) {
		t.Errorf("%d components, want %d", len(doc.Components), len(want))
	}
	for i, c := range doc.Components {
		if i < len(want) && c.Name != want[i] {
			t.Errorf("component %d is %q, want %q", i, c.Name, want[i])
		}
		if len(c.Sources) != len(c.Keys) && c.Name != "multipliers" {
			t.Errorf("%s: %d sources for keys %v", c.Name, len(c.Sources), c.Keys)
		}
		for _, s := range c.Sources {
			if strings.Contains(s, "no source comment") {
				t.Errorf("%s: %s", c.Name, s)
			}
		}
		if c.MM2 <= 0 {
			t.Errorf("%s: %g mm2", c.Name, c.MM2)
		}
	}
	if doc.TCMM2 <= 0 || doc.SMMM2 <= 4*doc.TCMM2 || doc.GPUMM2 <= 108*doc.SMMM2 {
		t.Errorf("totals tensor core %g, SM %g, GPU %g mm2", doc.TCMM2, doc.SMMM2, doc.GPUMM2)
	}
	table, code := captureStdout(t, func() int {
		return dispatch([]string{"micro", "area", "--set", "tensorcore.fp16.b_operand_bytes_per_clk=128"})
	})
	if code != exitOK {
		t.Fatalf("table: exit %d", code)
	}
	for _, w := range append(want, "sources:", "area.multiplier_um2.fp16: Horowitz",
		"against the config without --set: tensor core +") {
		if !strings.Contains(table, w) {
			t.Errorf("table lacks %q:\n%s", w, table)
		}
	}
}

// A bad area key stops the command before anything runs, naming the key.
func TestMicroAreaBadKey(t *testing.T) {
	_, stderr, code := capture(t, func() int {
		return dispatch([]string{"micro", "area", "--set", "area.wire_pitch_um=-1"})
	})
	if code != exitUsage || !strings.Contains(stderr, "area.wire_pitch_um") {
		t.Errorf("exit %d, stderr %q: want %d naming the key", code, stderr, exitUsage)
	}
}
