package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/cli"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/output"
)

func runCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := cli.Run(context.Background(), args, &out, &out, counts())
	return out.String(), code
}

func readCSV(t *testing.T, path string) *model.StanCSV {
	t.Helper()
	c, err := model.LoadStanCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The user's model goes through the whole pipeline of vigo fit: all seven files, a fit.json
// that carries the recipe and that vigo draw samples again (the same first draws), a draws.csv
// that vigo summary reads, and NUTS through vigo sample writing the same columns.
func TestUserModelGetsTheWholePipeline(t *testing.T) {
	dir := t.TempDir()
	out, code := runCLI(t, "fit", "counts", "--family", "fullrank", "-q", "--out", dir)
	if code != cli.ExitOK {
		t.Fatalf("fit: exit %d\n%s", code, out)
	}
	for _, f := range output.Files() {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(out, "verdict: 16 of 16 starts reached one mode; k̂ = ") || !strings.Contains(out, "rate[12]") {
		t.Errorf("report:\n%s", out)
	}
	s, err := fit.Load(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "counts" || s.Data != "built-in" || s.Recipe == nil || s.Recipe.Family.Kind != fit.KindFullRank {
		t.Errorf("fit.json: model %q, data %q, recipe %+v", s.Model, s.Data, s.Recipe)
	}
	csv := readCSV(t, filepath.Join(dir, "draws.csv"))
	want := append([]string{"lp__", "lp_approx__", "alpha", "beta"}, "rate[1]")
	if !slices.Equal(csv.Names[:5], want) || len(csv.Names) != 16 {
		t.Errorf("draws.csv columns %v", csv.Names)
	}
	sum, code := runCLI(t, "summary", filepath.Join(dir, "draws.csv"))
	if code != cli.ExitOK || !strings.Contains(sum, "rate[12]") || strings.Contains(sum, "lp_approx__") {
		t.Errorf("summary: exit %d\n%s", code, sum)
	}
	drawn := filepath.Join(dir, "drawn.csv")
	if out, code := runCLI(t, "draw", filepath.Join(dir, "fit.json"), "--draws", "5", "--out", drawn); code != cli.ExitOK {
		t.Fatalf("draw: exit %d\n%s", code, out)
	}
	d := readCSV(t, drawn)
	if !slices.Equal(d.Names, csv.Names) {
		t.Fatalf("draw columns %v, fit %v", d.Names, csv.Names)
	}
	for i, v := range d.Draws {
		if w := csv.Draws[i]; math.Abs(v-w) > 1e-12*(1+math.Abs(w)) {
			t.Fatalf("draw value %d: %v, draws.csv %v", i, v, w)
		}
	}
	sdir := filepath.Join(dir, "nuts")
	if out, code := runCLI(t, "sample", "counts", "--chains", "4", "--quiet", "--out", sdir); code != cli.ExitOK {
		t.Fatalf("sample: exit %d\n%s", code, out)
	}
	ch := readCSV(t, filepath.Join(sdir, "counts-1.csv"))
	if !slices.Equal(ch.Names[len(ch.Names)-14:], csv.Names[2:]) {
		t.Errorf("sample columns %v, fit %v", ch.Names, csv.Names)
	}
}

// A model name the zoo has, a missing constructor and a duplicate are refused.
func TestBadModelsAreRefused(t *testing.T) {
	for _, ms := range [][]cli.Model{
		{{Name: "eight_schools", New: newCounts}},
		{{Name: "c"}},
		{counts(), counts()},
	} {
		var out bytes.Buffer
		if code := cli.Run(context.Background(), []string{"zoo"}, &out, &out, ms...); code != cli.ExitError || !strings.Contains(out.String(), "cli: model") {
			t.Errorf("%d models: exit %d, %q", len(ms), code, out.String())
		}
	}
	if out, code := runCLI(t, "fit", "counts", "--data", filepath.Join(t.TempDir(), "none.json")); code != cli.ExitError || !strings.Contains(out, "--data") {
		t.Errorf("missing --data file: exit %d, %q", code, out)
	}
}

// The model's numbers: the pointwise log-likelihood plus the log prior is the log density
// (Jacobian-free: both parameters are unconstrained), at a few points.
func TestCountsLogLikSumsToTheDensity(t *testing.T) {
	m, err := counts().New(counts().Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	for _, z := range [][]float64{{0, 0}, {0.9, 0.8}, {-1, 2}} {
		var tp ad.Tape
		lp := tp.Float(m.LogDensity(&tp, tp.Input(z)))
		ll, err := m.PointwiseLogLik(nil, z)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, v := range ll {
			sum += v
		}
		prior := -0.5*(z[0]/5)*(z[0]/5) - math.Log(5*math.Sqrt(2*math.Pi)) - 0.5*(z[1]/2)*(z[1]/2) - math.Log(2*math.Sqrt(2*math.Pi))
		if math.Abs(sum+prior-lp) > 1e-10*(1+math.Abs(lp)) {
			t.Errorf("z %v: log-lik %v + prior %v ≠ log density %v", z, sum, prior, lp)
		}
	}
}
