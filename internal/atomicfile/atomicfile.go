// Package atomicfile writes output files whole: through a temporary
// file in the destination's directory, synced and renamed over the
// destination, so that a reader, a full disk or a kill at any point
// leaves the old file or the new one, never part of one. It never
// writes through a symbolic link: a destination that is a link is
// refused (a rename would replace the link, and writing where it points
// would change a file the command was not asked to write).
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSymlink is the error of a destination that is a symbolic link.
var ErrSymlink = errors.New("is a symbolic link; give the file it points to (outputs are replaced whole, never written through a link)")

// Write writes data to path atomically (mode 0644).
func Write(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}

// WriteWith writes what write produces to path atomically: write gets
// the temporary file; nothing is at path until it returned nil and the
// data is on disk.
func WriteWith(path string, write func(io.Writer) error) error {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("write %s: %w", path, ErrSymlink)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempName(base)+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		done = true
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// TempName is how the name of a temporary file for the destination
// name begins (random digits follow): ".NAME.tmp", NAME cut to 200 bytes
// so that the whole stays within the 255-byte limit of a file name. A
// writer may remove one a kill left behind.
func TempName(name string) string {
	if len(name) > 200 {
		name = name[:200]
	}
	return "." + name + ".tmp"
}

// syncDir makes a rename in dir durable where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
