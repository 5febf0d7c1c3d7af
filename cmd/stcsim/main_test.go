package main

import (
	"os"
	"testing"
)

// The tests run with the simulation cache off (a user's cache must not
// decide what a test sees) unless a test turns it on for itself.
func TestMain(m *testing.M) {
	os.Setenv(cacheEnv, "off")
	os.Exit(m.Run())
}
