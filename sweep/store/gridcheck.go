package store

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/sweep/point"
)

// maxGridText bounds a stored grid key or value: a config key or value
// written by a sweep is short; a longer one is damage.
const maxGridText = 1024

// checkGridText refuses a grid that is null or holds an oversized key or
// value (parseGrid's input as stored).
func checkGridText(s string, grid []point.Assignment) error {
	if strings.TrimSpace(s) == "null" {
		return fmt.Errorf("grid is null, want a list of [key, value] pairs")
	}
	for _, a := range grid {
		if len(a.Key) > maxGridText || len(a.Value) > maxGridText || a.Key == "" {
			return fmt.Errorf("grid entry %s=%s: empty or above %d bytes",
				quote.Q(a.Key), quote.Q(a.Value), maxGridText)
		}
	}
	return nil
}

// gridAgrees checks a point's grid against its config (whose YAML the
// store's hash already vouches for): every swept key holds the swept
// value there, so a grid rewritten after the run (a point simulated at
// 54 SMs relabelled 7) is refused instead of exported.
func gridAgrees(config []byte, grid []point.Assignment) error {
	var doc map[string]any
	if err := yaml.Unmarshal(config, &doc); err != nil {
		return fmt.Errorf("config YAML: %v", err)
	}
	for _, a := range grid {
		var cur any = doc
		for _, part := range strings.Split(a.Key, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = nil
				break
			}
			cur = m[part]
		}
		if cur == nil {
			continue // a key the effective config does not spell out (a workload option)
		}
		var want any
		if err := yaml.Unmarshal([]byte(a.Value), &want); err != nil {
			want = a.Value
		}
		if fmt.Sprint(cur) != fmt.Sprint(want) {
			return fmt.Errorf("grid says %s=%s but the point's config has %s "+
				"(the grid was edited after the run)", a.Key, quote.Q(a.Value),
				quote.Q(fmt.Sprint(cur)))
		}
	}
	return nil
}
