// Package progress reports how far a long run has got: a redrawn bar on a
// terminal, occasional plain log lines when stderr is a file or a pipe
// (batch jobs, CI), and nothing in quiet mode.
//
// It owns progress output only; it must not know what is being counted.
package progress
