package cli

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/model"
)

// TestSampleWritesStanCSVAndSummary samples the embedded eight-schools model, checks the Stan
// CSV files' layout and that vigo summary on them reproduces vigo sample's table.
func TestSampleWritesStanCSVAndSummary(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "sample", "--warmup", "300", "--draws", "200", "--seed", "7", "--out", dir, "--quiet")
	// 200 draws per chain may leave tau's R-hat just above 1.01: exit code 3, not an error.
	if err != nil && !errors.Is(err, errNotConverged) {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"variable", "ess_bulk", "rhat", "theta[1]", "tau", "4 chains × 200 draws, seed 7", "E-BFMI", "gradient evaluations"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var paths []string
	for c := 1; c <= 4; c++ {
		p := filepath.Join(dir, "eight_schools-"+string(rune('0'+c))+".csv")
		s, err := model.LoadStanCSV(p)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		want := []string{"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__", "theta_trans[1]"}
		for j, n := range want {
			if s.Names[j] != n {
				t.Fatalf("%s: column %d is %q, want %q", p, j+1, s.Names[j], n)
			}
		}
		if s.NumDraws() != 200 || len(s.Warmup) != 0 {
			t.Errorf("%s: %d draws, %d warmup values", p, s.NumDraws(), len(s.Warmup))
		}
		if len(s.Adaptation) != 4 || !strings.HasPrefix(s.Adaptation[1], "Step size = ") {
			t.Errorf("%s: adaptation lines %q", p, s.Adaptation)
		}
		if v, _ := s.ConfigValue("id"); v != string(rune('0'+c)) {
			t.Errorf("%s: id = %q", p, v)
		}
	}
	raw, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "\nlp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,theta_trans.1,") || !strings.Contains(string(raw), ",tau,theta.1,") {
		t.Error("header is not CmdStan's (dotted names after the sampler columns)")
	}
	sum, err := run(t, append([]string{"summary"}, paths...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, sum)
	}
	table := func(s string) string { return s[:strings.Index(s, "\n\n")] }
	if table(sum) != table(out) {
		t.Errorf("vigo summary differs from vigo sample:\n%s\n---\n%s", table(sum), table(out))
	}
	if !strings.Contains(sum, "800 transitions") {
		t.Errorf("summary lacks the sampler diagnostics:\n%s", sum)
	}
	csvOut, err := run(t, append([]string{"summary", "--format", "csv"}, paths...)...)
	if err != nil || !strings.HasPrefix(csvOut, "variable,mean,median,sd,mad,q5,q95,ess_bulk,ess_tail,rhat\n") {
		t.Errorf("summary --format csv: %v\n%s", err, csvOut)
	}
}

// TestFitAndSampleWriteSameColumns: vigo fit's draws.csv and vigo sample's chain files have
// the same model columns (parameters, then derived quantities) for eight_schools and garch.
func TestFitAndSampleWriteSameColumns(t *testing.T) {
	for _, name := range []string{"eight_schools", "garch"} {
		dir := t.TempDir()
		var extra []string
		if name != "eight_schools" {
			extra = []string{"--posteriordb", posteriordbDir(t)}
		}
		args := append([]string{"fit", name, "--iter", "50", "--draws", "20", "--out", filepath.Join(dir, "fit")}, extra...)
		if out, err := run(t, args...); err != nil && !errors.Is(err, errNotConverged) {
			t.Fatalf("%v\n%s", err, out)
		}
		args = append([]string{"sample", name, "--chains", "1", "--warmup", "20", "--draws", "10", "--quiet", "--out", filepath.Join(dir, "s")}, extra...)
		if out, err := run(t, args...); err != nil && !errors.Is(err, errNotConverged) {
			t.Fatalf("%v\n%s", err, out)
		}
		f, err := model.LoadStanCSV(filepath.Join(dir, "fit", "draws.csv"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := model.LoadStanCSV(filepath.Join(dir, "s", name+"-1.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if fc, sc := f.Names[2:], s.Names[7:]; !slices.Equal(fc, sc) {
			t.Errorf("%s: fit columns %v, sample columns %v", name, fc, sc)
		}
		if name == "eight_schools" && !slices.Contains(f.Names, "theta[8]") {
			t.Errorf("eight_schools columns lack the derived theta: %v", f.Names)
		}
	}
}

// TestSummaryCmdStanFile reads a CmdStan file with saved warmup, adaptation comments and a
// timing trailer; the warmup rows and sampler columns are not summarised, and the divergence
// is reported.
func TestSummaryCmdStanFile(t *testing.T) {
	out, err := run(t, "summary", filepath.Join("..", "model", "testdata", "cmdstan_bernoulli.csv"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"theta", "z[1]", "1 chain(s) × 4 draws", "1 divergent", "ended with a divergence"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"lp__", "accept_stat__", "energy__"} {
		if strings.Contains(out, bad+" ") {
			t.Errorf("sampler column %s summarised:\n%s", bad, out)
		}
	}
	// theta's post-warmup mean is (0.228612+0.25+0.35+0.3)/4 = 0.28215 (3 significant digits
	// in the table); the warmup rows (0.1, 0.2, 0.3) would pull it to 0.25.
	if !strings.Contains(out, "0.282") {
		t.Errorf("theta mean not 0.282 (warmup rows included?):\n%s", out)
	}
}

func TestSummaryErrors(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.csv")
	b := filepath.Join(dir, "b.csv")
	os.WriteFile(a, []byte("lp__,x\n1,2\n3,4\n"), 0o644)
	os.WriteFile(b, []byte("lp__,y\n1,2\n3,4\n"), 0o644)
	if _, err := run(t, "summary", a, b); err == nil || !strings.Contains(err.Error(), "different variables") {
		t.Errorf("mismatched files: %v", err)
	}
	if _, err := run(t, "summary", filepath.Join(dir, "missing.csv")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := run(t, "sample", "no_such_model", "--out", dir, "--quiet"); err == nil || !strings.Contains(err.Error(), "no_such_model") {
		t.Errorf("unknown model: %v", err)
	}
}

// TestSampleRejectsBadFlags: a zero or out-of-range sampler flag is an error naming the flag
// (mcmc.Config would read a zero as its default), before any model is loaded or sampled.
func TestSampleRejectsBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range [][]string{
		{"--adapt-delta", "0"}, {"--adapt-delta", "1"}, {"--adapt-delta", "NaN"}, {"--adapt-delta", "-0.5"},
		{"--max-depth", "0"}, {"--max-depth", "31"}, {"--thin", "0"}, {"--thin", "-1"},
		{"--chains", "0"}, {"--draws", "0"}, {"--warmup", "-1"},
	} {
		args := append([]string{"sample", "--quiet", "--out", dir}, c...)
		_, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), c[0]+" must be") {
			t.Errorf("%v: err = %v, want one naming %s", c, err, c[0])
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a rejected run wrote %d files", len(entries))
	}
}

// --init is CmdStan's: a constrained value per parameter, checked against its support, used by
// every chain (a bad value is an error naming the parameter; a good one changes where the
// chains start).
func TestSampleInit(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	good := filepath.Join(dir, "good.json")
	theta := `"theta_trans": [3, 3, 3, 3, 3, 3, 3, 3]`
	if err := os.WriteFile(bad, []byte(`{"mu": 1, "tau": -1, `+theta+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, []byte(`{"mu": 20, "tau": 2, `+theta+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "sample", "--init", bad, "--out", dir, "--quiet"); err == nil || !strings.Contains(err.Error(), "--init") || !strings.Contains(err.Error(), "tau") {
		t.Errorf("tau = −1: %v", err)
	}
	// The first draw's mu, after one leapfrog step (no warmup, tree depth 1) from the start.
	firstMu := func(args ...string) float64 {
		t.Helper()
		out := t.TempDir()
		if o, err := run(t, append([]string{"sample", "--chains", "1", "--warmup", "0", "--draws", "4", "--max-depth", "1", "--out", out, "--quiet"}, args...)...); err != nil && !errors.Is(err, errNotConverged) {
			t.Fatalf("%v\n%s", err, o)
		}
		s, err := model.LoadStanCSV(filepath.Join(out, "eight_schools-1.csv"))
		if err != nil {
			t.Fatal(err)
		}
		j := slices.Index(s.Names, "mu")
		if j < 0 {
			t.Fatal("no mu column")
		}
		return s.Draws[j]
	}
	// One leapfrog step from mu = 20 cannot come back to the uniform(−2, 2) box of the default.
	if a, b := firstMu(), firstMu("--init", good); !(b > 10) || a > 10 {
		t.Errorf("first draw's mu: %g without --init, %g from mu = 20", a, b)
	}
}
