package output

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/model"
)

// testModel is y ~ N(mu, sigma) with a derived quantity, the twice-sigma "spread".
func testModel(t *testing.T) *model.Model {
	t.Helper()
	y := []float64{1.2, 0.4, 2.2, 1.7, 0.9}
	lay, err := model.NewLayout(model.Param{Name: "mu"}, model.Param{Name: "sigma", Constraint: bijector.Lower(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return &model.Model{Layout: lay,
		Density: func(tp *ad.Tape, p []ad.Var) ad.Var {
			lp := density.Normal(tp, tp.ConstRef(y), p[0], p[1])
			return tp.Add(lp, density.HalfNormal(tp, p[1], tp.Const(3)))
		},
		Derived: []model.Quantity{{Name: "spread"}},
		Derive:  func(p, out [][]float64) { out[0][0] = 2 * p[1][0] },
	}
}

func testFit(t *testing.T, m *model.Model) *fit.Result {
	t.Helper()
	r := fit.DefaultRecipe(fit.KindFullRank)
	r.MaxIter, r.DiagDraws = 500, 300
	res, err := fit.Run(context.Background(), m, r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Write writes the seven files for any model.Model; draws.csv holds lp__, lp_approx__, the
// parameters and the derived quantities, and its rows are the fit's draws through Row.
func TestWriteAnyModel(t *testing.T) {
	m := testModel(t)
	res := testFit(t, m)
	dir := filepath.Join(t.TempDir(), "out")
	rep, err := Write(dir, res, m, Info{Vigo: "test", Model: "normal", Data: "inline", Layout: m.Layout, Draws: 100})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range rep.Files {
		names = append(names, filepath.Base(f))
	}
	if !slices.Equal(names, Files()) {
		t.Errorf("wrote %v, want %v", names, Files())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(Files()) {
		t.Errorf("%d entries in the directory (a temporary one left?)", len(entries))
	}
	f, err := os.Open(filepath.Join(dir, "draws.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := model.ReadStanCSV("draws.csv", f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Names, []string{"lp__", "lp_approx__", "mu", "sigma", "spread"}) || len(c.Draws) != 100*5 {
		t.Fatalf("columns %v, %d values", c.Names, len(c.Draws))
	}
	row := m.Row(nil, res.Draws[:2])
	if r0 := c.Draws[2:5]; !close6(r0, row) || !close6(c.Draws[:2], []float64{res.LogP[0], res.LogQ[0]}) {
		t.Errorf("first row %v, want %v %v %v", c.Draws[:5], res.LogP[0], res.LogQ[0], row)
	}
	if !strings.Contains(strings.Join(c.Config, "\n"), "estimator = stl (S = 8, K = 1)") {
		t.Errorf("header:\n%s", strings.Join(c.Config, "\n"))
	}
	if s, err := fit.Load(filepath.Join(dir, "fit.json")); err != nil || s.Recipe == nil {
		t.Errorf("fit.json: %v", err)
	}
}

// close6 compares to the 6 significant digits draws.csv is written with.
func close6(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-5*(1+math.Abs(b[i])) {
			return false
		}
	}
	return true
}

// A failing Write leaves the directory as it was: the earlier files stay, nothing new or
// temporary appears.
func TestWriteFailsWithoutTouchingTheDirectory(t *testing.T) {
	m := testModel(t)
	res := testFit(t, m)
	dir := t.TempDir()
	old := filepath.Join(dir, "draws.csv")
	if err := os.WriteFile(old, []byte("earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := &diag.Draws{Names: []string{"other"}, Chains: [][]float64{{1, 2, 3}}}
	_, err := Write(dir, res, m, Info{Model: "normal", Layout: m.Layout, Reference: ref, ReferenceName: "ref.json"})
	if err == nil || !strings.Contains(err.Error(), "no variable in common") {
		t.Fatalf("error %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if b, _ := os.ReadFile(old); len(entries) != 1 || string(b) != "earlier run\n" {
		t.Errorf("directory after a failed Write: %d entries, draws.csv %q", len(entries), b)
	}
}

// Result.WriteStanCSV and Result.Constrained: one call each, for any fit.Columns.
func TestResultStanCSVAndConstrained(t *testing.T) {
	m := testModel(t)
	res := testFit(t, m)
	names, rows, err := res.Constrained(m)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, m.Columns()) || len(rows) != 300*3 {
		t.Fatalf("%v, %d values", names, len(rows))
	}
	for i := range 300 {
		if s := rows[i*3+1]; rows[i*3+2] != 2*s || !(s > 0) {
			t.Fatalf("draw %d: sigma %v, spread %v", i, s, rows[i*3+2])
		}
	}
	var sb strings.Builder
	if err := res.WriteStanCSV(&sb, m, []string{"model = normal"}); err != nil {
		t.Fatal(err)
	}
	c, err := model.ReadStanCSV("x.csv", strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Draws) != 300*5 || c.Config[0] != "model = normal" {
		t.Errorf("%d values, header %q", len(c.Draws), c.Config[0])
	}
}

// Write replaces a symlink in dir instead of writing through it: the link's target is untouched
// (issue 13: `ln -s victim out/draws.csv; vigo fit --out out` overwrote the victim).
func TestWriteDoesNotFollowSymlinks(t *testing.T) {
	m := testModel(t)
	res := testFit(t, m)
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"draws.csv", "fit.json", "marginals.png"} {
		if err := os.Symlink(victim, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Write(dir, res, m, Info{Model: "normal", Layout: m.Layout, Draws: 50}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the symlinks' target was overwritten: %.40q", b)
	}
	for _, n := range []string{"draws.csv", "fit.json", "marginals.png"} {
		if st, err := os.Lstat(filepath.Join(dir, n)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: %v %v, want a regular file", n, st.Mode(), err)
		}
	}
}

// A rerun removes the outputs of Files it does not write, so dir never mixes two runs: a fit
// without a trace leaves no elbo.png of an earlier fit.
func TestWriteRemovesAnEarlierRunsFiles(t *testing.T) {
	m := testModel(t)
	res := testFit(t, m)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "elbo.png"), []byte("earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	noTrace := *res
	noTrace.Trace = nil
	rep, err := Write(dir, &noTrace, m, Info{Model: "normal", Layout: m.Layout, Draws: 50})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "elbo.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("elbo.png of the earlier run is still there (%v); wrote %v", err, rep.Files)
	}
	if got := len(entries(t, dir)); got != len(Files())-1 {
		t.Errorf("%d entries, want %d", got, len(Files())-1)
	}
}

// opaque hides a bijector's Spec: a transform package bijector cannot rebuild (as a compiled
// Stan program's column-major or array-of-simplex transforms).
type opaque struct{ bijector.Bijector }

// A layout that cannot be saved still gets every other file, with fit.json left out (and an
// earlier run's fit.json removed, so the directory never mixes two runs), and the report and
// the summary say why.
func TestWriteWithoutFitJSONForAnUndescribedLayout(t *testing.T) {
	y := []float64{1.2, 0.4, 2.2}
	lay, err := model.NewLayout(model.Param{Name: "mu"}, model.Param{Name: "sigma", Constraint: opaque{bijector.Lower(1, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	m := &model.Model{Layout: lay, Density: func(tp *ad.Tape, p []ad.Var) ad.Var {
		return tp.Add(density.Normal(tp, tp.ConstRef(y), p[0], p[1]), density.HalfNormal(tp, p[1], tp.Const(3)))
	}}
	res := testFit(t, m)
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fit.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Write(dir, res, m, Info{Vigo: "test", Model: "opaque", Data: "inline", Layout: m.Layout, Draws: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Unsaved, "sigma") {
		t.Errorf("Unsaved = %q, want the parameter named", rep.Unsaved)
	}
	if _, err := os.Stat(filepath.Join(dir, "fit.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("fit.json: %v, want it absent (the earlier run's removed)", err)
	}
	for _, f := range []string{"draws.csv", "summary.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	txt, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(txt), "fit.json not written") {
		t.Error("summary.txt does not say that fit.json was not written")
	}
}

// TestPlotOfDivergedDrawsIsAnError: gonum/plot's histogram panics on these values (from a
// realnvp fit that diverged: one draw near −9e130 beside values of order 1); PlotMarginals
// returns an error instead, and the plot's absence is a note, not a lost run.
func TestPlotOfDivergedDrawsIsAnError(t *testing.T) {
	x := []float64{-2.990301771551282}
	for range 500 {
		x = append(x, -9.077125344342063e+130, 8.282483031316151e+51)
	}
	err := PlotMarginals(filepath.Join(t.TempDir(), "m.png"), "t", []Marginal{{Name: "a", Draws: x}}, 0)
	if err == nil || !strings.Contains(err.Error(), "the plotting library failed") {
		t.Fatalf("error %v, want the plotting library's failure", err)
	}
}
