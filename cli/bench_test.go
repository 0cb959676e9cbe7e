package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
)

// TestBenchPosteriordbEightSchools runs the benchmark on eight schools with one seed and a
// small iteration cap (a fraction of a second) and checks the table's columns and rows.
func TestBenchPosteriordbEightSchools(t *testing.T) {
	dir := datadir.PosteriorDBOrSkip(t)
	file := filepath.Join(t.TempDir(), "pdb.md")
	log, err := run(t, "bench", "posteriordb", "--posteriordb", dir, "--posteriors", "eight_schools", "--seeds", "1",
		"--max-iter", "300", "--methods", "meanfield,fullrank,lowrank", "--out", file)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	es := "eight_schools-eight_schools_noncentered"
	for _, want := range []string{
		"- machine: ", "- commit: ", "- command: `vigo ", "load average",
		"| posterior | method | conv | wall s | grad evals | k̂ | max\\|Δmean\\|/sd | sd ratio | W1/sd | Stan | Stan k̂ | Stan sd ratio | Stan W1/sd | W1/sd vs Stan |",
		"| " + es + " | meanfield | ", "| " + es + " | fullrank | ", "| " + es + " | lowrank | ",
		"| MF | 0.51 | 0.843 | 0.186 |", "| FR | 0.54 | 1.1 | 0.523 |",
		"| posterior | vigo best | vigo W1/sd | Stan best | Stan W1/sd | NUTS W1/sd | verdict |",
		"| " + es + " | ",
		"| " + es + " | meanfield | 1 | ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "aborted") {
		t.Errorf("a run aborted:\n%s", out)
	}
	if !strings.Contains(log, es+" fullrank seed 1: ") {
		t.Errorf("progress lacks the fullrank run:\n%s", log)
	}
}

func TestBenchPosteriordbUnknownMethod(t *testing.T) {
	_, err := run(t, "bench", "posteriordb", "--methods", "nosuch", "--posteriordb", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("error = %v, want one naming the method", err)
	}
}
