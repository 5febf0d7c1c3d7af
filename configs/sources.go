package configs

import (
	"strings"

	"github.com/stcsim/stcsim/tensorcore"
)

// KeySources are the line comments of keys, or of their sub-keys where
// the key is a section (area.multiplier_um2.fp16, ...).
func (ld *Loaded) KeySources(keys []string) []string {
	var out []string
	for _, k := range keys {
		if n := ld.Note(k); n != "" {
			out = append(out, k+": "+n)
			continue
		}
		found := false
		for _, p := range tensorcore.Precisions {
			if n := ld.Note(k + "." + p.String()); n != "" {
				out = append(out, k+"."+p.String()+": "+n)
				found = true
			}
		}
		if !found {
			out = append(out, k+": "+ld.Origin(k)+" (no source comment)")
		}
	}
	return out
}

// WithoutSets is the config loaded again from the same files without
// the --set overrides, or nil when there were none.
func (ld *Loaded) WithoutSets() (*Loaded, error) {
	var specs []string
	sets := false
	for _, s := range ld.Sources {
		if strings.HasPrefix(s, "--set ") {
			sets = true
			continue
		}
		specs = append(specs, s)
	}
	if !sets {
		return nil, nil
	}
	return Load(specs, nil)
}
