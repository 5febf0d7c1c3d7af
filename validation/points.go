package validation

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/stcsim/stcsim/tensorcore"
)

// Point is one measurement row.
type Point struct {
	Line      int
	ID        string
	Hardware  string
	Precision tensorcore.Precision // fp16 when the column is empty
	Kind      string               // peak, latency, bandwidth, gemm
	M, N, K   int
	Dense     float64 // measured value (peak/latency/bandwidth) or dense time/throughput
	Sparse    float64 // gemm: sparse time/throughput (0 when absent)
	Unit      string
	Speedup   float64
	Source    string
}

var columns = []string{"id", "hardware", "precision", "kind", "m", "n",
	"k", "dense", "sparse", "unit", "speedup", "source"}

// LoadPoints reads a points file; errors name the file, line and column.
func LoadPoints(path string) ([]Point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("points file: %w", err)
	}
	defer f.Close()
	return ParsePoints(f, path)
}

// ParsePoints parses a points CSV with the header of a100-public.csv.
func ParsePoints(r io.Reader, name string) ([]Point, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(columns)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: header: %v", name, err)
	}
	for i, c := range columns {
		if strings.TrimSpace(header[i]) != c {
			return nil, fmt.Errorf("%s:1: column %d is %q, want %q (header: %s)",
				name, i+1, header[i], c, strings.Join(columns, ","))
		}
	}
	var pts []Point
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return pts, nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		p, err := parsePoint(rec, line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		pts = append(pts, p)
	}
}

func parsePoint(rec []string, line int) (Point, error) {
	p := Point{Line: line, ID: rec[0], Hardware: rec[1],
		Kind: rec[3], Unit: rec[9], Source: rec[11]}
	if p.ID == "" {
		return p, fmt.Errorf("column id: empty")
	}
	if err := parseOpt(rec[2], columns[2], func(s string) error {
		var err error
		p.Precision, err = tensorcore.ParsePrecision(s)
		return err
	}); err != nil {
		return p, err
	}
	ints := []*int{&p.M, &p.N, &p.K}
	for i, dst := range ints {
		if err := parseOpt(rec[4+i], columns[4+i], func(s string) error {
			v, err := strconv.Atoi(s)
			if err == nil && v <= 0 {
				err = fmt.Errorf("must be > 0")
			}
			*dst = v
			return err
		}); err != nil {
			return p, err
		}
	}
	floats := []struct {
		col int
		dst *float64
	}{{7, &p.Dense}, {8, &p.Sparse}, {10, &p.Speedup}}
	for _, f := range floats {
		dst := f.dst
		if err := parseOpt(rec[f.col], columns[f.col], func(s string) error {
			v, err := strconv.ParseFloat(s, 64)
			if err == nil && !(v > 0) {
				err = fmt.Errorf("must be > 0")
			}
			*dst = v
			return err
		}); err != nil {
			return p, err
		}
	}
	return p, p.check()
}

func parseOpt(s, col string, parse func(string) error) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if err := parse(s); err != nil {
		return fmt.Errorf("column %s: %q: %v", col, s, err)
	}
	return nil
}

// check rejects rows whose kind lacks the fields it needs.
func (p Point) check() error {
	if p.Dense == 0 {
		return fmt.Errorf("column dense: required")
	}
	if p.Kind == "gemm" && (p.M == 0 || p.N == 0 || p.K == 0) {
		return fmt.Errorf("gemm row needs m, n and k")
	}
	if p.Kind == "gemm" && p.Unit != "us" && p.Unit != "TFLOPS" && p.Unit != "ms" {
		return fmt.Errorf("column unit: gemm rows need us, ms or TFLOPS (got %q)", p.Unit)
	}
	return nil
}

// ConfigFor is the built-in config matching a row's hardware.
func ConfigFor(hardware string) (string, bool) {
	h := strings.ToUpper(hardware)
	switch {
	case strings.HasPrefix(h, "A100-80GB"), strings.HasPrefix(h, "A100-SXM4-80GB"):
		return "a100-80gb", true
	case strings.HasPrefix(h, "A100"):
		return "a100-40gb", true
	case strings.HasPrefix(h, "H100"):
		return "h100-sxm", true
	case strings.HasPrefix(h, "H200"):
		return "h200", true
	}
	return "", false
}

// level is the memory level a latency or bandwidth row measures, from its
// id: lat-l1, lat-l2-near, lat-l2-far, lat-dram, bw-l1, bw-l2, bw-dram*.
func (p Point) level() (string, bool) {
	id := strings.TrimPrefix(strings.TrimPrefix(p.ID, "lat-"), "bw-")
	for _, l := range []string{"l2-near", "l2-far", "l1", "l2", "dram"} {
		if strings.HasPrefix(id, l) {
			return strings.ReplaceAll(l, "-", "_"), true
		}
	}
	return "", false
}
