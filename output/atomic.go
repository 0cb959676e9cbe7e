package output

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// FileMode is the mode of every file the output functions write: 0644 whatever the umask and
// whatever os.CreateTemp made it (0600).
const FileMode os.FileMode = 0o644

// CheckDir reports whether files can be created in dir, creating dir (and its parents) when it
// is missing: it creates a probe file there and removes it. Commands call it before the work,
// so an unwritable output location fails at once instead of after a long fit. It follows the
// user's own symlink for dir itself (as every file operation does) but creates nothing else.
// Cost: one file creation and removal.
func CheckDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output: cannot create the directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".probe-")
	if err != nil {
		return fmt.Errorf("output: %s is not writable: %w", dir, err)
	}
	name := f.Name()
	cerr := f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("output: %s: cannot remove the probe file: %w", dir, err)
	}
	if cerr != nil {
		return fmt.Errorf("output: %s is not writable: %w", dir, cerr)
	}
	return nil
}

// CheckFile reports whether WriteFile can write the file path: path is not a directory and
// its directory takes new files (CheckDir, which creates the directory when missing).
func CheckFile(path string) error {
	if st, err := os.Lstat(path); err == nil && st.IsDir() {
		return fmt.Errorf("output: %s is a directory, want a file name", path)
	}
	return CheckDir(filepath.Dir(path))
}

// WriteFile writes the file path through write atomically: into a temporary file in path's
// directory, which is synced, made FileMode and renamed over path only when write and the close
// succeeded. So a failure leaves path as it was (or absent), a reader never sees half a file,
// and a symlink at path is replaced by the file, never followed. Cost: one fsync.
func WriteFile(path string, write func(io.Writer) error) error {
	if st, err := os.Lstat(path); err == nil && st.IsDir() {
		return fmt.Errorf("output: %s is a directory, want a file name", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-")
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Chmod(FileMode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("output: writing %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// A Set writes several files into one directory so that they appear together or not at all:
// each is written into a temporary directory inside the directory (at Path), and Commit moves
// them into place at once — after moving aside the earlier files they replace and the stale
// ones it is told to remove, which it puts back if a move fails. So a failure at any point
// before Commit returns leaves the directory with the earlier run's files, never a mix of two
// runs; symlinks in the directory are replaced, never followed.
//
// A process killed inside Commit (between its renames) can leave the earlier files in a
// hidden ".previous-*" directory beside the new ones; nothing is lost.
type Set struct {
	dir, tmp string
	names    []string
	// rename is os.Rename; tests make it fail.
	rename func(oldpath, newpath string) error
}

// NewSet starts a set of files for dir, creating dir when missing and the temporary directory
// inside it. Close it (deferred) to remove what Commit did not move.
func NewSet(dir string) (*Set, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".partial-")
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	return &Set{dir: dir, tmp: tmp, rename: os.Rename}, nil
}

// Path returns where to write the file name (a base name) of the set, and records it.
func (s *Set) Path(name string) string {
	if !slices.Contains(s.names, name) {
		s.names = append(s.names, name)
	}
	return filepath.Join(s.tmp, name)
}

// Close removes the temporary directory and whatever is still in it. It is safe after Commit.
func (s *Set) Close() error { return os.RemoveAll(s.tmp) }

// Commit moves the set's files into the directory and returns their paths there, in the order
// Path was first called. Earlier files with those names, and the files named in remove (stale
// outputs of an earlier run that this one does not write), are deleted; a symlink is deleted,
// not its target. Every file is made FileMode and synced before the first move. If a name in
// the directory is a directory, or a move fails, Commit puts the earlier files back and
// returns an error. Cost: one fsync per file and two renames per file.
func (s *Set) Commit(remove ...string) ([]string, error) {
	for _, n := range s.names {
		if err := syncFile(filepath.Join(s.tmp, n)); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	old := slices.Clone(s.names)
	for _, n := range remove {
		if !slices.Contains(old, n) {
			old = append(old, n)
		}
	}
	var present []string
	for _, n := range old {
		st, err := os.Lstat(filepath.Join(s.dir, n))
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("output: %w", err)
		case st.IsDir():
			return nil, fmt.Errorf("output: %s is a directory; it would be replaced by a file (move it away)", filepath.Join(s.dir, n))
		}
		present = append(present, n)
	}
	prev, err := os.MkdirTemp(s.dir, ".previous-")
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	var moved, placed []string
	undo := func(cause error) error {
		var errs []error
		for _, n := range placed {
			if err := os.Remove(filepath.Join(s.dir, n)); err != nil {
				errs = append(errs, err)
			}
		}
		for _, n := range moved {
			if err := s.rename(filepath.Join(prev, n), filepath.Join(s.dir, n)); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("output: %w; putting the earlier files back failed too (they are in %s): %w", cause, prev, errors.Join(errs...))
		}
		os.RemoveAll(prev)
		return fmt.Errorf("output: %w (the earlier files are back in place)", cause)
	}
	for _, n := range present {
		if err := s.rename(filepath.Join(s.dir, n), filepath.Join(prev, n)); err != nil {
			return nil, undo(err)
		}
		moved = append(moved, n)
	}
	paths := make([]string, len(s.names))
	for i, n := range s.names {
		dst := filepath.Join(s.dir, n)
		if err := s.rename(filepath.Join(s.tmp, n), dst); err != nil {
			return nil, undo(err)
		}
		placed = append(placed, n)
		paths[i] = dst
	}
	os.Remove(s.tmp)
	syncDir(s.dir)
	if err := os.RemoveAll(prev); err != nil {
		return paths, fmt.Errorf("output: the new files are in place, but removing the earlier ones failed: %w", err)
	}
	return paths, nil
}

// syncFile makes the file name FileMode and flushes it to disk.
func syncFile(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Chmod(FileMode)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir flushes a directory's entries (the renames) to disk, where the system allows it.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}
