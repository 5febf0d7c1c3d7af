package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// The commands that read a sweep store (merge, results export, plot)
// refuse a store whose tables disagree, with exit status 2, naming the
// store and the table, writing nothing; merge refuses an input given
// twice; and reading a store leaves no file beside it.
func TestStoreReadersRefuseDamagedStores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator")
	}
	dir := t.TempDir()
	spec := writeFile(t, dir, "s.yaml", "set: [gpu.sm_count=4]\n"+
		"workloads: [{name: w, gemms: [256x256x256]}]\n"+
		"grid: {dram.bandwidth_gbps: [1000, 2000]}\n")
	sub := filepath.Join(dir, "stores")
	os.Mkdir(sub, 0o755)
	good := filepath.Join(sub, "m.db")
	if code := dispatch([]string{"sweep", spec, "--db", good, "--quiet", "--jobs", "1"}); code != exitOK {
		t.Fatalf("sweep: exit %d", code)
	}
	body, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	damage := func(name, stmt string) string {
		p := filepath.Join(sub, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite3", "file:"+p)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := map[string]string{
		damage("configs.db", `DELETE FROM configs`):                                   "table configs",
		damage("totals.db", `DELETE FROM totals`):                                     "table totals",
		damage("time.db", `UPDATE results SET time_us = time_us * 2 WHERE rowid = 1`): "table results",
	}
	sym, hard := filepath.Join(sub, "sym.db"), filepath.Join(sub, "hard.db")
	os.Symlink("m.db", sym)
	os.Link(good, hard)
	os.WriteFile(filepath.Join(sub, "trunc.db"), body[:len(body)/2], 0o644)
	before := dirContents(t, sub)
	out := func(n string) string { return filepath.Join(dir, n) }

	type cmd struct {
		args []string
		want []string
	}
	var cmds []cmd
	for p, table := range bad {
		cmds = append(cmds,
			cmd{[]string{"merge", out("o.db"), good, p}, []string{p, table}},
			cmd{[]string{"results", "export", p, "--out", out("x.csv")}, []string{p, table}},
			cmd{[]string{"plot", p, "--x", "dram.bandwidth_gbps", "--out", out("p.svg")}, []string{p, table}})
	}
	for _, again := range []string{good, sub + "/./m.db", sym, hard} {
		cmds = append(cmds, cmd{[]string{"merge", out("o.db"), good, again},
			[]string{good + " and " + again, "same store"}})
	}
	trunc := filepath.Join(sub, "trunc.db")
	cmds = append(cmds,
		cmd{[]string{"merge", out("o.db"), trunc}, []string{trunc}},
		cmd{[]string{"results", "export", trunc}, []string{trunc}})
	for _, c := range cmds {
		_, stderr, code := capture(t, func() int { return dispatch(c.args) })
		if code != exitUsage {
			t.Errorf("%v: exit %d (%s), want 2", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: %q does not say %q", c.args, stderr, w)
			}
		}
	}
	for _, n := range []string{"o.db", "o.db-wal", "x.csv", "p.svg"} {
		if _, err := os.Stat(out(n)); err == nil {
			t.Errorf("%s written by a command that refused its input", n)
		}
	}
	// The good store is read without a trace.
	for _, args := range [][]string{
		{"results", "export", good, "--out", out("x.csv")},
		{"plot", good, "--x", "dram.bandwidth_gbps", "--out", out("p.svg")},
		{"merge", out("o.db"), good, hard + ".copy"},
	} {
		if args[0] == "merge" {
			os.WriteFile(args[3], body, 0o644)
			before[filepath.Base(args[3])] = string(body)
		}
		if _, stderr, code := capture(t, func() int { return dispatch(args) }); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	sameContents(t, "the stores' directory", dirContents(t, sub), before)
}
