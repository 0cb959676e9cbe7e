package cli

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// eightSchoolsData is posteriordb's eight_schools data (the zoo's embedded copy).
const eightSchoolsData = `{"J": 8, "y": [28, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]}`

func TestDrawFromEmbeddedFitRepeatsTheFitsDraws(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(t, quick(dir)...); !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "more.csv")
	if _, err := run(t, "draw", filepath.Join(dir, "fit.json"), "--draws", "30", "--out", out); err != nil {
		t.Fatal(err)
	}
	// Same seed (the fit's) and the embedded data: the same columns and, row for row, the
	// same bytes as the fit's first 30 draws.
	got, want := dataLines(t, out), dataLines(t, filepath.Join(dir, "draws.csv"))
	if len(got) != 31 {
		t.Fatalf("%d lines, want header + 30", len(got))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("line %d:\n%s\nfit wrote\n%s", i, got[i], want[i])
		}
	}
	// Another seed gives other draws, and stdout is the default output.
	s, err := run(t, "draw", filepath.Join(dir, "fit.json"), "--draws", "5", "--seed", "9")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(s), "\n"); lines[len(lines)-5] == want[1] || !strings.Contains(s, "# seed = 9") {
		t.Errorf("--seed 9 output:\n%s", s)
	}
}

func TestDrawWithoutTheData(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "es.json")
	if err := os.WriteFile(data, []byte(eightSchoolsData), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, quick(filepath.Join(dir, "out"), "--data", data, "--family", "fullrank")...); !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	fitCSV := readCSV(t, filepath.Join(dir, "out", "draws.csv"))
	// With the data: exactly the fit's rows.
	withData := filepath.Join(dir, "with.csv")
	if _, err := run(t, "draw", filepath.Join(dir, "out", "fit.json"), "--draws", "20", "--out", withData, "--data", data); err != nil {
		t.Fatal(err)
	}
	got, want := dataLines(t, withData), dataLines(t, filepath.Join(dir, "out", "draws.csv"))
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("with --data, line %d:\n%s\nfit wrote\n%s", i, got[i], want[i])
		}
	}
	// Without it (the file is gone): the Stan parameters from the saved layout, lp__ = nan.
	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "bare.csv")
	if _, err := run(t, "draw", filepath.Join(dir, "out", "fit.json"), "--draws", "20", "--out", bare); err != nil {
		t.Fatal(err)
	}
	c := readCSV(t, bare)
	if !slices.Equal(c.Names, eightSchoolsParams) || c.NumDraws() != 20 {
		t.Fatalf("columns %v, %d rows", c.Names, c.NumDraws())
	}
	for _, name := range c.Names {
		col, ref := c.Column(name), fitCSV.Column(name)
		for i := range col {
			if name == "lp__" {
				if !math.IsNaN(col[i]) {
					t.Fatalf("lp__ = %v without the data, want nan", col[i])
				}
				continue
			}
			if col[i] != ref[i] {
				t.Fatalf("%s row %d: %v, fit wrote %v", name, i, col[i], ref[i])
			}
		}
	}
	if !strings.Contains(strings.Join(c.Config, "\n"), "lp__ = nan") {
		t.Errorf("header does not explain lp__:\n%s", strings.Join(c.Config, "\n"))
	}
}

func TestDrawErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.json")
	if _, err := run(t, "draw", missing); err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing fit: error %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "vigo-fit", "version": 7}`), 0o644)
	if _, err := run(t, "draw", bad); err == nil || !strings.Contains(err.Error(), `"version"`) || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("bad version: error %v", err)
	}
	if _, err := run(t, quick(filepath.Join(dir, "o"))...); !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	if _, err := run(t, "draw", filepath.Join(dir, "o", "fit.json"), "--draws", "0"); err == nil || !strings.Contains(err.Error(), "--draws") {
		t.Errorf("--draws 0: error %v", err)
	}
	// Data of another shape cannot be this fit's.
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"J": 7, "y": [1,2,3,4,5,6,7], "sigma": [1,1,1,1,1,1,1]}`), 0o644)
	if _, err := run(t, "draw", filepath.Join(dir, "o", "fit.json"), "--data", other); err == nil || !strings.Contains(err.Error(), "other.json") {
		t.Errorf("other data: error %v", err)
	}
}

// TestEveryZooLayoutIsSaved checks that fit.json can describe the parameters of every zoo
// model (so vigo draw works without the data for all of them).
func TestEveryZooLayoutIsSaved(t *testing.T) {
	dir := posteriordbDir(t)
	for _, name := range zoo.Names() {
		m, err := zoo.Load(name, dir)
		if err != nil {
			t.Fatal(err)
		}
		specs, err := m.Layout().Spec()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		lay, err := model.LayoutFromSpec(specs)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		z := make([]float64, m.Dim())
		for i := range z {
			z[i] = 0.3 * float64(i%5-2)
		}
		want, got := make([]float64, lay.Len()), make([]float64, lay.Len())
		m.Layout().ConstrainValues(z, want)
		lay.ConstrainValues(z, got)
		for i := range want {
			// Fixed transforms agree bit for bit; affine bounds to a few ulps (fit/io_test.go).
			if math.Abs(got[i]-want[i]) > 1e-14*(1+math.Abs(want[i])) {
				t.Errorf("%s: %s = %v, model gives %v", name, lay.Names()[i], got[i], want[i])
			}
		}
	}
}
