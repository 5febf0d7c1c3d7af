//go:build !unix

package progress

import (
	"os"
	"strconv"
)

// TerminalWidth is the number of columns of the terminal f writes to: 0
// when f is not a terminal; $COLUMNS, else 80, where it is.
func TerminalWidth(f *os.File) int {
	if !isTerminal(f) {
		return 0
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}
