//go:build unix

package progress

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// TerminalWidth is the number of columns of the terminal f writes to: 0
// when f is not a terminal. Where the terminal does not say, it is
// $COLUMNS, else 80.
func TerminalWidth(f *os.File) int {
	if !isTerminal(f) {
		return 0
	}
	if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}
