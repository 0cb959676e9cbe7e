package bench

import (
	"bufio"
	"context"
	"errors"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/zoo"
)

// TestMeasureHandComputed checks the three distances on a tiny example worked by hand.
// Reference: r = {0, 1, 2, 3}, sample sd √(5/3). Draws: a = r + 0.5 (every quantile shifts by
// 0.5, so W1 = 0.5, sd ratio 1, |Δmean| = 0.5) and b = 2r (type-7 quantiles of r are
// q(u) = 3u, of b 6u, so W1 = mean_i 3u_i = 1.5 over the symmetric grid u_i = (i − ½)/1000;
// sd ratio 2, |Δmean| = 1.5). Hence W1/sd = ((0.5 + 1.5)/2)/√(5/3) = √(3/5),
// sd ratio = 1.5, max|Δmean|/sd = 1.5/√(5/3) = 1.5·√(3/5).
func TestMeasureHandComputed(t *testing.T) {
	// Draws as two chains of rows (a, b); the reference holds the variables in another order
	// with an extra one, as posteriordb's files do.
	draws := &diag.Draws{Names: []string{"a", "b"}, Chains: [][]float64{
		{0.5, 0, 1.5, 2},
		{2.5, 4, 3.5, 6},
	}}
	ref := &diag.Draws{Names: []string{"extra", "b", "a"}, Chains: [][]float64{
		{9, 0, 0, 9, 1, 1, 9, 2, 2, 9, 3, 3},
	}}
	got, err := Measure(draws, ref)
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(5.0 / 3)
	want := Metrics{W1SD: 1 / sd, SDRatio: 1.5, MaxMeanDiffSD: 1.5 / sd}
	// 1e-12: a few roundings in quantile interpolation and the 1000-term sum.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"W1/sd", got.W1SD, want.W1SD}, {"sd ratio", got.SDRatio, want.SDRatio}, {"max|Δmean|/sd", got.MaxMeanDiffSD, want.MaxMeanDiffSD}} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
	if _, err := Measure(&diag.Draws{Names: []string{"zz"}, Chains: [][]float64{{1, 2}}}, ref); err == nil || !strings.Contains(err.Error(), "zz") {
		t.Errorf("missing reference variable: error %v, want one naming zz", err)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
		{[]float64{1, math.Inf(1), 2}, 2}, // one diverged seed does not decide the median
	} {
		if got := Median(c.x); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v, want NaN", got)
	}
	x := []float64{3, 1, 2}
	Median(x)
	if x[0] != 3 {
		t.Error("Median modified its argument")
	}
}

// syntheticReport has two posteriors: on eight_schools vigo's fullrank (0.08, median of
// 0.05, 0.08, 0.3) beats Stan's best (MF 0.186); on arK the best Gaussian (meanfield 0.2)
// loses to Stan FR 0.142, and fullrank has one aborted seed.
func syntheticReport() *Report {
	mf, _ := LookupMethod("meanfield")
	fr, _ := LookupMethod("fullrank")
	res := func(p, m string, seed uint64, w1 float64) SeedResult {
		return SeedResult{Posterior: p, Method: m, Seed: seed, Wall: time.Second, GradEvals: 1000 * int(seed),
			KHat: 0.5, Metrics: Metrics{W1SD: w1, SDRatio: 1, MaxMeanDiffSD: 0.1}, Converged: true, Status: "ok"}
	}
	es, ark := "eight_schools-eight_schools_noncentered", "arK-arK"
	return &Report{
		Posteriors: []string{ark, es}, Methods: []Method{mf, fr}, Seeds: 3,
		Results: []SeedResult{
			res(ark, "meanfield", 1, 0.2), res(ark, "meanfield", 2, 0.2), res(ark, "meanfield", 3, 0.2),
			{Posterior: ark, Method: "fullrank", Seed: 1, Err: errors.New("boom | bang")},
			res(ark, "fullrank", 2, 0.5), res(ark, "fullrank", 3, 0.3),
			res(es, "meanfield", 1, 0.3), res(es, "meanfield", 2, 0.3), res(es, "meanfield", 3, 0.3),
			res(es, "fullrank", 1, 0.05), res(es, "fullrank", 2, 0.3), res(es, "fullrank", 3, 0.08),
		},
	}
}

func TestVerdicts(t *testing.T) {
	vs := syntheticReport().Verdicts()
	if len(vs) != 2 {
		t.Fatalf("%d verdicts, want 2", len(vs))
	}
	ark, es := vs[0], vs[1]
	if ark.VigoMethod != "meanfield" || ark.VigoW1SD != 0.2 || ark.StanAlgo != StanFullRank || ark.StanW1SD != 0.142 || ark.Beats {
		t.Errorf("arK verdict %+v, want meanfield 0.2 losing to Stan FR 0.142", ark)
	}
	if es.VigoMethod != "fullrank" || es.VigoW1SD != 0.08 || es.StanAlgo != StanMeanField || !es.Beats {
		t.Errorf("eight_schools verdict %+v, want fullrank 0.08 beating Stan MF 0.186", es)
	}
	sums := syntheticReport().Summaries()
	if s := sums[1]; s.Method.Name != "fullrank" || s.Runs != 2 || len(s.Aborts) != 1 || s.W1SD != 0.4 || s.GradEvals != 2500 {
		t.Errorf("arK fullrank summary %+v, want 2 runs, 1 abort, median W1/sd 0.4, grad evals 2500", s)
	}
}

func TestMarkdownHasTheColumnsRowsAndVerdicts(t *testing.T) {
	var b strings.Builder
	h := resultmd.Header{Date: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Command: "vigo bench posteriordb", Commit: "abc123", LoadStart: "1.0 1.0 1.0", LoadEnd: "2.0 2.0 2.0"}
	if err := syntheticReport().Markdown(&b, h); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"2026-01-02 03:04 UTC", "commit: abc123", "`vigo bench posteriordb`", "load average", "CPUs",
		"| posterior | method | conv | wall s | grad evals | k̂ | max\\|Δmean\\|/sd | sd ratio | W1/sd | Stan | Stan k̂ | Stan sd ratio | Stan W1/sd | W1/sd vs Stan |",
		"| arK-arK | meanfield | 3/3 | 1 | 2000 | 0.5 | 0.1 | 1 | 0.2 | MF | 0.93 | 0.512 | 0.538 | better |",
		"| arK-arK | fullrank | 2/3 (1 aborted) | 1 | 2500 | 0.5 | 0.1 | 1 | 0.4 | FR | 0.52 | 1.06 | 0.142 | worse |",
		"no worse than Stan ADVI's best on 1 of 2 posteriors",
		"| arK-arK | meanfield | 0.2 | FR | 0.142 | 0.0242 | **Stan better** (meanfield 0.2 > Stan FR 0.142) |",
		"| eight_schools-eight_schools_noncentered | fullrank | 0.08 | MF | 0.186 | 0.0371 | **vigo better** (fullrank 0.08 ≤ Stan MF 0.186) |",
		"- arK-arK, fullrank, seed 1: boom \\| bang",
		"| arK-arK | fullrank | 1 | 0 | — | — | — | — | — | aborted |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestMethodRegistry(t *testing.T) {
	for _, n := range DefaultMethods {
		if _, err := LookupMethod(n); err != nil {
			t.Error(err)
		}
	}
	if _, err := LookupMethod("no-such-method"); err == nil || !strings.Contains(err.Error(), "no-such-method") || !strings.Contains(err.Error(), "fullrank") {
		t.Errorf("unknown method error %v, want one naming it and the known methods", err)
	}
	seen := map[string]bool{}
	for _, n := range MethodNames() {
		if seen[n] {
			t.Errorf("method %s twice in the table", n)
		}
		seen[n] = true
	}
}

// TestStanTargetsMatchTargetsMD checks the transcribed Stan numbers against the table in
// ../shared/docs/targets.md, column by column.
func TestStanTargetsMatchTargetsMD(t *testing.T) {
	f, err := os.Open(filepath.Join(datadir.SharedOrSkip(t), "docs", "targets.md"))
	if err != nil {
		t.Skip("targets.md not found:", err)
	}
	defer f.Close()
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(strings.Trim(sc.Text(), "| "), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		ref, ok := StanTargets[cells[0]]
		if !ok {
			continue
		}
		seen++
		if len(cells) != 11 {
			t.Fatalf("targets.md row %q has %d cells, want 11", cells[0], len(cells))
		}
		want := []float64{float64(ref.Dims), ref.MFW1SD, ref.MFSDRatio, ref.MFKHat, ref.FRW1SD, ref.FRSDRatio, ref.FRKHat, ref.NUTSW1SD, ref.NUTSWall, ref.NUTSESSPerS}
		for j, w := range want {
			v, err := strconv.ParseFloat(cells[j+1], 64)
			if err != nil || v != w {
				t.Errorf("%s column %d: targets.md %q, StanTargets %v", cells[0], j+1, cells[j+1], w)
			}
		}
	}
	if seen != len(StanTargets) {
		t.Errorf("targets.md has %d of the %d posteriors in StanTargets", seen, len(StanTargets))
	}
	for _, n := range zoo.Names() {
		info, _ := zoo.Get(n)
		if _, ok := StanTargets[info.Posterior]; !ok {
			t.Errorf("zoo posterior %s has no Stan numbers", info.Posterior)
		}
	}
}

// TestRunEightSchools runs one fast method through Run against the reference draws: a
// method that returns the reference draws themselves must score W1/sd = 0, sd ratio 1.
func TestRunEightSchools(t *testing.T) {
	dir := datadir.PosteriorDBOrSkip(t)
	ref := Method{Name: "test-reference", About: "the reference draws", Run: func(_ context.Context, m *zoo.Model, _ uint64, _ RunOptions) (*Outcome, error) {
		d, err := referenceDraws(m, dir)
		return &Outcome{Draws: d, KHat: math.NaN(), Converged: true, Status: "copied"}, err
	}}
	var progress int
	rep, err := Run(context.Background(), Config{Posteriors: []string{"eight_schools"}, Methods: []string{"test-reference"}, Extra: []Method{ref}, Seeds: 2, Dir: dir,
		Progress: func(SeedResult) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || progress != 2 {
		t.Fatalf("%d results, %d progress calls, want 2 each", len(rep.Results), progress)
	}
	r := rep.Results[1]
	// Identical samples: exact zero distances and ratio one.
	if r.Err != nil || r.Seed != 2 || r.W1SD != 0 || r.SDRatio != 1 || r.MaxMeanDiffSD != 0 {
		t.Errorf("reference vs itself: %+v, want W1/sd 0, sd ratio 1, seed 2", r)
	}
	if _, err := Run(context.Background(), Config{Posteriors: []string{"no_such"}, Dir: dir}); err == nil || !strings.Contains(err.Error(), "no_such") {
		t.Errorf("unknown posterior error %v, want one naming it", err)
	}
	if _, err := Run(context.Background(), Config{Posteriors: []string{"eight_schools"}, Methods: []string{"test-reference"}, Extra: []Method{ref}}); err == nil || !strings.Contains(err.Error(), "Config.Dir") {
		t.Errorf("empty Dir: error %v, want one naming Config.Dir", err)
	}
}

// TestFlowVerdicts: the best flow is the lowest W1/sd among flows with k̂ < 0.7 (realnvp,
// although maf has the lower W1/sd at k̂ 0.9), and the table says plainly which target a
// posterior misses.
func TestFlowVerdicts(t *testing.T) {
	r := syntheticReport()
	if r.FlowVerdicts() != nil {
		t.Error("flow verdicts without flow methods")
	}
	for _, n := range []string{"maf", "realnvp", "bernstein", "maf-cold", "realnvp-cold", "bernstein-cold"} {
		if m, err := LookupMethod(n); err != nil || !m.Flow {
			t.Errorf("%s: %v, flow %v", n, err, m.Flow)
		}
	}
	maf, _ := LookupMethod("maf")
	nvp, _ := LookupMethod("realnvp")
	r.Methods = append(r.Methods, maf, nvp)
	es, ark := "eight_schools-eight_schools_noncentered", "arK-arK"
	for s := uint64(1); s <= 3; s++ {
		r.Results = append(r.Results,
			SeedResult{Posterior: es, Method: "maf", Seed: s, KHat: 0.9, Metrics: Metrics{W1SD: 0.03}},
			SeedResult{Posterior: es, Method: "realnvp", Seed: s, KHat: 0.5, Metrics: Metrics{W1SD: 0.06}},
			SeedResult{Posterior: ark, Method: "maf", Seed: s, KHat: 0.5, Metrics: Metrics{W1SD: 0.2}})
	}
	fv := r.FlowVerdicts()
	if len(fv) != 2 || fv[1].Method != "realnvp" || !fv[1].Meets || fv[0].Method != "maf" || fv[0].Meets || fv[0].GaussW1SD != 0.2 {
		t.Fatalf("flow verdicts %+v", fv)
	}
	var b strings.Builder
	if err := r.Markdown(&b, resultmd.Header{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"The best flow meets both on 1 of 2 posteriors.",
		"| arK-arK | maf | 0.5 | 0.2 | 0.2 | **no**: W1/sd 0.2 > 0.1 |",
		"| eight_schools-eight_schools_noncentered | realnvp | 0.5 | 0.06 | 0.08 | **yes** |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
