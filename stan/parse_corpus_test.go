package stan

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// corpusDir returns ../shared/data/posteriordb-full/<sub> relative to the repository root, or
// skips the test when it is missing.
func corpusDir(t testing.TB, sub string) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "data", "posteriordb-full", sub)
	files, _ := filepath.Glob(filepath.Join(dir, "*.stan"))
	if len(files) == 0 {
		t.Skipf("no Stan programs in %s (../shared missing)", dir)
	}
	sort.Strings(files)
	return files
}

func TestParseCorpus(t *testing.T) {
	files := corpusDir(t, "models")
	ok := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := Parse(filepath.Base(f), src)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, w := range prog.Warnings {
			t.Logf("warning: %v", w)
		}
		ok++
	}
	t.Logf("%d of %d programs parse", ok, len(files))
}
