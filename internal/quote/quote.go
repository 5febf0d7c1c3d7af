// Package quote renders pieces of user input for error messages: quoted
// and cut to a few bytes, so that a message stays short whatever the
// input (a 1 MB layer name, a 100 000-digit dimension, a 65 KB header).
package quote

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Max is how many bytes of a value a message quotes: enough to
// recognise the value, too few to flood a terminal or leak a file named
// by mistake.
const Max = 40

// Q renders s Go-quoted, cut to Max bytes at a character boundary, with
// its full length when cut.
func Q(s string) string {
	if len(s) <= Max {
		return fmt.Sprintf("%q", s)
	}
	cut := Max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

// HasControl reports whether s holds a control character or an invalid
// UTF-8 byte (read as the replacement character).
func HasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return true
		}
	}
	return false
}

// Text renders a name for a table, a label or a progress line: as it is
// when it holds no control character, else with each escaped as Go
// quotes it (an ESC is \x1b), so that printing a name never moves the
// cursor, clears the screen or sets the window's title.
func Text(s string) string {
	if !HasControl(s) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// Key renders a name from the input (a config key, a flag's value) for
// a message: as it is when at most Max bytes of printable text, else as
// Q renders it.
func Key(s string) string {
	if len(s) <= Max && utf8.ValidString(s) && !HasControl(s) {
		return s
	}
	return Q(s)
}

// Path renders a file path for a message: as it is when it is printable
// and no longer than a file name may be (255 bytes), else as Q renders
// it (a path of 100 KB given on the command line is no path of a file).
func Path(p string) string {
	if len(p) <= 255 && utf8.ValidString(p) && !HasControl(p) {
		return p
	}
	return Q(p)
}
