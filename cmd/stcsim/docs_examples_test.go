package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/stcsim/stcsim/sweep"
	"github.com/stcsim/stcsim/validation"
	"github.com/stcsim/stcsim/workloads"
	"github.com/stcsim/stcsim/workloads/tensorfile"
)

// repoRoot is the module root, two levels above this package.
const repoRoot = "../.."

// docBlock is one fenced block of a Markdown page.
type docBlock struct {
	file string // relative to the repository root
	line int    // of the opening fence
	info string // the fence's info string (csv, yaml, sh, ...)
	body []string
}

func (b docBlock) where() string { return b.file + ":" + strconv.Itoa(b.line) }

// docBlocks are the fenced blocks of the README and of every page in docs/.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(repoRoot, "README.md"))
	var out []docBlock
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, p)
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			if !strings.HasPrefix(lines[i], "```") {
				continue
			}
			b := docBlock{file: rel, line: i + 1, info: strings.TrimSpace(lines[i][3:])}
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				b.body = append(b.body, lines[i])
			}
			if i == len(lines) {
				t.Errorf("%s: fence not closed", b.where())
			}
			out = append(out, b)
		}
	}
	return out
}

// TestDocExamplesRun: every fenced example of the docs parses or runs.
// CSV and JSON traces load (with the weights they name, made by `stcsim
// prune` as the page says), points files parse, sweep files parse, Go
// snippets are Go, and every command names a subcommand and flags that
// exist, repository files that exist and test functions that exist; the
// commands that cost nothing (listing, checking) run and succeed; a
// documented run runs cheaply (runFast) and a sweep dry-runs
// (dryRunSweep).
func TestDocExamplesRun(t *testing.T) {
	blocks := docBlocks(t)
	if len(blocks) < 20 {
		t.Fatalf("found only %d fenced blocks: is the docs folder there?", len(blocks))
	}
	counts := map[string]int{}
	for _, b := range blocks {
		kind := checkBlock(t, b)
		counts[kind]++
	}
	t.Logf("checked: %v", counts)
	for _, k := range []string{"csv", "json", "yaml", "go", "command"} {
		if counts[k] == 0 {
			t.Errorf("no %s example was checked: the classifier lost them", k)
		}
	}
}

// checkBlock checks one block and says what kind it was taken for.
func checkBlock(t *testing.T, b docBlock) string {
	text := strings.Join(b.body, "\n") + "\n"
	switch b.info {
	case "csv":
		checkCSV(t, b, text)
		return "csv"
	case "json":
		if _, err := workloads.ParseJSON(strings.NewReader(text), "example"); err != nil {
			t.Errorf("%s: JSON example: %v", b.where(), err)
		}
		return "json"
	case "yaml":
		checkYAML(t, b, text)
		return "yaml"
	case "go":
		checkGo(t, b, text)
		return "go"
	}
	cmds := commandsOf(b)
	for _, c := range cmds {
		checkCommand(t, b, c)
	}
	if len(cmds) == 0 {
		return "text"
	}
	return "command"
}

func checkCSV(t *testing.T, b docBlock, text string) {
	if strings.Contains(text, "id,hardware") {
		if _, err := validation.ParsePoints(strings.NewReader(text), "example.csv"); err != nil {
			t.Errorf("%s: points example: %v", b.where(), err)
		}
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "example.csv")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := workloads.ParseCSV(strings.NewReader(text), "example")
	if err != nil {
		t.Errorf("%s: CSV example: %v", b.where(), err)
		return
	}
	// The weights the rows name: made as the page says, by stcsim prune
	// of a weight of the layer's own shape.
	for _, g := range tr.GEMMs {
		if g.Weights == "" {
			continue
		}
		m, k := g.M, g.K
		if g.UnpaddedM > 0 {
			m = g.UnpaddedM
		}
		if g.UnpaddedK > 0 {
			k = g.UnpaddedK
		}
		w := filepath.Join(dir, "w.npy")
		f, err := os.Create(w)
		if err != nil {
			t.Fatal(err)
		}
		data := make([]float32, m*k)
		for i := range data {
			data[i] = float32(i%7) - 3
		}
		if err := tensorfile.WriteNPY(f, []int{m, k}, data); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, se, code := capture(t, func() int {
			return dispatch([]string{"prune", "--in", w, "--out", filepath.Join(dir, g.Weights)})
		})
		if code != exitOK {
			t.Fatalf("%s: prune for %s: exit %d: %s", b.where(), g.Weights, code, se)
		}
	}
	_, se, code := capture(t, func() int { return dispatch([]string{"trace", "check", path}) })
	if code != exitOK {
		t.Errorf("%s: trace check of the CSV example: exit %d: %s", b.where(), code, se)
	}
}

func checkYAML(t *testing.T, b docBlock, text string) {
	var top map[string]any
	if err := yaml.Unmarshal([]byte(text), &top); err != nil {
		t.Errorf("%s: YAML example: %v", b.where(), err)
		return
	}
	if _, full := top["name"]; !full {
		return // a fragment of a sweep file: YAML is all it claims to be
	}
	if _, err := sweep.Parse([]byte(text), filepath.Join(repoRoot, "configs", "sweeps", "example.yaml")); err != nil {
		t.Errorf("%s: sweep example: %v", b.where(), err)
	}
}

func checkGo(t *testing.T, b docBlock, text string) {
	fset := token.NewFileSet()
	_, errStmts := parser.ParseFile(fset, "x.go", "package p\nfunc _() {\n"+text+"}\n", 0)
	if errStmts == nil {
		return
	}
	if _, err := parser.ParseFile(fset, "x.go", "package p\n"+text, 0); err != nil {
		t.Errorf("%s: Go example is neither statements (%v) nor declarations (%v)", b.where(), errStmts, err)
	}
}

// commandsOf are the command lines of a block: the "$ " lines when it
// shows a session, else the lines that start with a program.
func commandsOf(b docBlock) [][]string {
	prompted := slices.ContainsFunc(b.body, func(l string) bool { return strings.HasPrefix(l, "$ ") })
	var out [][]string
	for _, l := range b.body {
		if prompted {
			if !strings.HasPrefix(l, "$ ") {
				continue
			}
			l = l[2:]
		}
		words := shellWords(l)
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(words[0]) {
			words = words[1:] // VAR=value prefixes
		}
		if len(words) == 0 {
			continue
		}
		switch {
		case words[0] == "stcsim", words[0] == "go", words[0] == "python3",
			strings.HasPrefix(words[0], "scripts/"):
			out = append(out, words)
		}
	}
	return out
}

// shellWords splits a command line into words, with single and double
// quotes, up to an unquoted '#' word or a redirection.
func shellWords(l string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case (c == '#' || c == '>' || c == '<') && !in:
			return words
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// cheap are the stcsim commands that run in the test: they simulate
// nothing.
var cheap = map[string]bool{"trace list": true, "config list": true, "config show": true}

func checkCommand(t *testing.T, b docBlock, words []string) {
	switch {
	case words[0] == "go" && len(words) > 2 && words[1] == "run" && words[2] == "./cmd/stcsim":
		checkStcsim(t, b, words[3:])
	case words[0] == "stcsim":
		checkStcsim(t, b, words[1:])
	case words[0] == "go" && len(words) > 1 && words[1] == "test":
		checkGoTest(t, b, words[2:])
	case words[0] == "go" && len(words) > 1 && words[1] == "install":
		for _, w := range words[2:] {
			if strings.Contains(w, "@") && !exactVersion.MatchString(w[strings.LastIndex(w, "@")+1:]) {
				t.Errorf("%s: go install %s: not an exact version", b.where(), w)
			}
		}
	case words[0] == "python3":
		if len(words) > 1 {
			checkRepoPath(t, b, words[1])
		}
	case strings.HasPrefix(words[0], "scripts/"):
		checkRepoPath(t, b, words[0])
		for _, w := range words[1:] {
			checkRepoPath(t, b, w)
		}
	}
}

var exactVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// checkRepoPath: a word that names a file of the repository names one
// that exists.
func checkRepoPath(t *testing.T, b docBlock, w string) {
	if !regexp.MustCompile(`^(configs|validation|scripts|docs|workloads|cmd)/[\w./-]+$`).MatchString(w) {
		return
	}
	if _, err := os.Stat(filepath.Join(repoRoot, w)); err != nil {
		t.Errorf("%s: names %s, which does not exist", b.where(), w)
	}
}

func checkStcsim(t *testing.T, b docBlock, args []string) {
	if len(args) == 0 {
		return
	}
	if strings.HasSuffix(args[0], ":") {
		return // an error message the page quotes ("stcsim sweep: ..."), not a command
	}
	c, ok := commands[args[0]]
	if !ok {
		if args[0] != "version" && args[0] != "help" {
			t.Errorf("%s: stcsim %s: no such command", b.where(), args[0])
		}
		return
	}
	prefix := []string{c.name}
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		if _, se, code := capture(t, func() int { return dispatch([]string{c.name, args[1], "-h"}) }); code == exitOK &&
			strings.Contains(se, "usage: stcsim "+c.name+" "+args[1]) {
			prefix = append(prefix, args[1])
		}
	}
	_, usage, code := capture(t, func() int { return dispatch(append(slices.Clone(prefix), "-h")) })
	if code != exitOK {
		t.Errorf("%s: stcsim %s -h: exit %d", b.where(), strings.Join(prefix, " "), code)
		return
	}
	flags := map[string]bool{"h": true, "help": true}
	for _, m := range regexp.MustCompile(`(?m)^  -([\w-]+)`).FindAllStringSubmatch(usage, -1) {
		flags[m[1]] = true
	}
	for _, w := range args[len(prefix):] {
		w = strings.Trim(w, "[]")
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name := strings.TrimLeft(w, "-")
			name, _, _ = strings.Cut(name, "=")
			if !flags[name] {
				t.Errorf("%s: stcsim %s has no flag %s", b.where(), strings.Join(prefix, " "), w)
			}
			continue
		}
		checkRepoPath(t, b, w)
	}
	if cheap[strings.Join(prefix, " ")] {
		_, se, code := capture(t, func() int { return dispatch(args) })
		if code != exitOK {
			t.Errorf("%s: stcsim %s: exit %d: %s", b.where(), strings.Join(args, " "), code, se)
		}
	}
	switch prefix[0] {
	case "run":
		runFast(t, b, args)
	case "sweep":
		dryRunSweep(t, b, args)
	}
}

// dryRunSweep checks a documented sweep with --dry-run (its file, grid
// keys and every point's config, nothing simulated), its store in a
// scratch directory; a placeholder sweep file is left to the path check.
func dryRunSweep(t *testing.T, b docBlock, args []string) {
	if len(args) < 2 {
		return
	}
	if _, err := os.Stat(filepath.Join(repoRoot, args[1])); err != nil {
		return
	}
	run := []string{"sweep", filepath.Join(repoRoot, args[1]), "--dry-run", "--quiet"}
	for i := 2; i < len(args); i++ {
		switch {
		case args[i] == "--db" && i+1 < len(args):
			i++
		case args[i] == "--dry-run" || args[i] == "--quiet":
		default:
			run = append(run, args[i])
		}
	}
	if _, se, code := capture(t, func() int { return dispatch(run) }); code != exitOK {
		t.Errorf("%s: stcsim %s: exit %d: %s", b.where(), strings.Join(run, " "), code, se)
	}
}

// fastRuns are the documented commands run so far, by their words: a
// command two pages document alike runs once (one that writes --out runs
// each time, into its own directory).
var fastRuns = map[string]struct {
	stderr string
	code   int
}{}

// runFast runs a documented `stcsim run` on the fast tier
// (sim.fidelity=fast, a few milliseconds a layer; what that tier does not
// model, such as V:N:M, falls back to the instruction tier, there with
// one simulated candidate on 16 SMs, whose waves are extrapolated), from
// the repository root with --out in a scratch directory, so that an
// example whose config, overrides, flags or files are wrong fails here
// (the numbers a page states beside a command are
// scripts/docs-numbers.sh's). Examples that serve a monitor or name a
// placeholder file (my-model.csv) are left to checkStcsim's flag and path
// checks.
func runFast(t *testing.T, b docBlock, args []string) {
	shown := sessionOutput(b, args)
	args = slices.Clone(args)
	for i, a := range args {
		switch {
		case a == "--monitor" || a == "--monitor-hold" || a == "--trace-db":
			return
		case (a == "--out") && i+1 < len(args):
			args[i+1] = filepath.Join(t.TempDir(), "out")
		case a == "--workload" && i+1 < len(args) && !slices.Contains(workloads.Models(), args[i+1]):
			if _, err := os.Stat(filepath.Join(repoRoot, args[i+1])); err != nil {
				return // a placeholder
			}
		}
	}
	args = append(args, "--set", "sim.fidelity=fast", "--set", "kernel.simulated_candidates=1", "--set", "gpu.sm_count=16", "--quiet")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(repoRoot); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	key := strings.Join(args, "\x00")
	ran, seen := fastRuns[key]
	if !seen || slices.Contains(args, "--out") {
		_, ran.stderr, ran.code = capture(t, func() int { return dispatch(args) })
		fastRuns[key] = ran
	}
	se, code := ran.stderr, ran.code
	if len(shown) > 0 && strings.HasPrefix(shown[0], "stcsim") && strings.Contains(shown[0], ":") {
		// The page shows the error the command gives: it still does.
		flat := strings.Join(strings.Fields(se), " ")
		for _, l := range shown {
			if l = strings.Join(strings.Fields(l), " "); !strings.Contains(flat, l) {
				t.Errorf("%s: stcsim %s: the page shows %q, the command says:\n%s", b.where(),
					strings.Join(args, " "), l, se)
			}
		}
		if code != exitUsage {
			t.Errorf("%s: stcsim %s: exit %d, want 2 as the page shows", b.where(), strings.Join(args, " "), code)
		}
		return
	}
	if code != exitOK {
		t.Errorf("%s: stcsim %s (on the fast tier): exit %d: %s", b.where(), strings.Join(args, " "), code, se)
	}
}

// sessionOutput is the output a "$ " session block shows after the
// command args (nil outside sessions).
func sessionOutput(b docBlock, args []string) []string {
	var out []string
	in := false
	for _, l := range b.body {
		if strings.HasPrefix(l, "$ ") {
			words := shellWords(l[2:])
			in = len(words) > 0 && words[0] == "stcsim" && slices.Equal(words[1:], args)
			continue
		}
		if in && strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// checkGoTest: the package exists and the tests, benchmarks or fuzz
// targets a -run/-bench/-fuzz pattern anchors by name exist in it.
func checkGoTest(t *testing.T, b docBlock, args []string) {
	var pkgs, names []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-run" || a == "-fuzz" || a == "-bench":
			if i+1 < len(args) {
				names = append(names, regexp.MustCompile(`\w+`).FindAllString(args[i+1], -1)...)
				i++
			}
		case strings.HasPrefix(a, "-"):
			if !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") &&
				!strings.HasPrefix(args[i+1], "./") {
				i++ // the flag's value
			}
		case a == "./...":
			// every package: nothing to look up by name
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, strings.TrimSuffix(a, "/..."))
		}
	}
	var src bytes.Buffer
	for _, p := range pkgs {
		files, _ := filepath.Glob(filepath.Join(repoRoot, p, "*_test.go"))
		if len(files) == 0 {
			t.Errorf("%s: go test %s: no tests there", b.where(), p)
		}
		for _, f := range files {
			data, _ := os.ReadFile(f)
			src.Write(data)
		}
	}
	for _, name := range names {
		if name == "XXX" || !regexp.MustCompile(`^(Test|Benchmark|Fuzz)`).MatchString(name) {
			continue // XXX: run no test, by convention
		}
		if !strings.Contains(src.String(), "func "+name+"(") {
			t.Errorf("%s: go test names %s, which is not in %v", b.where(), name, pkgs)
		}
	}
}
