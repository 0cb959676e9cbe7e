//go:build unix

package output

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Every file Write writes is 0644, whatever the umask (with umask 0, os.Create makes 0666).
func TestWriteFileModes(t *testing.T) {
	m := testModel(t)
	res := testFit(t, m)
	dir := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	rep, err := Write(dir, res, m, Info{Model: "normal", Layout: m.Layout, Draws: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		st, err := os.Stat(f)
		if err != nil || st.Mode().Perm() != FileMode {
			t.Errorf("%s: mode %v (%v), want %v", filepath.Base(f), st.Mode(), err, FileMode)
		}
	}
}
