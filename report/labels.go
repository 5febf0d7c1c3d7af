package report

import (
	"fmt"
	"slices"
	"strings"
)

// KeyWords is a grid key in words with its unit: dram.bandwidth_gbps ->
// "DRAM bandwidth (GB/s)"; the raw key stays in the caption and sidecar.
func KeyWords(key string) string {
	label := AxisLabel(key)
	unit := ""
	if i := strings.LastIndex(label, " ("); i >= 0 {
		label, unit = label[:i], label[i:]
	}
	parts := strings.Split(label, ".")
	last := parts[len(parts)-1]
	for _, u := range keyUnits {
		if strings.HasPrefix(u.suffix, "_") { // a unit, not a whole name
			last = strings.TrimSuffix(last, u.suffix)
		}
	}
	section := parts[0]
	words := strings.Fields(strings.ReplaceAll(section, "_", " "))
	if len(parts) > 1 {
		words = append(words, strings.Fields(strings.ReplaceAll(last, "_", " "))...)
	}
	for i, w := range words {
		if up, ok := acronyms[w]; ok {
			words[i] = up
		}
	}
	if len(words) == 0 {
		return key
	}
	return strings.Join(slices.Compact(words), " ") + unit
}

var acronyms = map[string]string{"dram": "DRAM", "l1": "L1", "l2": "L2", "sm": "SM",
	"gpu": "GPU", "hbm": "HBM", "tc": "TC", "fp16": "FP16", "int8": "INT8", "tf32": "TF32",
	"mhz": "MHz", "kb": "KB", "clk": "clock", "mma": "MMA"}

// keyUnits are the units of config keys, by the suffix of their last part.
var keyUnits = []struct{ suffix, unit string }{
	{"_gbps", "GB/s"}, {"_kb", "KB"}, {"_gb", "GB"}, {"_mhz", "MHz"},
	{"bytes_per_clk", "B/clock"}, {"latency", "cycles"},
	{"fma_per_clk", "FMA/clock"}, {"sm_count", "SMs"}, {"_bytes", "B"},
}

// AxisLabel is a grid key with its unit, when the key's name implies one.
func AxisLabel(key string) string {
	for _, u := range keyUnits {
		if strings.HasSuffix(key, u.suffix) {
			return fmt.Sprintf("%s (%s)", key, u.unit)
		}
	}
	return key
}
