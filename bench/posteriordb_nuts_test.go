package bench

import (
	"context"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/zoo"
)

func TestNUTSMethodRegistered(t *testing.T) {
	m, err := LookupMethod("nuts")
	if err != nil {
		t.Fatal(err)
	}
	if m.Gaussian || m.Stan != StanNone {
		t.Errorf("nuts is registered as Gaussian=%v Stan=%v, want a non-Gaussian method without a Stan ADVI counterpart", m.Gaussian, m.Stan)
	}
}

// TestSampleNUTSWorkersDoNotChangeDraws runs two short chains one after another and at once:
// each chain has its own seed, so the draws must be identical.
func TestSampleNUTSWorkersDoNotChangeDraws(t *testing.T) {
	m := zoo.EightSchools()
	opt := NUTSOptions{Chains: 2, Warmup: 100, Draws: 50}
	var runs []*NUTSRun
	for _, w := range []int{1, 2} {
		opt.Workers = w
		r, err := SampleNUTS(context.Background(), m, 7, opt)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	a, b := runs[0], runs[1]
	if a.GradEvals != b.GradEvals {
		t.Errorf("gradient evaluations %d (1 worker) and %d (2 workers)", a.GradEvals, b.GradEvals)
	}
	for c := range a.Draws.Chains {
		if !slices.Equal(a.Draws.Chains[c], b.Draws.Chains[c]) {
			t.Errorf("chain %d differs between 1 and 2 workers", c+1)
		}
	}
	if len(a.Draws.Chains) != 2 || a.Draws.Len() != 100 {
		t.Errorf("got %d chains, %d draws in all, want 2 chains of 50", len(a.Draws.Chains), a.Draws.Len())
	}
	if a.MinESSVar == "" || !(a.MinESSBulk > 0) || !(a.MaxRhat > 0.9) {
		t.Errorf("summary not filled in: min ESS %v at %q, max R̂ %v", a.MinESSBulk, a.MinESSVar, a.MaxRhat)
	}
}

// TestNUTSBenchEightSchools runs a shortened benchmark (4 chains × (300 + 500)) on eight
// schools against the posteriordb reference draws and checks issue 5's bars on it.
func TestNUTSBenchEightSchools(t *testing.T) {
	dir := datadir.PosteriorDBOrSkip(t)
	rep, err := RunNUTSBench(context.Background(), NUTSBenchConfig{Posteriors: []string{"eight_schools"}, Dir: dir,
		NUTSOptions: NUTSOptions{Warmup: 300, Draws: 500}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Err != nil {
		t.Fatalf("runs %v", rep.Runs)
	}
	c := rep.Runs[0]
	// 5 MCSE over 10 quantities: a false alarm has probability ≈ 10 × 6e-7.
	if !c.PassMeans() {
		t.Errorf("max |Δmean|/MCSE %.2f at %s, want ≤ 5", c.MaxMeanZ, c.MaxMeanZVar)
	}
	// 2000 draws rather than 4000: W1 of an empirical distribution shrinks like 1/√N, so the
	// 0.02–0.05 of a full run (targets.md) becomes at most ≈ 0.07; 0.1 leaves room.
	if c.W1SD > 0.1 {
		t.Errorf("W1/sd %.4f, want ≤ 0.1", c.W1SD)
	}
	var b strings.Builder
	if err := rep.Markdown(&b, resultmd.Header{Date: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"| eight_schools-eight_schools_noncentered | 1 | 10 |", "ESS/1000 grads", "Stan ESS/s", "| 6.16e+03 |",
		"every mean within 5 MCSE of the reference: 1 of 1 runs"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestCompareStanESS: arK's Stan numbers are 294 ESS/s and 9.7 s, so Stan's ESS lies in
// [293.5·9.65, 294.5·9.75] = [2832.3, 2871.4].
func TestCompareStanESS(t *testing.T) {
	ref := StanTargets["arK-arK"]
	for _, c := range []struct {
		ess  float64
		want string
	}{{2832, "fewer"}, {2833, "same"}, {2871, "same"}, {2872, "more"}} {
		if got := compareStanESS(c.ess, ref); got != c.want {
			t.Errorf("compareStanESS(%v) = %s, want %s", c.ess, got, c.want)
		}
	}
}
