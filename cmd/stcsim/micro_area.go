package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/stcsim/stcsim/area"
	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/energy"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
)

func init() {
	registerMicro(&command{name: "area", summary: "silicon area of the " +
		"tensor core, SM and GPU by component, with each figure's source, " +
		"and the per-MMA energy of the operand paths", run: runMicroArea})
}

// areaComponent is one component of the breakdown with the sources of its
// unit figures (the line comments of its area keys).
type areaComponent struct {
	area.Component
	Sources []string `json:"sources"`
}

// mmaPathEnergy is one datapath's per-MMA path energies.
type mmaPathEnergy struct {
	Precision string `json:"precision"`
	Mode      string `json:"mode"`
	energy.MMAPath
}

// microAreaOutput is the JSON document of stcsim micro area.
type microAreaOutput struct {
	Tool       string          `json:"tool"`
	Provenance *sim.Provenance `json:"provenance"`
	Config     string          `json:"config"`
	Sources    []string        `json:"sources"`
	Components []areaComponent `json:"components"`
	TCMM2      float64         `json:"tensor_core_mm2"`
	SparseMM2  float64         `json:"sparse_datapath_mm2"`
	SMMM2      float64         `json:"sm_mm2"`
	GPUMM2     float64         `json:"gpu_mm2"`
	PathMM     float64         `json:"operand_path_mm"`
	Base       *areaChange     `json:"base,omitempty"`
	Paths      []mmaPathEnergy `json:"mma_paths"`
}

func runMicroArea(args []string) int {
	ld, format, code := microFlags("area", args)
	if ld == nil {
		return code
	}
	b, err := ld.Config.AreaModel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim micro area:", flagged(err))
		return exitInternal
	}
	out := &microAreaOutput{Tool: "stcsim " + sim.Version, Config: ld.Config.Name,
		Sources: ld.Sources, Provenance: sim.ConfigProvenance(ld, os.Args),
		TCMM2: b.TCMM2, SparseMM2: b.SparseMM2, SMMM2: b.SMMM2, GPUMM2: b.GPUMM2,
		PathMM: b.PathMM}
	for _, c := range b.Components {
		out.Components = append(out.Components, areaComponent{c, ld.KeySources(c.Keys)})
	}
	if out.Base, err = baseAreaChange(ld, b); err != nil {
		fmt.Fprintln(os.Stderr, "stcsim micro area:", flagged(err))
		return exitInternal
	}
	for _, p := range tensorcore.Precisions {
		for _, m := range tensorcore.Modes {
			out.Paths = append(out.Paths, mmaPathEnergy{p.String(), m.String(),
				ld.Config.Power.Paths[energy.PathKey{Precision: p, Mode: m}]})
		}
	}
	if format == "json" {
		return printMicroJSON("area", out)
	}
	writeMicroAreaTable(os.Stdout, out)
	return exitOK
}

// areaChange is an area against the config without the --set overrides.
type areaChange struct {
	TCMM2, SMMM2, GPUMM2 float64
}

// baseAreaChange is the area of the same --config files without the
// --set overrides, or nil when there were none.
func baseAreaChange(ld *configs.Loaded, b area.Breakdown) (*areaChange, error) {
	base, err := ld.WithoutSets()
	if base == nil || err != nil {
		return nil, err
	}
	bb, err := base.Config.AreaModel()
	if err != nil {
		return nil, err
	}
	return &areaChange{TCMM2: bb.TCMM2, SMMM2: bb.SMMM2, GPUMM2: bb.GPUMM2}, nil
}

func writeMicroAreaTable(w io.Writer, out *microAreaOutput) {
	fmt.Fprintf(w, "%s, %s: area by component (7 nm; docs/area.md)\n", out.Tool, out.Config)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scope\tcomponent\tcount\tmm2\tsized by")
	for _, c := range out.Components {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.5f\t%s\n", c.Scope, c.Name, c.Count, c.MM2,
			strings.Join(c.Drivers, ", "))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntensor core %.4f mm2 (sparse-only datapath %.4f mm2, %.1f %%), "+
		"SM %.3f mm2, GPU %.1f mm2; operand paths %.3f mm long\n", out.TCMM2,
		out.SparseMM2, 100*out.SparseMM2/out.TCMM2, out.SMMM2, out.GPUMM2, out.PathMM)
	if b := out.Base; b != nil {
		fmt.Fprintf(w, "against the config without --set: tensor core %s, SM %s, GPU %s\n",
			area.Change(out.TCMM2, b.TCMM2), area.Change(out.SMMM2, b.SMMM2), area.Change(out.GPUMM2, b.GPUMM2))
	}
	fmt.Fprintln(w, "\nper-MMA path energy (pJ at the top voltage):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "precision\tmode\toperands\tmetadata\tmux passes\t")
	for _, p := range out.Paths {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.0f\t\n", p.Precision, p.Mode,
			p.OperandPJ, p.MetadataPJ, p.MuxPasses)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nsources:")
	seen := map[string]bool{}
	var lines []string
	for _, c := range out.Components {
		for _, s := range c.Sources {
			if !seen[s] {
				seen[s] = true
				lines = append(lines, s)
			}
		}
	}
	sort.Strings(lines)
	for _, s := range lines {
		fmt.Fprintln(w, "  "+s)
	}
}

// writeAreaSummary prints the config's area_mm2 (tensor core, SM, GPU)
// and its change against the same --config files without the --set
// overrides, each line after prefix.
func writeAreaSummary(w io.Writer, ld *configs.Loaded, prefix string) error {
	b, err := ld.Config.AreaModel()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%sarea_mm2 (docs/area.md; stcsim micro area for the components and sources):\n", prefix)
	base, err := baseAreaChange(ld, b)
	if err != nil {
		return err
	}
	var was areaChange
	if base != nil {
		was = *base
	}
	for _, r := range []struct {
		name    string
		v, base float64
	}{{"tensor core", b.TCMM2, was.TCMM2}, {"SM", b.SMMM2, was.SMMM2}, {"GPU", b.GPUMM2, was.GPUMM2}} {
		line := fmt.Sprintf("%s  %-11s %10.4f", prefix, r.name, r.v)
		if base != nil {
			line += fmt.Sprintf("  (%s against %.4f without --set)", area.Change(r.v, r.base), r.base)
		}
		fmt.Fprintln(w, line)
	}
	return nil
}
