package sim

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// aloneEnv names the test a child test binary runs alone (aloneInProcess).
const aloneEnv = "STCSIM_TEST_ALONE"

// aloneInProcess gives the calling test a process of its own, for a test
// that reads what the whole process counts (the SMs' warp k-steps): in
// the package's test binary it runs the binary again with
// -test.run naming the test alone, in parallel with the package's other
// tests, passes the child's log on, fails as the child fails, and returns
// false; in that child, where nothing else runs, it returns true and the
// test goes on to measure.
func aloneInProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		return true
	}
	t.Parallel()
	args := []string{"-test.run=^" + t.Name() + "$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), aloneEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("in a process of its own:\n%s", strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("%s alone: %v", t.Name(), err)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) &&
		!strings.Contains(string(out), "--- SKIP: "+t.Name()) {
		t.Fatalf("%s alone: the child ran no such test", t.Name())
	}
	return false
}
