package validation

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// storedSummary is the stored full table of a points file, by kind.
func storedSummary(t *testing.T, points string) (string, map[string]Summary) {
	t.Helper()
	data, err := os.ReadFile(FullTablePath(points))
	if err != nil {
		t.Fatal(err)
	}
	var ft fullTable
	if err := json.Unmarshal(data, &ft); err != nil {
		t.Fatal(err)
	}
	by := map[string]Summary{}
	for _, s := range ft.Summary {
		by[s.Kind] = s
	}
	return ft.Label, by
}

// docPct is an error as docs/validation.md writes it.
func docPct(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) }

// docBias is a bias as docs/validation.md writes it, with its sign.
func docBias(v float64) string {
	if s := fmt.Sprintf("%.1f %%", 100*v); v < 0 || s == "0.0 %" {
		return s
	}
	return fmt.Sprintf("%+.1f %%", 100*v)
}

// namesRun says whether the doc names a stored run by its label, or by
// the commit the label starts with, across line breaks.
func namesRun(doc, label string) bool {
	flat := strings.Join(strings.Fields(doc), " ")
	commit, _, _ := strings.Cut(label, ",")
	return strings.Contains(flat, strings.Join(strings.Fields(label), " ")) || strings.Contains(flat, "commit "+commit)
}

// tableRow is the cells of the markdown table line of docs/validation.md
// that starts with "| name |" after the line containing after.
func tableRow(t *testing.T, doc, after, name string) []string {
	t.Helper()
	i := strings.Index(doc, after)
	if i < 0 {
		t.Fatalf("docs/validation.md has no %q", after)
	}
	for _, line := range strings.Split(doc[i:], "\n") {
		if strings.HasPrefix(line, "| "+name+" |") {
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for k := range cells {
				cells[k] = strings.TrimSpace(cells[k])
			}
			return cells
		}
	}
	t.Fatalf("docs/validation.md: no row %q after %q", name, after)
	return nil
}

// The held-out tables of docs/validation.md state the stored full tables
// (validation/points/*.heldout.json): each count, error, bias, rank
// correlation and K gap is the stored run's, so a rerun that is stored
// without the doc (or a doc edited by hand) fails here.
func TestDocTablesStateTheStoredRuns(t *testing.T) {
	b, err := os.ReadFile("../docs/validation.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	label, a100 := storedSummary(t, "points/a100-public.csv")
	if !namesRun(doc, label) {
		t.Errorf("docs/validation.md does not name the stored A100 run %q", label)
	}
	const stands = "**Where the model stands**"
	for name, kind := range map[string]string{"dense time": "gemm_dense_time",
		"sparse time": "gemm_sparse_time", "speedup": "gemm_speedup"} {
		s := a100[kind]
		c := tableRow(t, doc, stands, name)
		want := []string{fmt.Sprint(s.HeldOutN), docPct(s.HeldOutMAPE), docBias(s.HeldOutBias),
			fmt.Sprintf("%d / %d", s.Over, s.Under)}
		for k, w := range want {
			if c[1+k] != w {
				t.Errorf("A100 %s: column %d says %q, the stored run %q", name, 2+k, c[1+k], w)
			}
		}
		if s.RankCorrelation != nil {
			if w := fmt.Sprintf("%+.3f", *s.RankCorrelation); c[5] != w {
				t.Errorf("A100 %s: rank correlation %q, the stored run %q", name, c[5], w)
			}
		}
		if w := docPct(s.BoostMAPE) + ", " + docBias(s.BoostBias); s.BoostN > 0 && c[6] != w {
			t.Errorf("A100 %s at boost: %q, the stored run %q", name, c[6], w)
		}
	}
	if g := a100["gemm_speedup"].KGap; g != nil {
		c := tableRow(t, doc, stands, "speedup K gap")
		if w := fmt.Sprintf("model %+.3f, measured %+.3f", g.Simulated, g.Measured); !strings.HasPrefix(c[len(c)-1], w) {
			t.Errorf("A100 K gap %q, the stored run %q", c[len(c)-1], w)
		}
	}
	glabel, ga102 := storedSummary(t, "points/ga102-public.csv")
	if !namesRun(doc, glabel) {
		t.Errorf("docs/validation.md does not name the stored GA102 run %q", glabel)
	}
	const side = "Both GPUs side by side"
	for name, kind := range map[string]string{"dense time": "gemm_dense_time",
		"sparse time": "gemm_sparse_time", "speedup": "gemm_speedup"} {
		c := tableRow(t, doc, side, name)
		a, g := a100[kind], ga102[kind]
		if w := fmt.Sprintf("%d, %s, %s", a.HeldOutN, docPct(a.HeldOutMAPE), docBias(a.HeldOutBias)); !strings.HasPrefix(c[1], w) {
			t.Errorf("side by side, A100 %s: %q, the stored run %q", name, c[1], w)
		}
		if w := fmt.Sprintf("%d, %s, %s, %d / %d", g.HeldOutN, docPct(g.HeldOutMAPE), docBias(g.HeldOutBias),
			g.Over, g.Under); !strings.HasPrefix(c[2], w) {
			t.Errorf("side by side, GA102 %s: %q, the stored run %q", name, c[2], w)
		}
	}
}
