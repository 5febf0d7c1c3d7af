package main

import (
	"strings"
	"testing"
)

// Bad LLM input exits 2 before anything runs, naming the flag and the
// limit (issue 52): an unknown model, a phase the model cannot run, a
// context past the model's positions, a batch or sequence of 0 or 10^9.
func TestRunRefusesBadLLMInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "llama-9b"}, "not a model"},
		{[]string{"--workload", "llama-2-7b", "--phase", "train"}, "--phase \"train\": want prefill or decode"},
		{[]string{"--workload", "bert-base", "--phase", "decode"}, "--phase: no workload of this run reads it"},
		{[]string{"--workload", "llama-2-7b", "--phase", "decode", "--context", "4096"}, "--context 4096: llama-2-7b takes 1..4095"},
		{[]string{"--workload", "llama-2-7b", "--phase", "decode", "--context", "0"}, "--context 0: llama-2-7b takes 1..4095"},
		{[]string{"--workload", "llama-2-7b", "--phase", "decode", "--context", "1000000000"}, "--context 1000000000: llama-2-7b takes 1..4095"},
		{[]string{"--workload", "llama-2-7b", "--phase", "decode", "--batch", "1000000000"}, "--batch 1000000000: the decoder LLMs take 1..65536"},
		{[]string{"--workload", "llama-2-7b", "--batch", "0"}, "--batch 0"},
		{[]string{"--workload", "llama-2-7b", "--batch", "1000000000"}, "--batch 1000000000: the decoder LLMs take 1..65536"},
		{[]string{"--workload", "llama-2-7b", "--seq", "0"}, "--seq 0: llama-2-7b takes 1..4096"},
		{[]string{"--workload", "llama-2-7b", "--seq", "1000000000"}, "--seq 1000000000: llama-2-7b takes 1..4096"},
		{[]string{"--workload", "llama-2-7b", "--phase", "decode", "--seq", "16"}, "--seq 16: --phase decode reads --context"},
		{[]string{"--workload", "llama-2-7b", "--context", "16"}, "--context 16: --phase prefill reads --seq"},
		{[]string{"--workload", "llama-2-7b", "--moe-schedule", "grouped"}, "--moe-schedule: no workload"},
		{[]string{"--workload", "mixtral-8x7b", "--moe-schedule", "fused"}, "--moe-schedule \"fused\""},
		{[]string{"--workload", "mixtral-8x7b", "--moe-imbalance", "-1"}, "--moe-imbalance -1: must be in 0..4"},
	} {
		args := append([]string{"run", "--quiet"}, c.args...)
		_, stderr, code := capture(t, func() int { return dispatch(args) })
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code, stderr, c.want)
		}
	}
}
