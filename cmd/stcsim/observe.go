package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/sarchlab/akita/v3/monitoring"
	akita "github.com/sarchlab/akita/v3/sim"
	"github.com/sarchlab/akita/v3/tracing"

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

// monitorObserver shows each kernel's engine and components in Akita's
// monitoring web UI.
type monitorObserver struct{ m *monitoring.Monitor }

// startMonitor starts Akita's monitor and serves it on 127.0.0.1 only.
// Akita's StartServer always listens on every interface and serves
// http.DefaultServeMux; we let it register its routes into a private mux,
// serve that mux on a loopback listener, and leave Akita's own listener a
// mux that refuses every request.
func startMonitor() (*monitorObserver, string, error) {
	m := monitoring.NewMonitor()
	private := http.NewServeMux()
	http.DefaultServeMux = private
	m.StartServer()
	refuse := http.NewServeMux()
	refuse.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "stcsim serves its monitor on 127.0.0.1 only", http.StatusForbidden)
	})
	http.DefaultServeMux = refuse
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("--monitor: %w", err)
	}
	go func() { _ = http.Serve(ln, private) }()
	return &monitorObserver{m: m}, "http://" + ln.Addr().String(), nil
}

func (o *monitorObserver) KernelBuilt(_ string, e akita.Engine, comps []akita.Component) {
	o.m.RegisterEngine(e)
	for _, c := range comps {
		o.m.RegisterComponent(c)
	}
}

func (o *monitorObserver) KernelDone(string) {}

// traceObserver records every kernel simulation into one SQLite trace
// for Daisen, kernels one after another on the trace's time axis.
type traceObserver struct {
	writer *tracing.SQLiteTraceWriter
	tracer *tracing.DBTracer
	engine akita.Engine
	offset akita.VTimeInSec
	kernel int
	root   tracing.NamedHookable
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
		return fmt.Errorf("--trace-db %q: the file name must end in .sqlite3", path)
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("--trace-db %q: file exists; remove it or pick another name", path)
	}
	return checkOutFile("--trace-db", path)
}

func newTraceObserver(path string) (*traceObserver, error) {
	if err := checkTracePath(path); err != nil {
		return nil, err
	}
	w := tracing.NewSQLiteTraceWriter(strings.TrimSuffix(path, ".sqlite3"))
	w.Init()
	return &traceObserver{writer: w}, nil
}

func (o *traceObserver) KernelBuilt(name string, e akita.Engine, comps []akita.Component) {
	o.engine = e
	o.tracer = tracing.NewDBTracer(offsetTime{e, o.offset}, o.writer)
	for _, c := range comps {
		tracing.CollectTrace(c.(tracing.NamedHookable), o.tracer)
	}
	o.kernel++
	o.root = comps[0].(tracing.NamedHookable)
	tracing.StartTask(o.kernelID(), "", o.root, "kernel", name, nil)
}

func (o *traceObserver) kernelID() string { return fmt.Sprintf("kernel%d", o.kernel) }

func (o *traceObserver) KernelDone(string) {
	tracing.EndTask(o.kernelID(), o.root)
	o.tracer.Terminate()
	o.offset += o.engine.CurrentTime() + 1e-6
}

// close writes what is buffered.
func (o *traceObserver) close() { o.writer.Flush() }
