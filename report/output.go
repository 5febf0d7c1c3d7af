package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/atomicfile"
	"github.com/stcsim/stcsim/results"
)

// WriteAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers never see a truncated file; a path
// that is a symbolic link is refused (atomicfile.Write).
func WriteAtomic(path string, data []byte) error { return atomicfile.Write(path, data) }

// JSON renders the report as one indented JSON object.
func JSON(rep *results.Report) []byte {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("marshal report: %v", err))
	}
	return append(b, '\n')
}

// WriteRun writes a run's files into dir: results.csv, results.json, the
// effective config.yaml, the plots and report.md. They are written into a
// temporary directory first and then put in place (see writeDir), results
// last, so that their presence means a complete run and no kill leaves
// new files next to an earlier run's results.
func WriteRun(dir string, rep *results.Report, ld *configs.Loaded) error {
	if err := CheckFinite(rep); err != nil {
		return err
	}
	return writeDir(dir, func(tmp string) error {
		if err := WriteAtomic(filepath.Join(tmp, "config.yaml"), ld.YAML()); err != nil {
			return err
		}
		plots, err := WritePlots(tmp, rep, ld.Config)
		if err != nil {
			return err
		}
		md := Markdown(rep, ld, plots)
		if err := WriteAtomic(filepath.Join(tmp, "report.md"), md); err != nil {
			return err
		}
		if err := WriteAtomic(filepath.Join(tmp, "results.json"), JSON(rep)); err != nil {
			return err
		}
		return WriteAtomic(filepath.Join(tmp, "results.csv"), results.CSV(rep))
	})
}
