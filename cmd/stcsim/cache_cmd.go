package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/simcache"
	"github.com/stcsim/stcsim/sim"
)

func init() {
	register(&command{name: "cache", summary: "the simulation cache: info " +
		"(where, how big) or clean (remove every entry)", run: runCache})
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
		"layer simulated before with the same build, config, row and mode is not simulated again")
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
	if err != nil {
		return nil, fmt.Errorf("--cache %s: %v", dir, err)
	}
	sc.Warn = func(s string) { fmt.Fprintf(os.Stderr, "stcsim %s: %s\n", cmd, s) }
	return sc, nil
}

// attach sets a job's cache and the build it is keyed by (none when the
// running executable cannot be read: its records could not be told from
// another build's).
func (c *cacheFlags) attach(cmd string, job *sim.Job) error {
	sc, salt, err := c.openKeyed(cmd)
	if err != nil || sc == nil {
		return err
	}
	job.Cache, job.CacheSalt = sc, salt
	return nil
}

// openKeyed is open plus the build id (nil cache when either is missing).
func (c *cacheFlags) openKeyed(cmd string) (*simcache.Cache, string, error) {
	sc, err := c.open(cmd)
	if err != nil || sc == nil {
		return nil, "", err
	}
	id, ok := simcache.BuildID()
	if !ok {
		fmt.Fprintf(os.Stderr, "stcsim %s: %s: the simulation cache is off\n", cmd, id)
		return nil, "", nil
	}
	return sc, id, nil
}

// reportCache prints the run's hits and misses (nothing with no cache).
func reportCache(cmd string, rep *sim.Report, quiet bool) {
	hits, misses := sim.CacheCounts(rep)
	if quiet || hits+misses == 0 {
		return
	}
	fmt.Fprintf(os.Stderr, "stcsim %s: cache: %d of %d records reused, %d simulated\n",
		cmd, hits, hits+misses, misses)
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
	fs := newFlagSet("cache", "info|clean [--cache DIR] [--format table|json]")
	var cf cacheFlags
	cf.add(fs)
	format := fs.String("format", "table", "table or json (info)")
	action := ""
	if len(args) > 0 && (args[0] == "info" || args[0] == "clean") {
		action, args = args[0], args[1:]
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if action == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "stcsim cache: want info or clean, then the flags")
		return exitUsage
	}
	if *format != "table" && *format != "json" {
		fmt.Fprintf(os.Stderr, "stcsim cache: --format %q: want table or json\n", *format)
		return exitUsage
	}
	dir, _ := cf.cacheDir()
	if dir == "" {
		fmt.Fprintln(os.Stderr, "stcsim cache: the cache is off ("+cacheEnv+"=off or --no-cache)")
		return exitUsage
	}
	sc, err := simcache.Open(dir, simcache.DefaultMaxBytes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim cache:", err)
		return exitUsage
	}
	if action == "clean" {
		n, err := sc.Clean()
		if err != nil {
			fmt.Fprintln(os.Stderr, "stcsim cache clean:", err)
			return exitInternal
		}
		fmt.Printf("removed %d entries from %s\n", n, dir)
		return exitOK
	}
	info, err := sc.Stat()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim cache info:", err)
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
