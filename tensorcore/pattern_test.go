package tensorcore

import (
	"strings"
	"testing"
)

// Every family parses from its documented form back to the same text,
// with the kept fraction, group and metadata the family's definition
// gives (worked by hand: docs/tensorcore.md, "Sparsity patterns").
func TestPatternFamilies(t *testing.T) {
	for _, tc := range []struct {
		s             string
		family        Family
		group, kept   int // per group along K
		keptOf64      int
		ideal         float64
		groupMetaBits int
		instr         Pattern
		gathered64    int
	}{
		{"2:4", FamilyNM, 4, 2, 32, 2, 4, Pattern{N: 2, M: 4}, 64},
		{"1:2", FamilyNM, 2, 1, 32, 2, 4, Pattern{N: 1, M: 2}, 64},
		{"2:8", FamilyNM, 8, 2, 16, 4, 6, Pattern{N: 2, M: 8}, 64},
		// Transposable: row and column index per kept value.
		{"2:4T", FamilyNM, 4, 2, 32, 2, 8, Pattern{N: 2, M: 4, Transposable: true}, 64},
		// V:N:M: 2 of every 8 kept, 2:4 over 4 gathered of 8 columns.
		{"64:2:8", FamilyVNM, 8, 2, 16, 4, 4, Pattern{N: 2, M: 4}, 32},
		{"128:2:32", FamilyVNM, 32, 2, 4, 16, 4, Pattern{N: 2, M: 4}, 8},
		// Hierarchical 2:4 blocks of 2:4 values: 4 of every 16 kept; 2
		// block indices of 2 bits and 4 value indices of 2 bits.
		{"2:4/2:4", FamilyHierarchical, 16, 4, 16, 4, 2*2 + 4*2,
			Pattern{N: 2, M: 4, InN: 2, InM: 4}, 64},
		{"1:2/2:8", FamilyHierarchical, 16, 2, 8, 8, 1*1 + 2*3,
			Pattern{N: 1, M: 2, InN: 2, InM: 8}, 64},
	} {
		p, err := ParsePattern(tc.s)
		if err != nil {
			t.Fatalf("%s: %v", tc.s, err)
		}
		if p.String() != tc.s || p.Family() != tc.family {
			t.Errorf("%s: reads back as %s, family %s", tc.s, p, p.Family())
		}
		if p.Group() != tc.group || p.KeptPerGroup() != tc.kept || p.Kept(64) != tc.keptOf64 ||
			p.Ideal() != tc.ideal {
			t.Errorf("%s: group %d kept %d Kept(64) %d ideal %g, want %d %d %d %g", tc.s,
				p.Group(), p.KeptPerGroup(), p.Kept(64), p.Ideal(), tc.group, tc.kept, tc.keptOf64, tc.ideal)
		}
		if p.GroupMetadataBits() != tc.groupMetaBits {
			t.Errorf("%s: %d metadata bits per group, want %d", tc.s, p.GroupMetadataBits(), tc.groupMetaBits)
		}
		if p.Instr() != tc.instr || p.Gathered(64) != tc.gathered64 {
			t.Errorf("%s: instruction pattern %s, gathered 64 -> %d; want %s, %d", tc.s,
				p.Instr(), p.Gathered(64), tc.instr, tc.gathered64)
		}
	}
}

// Malformed patterns name the rule they break.
func TestPatternParseErrors(t *testing.T) {
	for _, tc := range []struct{ s, rule string }{
		{"0:4", "0 < N < M"},
		{"5:4", "0 < N < M"},
		{"2:128", "M <= 64"},
		{"64:2:3", "4 < M <= 256"},
		{"64:2:512", "4 < M <= 256"},
		{"64:2:4", "4 < M <= 256"},
		{"48:1:8", "N = 2"},
		{"40:2:8", "multiple of 16"},
		{"0:2:8", "V > 0"},
		{"2:4/4:4", "0 < N2 < M2"},
		{"2:16/2:8", "M1 x M2 <= 64"},
		{"64:2:8T", "want N:M"},
		{"2:4/2:4T", "want N:M"},
		{"02:4", "written as 2:4"},
		{"dense", "want N:M"},
		{"2:4:", "want N:M"},
	} {
		_, err := ParsePattern(tc.s)
		if err == nil || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%q: error %v, want one naming %q", tc.s, err, tc.rule)
		}
	}
}

// V:N:M runs on the precision's own 2:4 instruction: tf32's is 1:2, so
// it cannot; the other families are datapaths of their own.
func TestCheckPatternFamilies(t *testing.T) {
	cfg := a100("batched")
	for _, tc := range []struct {
		p   Precision
		s   string
		bad string
	}{
		{FP16, "64:2:8", ""}, {INT8, "128:2:16", ""}, {BF16, "2:4/2:4", ""},
		{FP16, "2:4T", ""},
		{TF32, "64:2:8", "tf32's sparse instruction is 1:2"},
	} {
		pat, err := ParsePattern(tc.s)
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.CheckPattern(tc.p, pat)
		if (tc.bad == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("%s %s: %v, want %q", tc.p, tc.s, err, tc.bad)
		}
	}
}
