package validation

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/internal/quote"
)

// Select keeps the rows whose id matches rows (a regular
// expression) and whose kind is one of kinds; none left is an error.
func Select(pts []Point, rows string, kinds []string) ([]Point, error) {
	if rows == "" && len(kinds) == 0 {
		return pts, nil
	}
	var re *regexp.Regexp
	if rows != "" {
		var err error
		if re, err = regexp.Compile(rows); err != nil {
			return nil, fmt.Errorf("--rows %s: not a regular expression", quote.Q(rows))
		}
	}
	for _, k := range kinds {
		if !slices.Contains([]string{"peak", "latency", "bandwidth", "mma", "gemm"}, k) {
			return nil, fmt.Errorf("--kind %s: want peak, latency, bandwidth, mma or gemm", quote.Q(k))
		}
	}
	var out []Point
	for _, p := range pts {
		if (re == nil || re.MatchString(p.ID)) && (len(kinds) == 0 || slices.Contains(kinds, p.Kind)) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--rows %s --kind %s: no row matches", quote.Q(rows), quote.Q(strings.Join(kinds, ",")))
	}
	return out, nil
}

// CountCalibrated counts the rows whose id is one of ids.
func CountCalibrated(pts []Point, ids []string) int {
	n := 0
	for _, p := range pts {
		if slices.ContainsFunc(ids, func(id string) bool {
			return id == p.ID || strings.HasPrefix(id, p.ID+":")
		}) {
			n++
		}
	}
	return n
}
