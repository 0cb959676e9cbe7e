package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchBFVITiny runs vigo bench bfvi on E1, E2 (20 draws per step, one seed) and the toy
// regression with one restart and short fits (about a second) and checks the tables have the
// paper's numbers beside ours.
func TestBenchBFVITiny(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bfvi.md")
	log, err := run(t, "bench", "bfvi", "--exp", "e1,e2,e3", "--draws-1d", "20", "--seeds-1d", "1", "--restarts", "1", "--draws", "500",
		"--boot", "5", "--max-iter", "200", "--degree", "5", "--out", file)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## E1 Bernoulli", "| 100 | 0.0037 / 0.0032 |", "## E2 Cauchy", "| 60 | 0.0011 (0.00092–0.00168) |",
		"| Gauss-VI | 0.387 |", "| E3 | toy regression (d=4) | full-rank Gaussian | MF 0.896",
		"| 0.68 (0.51, 0.86) |", "BF-VI paper (M=5"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q:\n%s", want, b)
		}
	}
	if _, err := run(t, "bench", "bfvi", "--experiments", "e9", "--out", "-"); err == nil {
		t.Error("unknown experiment accepted")
	}
}

// TestBenchBFVITBaseSkipPaper: --skip-paper leaves two rows per target (full-rank Gaussian and
// vigo's default flow) and --base-df names the t base in the default flow's row.
func TestBenchBFVITBaseSkipPaper(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bfvi.md")
	log, err := run(t, "bench", "bfvi", "--exp", "e3", "--restarts", "1", "--draws", "500", "--boot", "5", "--max-iter", "200",
		"--skip-paper", "--base-df", "5", "--out", file)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, "| E3 | toy regression (d=4) | full-rank Gaussian |") || !strings.Contains(s, "Student-t base ν=5)") {
		t.Errorf("report lacks the Gaussian or the t-base row:\n%s", s)
	}
	if strings.Contains(s, "| BF-VI paper (M=") {
		t.Errorf("--skip-paper still fitted the paper's flow:\n%s", s)
	}
}

// TestBenchBFVIAffineAndKind: --affine last adds the affine layer to the default flow's row,
// --flow-kind maf replaces the row by vigo's maf family, and bad values are refused before any
// fit with the option named.
func TestBenchBFVIAffineAndKind(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--affine", "last", "--affine-hidden", "4"}, "then an affine IAF layer (tanh MADE 1×4, direct) last)"},
		{[]string{"--flow-kind", "maf", "--hidden", "4"}, "| vigo maf (2 IAF layers with direct connections, tanh, hidden 1×4)"},
	} {
		file := filepath.Join(t.TempDir(), "bfvi.md")
		args := append([]string{"bench", "bfvi", "--exp", "e3", "--restarts", "1", "--draws", "500", "--boot", "5", "--max-iter", "200",
			"--skip-paper", "--out", file}, c.args...)
		log, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, log)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%v: report lacks %q:\n%s", c.args, c.want, b)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--affine", "middle"}, `affine "middle"`},
		{[]string{"--flow-kind", "maf", "--affine", "last"}, "is for bernstein only (kind=maf)"},
		{[]string{"--flow-kind", "spline"}, `flow kind "spline"`},
	} {
		_, err := run(t, append([]string{"bench", "bfvi", "--exp", "e3", "--restarts", "1", "--out", "-"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to contain %q", c.args, err, c.want)
		}
	}
}
