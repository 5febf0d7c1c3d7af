package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
	"github.com/stcsim/stcsim/internal/tally"
	"github.com/stcsim/stcsim/tensorcore"
	"github.com/stcsim/stcsim/workloads"
)

// loadTest is the default config with sets applied.
func loadTest(tb testing.TB, sets ...string) *configs.Config {
	tb.Helper()
	ld, err := configs.Load(nil, sets)
	if err != nil {
		tb.Fatal(err)
	}
	return ld.Config
}

// BenchmarkReferenceSuite is the speed target of the SM issue: ResNet-50
// at batch 32 and BERT-Large at sequence 128, batch 32, dense and sparse,
// on a100-40gb in the default fidelity. Besides the time it reports the
// warp instructions simulated per run (warp-instr/op), which does not
// depend on the machine: compare changes to the selection by it. scripts/bench-suite.sh runs the
// same job through the command and also reports peak RSS.
func BenchmarkReferenceSuite(b *testing.B) {
	ld, err := configs.Load(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	var job Job
	for _, m := range []string{"resnet50", "bert-large"} {
		t, err := workloads.Model(m, 32, 128)
		if err != nil {
			b.Fatal(err)
		}
		job.Workloads = append(job.Workloads, t)
	}
	job.Modes = tensorcore.Modes
	start := tally.WarpInstructions.Load()
	for i := 0; i < b.N; i++ {
		if _, err := Run(ld, job); err != nil {
			b.Fatal(err)
		}
	}
	// The work itself, which timing on a shared machine blurs: every warp
	// instruction simulated, selection samples included.
	b.ReportMetric(float64(tally.WarpInstructions.Load()-start)/float64(b.N), "warp-instr/op")
}
