package main

import (
	"fmt"
	"os"
	"strings"

	akita "github.com/sarchlab/akita/v3/sim"
	"github.com/sarchlab/akita/v3/tracing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/sim"
)

// observers fans kernel notifications out to several observers.
type observers []sim.Observer

func (o observers) KernelBuilt(k string, e akita.Engine, c []akita.Component) {
	for _, x := range o {
		x.KernelBuilt(k, e, c)
	}
}

func (o observers) KernelDone(k string) {
	for _, x := range o {
		x.KernelDone(k)
	}
}

// WantsSamples is true when one of the observers wants the
// kernel-selection samples (--trace-candidates).
func (o observers) WantsSamples() bool {
	for _, x := range o {
		if s, ok := x.(sim.SampleObserver); ok && s.WantsSamples() {
			return true
		}
	}
	return false
}

// traceObserver records every kernel simulation into one SQLite trace
// for Daisen, kernels one after another on the trace's time axis.
type traceObserver struct {
	samples bool // also trace kernel-selection samples (--trace-candidates)
	writer  *tracing.SQLiteTraceWriter
	tracer  *tracing.DBTracer
	engine  akita.Engine
	offset  akita.VTimeInSec
	kernel  int
	root    tracing.NamedHookable
}

// offsetTime shifts an engine's clock by the kernels traced before it.
type offsetTime struct {
	e      akita.Engine
	offset akita.VTimeInSec
}

func (t offsetTime) CurrentTime() akita.VTimeInSec { return t.e.CurrentTime() + t.offset }

// checkTracePath checks a --trace-db path before anything runs: Akita's
// SQLite writer panics on a file it cannot create.
func checkTracePath(path string) error {
	if !strings.HasSuffix(path, ".sqlite3") {
		return fmt.Errorf("--trace-db %s: the file name must end in .sqlite3", configs.Quote(path))
	}
	if strings.ContainsAny(path, "?") {
		return fmt.Errorf("--trace-db %q: the SQLite driver reads ? as the "+
			"start of options; pick a name without it", path)
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("--trace-db %s: file exists; remove it or pick another name", configs.Quote(path))
	}
	return checkOutFile("--trace-db", path)
}

func newTraceObserver(path string, samples bool) (*traceObserver, error) {
	if err := checkTracePath(path); err != nil {
		return nil, err
	}
	w := tracing.NewSQLiteTraceWriter(strings.TrimSuffix(path, ".sqlite3"))
	w.Init()
	return &traceObserver{writer: w, samples: samples}, nil
}

// WantsSamples says whether kernel-selection samples are traced too.
func (o *traceObserver) WantsSamples() bool { return o.samples }

func (o *traceObserver) KernelBuilt(name string, e akita.Engine, comps []akita.Component) {
	o.engine = e
	o.tracer = tracing.NewDBTracer(offsetTime{e, o.offset}, o.writer)
	for _, c := range comps {
		tracing.CollectTrace(c.(tracing.NamedHookable), o.tracer)
	}
	o.kernel++
	o.root = comps[0].(tracing.NamedHookable)
	// A selection sample is a task of kind "candidate", so that Daisen
	// tells it from the kernel that the results report.
	kind := "kernel"
	if strings.HasPrefix(name, sim.SamplePrefix) {
		kind = "candidate"
	}
	tracing.StartTask(o.kernelID(), "", o.root, kind, name, nil)
}

func (o *traceObserver) kernelID() string { return fmt.Sprintf("kernel%d", o.kernel) }

func (o *traceObserver) KernelDone(string) {
	tracing.EndTask(o.kernelID(), o.root)
	o.tracer.Terminate()
	o.offset += o.engine.CurrentTime() + 1e-6
}

// close writes what is buffered.
func (o *traceObserver) close() { o.writer.Flush() }
