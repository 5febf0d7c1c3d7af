package configs

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stcsim/stcsim/internal/check"
)

// Bound is the accepted range of a numeric config key. The section
// validators already require most values to be positive; bounds add the
// top of the range (and a bottom where a tiny value would make a run take
// forever), so that no value can make a simulation run for hours or
// build a machine that does not fit in memory.
type Bound struct {
	Key    string // full key; * matches one name or list index
	Lo, Hi float64
}

// Generic bounds hold for every numeric key the table does not name.
const (
	GenericIntHi   = 1 << 24
	GenericFloatHi = 1e9
)

// Bounds are the per-key ranges, documented in docs/input-limits.md.
var Bounds = []Bound{
	{"gpu.clock_mhz", 100, 10000},
	{"gpu.sm_count", 1, 1024},
	{"sm.sub_partitions", 1, 16},
	{"sm.warp_schedulers", 1, 8},
	{"sm.issue_per_clk", 1, 8},
	{"sm.max_warps", 1, 256},
	{"sm.max_threads", 1, 8192},
	{"sm.max_ctas", 1, 128},
	{"sm.registers", 1, 1 << 20},
	{"sm.register_file_bytes_per_clk", 1, 1 << 16},
	{"sm.register_file_banks", 1, 32},
	{"sm.barrier_latency", 0, 100000},
	{"sm.cta_launch_latency", 0, 100000},
	{"sm.cta_dispatch_interval", 0, 10000},
	{"sm.kernel_launch_latency", 0, 1000000},
	{"sm.fp32_lanes", 1, 32},
	{"tensorcore.mask_seed", 0, 1 << 30},
	{"tensorcore.*.multipliers", 1, 1 << 16},
	{"tensorcore.*.a_operand_bytes_per_clk", 1, 1 << 16},
	{"tensorcore.*.b_operand_bytes_per_clk", 1, 1 << 16},
	{"tensorcore.*.metadata_bits_per_clk", 1, 1 << 20},
	{"tensorcore.*.accumulate_per_clk", 1, 1 << 16},
	{"tensorcore.*.operand_latency", 0, 10000},
	{"tensorcore.*.metadata_decode_latency", 0, 10000},
	{"tensorcore.*.mux_level_latency", 0, 10000},
	{"tensorcore.*.dot_latency", 0, 10000},
	{"tensorcore.*.accumulate_latency", 0, 10000},
	{"shared_memory.carveout_kb", 0, 1 << 16},
	{"shared_memory.carveout_options_kb[*]", 0, 1 << 16},
	{"shared_memory.banks", 1, 256},
	{"shared_memory.bank_bytes", 1, 64},
	{"shared_memory.ports", 1, 64},
	{"shared_memory.bytes_per_clk", 1, 1 << 16},
	{"shared_memory.latency", 1, 10000},
	{"l1.total_kb", 1, 1 << 16},
	{"l1.line_bytes", 1, 4096},
	{"l1.sector_bytes", 1, 4096},
	{"l1.ways", 1, 1024},
	{"l1.hit_latency", 1, 10000},
	{"l1.bytes_per_clk", 1, 1 << 16},
	{"l2.size_kb", 1, 1 << 22},
	{"l2.partitions", 1, 64},
	{"l2.slices_per_partition", 1, 1024},
	{"l2.line_bytes", 1, 4096},
	{"l2.sector_bytes", 1, 4096},
	{"l2.ways", 1, 1024},
	{"l2.near_latency", 1, 100000},
	{"l2.far_latency", 1, 100000},
	{"l2.bytes_per_clk", 1, 1 << 20},
	{"l2.writeback_entries", 1, 1 << 16},
	{"crossbar.port_bytes_per_clk", 1, 1 << 16},
	{"dram.channels", 1, 1024},
	{"dram.bandwidth_gbps", 1, 1e6},
	{"dram.latency", 1, 100000},
	{"dram.size_gb", 1, 1 << 16},
	{"kernel.candidates[*].bm", 1, 1024},
	{"kernel.candidates[*].bn", 1, 1024},
	{"kernel.candidates[*].bk", 1, 1024},
	{"kernel.candidates[*].warp_m", 1, 1024},
	{"kernel.candidates[*].warp_n", 1, 1024},
	{"kernel.candidates[*].max_n", 0, 1 << 30},
	{"area.disabled_sms", 0, 1024},
	{"area.operand_path_mm", 0, 100},
	{"sim.prune_tolerance", 0, 0.05},
	{"sim.retime_probe_ksteps", 0, 65536},
}

// unbounded keys take any value of their type.
var unbounded = map[string]bool{"sim.seed": true}

// boundFor is the range of a key: its table entry, or the generic one.
func boundFor(path string, isInt bool) Bound {
	// Every load checks every number's bound (a sweep loads a config per
	// point): the answer for a key is kept.
	k := boundKey{path, isInt}
	if b, ok := boundMemo.Load(k); ok {
		return b.(Bound)
	}
	b := findBound(path, isInt)
	if boundMemoSize.Add(1) <= boundMemoMax {
		boundMemo.Store(k, b)
	}
	return b
}

type boundKey struct {
	path  string
	isInt bool
}

var (
	boundMemo     sync.Map
	boundMemoSize atomic.Int64
)

// boundMemoMax bounds the memo: the schema's numeric keys, list elements
// included, are a few hundred.
const boundMemoMax = 1 << 16

func findBound(path string, isInt bool) Bound {
	ks := strings.Split(normaliseIndices(path), ".")
	for i, ps := range boundParts {
		if partsMatch(ps, ks) {
			return Bounds[i]
		}
	}
	if isInt {
		return Bound{Key: path, Lo: -GenericIntHi, Hi: GenericIntHi}
	}
	return Bound{Key: path, Lo: -GenericFloatHi, Hi: GenericFloatHi}
}

// boundParts are the Bounds keys split at the dots.
var boundParts = func() [][]string {
	out := make([][]string, len(Bounds))
	for i, b := range Bounds {
		out[i] = strings.Split(b.Key, ".")
	}
	return out
}()

// normaliseIndices writes every list index [i] of a path as [*].
func normaliseIndices(path string) string {
	if !strings.Contains(path, "[") {
		return path
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] != '[' {
			b.WriteByte(path[i])
			continue
		}
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			b.WriteString(path[i:])
			break
		}
		b.WriteString("[*]")
		i += j
	}
	return b.String()
}

func partsMatch(ps, ks []string) bool {
	if len(ps) != len(ks) {
		return false
	}
	for i := range ps {
		if ps[i] != "*" && ps[i] != ks[i] {
			return false
		}
	}
	return true
}

// checkBounds walks every numeric value of the config against its range.
func (c *Config) checkBounds() check.List {
	var l check.List
	walkNumbers(reflect.ValueOf(*c), "", func(path string, v float64, isInt bool) {
		if unbounded[path] {
			return
		}
		b := boundFor(path, isInt)
		// Values at or below zero are reported by the section
		// validators; the bottom of a range is for positive values too
		// small to simulate in reasonable time.
		if v > b.Hi || (v > 0 && v < b.Lo) {
			l.Add(path, "must be in [%s, %s] (got %s)", num(b.Lo), num(b.Hi), num(v))
		}
	})
	return l
}

func num(v float64) string { return fmt.Sprintf("%.10g", v) }

// walkNumbers calls fn with the full key of every int and float in v.
func walkNumbers(v reflect.Value, path string, fn func(string, float64, bool)) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			p := path
			if opts != "inline" {
				if name == "" {
					name = strings.ToLower(f.Name)
				}
				p = joinPath(path, name)
			}
			walkNumbers(v.Field(i), p, fn)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkNumbers(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			walkNumbers(v.MapIndex(k), joinPath(path, fmt.Sprint(k.Interface())), fn)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			walkNumbers(v.Elem(), path, fn)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fn(path, float64(v.Int()), true)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		fn(path, float64(v.Uint()), true)
	case reflect.Float32, reflect.Float64:
		fn(path, v.Float(), false)
	}
}
