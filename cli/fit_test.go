package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/model"
)

// quick is a fit that stops at the iteration cap: fast, and exit code 3.
func quick(dir string, extra ...string) []string {
	return append([]string{"fit", "-q", "--iter", "300", "--out", dir}, extra...)
}

func readCSV(t *testing.T, path string) *model.StanCSV {
	t.Helper()
	c, err := model.LoadStanCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dataLines returns the lines of a Stan CSV file that are not comments (header first).
func dataLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

var eightSchoolsParams = []string{"lp__", "lp_approx__",
	"theta_trans[1]", "theta_trans[2]", "theta_trans[3]", "theta_trans[4]", "theta_trans[5]", "theta_trans[6]", "theta_trans[7]", "theta_trans[8]",
	"mu", "tau"}

func TestFitWithoutArgumentsWritesEverything(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "fit", "-q", "--out", dir)
	if err != nil {
		t.Fatalf("vigo fit on eight schools: %v\n%s", err, out)
	}
	for _, want := range []string{"eight_schools", "theta[1]", "ess_bulk", "verdict: 16 of 16 starts reached one mode; k̂ = ", "starts: 16 mode searches, 1 distinct mode(s)", "stopped: converged", "ELBO = "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"draws.csv", "summary.txt", "summary.csv", "summary.json", "fit.json", "elbo.png", "marginals.png"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := readCSV(t, filepath.Join(dir, "draws.csv"))
	want := eightSchoolsParams
	for j := 1; j <= 8; j++ {
		want = append(want, "theta["+string(rune('0'+j))+"]")
	}
	if !slices.Equal(c.Names, want) {
		t.Fatalf("columns %v, want %v", c.Names, want)
	}
	// vigo summary reads vigo's own draws back whole (no CmdStan-style mean row to drop).
	if sum, err := run(t, "summary", filepath.Join(dir, "draws.csv")); err != nil || !strings.Contains(sum, "1 chain(s) × 1000 draws") || strings.Contains(sum, "left out") {
		t.Errorf("vigo summary on draws.csv: %v\n%s", err, sum)
	}
	if c.NumDraws() != 1000 {
		t.Errorf("%d rows, want 1000", c.NumDraws())
	}
	header := strings.Join(c.Config, "\n")
	for _, w := range []string{"model = eight_schools", "family = meanfield", "seed = 1", "status = converged", "khat = ", "data = embedded", "lp__ = log p(z)"} {
		if !strings.Contains(header, w) {
			t.Errorf("comment header lacks %q:\n%s", w, header)
		}
	}
	if first := dataLines(t, filepath.Join(dir, "draws.csv"))[0]; !strings.HasPrefix(first, "lp__,lp_approx__,theta_trans.1,") {
		t.Errorf("header row %q", first)
	}
	// lp__ − lp_approx__ are the log weights whose mean fit.json reports as the ELBO.
	s, err := fit.Load(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	lp, lq := c.Column("lp__"), c.Column("lp_approx__")
	sum := 0.0
	for i := range lp {
		sum += lp[i] - lq[i]
	}
	// Same draws, same order, values written exactly: only the summation could differ.
	if e := sum / float64(len(lp)); math.Abs(e-s.Diagnostics.ELBO) > 1e-12*math.Abs(e) {
		t.Errorf("mean log weight %v, fit.json ELBO %v", e, s.Diagnostics.ELBO)
	}
	// tau > 0 and theta = mu + tau·theta_trans on every row.
	mu, tau, tt, th := c.Column("mu"), c.Column("tau"), c.Column("theta_trans[3]"), c.Column("theta[3]")
	for i := range mu {
		if !(tau[i] > 0) || math.Abs(th[i]-(mu[i]+tau[i]*tt[i])) > 1e-12*(1+math.Abs(th[i])) {
			t.Fatalf("row %d: mu %v tau %v theta_trans[3] %v theta[3] %v", i, mu[i], tau[i], tt[i], th[i])
		}
	}
	var sj diag.Summary
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(b, &sj); err != nil {
		t.Fatal(err)
	}
	if len(sj.Rows) != 18 || sj.Rows[0].Variable != "theta_trans[1]" || !strings.Contains(strings.Join(sj.Notes, "\n"), "ELBO") {
		t.Errorf("summary.json: %d rows, first %q, notes %q", len(sj.Rows), sj.Rows[0].Variable, sj.Notes)
	}
	csvHead := strings.SplitN(string(mustRead(t, filepath.Join(dir, "summary.csv"))), "\n", 2)[0]
	if csvHead != strings.Join(diag.Columns, ",") {
		t.Errorf("summary.csv header %q", csvHead)
	}
	if s.Model != "eight_schools" || s.Family.Kind != "meanfield" || s.Data != "embedded" || s.Diagnostics.Status != "converged" {
		t.Errorf("fit.json: %+v", s)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFitSameSeedGivesIdenticalDrawsForAnyWorkerCount(t *testing.T) {
	base := t.TempDir()
	var files [][]byte
	for i, args := range [][]string{{"--workers", "1"}, {"--workers", "2"}, {"--workers", "2", "--seed", "2"}} {
		dir := filepath.Join(base, string(rune('a'+i)))
		_, err := run(t, quick(dir, append(args, "--family", "fullrank")...)...)
		if !errors.Is(err, errNotConverged) {
			t.Fatalf("%v: error %v, want errNotConverged at --iter 300", args, err)
		}
		files = append(files, mustRead(t, filepath.Join(dir, "draws.csv")))
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("draws.csv differs between --workers 1 and 2")
	}
	if bytes.Equal(files[1], files[2]) {
		t.Error("draws.csv is the same for seeds 1 and 2")
	}
}

func TestFitNotConvergedWritesFilesAndSaysWhy(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, quick(dir, "--family", "lowrank", "--rank", "2", "--draws", "200")...)
	if !errors.Is(err, errNotConverged) || !strings.Contains(err.Error(), "iteration cap 300") {
		t.Fatalf("error %v, want errNotConverged naming the cap", err)
	}
	if !strings.Contains(out, "stopped: iteration cap reached") {
		t.Errorf("output lacks the stop reason:\n%s", out)
	}
	c := readCSV(t, filepath.Join(dir, "draws.csv"))
	if c.NumDraws() != 200 {
		t.Errorf("%d rows, want --draws 200", c.NumDraws())
	}
	if !strings.Contains(strings.Join(c.Config, "\n"), "k̂ on 1000") {
		t.Errorf("k̂ should use 1000 draws even when fewer are written:\n%s", strings.Join(c.Config, "\n"))
	}
	s, err := fit.Load(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Family.Kind != "lowrank" || s.Family.Rank != 2 {
		t.Errorf("family %+v", s.Family)
	}
}

func TestFitCancelledReturnsContextCanceled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := mustRoot(t)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"fit", "-q", "--out", dir})
	err := root.ExecuteContext(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, errNotConverged) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	// The partial result is written.
	if _, err := os.Stat(filepath.Join(dir, "fit.json")); err != nil {
		t.Error(err)
	}
}

func TestFitErrorsNameTheFlagOrFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no_such_data.json")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--family", "bogus"}, []string{"--family", `"bogus"`}},
		{[]string{"--data", missing}, []string{"--data", missing}},
		{[]string{"--rank", "3"}, []string{"--rank", "lowrank"}},
		{[]string{"--family", "lowrank", "--rank", "11"}, []string{"--rank", "11"}},
		{[]string{"--draws", "0"}, []string{"--draws"}},
		{[]string{"--reference", missing}, []string{"--reference", missing}},
		{[]string{"no_such_model"}, []string{"no_such_model"}},
	} {
		_, err := run(t, quick(filepath.Join(dir, "out"), c.args...)...)
		if err == nil || errors.Is(err, errNotConverged) {
			t.Errorf("%v: error %v, want a failure", c.args, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", c.args, err, w)
			}
		}
	}
}

// TestFitReferenceComparison needs posteriordb's reference draws from ../shared.
func TestFitReferenceComparison(t *testing.T) {
	root := posteriordbDir(t)
	dir := t.TempDir()
	ref := filepath.Join(root, "draws", "eight_schools-eight_schools_noncentered.json.zip")
	out, err := run(t, quick(dir, "--reference", ref)...)
	if !errors.Is(err, errNotConverged) {
		t.Fatalf("error %v", err)
	}
	for _, w := range []string{"distance to the reference draws", "W1/sd", "sd ratio", "mean / max"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(string(mustRead(t, filepath.Join(dir, "summary.txt"))), "vs reference") {
		t.Error("summary.txt lacks the reference note")
	}
}

func posteriordbDir(t *testing.T) string {
	t.Helper()
	return datadir.PosteriorDBOrSkip(t)
}

// TestHelperMain runs Main with the arguments in VIGO_MAIN_ARGS and exits with its code; the
// exit-code test starts the test binary as a subprocess for it.
func TestHelperMain(t *testing.T) {
	args := os.Getenv("VIGO_MAIN_ARGS")
	if args == "" {
		t.Skip("subprocess helper for TestExitCodes")
	}
	os.Exit(Main(strings.Split(args, "\x1f")))
}

func TestExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"fit", "-q", "--out", filepath.Join(dir, "a")}, ExitOK, ""},
		{quick(filepath.Join(dir, "b")), ExitNotConverged, ""},
		{[]string{"fit", "--family", "bogus"}, ExitError, "vigo: --family"},
		{[]string{"draw", filepath.Join(dir, "missing.json")}, ExitError, "missing.json"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMain$")
		cmd.Env = append(os.Environ(), "VIGO_MAIN_ARGS="+strings.Join(c.args, "\x1f"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("vigo %v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr.String(), c.code, c.stderr)
		}
	}
}

func TestFitProgressIsPlainLinesWhenNotATerminal(t *testing.T) {
	dir := t.TempDir()
	root := mustRoot(t)
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"fit", "--iter", "300", "--out", dir})
	if err := root.Execute(); !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	// One line per tracking estimate (every 100 iterations: 0, 100, 200), no carriage returns.
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "iter 0/300  ELBO ") || strings.Contains(stderr.String(), "\r") {
		t.Errorf("progress on stderr:\n%q", stderr.String())
	}
	if strings.Contains(stdout.String(), "iter 100/300") {
		t.Error("progress went to stdout")
	}
}

// TestFitPSISResample: with --psis-resample the rows of draws.csv are diagnostic draws picked by
// their PSIS weights — each row equals one of q's draws, some repeat, the choice is reproducible
// from the seed — and the header and report say what was done (or why it was not).
func TestFitPSISResample(t *testing.T) {
	base := t.TempDir()
	var files [][]byte
	var outs []string
	for _, d := range []string{"a", "b"} {
		dir := filepath.Join(base, d)
		out, err := run(t, "fit", "--out", dir, "--quiet", "--family", "fullrank", "--draws", "400", "--psis-resample")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		files = append(files, mustRead(t, filepath.Join(dir, "draws.csv")))
		outs = append(outs, out)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("draws.csv differs between two runs with the same seed")
	}
	if !strings.Contains(string(files[0]), "# psis_resample = ") || !strings.Contains(outs[0], "PSIS resampling: ") {
		t.Fatalf("no resampling note:\n%s", outs[0])
	}
	if strings.Contains(outs[0], "PSIS resampling: 400 draws picked") {
		// Rows are picked with replacement from 1600 draws: with PSIS ESS < 1600 some repeat.
		doc := readCSV(t, filepath.Join(base, "a", "draws.csv"))
		seen, dup := map[string]bool{}, 0
		k := len(doc.Names)
		for i := range len(doc.Draws) / k {
			key := fmt.Sprint(doc.Draws[i*k : (i+1)*k])
			if seen[key] {
				dup++
			}
			seen[key] = true
		}
		if len(doc.Draws)/k != 400 || dup == 0 {
			t.Errorf("%d rows, %d repeated: want 400 rows with repeats", len(doc.Draws)/k, dup)
		}
	} else if !strings.Contains(outs[0], "PSIS resampling: not done: k̂") {
		t.Errorf("unexpected note:\n%s", outs[0])
	}
}

// --starts: 1 is one search (the verdict says other modes were not looked for); values outside
// 1 to fit.MaxStarts are errors naming the flag and the value.
func TestFitStartsFlag(t *testing.T) {
	out, err := run(t, "fit", "-q", "--starts", "1", "--iter", "300", "--out", t.TempDir())
	if err != nil && !errors.Is(err, errNotConverged) {
		t.Fatalf("--starts 1: %v\n%s", err, out)
	}
	if !strings.Contains(out, "verdict: one start (other modes not looked for); k̂ = ") || strings.Contains(out, "mode searches") {
		t.Errorf("--starts 1 output:\n%s", out)
	}
	for _, v := range []string{"-2", "1025"} {
		if _, err := run(t, "fit", "-q", "--starts", v, "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), "--starts: "+v) {
			t.Errorf("--starts %s: %v", v, err)
		}
	}
}

// --init on the constrained scale: a value outside the support is an error naming the
// parameter (model.Layout.FreeNamed), and a point inside it is start 0 of the mode search.
func TestFitInitSupport(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	good := filepath.Join(dir, "good.json")
	theta := `"theta_trans": [0, 0, 0, 0, 0, 0, 0, 0]`
	if err := os.WriteFile(bad, []byte(`{"mu": 1, "tau": -1, `+theta+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, []byte(`{"mu": 1, "tau": 2, `+theta+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, "fit", "-q", "--init", bad, "--out", filepath.Join(dir, "o1")); err == nil || !strings.Contains(err.Error(), "--init") || !strings.Contains(err.Error(), "tau") {
		t.Errorf("tau = −1: %v", err)
	}
	out, err := run(t, "fit", "-q", "--init", good, "--starts", "2", "--iter", "200", "--out", filepath.Join(dir, "o2"))
	if err != nil && !errors.Is(err, errNotConverged) {
		t.Fatalf("good init: %v\n%s", err, out)
	}
	if !strings.Contains(out, "starts: 2 mode searches") {
		t.Errorf("good init output:\n%s", out)
	}
}
