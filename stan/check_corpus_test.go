package stan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckCorpus parses and type-checks every posteriordb program (current syntax) against
// Builtins(); each failure is listed with its first error.
func TestCheckCorpus(t *testing.T) {
	files := corpusDir(t, "models")
	tb := Builtins()
	ok := 0
	var failed []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := Parse(filepath.Base(f), src)
		if err == nil {
			err = prog.Check(tb)
		}
		if err != nil {
			first := err.Error()
			if es, isList := err.(Errors); isList && len(es) > 0 {
				first = es[0].Error()
			}
			failed = append(failed, first)
			continue
		}
		ok++
	}
	t.Logf("%d of %d programs parse and type-check", ok, len(files))
	if len(failed) > 0 {
		t.Errorf("%d programs fail:\n%s", len(failed), strings.Join(failed, "\n\n"))
	}
}
