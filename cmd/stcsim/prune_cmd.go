package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/atomicfile"
	"github.com/stcsim/stcsim/sim"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

func init() {
	register(&command{name: "prune", summary: "prune a weight tensor 2:4 " +
		"by magnitude (or verify it), write values, metadata and a summary",
		run: runPrune})
}

func runPrune(args []string) int {
	fs := newFlagSet("prune", "--in W.npy|W.safetensors [--tensor NAME] "+
		"--out DIR [--pattern 2:4] [--transposable] [--verify] [--format text|json]")
	in := fs.String("in", "", "weight file: .npy, or .safetensors (one tensor, "+
		"chosen by --tensor or a #NAME suffix)")
	tensor := fs.String("tensor", "", "tensor name inside a .safetensors file")
	out := fs.String("out", "", "output directory for "+workloads.ValuesFile+", "+
		workloads.MetadataFile+", "+workloads.PrunedFile+" and "+
		workloads.SummaryFile+" (optional with --verify)")
	pattern := fs.String("pattern", "2:4", "structured-sparsity pattern N:M along K (1:2 for tf32)")
	verify := fs.Bool("verify", false, "do not prune: check that the tensor "+
		"already holds the pattern (exit status 1 if not)")
	transposable := fs.Bool("transposable", false, "a transposable mask: the "+
		"pattern along K and along M (every M x M block), so W^T is sparse too "+
		"(the data gradient of a training step); reports the kept magnitude "+
		"against the plain mask's")
	format := fs.String("format", "text", "summary on standard output: text or json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	p, err := tensorcore.ParsePattern(*pattern)
	switch {
	case err != nil:
		err = fmt.Errorf("--pattern: %w", err)
	case *in == "":
		err = fmt.Errorf("--in is required")
	case *out == "" && !*verify:
		err = fmt.Errorf("--out is required (unless --verify)")
	case *format != "text" && *format != "json":
		err = fmt.Errorf("--format %s: want text or json", configs.Quote(*format))
	case *out != "":
		err = checkPruneOut(*out, *in)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim prune:", flagged(err))
		return exitUsage
	}
	t, sum, err := workloads.ReadTensorSHA256(*in, *tensor)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim prune:", flagged(err))
		return exitUsage
	}
	pruneFn := workloads.Prune
	if *transposable {
		pruneFn = workloads.PruneTransposable
	}
	r, err := pruneFn(t, *in, p, *verify)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stcsim prune:", flagged(err))
		return exitUsage
	}
	r.Summary.Provenance = &workloads.PruneProvenance{Version: sim.Version,
		Command: append([]string{"stcsim", "prune"}, args...), Input: *in,
		SHA256: sum, Tensor: t.Name, Pattern: p.String(), Verify: *verify,
		Transposable: *transposable}
	if !r.Summary.ValidMask { // nothing is written for an invalid result
		printPruneSummary(&r.Summary, *format)
		fmt.Fprintf(os.Stderr, "stcsim prune: %s: %s\n", *in, r.Summary.InputError)
		return exitInternal
	}
	if *out != "" {
		if err := r.WriteDir(*out); err != nil {
			fmt.Fprintln(os.Stderr, "stcsim prune:", flagged(err))
			return exitInternal
		}
	}
	printPruneSummary(&r.Summary, *format)
	return exitOK
}

func printPruneSummary(s *workloads.PruneSummary, format string) {
	if format == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(s)
		return
	}
	name := s.Source
	if s.Tensor != "" && !strings.HasSuffix(name, "#"+s.Tensor) {
		name += "#" + s.Tensor // chosen by --tensor, not named in --in
	}
	fmt.Printf("%s: %s %v, as A operand %d x %d (M x K)\n", name, s.DType,
		s.Shape, s.GEMMShape[0], s.GEMMShape[1])
	if s.InputValid {
		fmt.Printf("input already %s sparse\n", s.Pattern)
	} else {
		fmt.Printf("input not %s sparse (%s)\n", s.Pattern, s.InputError)
	}
	switch {
	case s.Mode == "prune" && s.Transposable:
		fmt.Printf("pruned %s transposable (along K and M) by magnitude: kept %.2f%% "+
			"of the total |w|; a plain %s mask (along K) keeps %.2f%%\n",
			s.Pattern, 100*s.KeptMagnitude, s.Pattern, 100*s.PlainKeptMagnitude)
	case s.Mode == "prune":
		fmt.Printf("pruned %s by magnitude: kept %.2f%% of the total |w|\n",
			s.Pattern, 100*s.KeptMagnitude)
	}
	fmt.Printf("mask valid: %v; sparsity %.2f%% (%d of %d nonzero)\n",
		s.ValidMask, 100*s.Sparsity, s.NonzeroOut, s.Elements)
	if s.ValidMask && s.ValueBytes > 0 {
		fmt.Printf("compressed: %d value bytes (float32), %d metadata bytes\n",
			s.ValueBytes, s.MetadataBytes)
	}
	if len(s.Files) > 0 {
		fmt.Printf("wrote: %v\n", s.Files)
	}
}

// checkPruneOut checks --out DIR before the input is read: a directory
// stcsim can write in, where no file prune writes is a link, a directory
// or the --in file (prune --in pd/pruned.npy --out pd once overwrote its
// own input).
func checkPruneOut(dir, in string) error {
	if err := checkOutDir("--out", dir); err != nil {
		return err
	}
	for _, name := range workloads.PruneFiles {
		p := filepath.Join(dir, name)
		st, err := os.Lstat(p)
		switch {
		case err != nil:
			continue
		case st.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("--out %s: %s %v", dir, name, atomicfile.ErrSymlink)
		case !st.Mode().IsRegular():
			return fmt.Errorf("--out %s: %s exists and is not a regular file", dir, name)
		}
		if err := checkNotInputs("--out", p, in); err != nil {
			return err
		}
	}
	return nil
}
