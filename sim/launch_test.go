package sim

import (
	"testing"

	"github.com/stcsim/stcsim/configs"
)

// A timed loop of back-to-back calls pays the gap before every call: a
// longer gap never makes a call faster, and moves it by exactly the gap,
// the kernel itself being the same (the shared servers count their
// booking windows from the kernel's launch: memory/server.go, calendar).
func TestLongerLaunchGapNeverFaster(t *testing.T) {
	var prev LaunchResult
	for i, gap := range []string{"0", "1410", "2890", "6000"} {
		ld, err := configs.Load([]string{"a100-80gb"}, []string{"sm.kernel_launch_latency=" + gap})
		if err != nil {
			t.Fatal(err)
		}
		r, err := MicroLaunch(ld.Config, 4096, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if r.KernelCycles == 0 || r.CTAs != 5 {
			t.Fatalf("gap %s: %+v: want 5 CTAs of 1024 threads (the last empty) that take time", gap, r)
		}
		if i > 0 {
			if r.PerCallUS <= prev.PerCallUS {
				t.Errorf("gap %d -> %d cycles: per call %.4f -> %.4f us, want slower", prev.GapCycles, r.GapCycles,
					prev.PerCallUS, r.PerCallUS)
			}
			if r.KernelCycles != prev.KernelCycles {
				t.Errorf("gap %d -> %d cycles: the kernel went %d -> %d cycles, want the same",
					prev.GapCycles, r.GapCycles, prev.KernelCycles, r.KernelCycles)
			}
		}
		prev = r
	}
}

// More data per call takes longer once the L2 streaming shows (6.3 MiB
// against 64 KiB), and a bad element count is refused.
func TestLaunchKernelGrowsWithItsData(t *testing.T) {
	ld, err := configs.Load([]string{"a100-80gb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	small, err := MicroLaunch(ld.Config, 4096, 1024)
	if err != nil {
		t.Fatal(err)
	}
	big, err := MicroLaunch(ld.Config, 414174, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if big.CTAs != 405 || big.KernelCycles < 2*small.KernelCycles {
		t.Errorf("414174 doubles: %+v against 4096: %+v; want 405 CTAs and a kernel at least twice as long", big, small)
	}
	for _, c := range [][2]int{{0, 1024}, {-2, 1024}, {4097, 1024}, {4096, 0}, {4096, 48}, {4096, 2048}} {
		if _, err := MicroLaunch(ld.Config, c[0], c[1]); err == nil {
			t.Errorf("%d elements, %d threads: want an error", c[0], c[1])
		}
	}
}
