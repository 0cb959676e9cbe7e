package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitEnsembleAndDraw: vigo fit --ensemble 2 prints the ensemble's bounds and members, writes
// a fit.json that vigo draw samples, row for row the fit's own draws.
func TestFitEnsembleAndDraw(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, quick(dir, "--ensemble", "2", "--ensemble-l", "4")...)
	if err != nil && !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	for _, want := range []string{"ensemble of 2 × meanfield family", "MISELBO_4 = ", "mean IWELBO_4 = ", "mean ELBO = ", "JSD = MISELBO_1 − mean ELBO = ", "(0 to log 2 = 0.693)", "member  "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	more := filepath.Join(dir, "more.csv")
	if _, err := run(t, "draw", filepath.Join(dir, "fit.json"), "--draws", "20", "--out", more); err != nil {
		t.Fatal(err)
	}
	got, want := dataLines(t, more), dataLines(t, filepath.Join(dir, "draws.csv"))
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("line %d:\n%s\nfit wrote\n%s", i, got[i], want[i])
		}
	}
}

func TestFitEnsembleBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ensemble", "-1"}, "--ensemble: fit: Recipe: ensemble.members = -1"},
		{[]string{"--ensemble", "65"}, "--ensemble: fit: Recipe: ensemble.members = 65"},
		{[]string{"--ensemble", "2", "--ensemble-l", "-3"}, "--ensemble-l: fit: Recipe: ensemble.l = -3"},
		{[]string{"--ensemble", "2", "--ensemble-weights", "best"}, `--ensemble-weights: fit: Recipe: ensemble.weights = "best"`},
		{[]string{"--ensemble-l", "3"}, "--ensemble-l: only for --ensemble S"},
		{[]string{"--ensemble", "2", "--family", "auto"}, "--ensemble: only for a single family"},
	} {
		_, err := run(t, quick(t.TempDir(), c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
