package observe

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/sarchlab/akita/v3/monitoring/web"
	akita "github.com/sarchlab/akita/v3/sim"
	"github.com/syifan/goseth"
)

// Monitor serves Akita's monitoring web UI for the kernel being
// simulated, from stcsim's own HTTP server on 127.0.0.1 (Akita's
// StartServer listens on every interface and serves the process-wide
// http.DefaultServeMux, so it is not used). The API is the subset of
// Akita's monitor that the UI calls, answered from the current kernel's
// engine and components; a request that cannot be answered gets an HTTP
// error, never a crash of the run.
type Monitor struct {
	mu     sync.Mutex
	engine akita.Engine
	comps  []akita.Component
	kernel string
	ln     net.Listener
	srv    *http.Server
}

// StartMonitor listens on a free loopback port and serves the UI.
func StartMonitor() (*Monitor, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("--monitor: %w", err)
	}
	m := &Monitor{ln: ln}
	m.srv = &http.Server{Handler: m.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return m, "http://" + ln.Addr().String(), nil
}

func (m *Monitor) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/now", m.now)
	mux.HandleFunc("/api/pause", m.control(func(e akita.Engine) { e.Pause() }))
	mux.HandleFunc("/api/continue", m.control(func(e akita.Engine) { e.Continue() }))
	mux.HandleFunc("/api/run", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "stcsim runs the simulation itself; use continue",
			http.StatusMethodNotAllowed)
	})
	mux.HandleFunc("/api/list_components", m.listComponents)
	mux.HandleFunc("/api/component/{name}", m.component)
	mux.HandleFunc("/api/field/{json}", m.field)
	mux.HandleFunc("/api/tick/{name}", m.tick)
	mux.HandleFunc("/api/progress", jsonReply([]any{}))
	mux.HandleFunc("/api/hangdetector/buffers", jsonReply([]any{}))
	mux.HandleFunc("/api/resource", m.resource)
	mux.Handle("/", http.FileServer(web.GetAssets()))
	return loopbackOnly(m.ln.Addr().String(), mux)
}

// loopbackOnly refuses requests addressed to another host name than the
// loopback address served (a web page elsewhere that resolves its own
// name to 127.0.0.1 cannot drive the monitor).
func loopbackOnly(addr string, next http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(addr)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Host {
		case "127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port:
			next.ServeHTTP(w, r)
		default:
			http.Error(w, "stcsim monitor: wrong host", http.StatusForbidden)
		}
	})
}

func jsonReply(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, v) }
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// current is the kernel's engine and components (nil before the first).
func (m *Monitor) current() (akita.Engine, []akita.Component) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.engine, m.comps
}

func (m *Monitor) now(w http.ResponseWriter, _ *http.Request) {
	e, _ := m.current()
	now := 0.0
	if e != nil {
		now = float64(e.CurrentTime())
	}
	fmt.Fprintf(w, "{\"now\":%.10f}", now)
}

func (m *Monitor) control(f func(akita.Engine)) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if e, _ := m.current(); e != nil {
			f(e)
		}
	}
}

func (m *Monitor) listComponents(w http.ResponseWriter, _ *http.Request) {
	_, comps := m.current()
	names := make([]string, len(comps))
	for i, c := range comps {
		names[i] = c.Name()
	}
	writeJSON(w, names)
}

func (m *Monitor) find(w http.ResponseWriter, name string) akita.Component {
	_, comps := m.current()
	for _, c := range comps {
		if c.Name() == name {
			return c
		}
	}
	http.Error(w, "no component "+name, http.StatusNotFound)
	return nil
}

func (m *Monitor) component(w http.ResponseWriter, r *http.Request) {
	c := m.find(w, r.PathValue("name"))
	if c == nil {
		return
	}
	s := goseth.NewSerializer()
	s.SetRoot(c)
	s.SetMaxDepth(1)
	if err := s.Serialize(w); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (m *Monitor) field(w http.ResponseWriter, r *http.Request) {
	var req struct {
		CompName  string `json:"comp_name"`
		FieldName string `json:"field_name"`
	}
	if err := json.Unmarshal([]byte(r.PathValue("json")), &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c := m.find(w, req.CompName)
	if c == nil {
		return
	}
	s := goseth.NewSerializer()
	s.SetRoot(c)
	s.SetMaxDepth(1)
	if err := s.SetEntryPoint(strings.Split(req.FieldName, ".")); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := s.Serialize(w); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (m *Monitor) tick(w http.ResponseWriter, r *http.Request) {
	c := m.find(w, r.PathValue("name"))
	if c == nil {
		return
	}
	t, ok := c.(interface{ TickLater(akita.VTimeInSec) })
	e, _ := m.current()
	if !ok || e == nil {
		http.Error(w, "component does not tick", http.StatusMethodNotAllowed)
		return
	}
	t.TickLater(e.CurrentTime())
}

func (m *Monitor) resource(w http.ResponseWriter, _ *http.Request) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	writeJSON(w, map[string]any{"cpu_percent": 0, "memory_size": ms.Sys})
}

// KernelBuilt shows the kernel's engine and components from now on.
func (m *Monitor) KernelBuilt(name string, e akita.Engine, comps []akita.Component) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.engine, m.comps, m.kernel = e, comps, name
}

// KernelDone keeps the last kernel on show (for --monitor-hold).
func (m *Monitor) KernelDone(string) {}

// Close stops the server.
func (m *Monitor) Close() { m.srv.Close() }
