package mcmc_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// gaussian is N(mean, Σ) with Σᵢⱼ = sᵢsⱼρ^|i−j| (an AR(1) correlation with scales s), as a
// hand-written target: log π(x) = −½(x−μ)ᵀΣ⁻¹(x−μ).
type gaussian struct {
	mean, sd []float64
	prec     []float64 // Σ⁻¹, row-major
}

func newGaussian(d int, rho float64) *gaussian {
	g := &gaussian{mean: make([]float64, d), sd: make([]float64, d)}
	for i := range d {
		g.mean[i] = float64(i) - 3
		g.sd[i] = math.Pow(10, float64(i)/float64(d-1)-0.5) // 0.32 … 3.2
	}
	// The AR(1) correlation matrix has a tridiagonal inverse: (1/(1−ρ²))·tridiag(−ρ, 1+ρ², −ρ)
	// with 1 in the two corners.
	g.prec = make([]float64, d*d)
	c := 1 / (1 - rho*rho)
	for i := range d {
		diag := 1 + rho*rho
		if i == 0 || i == d-1 {
			diag = 1
		}
		g.prec[i*d+i] = c * diag / (g.sd[i] * g.sd[i])
		if i+1 < d {
			v := -c * rho / (g.sd[i] * g.sd[i+1])
			g.prec[i*d+i+1], g.prec[(i+1)*d+i] = v, v
		}
	}
	return g
}

func (g *gaussian) target() model.Target {
	d := len(g.mean)
	return model.GradFunc{N: d, F: func(x, grad []float64) float64 {
		var lp float64
		for i := range d {
			var s float64
			for j := range d {
				s += g.prec[i*d+j] * (x[j] - g.mean[j])
			}
			grad[i] = -s
			lp -= 0.5 * (x[i] - g.mean[i]) * s
		}
		return lp
	}}
}

// TestNUTSGaussian checks that NUTS recovers the means and sds of a 10-D Gaussian with
// correlation 0.9 between neighbours and scales spanning a factor 10, with every adapted
// metric; Auto must choose the dense form there.
func TestNUTSGaussian(t *testing.T) {
	g := newGaussian(10, 0.9)
	for _, metric := range []mcmc.MetricKind{mcmc.Diag, mcmc.Dense, mcmc.Auto, mcmc.FisherDiag} {
		t.Run(metric.String(), func(t *testing.T) {
			res, err := mcmc.Sample(context.Background(), g.target(), mcmc.Config{Seed: 11, Metric: metric})
			if err != nil {
				t.Fatal(err)
			}
			dr := res.Draws(nil, nil)
			for j := range 10 {
				ch := dr.Var(j)
				m, s := mean(concat(ch)), sdev(concat(ch))
				// 5 MCSE: a two-sided normal tail of 6e-7 per check, 40 checks. With ESS ≈ 4000
				// (dense) or ≈ 1000 (diagonal), a mean bias of ≈ 0.3 sd/√ESS·5 ≈ 0.05–0.15 sd is
				// detectable.
				if se := diag.MCSEMean(ch); math.Abs(m-g.mean[j]) > 5*se {
					t.Errorf("x[%d]: mean %.4f, want %.4f ± 5·%.4f", j+1, m, g.mean[j], se)
				}
				if se := diag.MCSESD(ch); math.Abs(s-g.sd[j]) > 5*se {
					t.Errorf("x[%d]: sd %.4f, want %.4f ± 5·%.4f", j+1, s, g.sd[j], se)
				}
				if r := diag.Rhat(ch); r > 1.01 {
					t.Errorf("x[%d]: R-hat %.4f", j+1, r)
				}
			}
			d := res.Diagnostics()
			if d.Divergent > 0 || d.MaxDepthHits > 0 {
				t.Errorf("%s", d.Summary())
			}
			for c, ch := range res.Chains {
				if dense := len(ch.InvMetric) == 100; dense != (metric == mcmc.Dense || metric == mcmc.Auto) {
					t.Errorf("chain %d: %d inverse metric values", c+1, len(ch.InvMetric))
				}
			}
			var leap int
			for _, s := range slices.Concat(res.Stats()...) {
				leap += s.NLeapfrog
			}
			t.Logf("%s: %s; ε %.3g; %.1f leapfrog steps per draw; %d gradients", metric, d.Summary(), res.Chains[0].StepSize, float64(leap)/4000, res.GradEvals)
		})
	}
}

// TestAutoIndependent checks that Auto keeps a diagonal metric on a Gaussian with
// independent coordinates of scales 0.32 … 3.2, and that its draws are as efficient as the
// diagonal metric's.
func TestAutoIndependent(t *testing.T) {
	g := newGaussian(10, 0)
	res, err := mcmc.Sample(context.Background(), g.target(), mcmc.Config{Seed: 3, Metric: mcmc.Auto})
	if err != nil {
		t.Fatal(err)
	}
	for c, ch := range res.Chains {
		if len(ch.InvMetric) != 10 {
			t.Errorf("chain %d: %d inverse metric values, want the diagonal's 10", c+1, len(ch.InvMetric))
		}
		for j, v := range ch.InvMetric {
			// The adapted variance from the last 500-draw window: relative sd ≈ √(2/ESS) with
			// ESS ≳ 200 per chain, ≈ 0.1; 0.5 relative is 5 sd.
			if want := g.sd[j] * g.sd[j]; math.Abs(v/want-1) > 0.5 {
				t.Errorf("chain %d: M⁻¹[%d] = %.3g, want ≈ %.3g", c+1, j, v, want)
			}
		}
	}
}

// TestAutoLargeDim checks that above 250 dimensions Auto is the diagonal metric (no D×D
// estimate): a 300-D standard normal with a short run.
func TestAutoLargeDim(t *testing.T) {
	const d = 300
	tg := model.GradFunc{N: d, F: func(x, g []float64) float64 {
		var lp float64
		for i, v := range x {
			g[i] = -v
			lp -= 0.5 * v * v
		}
		return lp
	}}
	res, err := mcmc.Sample(context.Background(), tg, mcmc.Config{Seed: 1, Chains: 1, Warmup: 150, Draws: 10})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Chains[0].InvMetric); n != d {
		t.Errorf("%d inverse metric values, want the diagonal's %d", n, d)
	}
}

// TestDualAveraging checks that dual averaging steers the acceptance statistic to the target δ
// during warmup, and that the final (averaged) step size accepts at least as often, for several δ.
func TestDualAveraging(t *testing.T) {
	g := newGaussian(10, 0.5)
	for _, delta := range []float64{0.65, 0.8, 0.95} {
		res, err := mcmc.Sample(context.Background(), g.target(), mcmc.Config{Seed: 3, TargetAccept: delta, Chains: 2, SaveWarmup: true})
		if err != nil {
			t.Fatal(err)
		}
		var warm, kept []float64
		for _, ch := range res.Chains {
			for _, s := range ch.WarmupStats[100:] {
				warm = append(warm, s.AcceptStat)
			}
			for _, s := range ch.Stats {
				kept = append(kept, s.AcceptStat)
			}
		}
		mw, mk := mean(warm), mean(kept)
		// During warmup the iterates εₜ solve E[accept] = δ; each restart after a metric update
		// starts from 10ε, so the mean runs a little below δ. 0.04 allows for that and for the
		// MC error of 1800 correlated accept statistics (sd ≈ 0.25, error ≈ 0.01).
		if math.Abs(mw-delta) > 0.04 {
			t.Errorf("δ=%.2f: mean accept_stat during warmup %.3f", delta, mw)
		}
		// The final ε = exp(x̄) averages log εₜ from the restart at the terminal buffer, whose
		// first iterates are small after the 10ε overshoot, so sampling accepts more often
		// than δ, as in Stan (accept_stat ≈ 0.85–0.9 for δ = 0.8).
		if mk < delta-0.03 || mk > delta+0.2 {
			t.Errorf("δ=%.2f: mean accept_stat after warmup %.3f", delta, mk)
		}
		t.Logf("δ=%.2f: mean accept_stat %.3f in warmup, %.3f after; ε %.3g", delta, mw, mk, res.Chains[0].StepSize)
	}
}

// TestDeterminism checks that the same seed gives bit-identical draws with GOMAXPROCS 1 and 2
// and that a different seed gives different draws.
func TestDeterminism(t *testing.T) {
	tg := zoo.EightSchools()
	cfg := mcmc.Config{Seed: 42, Warmup: 200, Draws: 100}
	run := func(procs int, seed uint64) *mcmc.Result {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		c := cfg
		c.Seed = seed
		res, err := mcmc.Sample(context.Background(), tg, c)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(1, 42), run(2, 42)
	for c := range a.Chains {
		if !slices.Equal(a.Chains[c].Draws, b.Chains[c].Draws) || !slices.Equal(a.Chains[c].Stats, b.Chains[c].Stats) {
			t.Errorf("chain %d differs between GOMAXPROCS 1 and 2", c+1)
		}
	}
	if slices.Equal(a.Chains[0].Draws, a.Chains[1].Draws) {
		t.Error("chains 1 and 2 are identical")
	}
	if o := run(2, 43); slices.Equal(a.Chains[0].Draws, o.Chains[0].Draws) {
		t.Error("seeds 42 and 43 give the same draws")
	}
}

// TestEightSchoolsReference compares NUTS on the embedded eight-schools model with
// posteriordb's 10,000 reference draws (needs ../shared).
func TestEightSchoolsReference(t *testing.T) {
	dir := datadir.PosteriorDBOrSkip(t)
	m := zoo.EightSchools()
	ref, err := model.LoadDraws(m.DrawsPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	res, err := mcmc.Sample(context.Background(), m, mcmc.Config{Seed: 2024})
	if err != nil {
		t.Fatal(err)
	}
	dr := res.Draws(m.Names(), m.Constrain)
	for j, name := range dr.Names {
		k := ref.Index(name)
		if k < 0 {
			t.Fatalf("%s not in the reference draws", name)
		}
		r := concat(ref.Var(k))
		ch := dr.Var(j)
		// The reference draws are thinned to near independence (posteriordb checks ESS ≈
		// 10,000), so their MCSE is sd/100; ours comes from our ESS. 5 combined MCSE: a
		// two-sided tail of 6e-7 per variable.
		se := math.Hypot(diag.MCSEMean(ch), sdev(r)/math.Sqrt(float64(len(r))))
		if d := mean(concat(ch)) - mean(r); math.Abs(d) > 5*se {
			t.Errorf("%s: mean differs from the reference by %.3f (5 MCSE = %.3f)", name, d, 5*se)
		}
	}
	dist, err := diag.Compare(dr, ref)
	if err != nil {
		t.Fatal(err)
	}
	// A NUTS run of 4000 draws gets W1/sd ≈ 0.02–0.05 (targets.md); 0.08 flags a wrong
	// distribution, not Monte Carlo noise.
	if dist.W1SD > 0.08 {
		t.Errorf("W1/sd %.3f", dist.W1SD)
	}
	t.Logf("W1/sd %.4f, sd ratio %.3f; %s", dist.W1SD, dist.SDRatio, res.Diagnostics().Summary())
}

// TestCancel checks that a cancelled run returns the draws made so far with the context's
// error.
func TestCancel(t *testing.T) {
	g := newGaussian(10, 0.9)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var seen [4]atomic.Bool
	var n atomic.Int32
	cfg := mcmc.Config{Seed: 1, Warmup: 100, Draws: 1 << 30, ProgressEvery: 50, Progress: func(p mcmc.Progress) {
		// Cancel once every chain has kept some draws.
		if !p.Warmup && p.Iteration > 200 && !seen[p.Chain].Swap(true) && n.Add(1) == 4 {
			close(started)
		}
	}}
	go func() {
		<-started
		cancel()
	}()
	done := make(chan struct{})
	var res *mcmc.Result
	var err error
	go func() {
		res, err = mcmc.Sample(ctx, g.target(), cfg)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Sample did not return after cancellation")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Len() == 0 {
		t.Fatal("no draws returned from a cancelled run")
	}
	if dr := res.Draws(nil, nil); dr.Check() != nil {
		t.Error(dr.Check())
	}
}

// TestStaticHMC checks the fixed-length kernel on a Gaussian.
func TestStaticHMC(t *testing.T) {
	g := newGaussian(5, 0.5)
	res, err := mcmc.Sample(context.Background(), g.target(), mcmc.Config{Seed: 5, Algorithm: mcmc.StaticHMC, Steps: 10, TargetAccept: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	dr := res.Draws(nil, nil)
	for j := range 5 {
		ch := dr.Var(j)
		// 5 MCSE, as in TestNUTSGaussian.
		if m, se := mean(concat(ch)), diag.MCSEMean(ch); math.Abs(m-g.mean[j]) > 5*se {
			t.Errorf("x[%d]: mean %.4f, want %.4f ± 5·%.4f", j+1, m, g.mean[j], se)
		}
	}
	for _, s := range res.Chains[0].Stats {
		if s.NLeapfrog != 10 || s.TreeDepth != 0 {
			t.Fatalf("stats %+v", s)
		}
	}
}

// TestErrors checks configuration and start-up errors.
func TestErrors(t *testing.T) {
	g := newGaussian(3, 0)
	bad := []mcmc.Config{
		{TargetAccept: 1.5},
		{Inits: [][]float64{{1, 2}}},
		{InvMetric: []float64{1, 2}},
		{Thin: -1},
	}
	for _, c := range bad {
		if _, err := mcmc.Sample(context.Background(), g.target(), c); err == nil {
			t.Errorf("config %+v: no error", c)
		}
	}
	// A target with no finite point cannot start.
	nan := model.GradFunc{N: 2, F: func(x, grad []float64) float64 { return math.NaN() }}
	if _, err := mcmc.Sample(context.Background(), nan, mcmc.Config{Warmup: 10, Draws: 10}); err == nil {
		t.Error("NaN target: no error")
	}
}

func concat(ch [][]float64) []float64 { return slices.Concat(ch...) }

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func sdev(x []float64) float64 {
	m := mean(x)
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(x)-1))
}
