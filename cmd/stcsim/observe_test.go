package main

import (
	"database/sql"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stcsim/stcsim/cmd/stcsim/internal/observe"
)

// The monitor is stcsim's own server on 127.0.0.1: it leaves the global
// http.DefaultServeMux alone, serves the UI and its API, and refuses a
// request for another host name (issue 13 item 16, issue 12 item 13).
func TestMonitorServesLoopbackOnly(t *testing.T) {
	before := http.DefaultServeMux
	m, url, err := observe.StartMonitor()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if http.DefaultServeMux != before {
		t.Error("http.DefaultServeMux was replaced")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("URL %s is not on 127.0.0.1", url)
	}
	for path, want := range map[string]string{"/": "<", "/api/list_components": "[]",
		"/api/now": `{"now":`} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d %.60q", path, resp.StatusCode, b)
		}
	}
	req, _ := http.NewRequest("GET", url+"/api/now", nil)
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("request for another host: %d, want 403", resp.StatusCode)
	}
	resp, err = http.Get(url + "/api/component/none")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown component: %d, want 404", resp.StatusCode)
		}
	}
}

// --trace-db traces the reported kernel of each GEMM as kind "kernel";
// selection samples only with --trace-candidates, as kind "candidate"
// (issue 12 item 12).
func TestTraceMarksCandidates(t *testing.T) {
	dir := t.TempDir()
	kinds := func(extra ...string) map[string]int {
		db := filepath.Join(dir, "t"+strings.Join(extra, "")+".sqlite3")
		args := append([]string{"run", "--quiet", "--gemm", "128x128x128",
			"--mode", "dense", "--trace-db", db}, extra...)
		_, stderr, code := capture(t, func() int { return dispatch(args) })
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		c, err := sql.Open("sqlite3", db)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rows, err := c.Query(`SELECT kind, count(*) FROM trace GROUP BY kind`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var k string
			var n int
			rows.Scan(&k, &n)
			out[k] = n
		}
		return out
	}
	plain := kinds()
	if plain["kernel"] != 1 || plain["candidate"] != 0 {
		t.Errorf("default trace: %v, want one kernel and no candidate", plain)
	}
	all := kinds("--trace-candidates")
	if all["kernel"] != 1 || all["candidate"] < 1 {
		t.Errorf("--trace-candidates: %v, want one kernel and the candidates", all)
	}
}
