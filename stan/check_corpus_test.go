package stan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkFile parses and type-checks one file; it returns the program and the first error.
func checkFile(t *testing.T, f string, tb *Table) (*Program, error) {
	t.Helper()
	src, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Parse(filepath.Base(f), src)
	if err == nil {
		err = prog.Check(tb)
	}
	var es Errors
	if errors.As(err, &es) && len(es) > 0 {
		return prog, es[0]
	}
	return prog, err
}

// TestCheckCorpus parses and type-checks every posteriordb program (current syntax) against
// Builtins(); each failure is listed with its first error.
func TestCheckCorpus(t *testing.T) {
	files := corpusDir(t, "models")
	tb := Builtins()
	ok := 0
	var failed []string
	for _, f := range files {
		prog, err := checkFile(t, f, tb)
		if err != nil {
			failed = append(failed, err.Error())
		} else {
			ok++
			for _, w := range prog.Warnings {
				if strings.Contains(w.Msg, "deprecated") {
					t.Errorf("current-syntax program has a deprecation warning: %v", w)
				}
			}
		}
	}
	t.Logf("%d of %d programs parse and type-check", ok, len(files))
	if len(failed) > 0 {
		t.Errorf("%d programs fail:\n%s", len(failed), strings.Join(failed, "\n\n"))
	}
}

// TestCheckCorpusRstan parses the pre-2.33 versions (models-rstan): every one must parse, those
// with old array declarations with a deprecation warning; type-check failures (functions
// removed from Stan since) are logged.
func TestCheckCorpusRstan(t *testing.T) {
	files := corpusDir(t, "models-rstan")
	tb := Builtins()
	parsed, checked, warned := 0, 0, 0
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
		parsed++
		old := false
		for _, w := range prog.Warnings {
			if strings.Contains(w.Msg, "deprecated") {
				old = true
			}
		}
		if old {
			warned++
		}
		if err := prog.Check(tb); err != nil {
			t.Logf("type-check: %v", strings.SplitN(err.Error(), "\n", 2)[0])
			continue
		}
		checked++
	}
	t.Logf("models-rstan: %d of %d parse (%d with deprecation warnings), %d type-check", parsed, len(files), warned, checked)
}
