package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/workloads"
)

// llmFlags are run's options of the decoder LLMs (workloads/llm.go).
type llmFlags struct {
	phase       string
	context     int
	sparseHead  bool
	moeSchedule string
	imbalance   float64
}

func (f *llmFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.phase, "phase", "", "decoder LLMs: prefill (a prompt of --seq "+
		"tokens per sequence; the default) or decode (one new token per sequence "+
		"against --context cached tokens)")
	fs.IntVar(&f.context, "context", workloads.DefaultContext, "decoder LLMs at --phase decode: "+
		"cached tokens per sequence")
	fs.BoolVar(&f.sparseHead, "sparse-lm-head", false, "decoder LLMs: prune the LM "+
		"head to 2:4 too (default: dense, as the pruning recipes leave it)")
	fs.StringVar(&f.moeSchedule, "moe-schedule", "", "mixture-of-experts LLMs: "+
		"grouped (one launch per expert stage per layer; the default) or separate "+
		"(each expert's w1, w3, w2 as its own kernel)")
	fs.Float64Var(&f.imbalance, "moe-imbalance", 0, fmt.Sprintf("mixture-of-experts "+
		"LLMs: the seeded router's Zipf exponent, 0 (uniform) to %g (a few hot experts)",
		workloads.MaxImbalance))
}

// check refuses, before anything runs, an LLM flag no workload reads
// and an LLM option outside the model's limits, naming the flag and
// the limit.
func (f *llmFlags) check(fs *flag.FlagSet, names []string, batch, seq int) error {
	var llms []string
	moe := false
	for _, n := range names {
		if workloads.IsLLM(n) {
			llms = append(llms, n)
			moe = moe || workloads.IsMoE(n)
		}
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, name := range []string{"phase", "context", "sparse-lm-head"} {
		if given[name] && len(llms) == 0 {
			return fmt.Errorf("--%s: no workload of this run reads it (the decoder "+
				"LLMs do: %s)", name, strings.Join(workloads.LLMs(), ", "))
		}
	}
	for _, name := range []string{"moe-schedule", "moe-imbalance"} {
		if given[name] && !moe {
			return fmt.Errorf("--%s: no workload of this run reads it (the "+
				"mixture-of-experts LLMs do: mixtral-8x7b)", name)
		}
	}
	if len(llms) == 0 {
		return nil
	}
	phase := f.phaseOrDefault()
	switch phase {
	case workloads.PhasePrefill:
		if given["context"] {
			return fmt.Errorf("--context %d: --phase prefill reads --seq (the prompt), "+
				"not --context; add --phase decode", f.context)
		}
	case workloads.PhaseDecode:
		if given["seq"] {
			return fmt.Errorf("--seq %d: --phase decode reads --context (the cached "+
				"tokens), not --seq", seq)
		}
	default:
		return fmt.Errorf("--phase %s: want %s or %s", configs.Quote(f.phase),
			workloads.PhasePrefill, workloads.PhaseDecode)
	}
	if !slices.Contains([]string{"", "grouped", "separate"}, f.moeSchedule) {
		return fmt.Errorf("--moe-schedule %s: want grouped or separate", configs.Quote(f.moeSchedule))
	}
	if !(f.imbalance >= 0 && f.imbalance <= workloads.MaxImbalance) {
		return fmt.Errorf("--moe-imbalance %g: must be in 0..%g", f.imbalance, workloads.MaxImbalance)
	}
	if batch < 1 || batch > workloads.MaxLLMBatch {
		return fmt.Errorf("--batch %d: the decoder LLMs take 1..%d sequences", batch, workloads.MaxLLMBatch)
	}
	for _, n := range llms {
		maxPos := workloads.MaxPosition(n)
		if phase == workloads.PhasePrefill && (seq < 1 || seq > maxPos) {
			return fmt.Errorf("--seq %d: %s takes 1..%d tokens (its max_position_embeddings)",
				seq, n, maxPos)
		}
		if c := f.context; phase == workloads.PhaseDecode && (c < 1 || c >= maxPos) {
			return fmt.Errorf("--context %d: %s takes 1..%d cached tokens (the new token "+
				"is position context+1 of its max_position_embeddings %d)", c, n, maxPos-1, maxPos)
		}
	}
	return nil
}

func (f *llmFlags) phaseOrDefault() string {
	if f.phase == "" {
		return workloads.PhasePrefill
	}
	return f.phase
}

// options are the workload options of an LLM at these flags.
func (f *llmFlags) options(batch, seq int) workloads.Options {
	return workloads.Options{Batch: batch, Seq: seq, Phase: f.phaseOrDefault(),
		Context: f.context, SparseLMHead: f.sparseHead,
		MoESeparate: f.moeSchedule == "separate", MoEImbalance: f.imbalance}
}

// source records an LLM workload's options in the run's provenance.
func (f *llmFlags) source(src *workloads.Origin, seq int) {
	src.Phase = f.phaseOrDefault()
	if src.Phase == workloads.PhaseDecode {
		src.Context = f.context
	} else {
		src.Seq = seq
	}
	src.SparseLMHead = f.sparseHead
	src.MoESchedule = f.moeSchedule
	src.MoEImbalance = f.imbalance
}
