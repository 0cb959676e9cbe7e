package output

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unwritableDir returns an existing directory in which files cannot be created, also for root
// (who ignores directory permissions): /proc/self as root, a 0555 directory otherwise.
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() == 0 {
		if st, err := os.Stat("/proc/self"); err != nil || !st.IsDir() {
			t.Skip("running as root without /proc: no unwritable directory to test with")
		}
		return "/proc/self"
	}
	d := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(d, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(d, 0o755) })
	return d
}

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestCheckDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "out")
	if err := CheckDir(dir); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("probe left behind: %v", got)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, bad := range []string{unwritableDir(t), filepath.Join(file, "out")} {
		if err := CheckDir(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("CheckDir(%s): %v, want an error naming it", bad, err)
		}
	}
	if err := CheckFile(filepath.Join(unwritableDir(t), "table.md")); err == nil {
		t.Error("CheckFile in an unwritable directory: no error")
	}
	if err := CheckFile(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("CheckFile on a directory: %v", err)
	}
}

// WriteFile replaces a symlink instead of writing through it, makes the file 0644, and leaves
// the earlier file when write fails.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("victim\n"), 0o600)
	link := filepath.Join(dir, "out.csv")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Errorf("the symlink's target was overwritten: %q", b)
	}
	st, err := os.Lstat(link)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != FileMode {
		t.Fatalf("%s: %v, %v; want a regular file with mode %v", link, st.Mode(), err, FileMode)
	}
	boom := errors.New("unserialisable value")
	err = WriteFile(link, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(link); string(b) != "new\n" || !slices.Equal(entries(t, dir), []string{"out.csv"}) {
		t.Errorf("after a failed write: %q, entries %v", b, entries(t, dir))
	}
}

// A failing move inside Commit puts the earlier files back: the directory holds one run's files,
// never a mix.
func TestSetCommitFailurePutsTheEarlierFilesBack(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a.csv", "b.csv", "c.csv"}
	for _, n := range append(slices.Clone(names), "stale.csv") {
		os.WriteFile(filepath.Join(dir, n), []byte("old "+n), 0o644)
	}
	for fail := 1; fail <= 7; fail++ { // 4 moves aside, 3 into place
		s, err := NewSet(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			os.WriteFile(s.Path(n), []byte("new "+n), 0o600)
		}
		calls := 0
		s.rename = func(a, b string) error {
			if calls++; calls == fail {
				return fmt.Errorf("injected failure of move %d", fail)
			}
			return os.Rename(a, b)
		}
		_, err = s.Commit("stale.csv")
		s.Close()
		if err == nil || !strings.Contains(err.Error(), "earlier files are back") {
			t.Fatalf("move %d failing: error %v", fail, err)
		}
		if got := entries(t, dir); !slices.Equal(got, []string{"a.csv", "b.csv", "c.csv", "stale.csv"}) {
			t.Fatalf("move %d failing: entries %v", fail, got)
		}
		for _, n := range names {
			if b, _ := os.ReadFile(filepath.Join(dir, n)); string(b) != "old "+n {
				t.Errorf("move %d failing: %s holds %q", fail, n, b)
			}
		}
	}
	s, _ := NewSet(dir)
	defer s.Close()
	for _, n := range names {
		os.WriteFile(s.Path(n), []byte("new "+n), 0o600)
	}
	paths, err := s.Commit("stale.csv")
	if err != nil || len(paths) != 3 {
		t.Fatal(paths, err)
	}
	if got := entries(t, dir); !slices.Equal(got, names) {
		t.Errorf("entries %v, want %v (stale.csv removed, no temporary directory)", got, names)
	}
	for _, p := range paths {
		if st, _ := os.Stat(p); st.Mode().Perm() != FileMode {
			t.Errorf("%s: mode %v", p, st.Mode())
		}
	}
}
