package sim

import (
	"strings"

	"github.com/stcsim/stcsim/configs"
)

// ConfigProvenance is the provenance of an output made from a config
// alone (a microbenchmark's): version, command line, config files,
// overrides, hash and description, and no workloads.
func ConfigProvenance(ld *configs.Loaded, command []string) *Provenance {
	p := configProvenance(ld)
	p.Command = command
	p.Workloads = []WorkloadSource{}
	return p
}

// configProvenance fills the config part of a report's provenance.
func configProvenance(ld *configs.Loaded) *Provenance {
	p := &Provenance{Version: Version, ConfigFiles: ld.Files,
		Sets: []string{}, ConfigHash: ld.Hash(),
		ConfigDescription: ld.Config.Description}
	if fc, err := configs.FidelityChanges(ld.Config); err == nil {
		p.FidelityChanges = fc
	} else {
		p.FidelityChanges = []string{"unknown: " + err.Error()}
	}
	for _, s := range ld.Sources {
		if set, ok := strings.CutPrefix(s, "--set "); ok {
			p.Sets = append(p.Sets, set)
		}
	}
	return p
}
