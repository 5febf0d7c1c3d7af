package simcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
)

var (
	buildOnce sync.Once
	buildSum  string
	buildOK   bool
)

// BuildID identifies the running simulator: the SHA-256 of its
// executable, so any change of code (a modified tree included) is a
// different key; false (with the reason) when it cannot be read.
func BuildID() (string, bool) {
	buildOnce.Do(func() {
		exe, err := os.Executable()
		if err == nil {
			var f *os.File
			if f, err = os.Open(exe); err == nil {
				h := sha256.New()
				_, err = io.Copy(h, f)
				f.Close()
				if err == nil {
					buildSum, buildOK = hex.EncodeToString(h.Sum(nil)), true
					return
				}
			}
		}
		buildSum = fmt.Sprintf("cannot read the executable to key the cache (%v)", err)
	})
	return buildSum, buildOK
}
