package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/modelid"
	"github.com/stcsim/stcsim/internal/quote"
	"github.com/stcsim/stcsim/internal/simcache"
	"github.com/stcsim/stcsim/sim"
)

func init() {
	register(&command{name: "cache", summary: "the simulation cache: info " +
		"(where, how big), stats (hits and misses by cause) or clean (remove every entry)", run: runCache})
}

// cacheEnv names the cache directory, or "off" for none, where no
// --cache or --no-cache flag says otherwise.
const cacheEnv = "STCSIM_CACHE"

// cacheFlags are the flags of every command that simulates.
type cacheFlags struct {
	dir string
	off bool
}

func (c *cacheFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&c.dir, "cache", "", "simulation cache directory (default $"+cacheEnv+
		", else the user cache directory's stcsim/; "+cacheEnv+"=off disables it): a "+
		"layer simulated before by the same simulator source, config, GEMM shape and mode is not simulated again")
	fs.BoolVar(&c.off, "no-cache", false, "neither read nor fill the simulation cache")
}

// cacheDir is the directory the flags and the environment name ("" when
// the cache is off).
func (c *cacheFlags) cacheDir() (string, error) {
	if c.off {
		return "", nil
	}
	if c.dir != "" {
		return c.dir, nil
	}
	switch env := os.Getenv(cacheEnv); env {
	case "off":
		return "", nil
	case "":
	default:
		return env, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", nil // no home: no cache, silently (nothing was asked)
	}
	return filepath.Join(base, "stcsim"), nil
}

// open opens the cache the flags name (nil when off), warnings to stderr.
func (c *cacheFlags) open(cmd string) (*simcache.Cache, error) {
	dir, err := c.cacheDir()
	if err != nil || dir == "" {
		return nil, err
	}
	sc, err := simcache.Open(dir, simcache.DefaultMaxBytes)
	if err != nil && c.dir == "" && os.Getenv(cacheEnv) == "" {
		// The default directory, which nobody named: not a reason to stop.
		fmt.Fprintf(os.Stderr, "stcsim %s: %v: the simulation cache is off (--cache DIR names another)\n", cmd, flagged(err))
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--cache: %v", err)
	}
	sc.Warn = func(s string) { fmt.Fprintf(os.Stderr, "stcsim %s: %s\n", cmd, s) }
	return sc, nil
}

// attach sets a job's cache and the model it is keyed by (none when the
// model's identity cannot be made: its records could not be told from
// another model's).
func (c *cacheFlags) attach(cmd string, job *sim.Job) error {
	sc, salt, err := c.openKeyed(cmd)
	if err != nil || sc == nil {
		return err
	}
	job.Cache, job.CacheSalt = sc, salt
	return nil
}

// modelID names the model the cache is keyed by (a variable so that a
// test can stand for a changed simulator).
var modelID = modelid.ID

// openKeyed is open plus the model's identity (internal/modelid; nil
// cache when either is missing).
func (c *cacheFlags) openKeyed(cmd string) (*simcache.Cache, string, error) {
	sc, err := c.open(cmd)
	if err != nil || sc == nil {
		return nil, "", err
	}
	id, err := modelID()
	if err != nil {
		fmt.Fprintf(os.Stderr, "stcsim %s: %v: the simulation cache is off\n", cmd, flagged(err))
		return nil, "", nil
	}
	return sc, id, nil
}

// reportCache records the command's cache outcomes in the cache's
// statistics and prints them: hits, and the misses by cause (nothing
// with no cache or no lookup).
func reportCache(cmd string, c sim.Cache, quiet bool) {
	sc, ok := c.(*simcache.Cache)
	if !ok || sc == nil {
		return
	}
	sc.Record(cmd)
	n := sc.Counts()
	if quiet || n.Total() == 0 {
		return
	}
	why := ""
	if s := n.String(); s != "" {
		why = " (" + s + ")"
	}
	fmt.Fprintf(os.Stderr, "stcsim %s: cache: %d of %d records reused, %d simulated%s\n",
		cmd, n[simcache.Hit], n.Total(), n.Total()-n[simcache.Hit], why)
}

// reportTier prints which tier timed the run's records, when the config
// asks for the fast tier or any record came from it (a record of an
// instruction-tier run says so in its fidelity field).
func reportTier(cmd string, ld *configs.Loaded, rep *sim.Report, quiet bool) {
	fast, instr := sim.FidelityCounts(rep)
	if quiet || (fast == 0 && ld.Config.Sim.Fidelity != configs.FidelityFast) {
		return
	}
	fmt.Fprintf(os.Stderr, "stcsim %s: fidelity: %d records on the fast tier (%s), "+
		"%d at instruction level\n", cmd, fast, sim.FastTierError(), instr)
}

func runCache(args []string) int {
	fs := newFlagSet("cache", "info|stats|clean [--cache DIR] [--format table|json]")
	var cf cacheFlags
	cf.add(fs)
	format := fs.String("format", "table", "table or json (info, stats)")
	action := ""
	if len(args) > 0 && (args[0] == "info" || args[0] == "stats" || args[0] == "clean") {
		action, args = args[0], args[1:]
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if action == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "stcsim cache: want info, stats or clean, then the flags")
		return exitUsage
	}
	if *format != "table" && *format != "json" {
		fmt.Fprintf(os.Stderr, "stcsim cache: --format %s: want table or json\n", quote.Q(*format))
		return exitUsage
	}
	dir, _ := cf.cacheDir()
	if dir == "" {
		fmt.Fprintln(os.Stderr, "stcsim cache: the cache is off ("+cacheEnv+"=off or --no-cache)")
		return exitUsage
	}
	sc, err := simcache.Open(dir, simcache.DefaultMaxBytes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim cache:", flagged(err))
		return exitUsage
	}
	switch action {
	case "clean":
		n, err := sc.Clean()
		if err != nil {
			fmt.Fprintln(os.Stderr, "stcsim cache clean:", flagged(err))
			return exitUsage
		}
		fmt.Printf("removed %d entries from %s\n", n, dir)
		return exitOK
	case "stats":
		return cacheStats(sc, *format == "json")
	}
	info, err := sc.Stat()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim cache info:", flagged(err))
		return exitInternal
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(info, "", "  ")
		fmt.Println(string(b))
		return exitOK
	}
	ro := ""
	if info.ReadOnly {
		ro = " (read-only: runs do not fill it)"
	}
	fmt.Printf("%s%s: %d entries, %.1f MiB of %.0f MiB\n", info.Dir, ro, info.Entries,
		float64(info.Bytes)/(1<<20), float64(info.MaxBytes)/(1<<20))
	return exitOK
}

// cacheStatsJSON is what `cache stats --format json` prints.
type cacheStatsJSON struct {
	Dir      string              `json:"dir"`
	Since    string              `json:"since,omitempty"`
	Commands int                 `json:"commands"`
	Total    simcache.Counts     `json:"total"`
	Last     *simcache.StatsLine `json:"last,omitempty"`
	Skipped  int                 `json:"skipped_lines,omitempty"`
}

// cacheStats prints the cache's recorded outcomes: in all, by cause, and
// the last command's.
func cacheStats(sc *simcache.Cache, asJSON bool) int {
	lines, skipped, err := sc.Stats()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim cache stats:", flagged(err))
		return exitUsage
	}
	out := cacheStatsJSON{Dir: sc.Dir(), Commands: len(lines), Total: simcache.Counts{}, Skipped: skipped}
	for i, l := range lines {
		for k, v := range l.Counts {
			out.Total[k] += v
		}
		if i == 0 {
			out.Since = l.Time.Format("2006-01-02 15:04 UTC")
		}
		out.Last = &lines[i]
	}
	if asJSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Println(string(b))
		return exitOK
	}
	if len(lines) == 0 {
		fmt.Printf("%s: no lookups recorded\n", out.Dir)
	} else {
		fmt.Printf("%s: since %s, %d commands\n", out.Dir, out.Since, out.Commands)
		printOutcomes("all", out.Total)
		printOutcomes(fmt.Sprintf("last (%s, %s)", quote.Q(out.Last.Command),
			out.Last.Time.Format("2006-01-02 15:04 UTC")), out.Last.Counts)
	}
	if skipped > 0 {
		fmt.Printf("%d lines of the statistics could not be read and are left out\n", skipped)
	}
	return exitOK
}

// printOutcomes prints one line of lookups: hits, then misses by cause.
func printOutcomes(label string, n simcache.Counts) {
	fmt.Printf("  %s: %d records, %d reused, %d simulated", label, n.Total(), n[simcache.Hit],
		n.Total()-n[simcache.Hit])
	if s := n.String(); s != "" {
		fmt.Printf(" (%s)", s)
	}
	fmt.Println()
}
