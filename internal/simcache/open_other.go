//go:build !unix

package simcache

import (
	"fmt"
	"os"
)

// openNoFollow opens a file for reading after checking that it is not a
// symbolic link (no O_NOFOLLOW here; the type is checked again on the
// open file).
func openNoFollow(p string) (*os.File, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: p, Err: fmt.Errorf("a symbolic link")}
	}
	return os.Open(p)
}

// openAppendNoFollow opens (creating it) a file to append to, after
// checking that it is not a symbolic link.
func openAppendNoFollow(p string) (*os.File, error) {
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: p, Err: fmt.Errorf("not a regular file")}
	}
	return os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}
