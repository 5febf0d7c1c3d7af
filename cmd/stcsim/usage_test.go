package main

import (
	"strings"
	"testing"
)

// A missing or unknown subcommand, or an argument a subcommand does not
// take, exits 2 saying which; -h exits 0.
func TestSubcommandErrorsSayWhat(t *testing.T) {
	for _, c := range []struct {
		run  func([]string) int
		args []string
		code int
		want string
	}{
		{runMicro, []string{"bogus"}, exitUsage, `unknown subcommand "bogus"`},
		{runMicro, nil, exitUsage, "a subcommand is required"},
		{runMicro, []string{"-h"}, exitOK, "usage: stcsim micro"},
		{runConfig, []string{"bogus"}, exitUsage, `unknown subcommand "bogus"`},
		{runConfig, []string{"list", "extra"}, exitUsage, `takes no arguments (got "extra")`},
	} {
		_, stderr, code := capture(t, func() int { return c.run(c.args) })
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
