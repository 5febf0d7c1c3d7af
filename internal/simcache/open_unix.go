//go:build unix

package simcache

import (
	"os"
	"syscall"
)

// openNoFollow opens a file for reading without following a final
// symbolic link (ELOOP) and without blocking on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// openAppendNoFollow opens (creating it) a file to append to, without
// following a final symbolic link or blocking on a FIFO.
func openAppendNoFollow(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: p, Err: syscall.EINVAL}
	}
	return f, nil
}
