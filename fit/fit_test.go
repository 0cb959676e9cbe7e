package fit

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/objective"
)

// gauss2 is N(m, C) in 2-D with C = [[4, 1.8·ρ… ]]: a correlated, badly scaled Gaussian target
// whose exact answer every Gaussian family with full covariance can represent.
type gauss2 struct {
	m        [2]float64
	sd       [2]float64
	rho      float64
	nanAfter int // > 0: return NaN when z[0] > nanAfter (for the NaN policy test)
}

func (g gauss2) Dim() int { return 2 }

func (g gauss2) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	// z = m + L u with L the Cholesky factor of C: log p = log N(u | 0, I) − log|L|.
	L00, L10 := g.sd[0], g.rho*g.sd[1]
	L11 := g.sd[1] * math.Sqrt(1-g.rho*g.rho)
	z0, z1 := t.Index(z, 0), t.Index(z, 1)
	u0 := t.MulC(t.AddC(z0, -g.m[0]), 1/L00)
	u1 := t.MulC(t.Sub(t.AddC(z1, -g.m[1]), t.MulC(u0, L10)), 1/L11)
	lp := t.AddC(density.Normal(t, t.Concat(u0, u1), t.Const(0), t.Const(1)), -math.Log(L00*L11))
	if g.nanAfter > 0 && t.Float(z0) > float64(g.nanAfter) {
		return t.Mul(lp, t.Const(math.NaN()))
	}
	return lp
}

func target() gauss2 { return gauss2{m: [2]float64{3, -200}, sd: [2]float64{0.01, 50}, rho: -0.9} }

func TestFullRankRecoversCorrelatedBadlyScaledGaussian(t *testing.T) {
	g := target()
	res, err := Fit(context.Background(), g, family.NewFullRank(2), objective.Options{}, Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Converged {
		t.Fatalf("status %v: %s", res.Status, res.Reason)
	}
	mean, cov := make([]float64, 2), make([]float64, 4)
	res.Family.Moments(res.Params, mean, cov)
	// q can equal p exactly, and the Laplace start already is p for a Gaussian target: the
	// fit must stay there up to the SGD jitter of the final small step size. Tolerances of a
	// few percent of an sd are far tighter than any real failure (Stan's ADVI ends tens of
	// sds away on such targets) and far looser than the jitter (≈ lr·0.04 ≈ 1e-3 sd).
	for i := range 2 {
		if d := math.Abs(mean[i]-g.m[i]) / g.sd[i]; d > 0.05 {
			t.Errorf("mean[%d] = %v, want %v (off by %.3g sd)", i, mean[i], g.m[i], d)
		}
		if r := math.Sqrt(cov[i*2+i]) / g.sd[i]; math.Abs(r-1) > 0.05 {
			t.Errorf("sd[%d] ratio %v", i, r)
		}
	}
	if rho := cov[1] / math.Sqrt(cov[0]*cov[3]); math.Abs(rho-g.rho) > 0.02 {
		t.Errorf("correlation %v, want %v", rho, g.rho)
	}
	// Exact q: every log weight is log Z = 0, so k̂ is tiny or undefined-small and ELBO ≈ 0.
	if math.Abs(res.ELBO) > 0.01 || res.KHat > 0.5 {
		t.Errorf("ELBO %v ± %v, k̂ %v (%s)", res.ELBO, res.ELBOSE, res.KHat, res.Verdict)
	}
	if !strings.Contains(res.Reason, "plateaued") || !strings.Contains(res.InitNote, "Laplace") {
		t.Errorf("reason %q, init %q", res.Reason, res.InitNote)
	}
}

func TestMeanFieldFromZeroStartMovesToTheMode(t *testing.T) {
	g := gauss2{m: [2]float64{1, -2}, sd: [2]float64{0.5, 2}, rho: 0}
	res, err := Fit(context.Background(), g, family.NewMeanField(2), objective.Options{}, Config{Seed: 3, Init: InitZero, LR: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	mean := make([]float64, 2)
	res.Family.Moments(res.Params, mean, nil)
	for i := range 2 {
		if d := math.Abs(mean[i]-g.m[i]) / g.sd[i]; d > 0.1 {
			t.Errorf("mean[%d] = %v, want %v (%s, %s)", i, mean[i], g.m[i], res.Status, res.Reason)
		}
	}
}

func TestSameSeedSameResultForAnyWorkerCount(t *testing.T) {
	g := target()
	// S = 10 draws: blocks of 3, 3, 3, 1, shared unevenly by 3 workers; 8 workers are capped at 4.
	cfg := Config{Seed: 7, MaxIter: 400, Workers: 1, Samples: 10}
	a, err := Fit(context.Background(), g, family.NewFullRank(2), objective.Options{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2, 3, 8} {
		cfg.Workers = w
		b, err := Fit(context.Background(), g, family.NewFullRank(2), objective.Options{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sameFit(t, a, b, w)
	}
}

// sameFit fails unless a and b (1 and w workers) have the same parameters and draws, bit for bit.
func sameFit(t *testing.T, a, b *Result, w int) {
	t.Helper()
	for i := range a.Params {
		if a.Params[i] != b.Params[i] {
			t.Fatalf("params differ between 1 and %d workers: %v vs %v", w, a.Params, b.Params)
		}
	}
	for i := range a.Draws {
		if a.Draws[i] != b.Draws[i] {
			t.Fatalf("draws differ between 1 and %d workers", w)
		}
	}
}

func TestResumeEqualsUninterruptedRun(t *testing.T) {
	g := gauss2{m: [2]float64{1, -2}, sd: [2]float64{0.5, 2}, rho: 0.5}
	fam := family.NewMeanField(2)
	obj := objective.Options{STL: true}
	full, err := Fit(context.Background(), g, fam, obj, Config{Seed: 11, Init: InitZero, MaxIter: 900})
	if err != nil {
		t.Fatal(err)
	}
	half, err := Fit(context.Background(), g, fam, obj, Config{Seed: 11, Init: InitZero, MaxIter: 450})
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as a saved state would travel.
	b, err := half.State.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := st.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	rest, err := Fit(context.Background(), g, fam, obj, Config{Seed: 11, Init: InitZero, MaxIter: 900}, WithResume(&st))
	if err != nil {
		t.Fatal(err)
	}
	for i := range full.Params {
		if full.Params[i] != rest.Params[i] {
			t.Fatalf("resumed params %v, uninterrupted %v", rest.Params, full.Params)
		}
	}
	if full.Status != rest.Status || full.Iterations != rest.Iterations {
		t.Fatalf("status %v/%d vs %v/%d", full.Status, full.Iterations, rest.Status, rest.Iterations)
	}
}

func TestCancelledFitReturnsPartialResult(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	res, err := Fit(ctx, target(), family.NewMeanField(2), objective.Options{}, Config{Seed: 1, Tol: 1e-12},
		WithProgress(func(p Progress) {
			if n++; n == 3 {
				cancel()
			}
		}))
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("error %v, result %v: want the partial result with a wrapped context.Canceled", err, res)
	}
	// The observer runs before step 200, which completes; the loop stops at the next check.
	if res.Status != Cancelled || res.Iterations != 201 || len(res.Draws) == 0 {
		t.Fatalf("status %v after %d steps, %d draws", res.Status, res.Iterations, len(res.Draws))
	}
}

func TestNaNPolicy(t *testing.T) {
	g := gauss2{m: [2]float64{0, 0}, sd: [2]float64{1, 1}, nanAfter: 1}
	_, err := Fit(context.Background(), g, family.NewMeanField(2), objective.Options{}, Config{Seed: 1, Init: InitZero, InitScale: 1, NaN: NaNFail})
	if err == nil || !strings.Contains(err.Error(), "step") {
		t.Fatalf("NaNFail error = %v, want one naming the step", err)
	}
	res, err := Fit(context.Background(), g, family.NewMeanField(2), objective.Options{}, Config{Seed: 1, Init: InitZero, InitScale: 1, MaxIter: 300})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped == 0 {
		t.Fatal("NaNSkip skipped no steps although draws beyond z0 > 1 are NaN")
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	_, err := Fit(context.Background(), target(), family.NewMeanField(2), objective.Options{}, Config{Samples: -1})
	if err == nil || !strings.Contains(err.Error(), "Samples") {
		t.Fatalf("error = %v", err)
	}
	_, err = Fit(context.Background(), target(), family.NewMeanField(3), objective.Options{}, Config{})
	if err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Fatalf("error = %v", err)
	}
}

// The blocks of a step cover its draws once, in order: at most maxBlocks non-empty blocks,
// none longer than the first (a function of the count only, never of the workers).
func TestDrawBlocks(t *testing.T) {
	for count := 1; count <= 70; count++ {
		nb := numBlocks(count)
		if nb < 1 || nb > maxBlocks || nb > count {
			t.Fatalf("count %d: %d blocks", count, nb)
		}
		next := 0
		first := 0
		for b := range nb {
			lo, hi := block(b, count)
			if lo != next || hi <= lo {
				t.Fatalf("count %d: block %d is [%d, %d), want to start at %d and be non-empty", count, b, lo, hi, next)
			}
			if b == 0 {
				first = hi - lo
			} else if hi-lo > first {
				t.Fatalf("count %d: block %d has %d draws, more than the first's %d", count, b, hi-lo, first)
			}
			next = hi
		}
		if next != count {
			t.Fatalf("count %d: blocks end at %d", count, next)
		}
	}
	if numBlocks(0) != 0 {
		t.Errorf("numBlocks(0) = %d", numBlocks(0))
	}
}

// Every fit reports a finite, positive bootstrap sd of k̂, and the verdict notes a k̂ within
// one sd of the threshold.
func TestKHatSDAndBorderline(t *testing.T) {
	res, err := Fit(context.Background(), target(), family.NewFullRank(2), objective.Options{}, Config{Seed: 3, MaxIter: 300})
	if err != nil {
		t.Fatal(err)
	}
	if !(res.KHatSD > 0) || math.IsInf(res.KHatSD, 0) {
		t.Errorf("KHatSD = %v", res.KHatSD)
	}
	if got := borderline(0.62, 0.67, 0.1); !strings.Contains(got, "borderline") || !strings.Contains(got, "0.10") {
		t.Errorf("borderline(0.62, 0.67, 0.1) = %q", got)
	}
	for _, c := range [][3]float64{{0.4, 0.67, 0.1}, {0.9, 0.67, 0.1}, {0.6, 0.67, 0}, {math.NaN(), 0.67, 0.1}, {0.6, 0.67, math.NaN()}} {
		if got := borderline(c[0], c[1], c[2]); got != "" {
			t.Errorf("borderline%v = %q, want none", c, got)
		}
	}
}
