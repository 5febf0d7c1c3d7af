package sim

import (
	"strings"
	"testing"

	"github.com/stcsim/stcsim/tensorcore"
)

// TestStragglerNamesTheLoneTailSM: on 4 SMs with two CTA slots each, 9
// CTAs leave one over: it starts in the first slot the first 8 free, so
// its SM ends the kernel by itself for most of that CTA's run, a large
// part of the kernel (with the first-wave CTA it slowed, if that one is
// still running when the other SMs finish); 8 CTAs fill the slots
// exactly and no SM is left alone for long.
func TestStragglerNamesTheLoneTailSM(t *testing.T) {
	t.Parallel()
	sets := []string{"gpu.sm_count=4", "kernel.force=128x128x32_64x64_s5_splitk1"}
	for _, c := range []struct {
		ctas  int
		alone bool
	}{{9, true}, {8, false}} {
		job := gemmJob([3]int{128 * c.ctas, 128, 2048})
		job.Modes = []tensorcore.Mode{tensorcore.Dense}
		r := run(t, job, sets...).Results[0]
		if !c.alone {
			if r.Straggler != nil {
				t.Errorf("%d CTAs: straggler %+v in %d cycles", c.ctas, *r.Straggler, r.Cycles)
			}
			continue
		}
		s := r.Straggler
		if s == nil {
			t.Fatalf("%d CTAs: no straggler in %d cycles (note %q)", c.ctas, r.Cycles, r.Note)
		}
		share := float64(s.AloneCycles) / float64(r.Cycles)
		if s.CTAs < 1 || s.CTAs > 2 || share < 0.25 || share > 0.6 || s.SM < 0 || s.SM >= 4 {
			t.Errorf("%d CTAs: straggler %+v, alone %.2f of %d cycles", c.ctas, *s, share, r.Cycles)
		}
		if !strings.Contains(r.Note, "ran alone") {
			t.Errorf("%d CTAs: note %q does not name the straggler", c.ctas, r.Note)
		}
		t.Logf("%d CTAs: %+v, %.1f %% of %d cycles", c.ctas, *s, 100*share, r.Cycles)
	}
}
