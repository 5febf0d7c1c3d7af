// Package observe watches kernel simulations for the command line: Akita's
// monitoring web UI on a loopback server (Monitor) and Daisen traces
// (Tracer), fanned out by List.
package observe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	akita "github.com/sarchlab/akita/v3/sim"
	"github.com/sarchlab/akita/v3/tracing"

	"github.com/stcsim/stcsim/sim"
)

// List fans kernel notifications out to several observers.
type List []sim.Observer

// KernelBuilt tells every observer of the list that a kernel was built.
func (o List) KernelBuilt(k string, e akita.Engine, c []akita.Component) {
	for _, x := range o {
		x.KernelBuilt(k, e, c)
	}
}

// KernelDone tells every observer of the list that a kernel finished.
func (o List) KernelDone(k string) {
	for _, x := range o {
		x.KernelDone(k)
	}
}

// WantsSamples is true when one of the observers wants the
// kernel-selection samples (--trace-candidates).
func (o List) WantsSamples() bool {
	for _, x := range o {
		if s, ok := x.(sim.SampleObserver); ok && s.WantsSamples() {
			return true
		}
	}
	return false
}

// Tracer records every kernel simulation into one SQLite trace
// for Daisen, kernels one after another on the trace's time axis.
type Tracer struct {
	samples bool // also trace kernel-selection samples (--trace-candidates)
	writer  *tracing.SQLiteTraceWriter
	tracer  *tracing.DBTracer
	engine  akita.Engine
	offset  akita.VTimeInSec
	kernel  int
	root    tracing.NamedHookable
	path    string // where Close puts the trace
	tmp     string // where it is written until then
}

// offsetTime shifts an engine's clock by the kernels traced before it.
type offsetTime struct {
	e      akita.Engine
	offset akita.VTimeInSec
}

func (t offsetTime) CurrentTime() akita.VTimeInSec { return t.e.CurrentTime() + t.offset }

// NewTracer writes a Daisen trace of each reported kernel (and of the
// selection samples when samples is set) to the SQLite file at path,
// which the caller has checked (Akita's SQLite writer panics on a file it
// cannot create; cmd/stcsim checks --trace-db before anything runs). The
// trace is written under a temporary name beside path (".NAME.tmp-PID",
// at most 16 bytes longer) and renamed to path by Close, so that a
// killed run leaves no partial trace under the name asked for.
func NewTracer(path string, samples bool) (*Tracer, error) {
	dir, base := filepath.Split(path)
	stem := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d", strings.TrimSuffix(base, ".sqlite3"), os.Getpid()))
	os.Remove(stem + ".sqlite3") // left by a killed run of this pid
	w := tracing.NewSQLiteTraceWriter(stem)
	w.Init()
	return &Tracer{writer: w, samples: samples, path: path, tmp: stem + ".sqlite3"}, nil
}

// WantsSamples says whether kernel-selection samples are traced too.
func (o *Tracer) WantsSamples() bool { return o.samples }

// KernelBuilt starts tracing the kernel's components into the database.
func (o *Tracer) KernelBuilt(name string, e akita.Engine, comps []akita.Component) {
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

func (o *Tracer) kernelID() string { return fmt.Sprintf("kernel%d", o.kernel) }

// KernelDone ends the kernel's task and moves the trace clock past it.
func (o *Tracer) KernelDone(string) {
	tracing.EndTask(o.kernelID(), o.root)
	o.tracer.Terminate()
	o.offset += o.engine.CurrentTime() + 1e-6
}

// Close writes what is buffered, closes the database and puts it at
// the path asked for.
func (o *Tracer) Close() error {
	o.writer.Flush()
	if err := o.writer.DB.Close(); err != nil {
		return fmt.Errorf("trace %s: %w", o.path, err)
	}
	if err := os.Rename(o.tmp, o.path); err != nil {
		return fmt.Errorf("trace %s: %w", o.path, err)
	}
	return nil
}
