package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/configs"
)

// PlotContext is what stands behind a sweep plot: the built-in config the
// plotted points start from, the overrides every one of them shares
// (beyond the grid), and the store.
type PlotContext struct {
	Store       string            `json:"store"`
	StoreSHA256 string            `json:"store_sha256"`
	Base        string            `json:"base_config,omitempty"`
	BaseDesc    string            `json:"base_description,omitempty"`
	Common      map[string]string `json:"set_on_every_point,omitempty"`
	ConfigHash  []string          `json:"config_hashes"`
	Query       []string          `json:"query"`
	Version     string            `json:"stcsim_version"`
	// Baseline is the base config's value of the X key ("" when the key
	// is not in it or the base is not a built-in).
	Baseline string `json:"-"`
}

// NewPlotContext reads the configs of the plotted rows from the store.
func NewPlotContext(path string, rows []Row, x string, query []string, version string) (*PlotContext, error) {
	pc := &PlotContext{Store: path, Query: query, Version: version}
	sum, err := fileSHA256(path)
	if err != nil {
		return nil, err
	}
	pc.StoreSHA256 = sum
	st, err := OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	yamls, err := st.ConfigYAMLs()
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	grid := map[string]bool{}
	var flats []map[string]string
	for _, r := range rows {
		if slices.Contains(pc.ConfigHash, r.ConfigHash) {
			continue
		}
		pc.ConfigHash = append(pc.ConfigHash, r.ConfigHash)
		for _, a := range r.Grid {
			grid[a.Key] = true
		}
		f, err := flatYAML(yamls[r.ConfigHash])
		if err != nil {
			return nil, fmt.Errorf("store %s: config %s: %w", path, r.ConfigHash, err)
		}
		flats = append(flats, f)
	}
	sort.Strings(pc.ConfigHash)
	if len(flats) == 0 {
		return pc, nil
	}
	name := flats[0]["name"]
	for _, f := range flats {
		if f["name"] != name {
			return pc, nil // points of different base configs: no one baseline
		}
	}
	if !slices.Contains(configs.Builtin(), name) {
		return pc, nil
	}
	ld, err := configs.Load([]string{name}, nil)
	if err != nil {
		return nil, fmt.Errorf("built-in config %s: %w", name, err)
	}
	base, err := flatYAML(ld.YAML())
	if err != nil {
		return nil, fmt.Errorf("built-in config %s: %w", name, err)
	}
	pc.Base, pc.BaseDesc, pc.Baseline = name, ld.Config.Description, base[x]
	pc.Common = map[string]string{}
	for k, v := range flats[0] {
		if grid[k] || k == "description" || v == base[k] {
			continue
		}
		same := true
		for _, f := range flats[1:] {
			same = same && f[k] == v
		}
		if same {
			pc.Common[k] = v
		}
	}
	return pc, nil
}

// Caption are the lines printed under the plot.
func (pc *PlotContext) Caption() []string {
	var out []string
	if pc.Base != "" {
		line := "config " + pc.Base + " (" + pc.BaseDesc + ")"
		if len(pc.Common) > 0 {
			var sets []string
			for _, k := range slices.Sorted(maps.Keys(pc.Common)) {
				sets = append(sets, k+"="+pc.Common[k])
			}
			line += "; set on every point: " + strings.Join(sets, ", ")
		} else {
			line += "; no override beyond the grid"
		}
		out = append(out, line)
	}
	out = append(out, fmt.Sprintf("store %s (sha256 %.12s), %d configs; stcsim %s %s",
		pc.Store, pc.StoreSHA256, len(pc.ConfigHash), pc.Version, strings.Join(pc.Query, " ")))
	return out
}

// flatYAML maps every leaf of a YAML document to its dotted key.
func flatYAML(data []byte) (map[string]string, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x)
			}
			return
		}
		out[prefix] = fmt.Sprint(v)
	}
	walk("", doc)
	return out, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
