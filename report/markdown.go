package report

import (
	"bytes"
	"fmt"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
)

// Markdown renders report.md: what ran, the totals and the per-layer table.
func Markdown(rep *sim.Report, ld *configs.Loaded, plots []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# stcsim report\n\nConfig: `%s` (effective config in "+
		"`config.yaml`), stcsim %s.\n\n```\n", rep.Config, rep.Version)
	Table(&b, rep)
	b.WriteString("```\n")
	for _, p := range plots {
		fmt.Fprintf(&b, "\n![%s](%s)\n", p, p)
	}
	return b.Bytes()
}
