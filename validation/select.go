package validation

import (
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/field"
	"github.com/stcsim/stcsim/internal/quote"
)

// The arguments of Select and the option of Options that errors name
// (package field).
const (
	FieldRows    field.Name = "rows"
	FieldKinds   field.Name = "kinds"
	FieldMaxWork field.Name = "max_work"
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
			return nil, &field.Error{Field: FieldRows, Value: quote.Q(rows), Err: errors.New("not a regular expression")}
		}
	}
	for _, k := range kinds {
		if !slices.Contains([]string{"peak", "latency", "bandwidth", "launch", "mma", "gemm"}, k) {
			return nil, &field.Error{Field: FieldKinds, Value: quote.Q(k),
				Err: errors.New("want peak, latency, bandwidth, launch, mma or gemm")}
		}
	}
	var out []Point
	for _, p := range pts {
		if (re == nil || re.MatchString(p.ID)) && (len(kinds) == 0 || slices.Contains(kinds, p.Kind)) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, field.Errorf("%s %s %s %s: no row matches", FieldRows, quote.Q(rows),
			FieldKinds, quote.Q(strings.Join(kinds, ",")))
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
