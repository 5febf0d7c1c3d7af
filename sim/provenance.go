package sim

import (
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/workloads"
)

// Provenance is what produced a report, enough to reproduce it: the
// config's sources in merge order with their hashes, every --set, the
// effective config's hash, the workloads with their options, the tool
// version and the command line.
type Provenance struct {
	Version string `json:"version"`
	// Command is the command line (os.Args) of the run; empty when the
	// report was made through the library.
	Command []string `json:"command,omitempty"`
	// ConfigFiles are the config files read, a base before the file
	// that names it.
	ConfigFiles []configs.SourceFile `json:"config_files"`
	// Sets are the --set overrides, in the order applied.
	Sets []string `json:"sets"`
	// ConfigHash is the SHA-256 of the effective config (config.yaml's
	// values).
	ConfigHash string `json:"config_hash"`
	// ConfigDescription is the config's description: the hardware, and
	// what of it is not modelled.
	ConfigDescription string           `json:"config_description"`
	Workloads         []WorkloadSource `json:"workloads"`
}

// WorkloadSource is one workload of a run and where it came from
// (workloads.Origin: an exported trace records the same).
type WorkloadSource = workloads.Origin

// WeightsSource is one weights path of a workload and its content hash.
type WeightsSource = workloads.WeightsSource

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
	for _, s := range ld.Sources {
		if set, ok := strings.CutPrefix(s, "--set "); ok {
			p.Sets = append(p.Sets, set)
		}
	}
	return p
}
