package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck runs vigo check on a good program (exit 0, its warnings printed) and a bad one
// (exit 1, file:line:col, the line and a caret on stderr).
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.stan")
	bad := filepath.Join(dir, "bad.stan")
	if err := os.WriteFile(good, []byte("data {\n  int N;\n  real y[N];\n}\nparameters {\n  real mu;\n}\nmodel {\n  target += mu;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("parameters {\n  real mu;\n}\nmodel {\n  target += muu;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"check", good}, &out, &errOut); code != ExitOK {
		t.Fatalf("good program: exit %d, stderr %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "good.stan: ok (1 warning)") || !strings.Contains(errOut.String(), "good.stan:3:9: Declaration of arrays by placing brackets after a variable name is deprecated and removed in Stan 2.33; write array[N] real y instead.") {
		t.Errorf("good program: stdout %q, stderr %q", out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Run(context.Background(), []string{"check", good, bad}, &out, &errOut); code != ExitError {
		t.Fatalf("bad program: exit %d, want %d", code, ExitError)
	}
	want := "bad.stan:5:13: Identifier 'muu' not in scope. Did you mean 'mu'?\n 5 |   target += muu;\n   |             ^"
	if !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "check: 1 error in 1 of 2 files") {
		t.Errorf("bad program: stderr %q, want it to contain %q", errOut.String(), want)
	}
}
