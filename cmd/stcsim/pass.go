package main

import (
	"flag"
	"fmt"
	"regexp"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/workloads"
)

// passFlags are run's training-step flags: which pass of a step to time
// (workloads.Trace.Training), whether the weights' mask is transposable,
// and run-time activation sparsity.
type passFlags struct {
	pass         string
	transposable bool
	activations  string
	actLayers    string
	actLayersSet bool
}

func (p *passFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&p.pass, "pass", workloads.PassForward, "which pass of a training "+
		"step: forward (inference), backward (each GEMM's data and weight "+
		"gradients) or step (both)")
	fs.BoolVar(&p.transposable, "transposable", false, "with --pass backward or "+
		"step: the weights' N:M mask holds along both dimensions, so the data "+
		"gradient W^T dY runs sparse too (dense otherwise)")
	fs.StringVar(&p.activations, "activation-sparsity", workloads.ActivationsOff,
		"sparsify activations X to 2:4 at run time, the sparsifier kernel timed: "+
			"off, forward (the forward GEMM reads sparse X) or step (and dW reads "+
			"sparse X^T)")
	fs.StringVar(&p.actLayers, "activation-layers", workloads.DefaultActivationLayers,
		"with --activation-sparsity: the layers (regular expression on the name) "+
			"whose input X is sparsified")
}

// given notes which of the flags the command line gave.
func (p *passFlags) given(fs *flag.FlagSet) {
	fs.Visit(func(fl *flag.Flag) {
		p.actLayersSet = p.actLayersSet || fl.Name == "activation-layers"
	})
}

// options reads the flags and refuses those that would change nothing.
func (p *passFlags) options() (workloads.Training, error) {
	o := workloads.Training{Pass: p.pass, Transposable: p.transposable,
		Activations: p.activations}
	if err := o.Check(); err != nil {
		return o, err
	}
	if p.transposable && p.pass == workloads.PassForward {
		return o, fmt.Errorf("--transposable needs --pass backward or step: the " +
			"forward GEMM reads the mask along K either way")
	}
	off := p.activations == workloads.ActivationsOff
	if p.actLayersSet && off {
		return o, fmt.Errorf("--activation-layers needs --activation-sparsity forward or step")
	}
	if p.activations == workloads.ActivationsStep && p.pass == workloads.PassForward {
		return o, fmt.Errorf("--activation-sparsity step sparsifies X^T for the " +
			"weight gradient: it needs --pass backward or step (forward alone: " +
			"--activation-sparsity forward)")
	}
	if p.activations == workloads.ActivationsForward && p.pass == workloads.PassBackward {
		return o, fmt.Errorf("--activation-sparsity forward sparsifies X for the " +
			"forward GEMM, which --pass backward leaves out (step, or " +
			"--activation-sparsity step for the weight gradient's X^T)")
	}
	if !off {
		re, err := regexp.Compile(p.actLayers)
		if err != nil {
			return o, fmt.Errorf("--activation-layers %s: %v", configs.Quote(p.actLayers), err)
		}
		o.ActivationLayers = re
	}
	return o, nil
}

// apply turns every workload of the job into the pass's trace, records
// the options in its provenance, and refuses a pass a workload cannot
// run, naming a refused option by its flag.
func (p *passFlags) apply(job *sim.Job) error {
	return flagged(p.applyOptions(job))
}

// applyOptions is apply with the library's errors as it gives them.
func (p *passFlags) applyOptions(job *sim.Job) error {
	o, err := p.options()
	if err != nil || o.Identity() {
		return err
	}
	matched, sparseDgrad := false, false
	for i, t := range job.Workloads {
		format := ""
		if imp := job.Sources[i].Import; imp != nil {
			format = imp.Format
		}
		if err := o.CheckPass(t.Name, format); err != nil {
			return err
		}
		out, err := t.Training(o)
		if err != nil {
			return err
		}
		matched = matched || len(out.Sparsifiers) > 0
		for _, g := range out.GEMMs {
			sparseDgrad = sparseDgrad || (g.Pass == workloads.RoleDgrad && g.Sparsity != workloads.Dense)
		}
		job.Workloads[i] = out
		job.Sources[i].Training = o.String()
	}
	if o.Transposable && !sparseDgrad {
		return fmt.Errorf("--transposable: no data gradient of the workloads can run " +
			"sparse (no forward row is sparse in its weights, or none has whole " +
			"groups along its M), so it would change nothing")
	}
	if o.ActivationLayers != nil && !matched {
		return fmt.Errorf("--activation-layers %s matches no linear layer of the "+
			"workloads, so no activation would be sparsified", configs.Quote(p.actLayers))
	}
	return nil
}
