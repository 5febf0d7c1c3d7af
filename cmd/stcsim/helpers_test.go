package main

import (
	"io"
	"os"
	"testing"
)

// captureStdout runs f with os.Stdout redirected and returns what it
// wrote and f's exit status.
func captureStdout(t *testing.T, f func() int) (string, int) {
	t.Helper()
	out, _, code := capture(t, f)
	return out, code
}

// capture runs f with os.Stdout and os.Stderr redirected.
func capture(t *testing.T, f func() int) (stdout, stderr string, code int) {
	t.Helper()
	read := func(r *os.File, done chan<- string) {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}
	ro, wo, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	re, we, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = wo, we
	outc, errc := make(chan string), make(chan string)
	go read(ro, outc)
	go read(re, errc)
	code = f()
	os.Stdout, os.Stderr = oldOut, oldErr
	wo.Close()
	we.Close()
	return <-outc, <-errc, code
}
