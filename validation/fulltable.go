package validation

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/atomicfile"
)

// fullTable is the stored summary of a full `stcsim validate` of a
// points file (every row), which a run of a subset restates so that a
// hand-picked subset cannot look better than the model is.
type fullTable struct {
	// Label says what produced it: the commit and date
	// (--summary-label).
	Label        string    `json:"label"`
	Points       string    `json:"points"`
	PointsSHA256 string    `json:"points_sha256"`
	Version      string    `json:"version"`
	Command      []string  `json:"command"`
	Summary      []Summary `json:"summary"`
}

// FullTablePath is where a points file's full table is kept:
// a100-public.csv -> a100-public.heldout.json beside it.
func FullTablePath(points string) string {
	return strings.TrimSuffix(points, ".csv") + ".heldout.json"
}

// SaveFullTable writes rep's summary as the full table of its points
// file (only a run of every row may).
func SaveFullTable(path, label string, rep *Report) error {
	t := fullTable{Label: label, Points: rep.Provenance.Points,
		PointsSHA256: rep.Provenance.PointsSHA256, Version: rep.Provenance.Version,
		Command: rep.Provenance.Command, Summary: rep.Summary}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// WriteFullTable restates the stored full table of the points file after
// a subset's report; it says when there is none, or when it was made
// from another version of the file.
func WriteFullTable(out io.Writer, points string) {
	path := FullTablePath(points)
	data, err := configs.ReadRegular(path, 1<<20, "a full validation table")
	if err != nil {
		fmt.Fprintf(out, "\nno stored full table of %s (%s): the subset's errors above "+
			"are all there is; run every row to know the model's\n", points, path)
		return
	}
	var t fullTable
	if err := json.Unmarshal(data, &t); err != nil {
		fmt.Fprintf(out, "\nthe stored full table %s does not parse (%v)\n", path, err)
		return
	}
	pts, _ := os.ReadFile(points)
	stale := ""
	if fmt.Sprintf("%x", sha256.Sum256(pts)) != t.PointsSHA256 {
		stale = " (made from another version of the points file: rerun every row)"
	}
	fmt.Fprintf(out, "\nthe model's errors over every row of %s, %s%s (%s):\n",
		points, t.Label, stale, path)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "kind\theld-out n\theld-out MAPE\theld-out bias\tover/under\trank corr\tat boost MAPE\tat boost bias\t\n")
	for _, s := range t.Summary {
		if s.HeldOutN == 0 {
			continue
		}
		corr, bm, bb := "", "", ""
		if s.RankCorrelation != nil {
			corr = fmt.Sprintf("%+.3f", *s.RankCorrelation)
		}
		if s.BoostN > 0 {
			bm, bb = fmt.Sprintf("%.1f%%", 100*s.BoostMAPE), fmt.Sprintf("%+.1f%%", 100*s.BoostBias)
		}
		fmt.Fprintf(w, "%s\t%d\t%.1f%%\t%+.1f%%\t%d/%d\t%s\t%s\t%s\t\n", s.Kind, s.HeldOutN,
			100*s.HeldOutMAPE, 100*s.HeldOutBias, s.Over, s.Under, corr, bm, bb)
	}
	w.Flush()
	writeKGap(out, t.Summary)
}
