package bench

import (
	"context"
	"errors"
	"fmt"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/rng"
	"github.com/vigo-bayes/vigo/zoo"
)

// NUTS on the posteriordb posteriors (issue 5 item 4): the "nuts" method of the benchmark
// registry, and a NUTS-only report with the efficiency columns the VI table lacks — minimum
// bulk ESS per wall second and per 1000 gradient evaluations — beside Stan 2.21's NUTS
// numbers from targets.md, and the accuracy bar of issue 5: every reported quantity's mean
// within 5 MCSE of the reference mean, W1/sd ≤ 0.06.
//
// Protocol (targets.md's for Stan): 4 chains × (1000 warmup + 1000 draws), mcmc's default
// metric (auto_e; NUTSOptions.Metric selects another, e.g. Stan's diag_e), Stan's defaults
// otherwise. The chains run one after another on one core unless Workers > 1,
// so the wall time is comparable with Stan's "chains one after another on one core"; chain c
// of seed s draws from seed rng.Derive(s, c), so the draws do not depend on Workers.

// NUTS run defaults: targets.md's protocol.
const (
	NUTSChains = 4
	NUTSWarmup = 1000
	NUTSDraws  = 1000
)

// NUTSOptions size one NUTS run; zero fields take the defaults above (Workers: 1).
type NUTSOptions struct {
	Chains, Warmup, Draws int
	// Workers is the number of chains run at once. The draws do not depend on it.
	Workers int
	// Metric is the form of the inverse metric; the zero value is mcmc's default (auto_e).
	Metric mcmc.MetricKind
}

// NUTSRun is one NUTS run on a posterior: the draws of the reported quantities and what
// they cost.
type NUTSRun struct {
	Posterior string
	Seed      uint64
	Dim       int
	Options   NUTSOptions // defaults filled in
	// Draws are the kept draws of the model's reported quantities (Model.Names), constrained,
	// one chain per chain.
	Draws *diag.Draws
	// Wall is the wall time of all chains, warmup included; ChainTime the sum over chains of
	// their warmup and sampling times (equal to Wall, up to set-up, with one worker).
	Wall, ChainTime time.Duration
	GradEvals       int64 // gradient evaluations over all chains, initialisation included
	// MinESSBulk and MinESSTail are the smallest bulk and tail ESS over the reported
	// quantities (diag.ESSBulk, diag.ESSTail on the kept draws of all chains); MinESSVar names
	// the quantity with the smallest bulk ESS. MaxRhat is the largest rank-normalised split-R̂.
	MinESSBulk, MinESSTail float64
	MinESSVar              string
	MaxRhat                float64
	Diagnostics            mcmc.Diagnostics
}

// ESSPerSecond is MinESSBulk per second of Wall.
func (r *NUTSRun) ESSPerSecond() float64 { return r.MinESSBulk / r.Wall.Seconds() }

// ESSPerKGrad is MinESSBulk per 1000 gradient evaluations (machine independent).
func (r *NUTSRun) ESSPerKGrad() float64 { return 1000 * r.MinESSBulk / float64(r.GradEvals) }

// Converged applies Vehtari et al.'s (2021) thresholds (mcmc.RhatThreshold, mcmc.ESSPerChain)
// and asks for no divergent transition.
func (r *NUTSRun) Converged() bool {
	return r.MaxRhat < mcmc.RhatThreshold && r.MinESSBulk >= float64(mcmc.ESSPerChain*r.Options.Chains) &&
		r.MinESSTail >= float64(mcmc.ESSPerChain*r.Options.Chains) && r.Diagnostics.Divergent == 0
}

// Status says the run's efficiency and checks in one line.
func (r *NUTSRun) Status() string {
	s := fmt.Sprintf("min ESS-bulk %.0f (%s) = %s/s, %s/1000 grads", r.MinESSBulk, r.MinESSVar, num(r.ESSPerSecond()), num(r.ESSPerKGrad()))
	if ref, ok := StanTargets[r.Posterior]; ok {
		s += fmt.Sprintf(" (Stan %s/s)", num(ref.NUTSESSPerS))
	}
	s += fmt.Sprintf("; min ESS-tail %.0f; max R̂ %.3f; %d divergent", r.MinESSTail, r.MaxRhat, r.Diagnostics.Divergent)
	if r.Diagnostics.MaxDepthHits > 0 {
		s += fmt.Sprintf("; %d at max tree depth", r.Diagnostics.MaxDepthHits)
	}
	return s
}

// SampleNUTS runs NUTS on m (4 chains × (1000 + 1000) by default, opt.Metric), chain c
// with seed rng.Derive(seed, c), up to opt.Workers chains at once, and returns the draws of
// the reported quantities with their ESS, R̂ and sampler diagnostics. Cost: the gradients
// (≈ 2^treedepth per iteration) plus O(P·N log N) for the ESS of P quantities over N draws.
// A cancelled context returns ctx.Err() and no run.
func SampleNUTS(ctx context.Context, m *zoo.Model, seed uint64, opt NUTSOptions) (*NUTSRun, error) {
	if err := opt.validate("SampleNUTS"); err != nil {
		return nil, err
	}
	opt = opt.defaults()
	results := make([]*mcmc.Result, opt.Chains)
	errs := make([]error, opt.Chains)
	start := time.Now()
	sem := make(chan struct{}, opt.Workers)
	var wg sync.WaitGroup
	for c := range opt.Chains {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cfg := mcmc.Config{Chains: 1, Warmup: opt.Warmup, Draws: opt.Draws, Seed: rng.Derive(seed, uint64(c)), Metric: opt.Metric}
			results[c], errs[c] = mcmc.Sample(ctx, m, cfg)
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("bench: SampleNUTS (posterior=%s): %w", m.Posterior, err)
	}
	all := &mcmc.Result{Config: results[0].Config, Dim: m.Dim(), Wall: wall}
	for _, r := range results {
		all.Chains = append(all.Chains, r.Chains...)
		all.GradEvals += r.GradEvals
	}
	all.Config.Chains = opt.Chains
	run := &NUTSRun{Posterior: m.Posterior, Seed: seed, Dim: m.Dim(), Options: opt, Wall: wall,
		GradEvals: all.GradEvals, Diagnostics: all.Diagnostics(), Draws: all.Draws(m.Names(), m.Constrain)}
	for _, c := range all.Chains {
		run.ChainTime += c.WarmupTime + c.SampleTime
	}
	run.MinESSBulk, run.MinESSTail = math.Inf(1), math.Inf(1)
	for j, name := range run.Draws.Names {
		v := run.Draws.Var(j)
		// A constant quantity (a fixed element of a simplex or Cholesky factor) has NaN ESS and
		// R̂; it is skipped rather than allowed to hide the others.
		if b := diag.ESSBulk(v); b < run.MinESSBulk {
			run.MinESSBulk, run.MinESSVar = b, name
		}
		if tl := diag.ESSTail(v); tl < run.MinESSTail {
			run.MinESSTail = tl
		}
		if rh := diag.Rhat(v); rh > run.MaxRhat {
			run.MaxRhat = rh
		}
	}
	return run, nil
}

// validate rejects negative options (zero means the default); fn names the caller.
func (o NUTSOptions) validate(fn string) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"Chains", o.Chains}, {"Warmup", o.Warmup}, {"Draws", o.Draws}, {"Workers", o.Workers}} {
		if f.v < 0 {
			return fmt.Errorf("bench: %s: %s must not be negative (%s=%d; 0 is the default)", fn, f.name, f.name, f.v)
		}
	}
	return nil
}

func (o NUTSOptions) defaults() NUTSOptions {
	if o.Chains <= 0 {
		o.Chains = NUTSChains
	}
	if o.Warmup <= 0 {
		o.Warmup = NUTSWarmup
	}
	if o.Draws <= 0 {
		o.Draws = NUTSDraws
	}
	if o.Workers <= 0 {
		o.Workers = 1
	}
	return o
}

// nutsMethod is the "nuts" benchmark method: SampleNUTS with RunOptions.Draws spread over the
// chains (0: 1000 per chain) and RunOptions.Workers chains at once. MaxIter is ignored (the
// warmup is 1000 iterations). Converged is NUTSRun.Converged; Status carries the ESS numbers.
func nutsMethod() Method {
	return Method{Name: "nuts", About: fmt.Sprintf("NUTS (mcmc), %d chains × (%d warmup + %d draws), metric %s, chains one after another on one core unless workers > 1",
		NUTSChains, NUTSWarmup, NUTSDraws, mcmc.MetricKind(0)),
		Run: func(ctx context.Context, m *zoo.Model, seed uint64, opt RunOptions) (*Outcome, error) {
			o := NUTSOptions{Workers: opt.Workers}
			if opt.Draws > 0 {
				o.Draws = (opt.Draws + NUTSChains - 1) / NUTSChains
			}
			run, err := SampleNUTS(ctx, m, seed, o)
			if err != nil {
				return nil, err
			}
			return &Outcome{Draws: run.Draws, KHat: math.NaN(), GradEvals: int(run.GradEvals),
				Converged: run.Converged(), Status: run.Status()}, nil
		}}
}

// NUTSCheck is a NUTS run compared with the posterior's reference draws.
type NUTSCheck struct {
	*NUTSRun
	Metrics
	// MaxMeanZ is max over the reported quantities of |mean − mean_ref| / √(MCSE² + MCSE_ref²)
	// (diag.MCSEMean of the run's chains and of the reference's), at MaxMeanZVar.
	MaxMeanZ    float64
	MaxMeanZVar string
	Err         error // the run failed; the other fields are zero
}

// PassMeans reports issue 5's first bar: every mean within 5 MCSE of the reference mean.
func (c *NUTSCheck) PassMeans() bool { return c.Err == nil && c.MaxMeanZ <= 5 }

// PassW1 reports issue 5's second bar: W1/sd ≤ 0.06.
func (c *NUTSCheck) PassW1() bool { return c.Err == nil && c.W1SD <= 0.06 }

// CheckNUTS compares run with the reference draws ref (same names, constrained scale).
// Cost O(P·N log N).
func CheckNUTS(run *NUTSRun, ref *diag.Draws) (*NUTSCheck, error) {
	met, err := Measure(run.Draws, ref)
	if err != nil {
		return nil, err
	}
	c := &NUTSCheck{NUTSRun: run, Metrics: met}
	for j, name := range run.Draws.Names {
		x := run.Draws.Var(j)
		k := ref.Index(name)
		if k < 0 {
			return nil, fmt.Errorf("bench: CheckNUTS: no reference draws of %s (posterior=%s)", name, run.Posterior)
		}
		r := ref.Var(k)
		se := math.Hypot(diag.MCSEMean(x), diag.MCSEMean(r))
		z := math.Abs(chainsMean(x)-chainsMean(r)) / se
		if se == 0 && chainsMean(x) == chainsMean(r) {
			z = 0 // a constant quantity that agrees
		}
		if z > c.MaxMeanZ || math.IsNaN(z) {
			c.MaxMeanZ, c.MaxMeanZVar = z, name
		}
	}
	return c, nil
}

func chainsMean(chains [][]float64) float64 {
	var s float64
	var n int
	for _, c := range chains {
		for _, v := range c {
			s += v
		}
		n += len(c)
	}
	return s / float64(n)
}

// NUTSBenchConfig says what RunNUTSBench runs.
type NUTSBenchConfig struct {
	Posteriors []string // zoo short names or posteriordb names; nil means all of zoo.Names()
	Seeds      int      // seeds 1..Seeds; 0 means 1
	Dir        string   // posteriordb directory (required)
	NUTSOptions
	// Progress, when not nil, is called after every run.
	Progress func(*NUTSCheck)
}

// NUTSReport holds the runs of RunNUTSBench.
type NUTSReport struct {
	Config NUTSBenchConfig
	Runs   []*NUTSCheck
}

// RunNUTSBench runs SampleNUTS on every posterior with seeds 1..Seeds, one posterior at a
// time, and compares each run with the reference draws. A failed run is recorded; when every
// run fails, the report is returned with an *AllAbortedError. A cancelled context returns the
// partial report with its error. Negative options are an error before any run.
func RunNUTSBench(ctx context.Context, cfg NUTSBenchConfig) (*NUTSReport, error) {
	if cfg.Seeds == 0 {
		cfg.Seeds = 1
	}
	if cfg.Seeds < 0 {
		return nil, fmt.Errorf("bench: RunNUTSBench: Seeds must be positive (Seeds=%d)", cfg.Seeds)
	}
	if err := cfg.NUTSOptions.validate("RunNUTSBench"); err != nil {
		return nil, err
	}
	cfg.NUTSOptions = cfg.NUTSOptions.defaults()
	names := cfg.Posteriors
	if names == nil {
		names = zoo.Names()
	}
	dir := cfg.Dir
	if dir == "" {
		return nil, errors.New("bench: RunNUTSBench: NUTSBenchConfig.Dir is empty: give the posteriordb directory")
	}
	rep := &NUTSReport{Config: cfg}
	for _, name := range names {
		m, err := zoo.Load(name, dir)
		if err != nil {
			return rep, fmt.Errorf("bench: RunNUTSBench: %w", err)
		}
		ref, err := referenceDraws(m, dir)
		if err != nil {
			return rep, err
		}
		for s := 1; s <= cfg.Seeds; s++ {
			run, err := SampleNUTS(ctx, m, uint64(s), cfg.NUTSOptions)
			if ctxErr := ctx.Err(); ctxErr != nil {
				return rep, ctxErr
			}
			var c *NUTSCheck
			if err == nil {
				c, err = CheckNUTS(run, ref)
			}
			if err != nil {
				c = &NUTSCheck{NUTSRun: &NUTSRun{Posterior: m.Posterior, Seed: uint64(s), Dim: m.Dim()}, Err: err}
			}
			rep.Runs = append(rep.Runs, c)
			if cfg.Progress != nil {
				cfg.Progress(c)
			}
		}
	}
	if len(rep.Runs) > 0 && !slices.ContainsFunc(rep.Runs, func(c *NUTSCheck) bool { return c.Err == nil }) {
		return rep, &AllAbortedError{Bench: "RunNUTSBench", Runs: len(rep.Runs), First: rep.Runs[0].Err}
	}
	return rep, nil
}

// Markdown writes the report: header, one row per run with Stan's NUTS numbers beside it,
// and how many posteriors pass issue 5's bars.
func (r *NUTSReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	o := r.Config.NUTSOptions
	resultmd.Write(&b, "vigo NUTS vs Stan NUTS on the posteriordb public posteriors", h)
	p("- NUTS: %d chains × (%d warmup + %d draws), metric %s, Stan's adaptation defaults; %d chain(s) at a time; seeds 1..%d\n",
		o.Chains, o.Warmup, o.Draws, o.Metric, o.Workers, r.Config.Seeds)
	p("\nColumns: wall s = all chains, warmup included (Stan: the sampling call, chains one after another on one core; ")
	p("diamonds on 2 cores). min ESS-bulk = smallest rank-normalised bulk ESS over the reported quantities (the one named). ")
	p("ESS/s and ESS/1000 grads divide it by the wall time and by the gradient evaluations (initialisation and step-size ")
	p("searches included). Stan ESS/s is from targets.md; Stan ESS ≈ its ESS/s × wall s (rounded inputs, so ±1 in the ")
	p("last digit of ESS/s). targets.md gives no gradient counts for Stan, so ESS per gradient is compared through the ")
	p("ESS of the same 4000 draws: \"ESS vs Stan\" says more, fewer or same (inside the interval the rounding of ")
	p("targets.md's ESS/s and wall s leaves). |Δmean|/MCSE = max over quantities of |mean − reference mean| / √(MCSE² + MCSE_ref²). ")
	p("W1/sd against the 10,000 reference draws (targets.md's definition).\n\n")

	p("| posterior | seed | dims | wall s | grad evals | min ESS-bulk | ESS/s | ESS/1000 grads | Stan ESS/s | Stan wall s | Stan ESS ≈ | ESS vs Stan | max \\|Δmean\\|/MCSE | W1/sd | Stan W1/sd | max R̂ | min ESS-tail | divergent | max depth |\n")
	p("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n")
	var means, w1s, essWins, known, ran int
	for _, c := range r.Runs {
		ref, ok := StanTargets[c.Posterior]
		sESS, sWall, sN, sW1 := "—", "—", "—", "—"
		if ok {
			sESS, sWall, sN, sW1 = num(ref.NUTSESSPerS), num(ref.NUTSWall), fmt.Sprintf("%.0f", ref.NUTSESSPerS*ref.NUTSWall), num(ref.NUTSW1SD)
		}
		if c.Err != nil {
			p("| %s | %d | %d | — | — | aborted: %s | — | — | %s | %s | %s | — | — | — | %s | — | — | — | — |\n",
				c.Posterior, c.Seed, c.Dim, oneLine(c.Err.Error()), sESS, sWall, sN, sW1)
			continue
		}
		ran++
		if c.PassMeans() {
			means++
		}
		if c.PassW1() {
			w1s++
		}
		cmpESS := "—"
		if ok {
			known++
			cmpESS = compareStanESS(c.MinESSBulk, ref)
			if cmpESS != "fewer" {
				essWins++
			}
		}
		p("| %s | %d | %d | %s | %d | %.0f (%s) | %s | %s | %s | %s | %s | %s | %.2f (%s) | %.4f | %s | %.3f | %.0f | %d | %d |\n",
			c.Posterior, c.Seed, c.Dim, fmt.Sprintf("%.1f", c.Wall.Seconds()), c.GradEvals, c.MinESSBulk, c.MinESSVar,
			num(c.ESSPerSecond()), num(c.ESSPerKGrad()), sESS, sWall, sN, cmpESS, c.MaxMeanZ, c.MaxMeanZVar,
			c.W1SD, sW1, c.MaxRhat, c.MinESSTail, c.Diagnostics.Divergent, c.Diagnostics.MaxDepthHits)
	}
	p("\n- every mean within 5 MCSE of the reference: %d of %d runs\n", means, ran)
	p("- W1/sd ≤ 0.06: %d of %d runs\n", w1s, ran)
	p("- min ESS-bulk not below Stan's (ESS/s × wall, same number of draws, within the rounding of targets.md): %d of %d runs\n", essWins, known)
	_, err := io.WriteString(w, b.String())
	return err
}

// compareStanESS compares a minimum bulk ESS with Stan's, known only as the product of
// targets.md's rounded numbers (ESS/s to units, wall s to tenths): "more" or "fewer" when ess
// is outside the interval the rounding leaves, (ESS/s ± 0.5)·(wall ± 0.05), "same" inside it.
func compareStanESS(ess float64, ref StanRef) string {
	lo := (ref.NUTSESSPerS - 0.5) * (ref.NUTSWall - 0.05)
	hi := (ref.NUTSESSPerS + 0.5) * (ref.NUTSWall + 0.05)
	switch {
	case ess > hi:
		return "more"
	case ess < lo:
		return "fewer"
	}
	return "same"
}
