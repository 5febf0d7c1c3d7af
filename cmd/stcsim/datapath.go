package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/tensorcore"
)

// writeDatapaths prints, each line behind prefix, how every precision's
// dense and sparse issue interval and latency follow from its structural
// keys, and where each key's value came from (the comment of the line
// that set it: a source, or why it is estimated).
func writeDatapaths(w io.Writer, ld *configs.Loaded, prefix string) error {
	fmt.Fprintf(w, "%sderived tensor-core datapaths (docs/tensorcore.md): interval = the "+
		"slowest stage occupancy, latency = stage fills + that occupancy\n", prefix)
	for _, name := range tensorcore.Precisions {
		p, _ := ld.Config.TensorCore.Get(name)
		fmt.Fprintf(w, "%s\n%s%s inputs:\n", prefix, prefix, name)
		for _, k := range tensorcore.Keys() {
			path := "tensorcore." + name.String() + "." + k
			note := ld.Note(path)
			switch {
			case strings.HasPrefix(ld.Origin(path), "--set"):
				note = "overridden"
			case note == "":
				note = "no source noted on its line"
			}
			fmt.Fprintf(w, "%s  %-24s = %-8v %s: %s\n", prefix, k, keyValue(p, k),
				ld.Origin(path), note)
		}
		pat := p.Pattern()
		for _, m := range []tensorcore.Mode{tensorcore.Dense, tensorcore.Sparse} {
			d, err := tensorcore.Derive(p, name, m, pat, 0)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(strings.TrimRight(d.Describe(), "\n"), "\n") {
				fmt.Fprintf(w, "%s%s\n", prefix, line)
			}
			fmt.Fprintf(w, "%s  interval: %s\n", prefix, provenance(ld, name.String(), d.Binding))
		}
	}
	return nil
}

// provenance says whether a derived figure rests on sourced values or on
// estimates, naming the keys.
func provenance(ld *configs.Loaded, name string, keys []string) string {
	var sourced, estimated, set []string
	for _, k := range keys {
		path := "tensorcore." + name + "." + k
		note := ld.Note(path)
		if strings.HasPrefix(ld.Origin(path), "--set") {
			set = append(set, k)
		} else if note == "" || strings.Contains(note, "estimated") {
			estimated = append(estimated, k)
		} else {
			sourced = append(sourced, k)
		}
	}
	var parts []string
	if len(set) > 0 {
		parts = append(parts, "overridden: "+strings.Join(set, ", "))
	}
	if len(sourced) > 0 {
		parts = append(parts, "sourced: "+strings.Join(sourced, ", "))
	}
	if len(estimated) > 0 {
		parts = append(parts, "estimated: "+strings.Join(estimated, ", "))
	}
	return "set by " + strings.Join(parts, "; ") + " (sources and reasons above)"
}

func keyValue(p *tensorcore.PrecisionConfig, k string) any {
	v, _ := p.Value(k)
	return v
}
