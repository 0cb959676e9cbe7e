package mcmc

import (
	"fmt"
	"math"
)

// Algorithm selects the transition kernel.
type Algorithm int

const (
	// NUTS is the No-U-Turn sampler with multinomial sampling (Stan's default).
	NUTS Algorithm = iota
	// StaticHMC is Hamiltonian Monte Carlo with a fixed number of leapfrog steps (Config.Steps)
	// and a Metropolis accept/reject step.
	StaticHMC
)

// String returns "nuts" or "hmc".
func (a Algorithm) String() string {
	switch a {
	case NUTS:
		return "nuts"
	case StaticHMC:
		return "hmc"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// MetricKind selects the form of the inverse metric M⁻¹ (the covariance estimate that
// preconditions the dynamics).
type MetricKind int

const (
	// Auto (the default) adapts a dense M⁻¹ when the warmup draws are strongly correlated and
	// a diagonal one otherwise, decided again at the end of every slow window: dense when the condition
	// number of the window's sample correlation matrix exceeds twice the largest one sampling
	// noise gives for uncorrelated draws, ((1+√(D/n))/(1−√(D/n)))² (the Marchenko–Pastur edge
	// ratio for n draws in D dimensions), and n ≥ 2D. Above D = 250 (where no window of
	// Stan's default 1000-iteration warmup has 2D draws) it is Diag, without the D² cost.
	// Both forms use Stan's regularisation in the coordinates standardised by the window's
	// standard deviations, n/(n+5)·S + 10⁻³·5/(n+5)·diag(S), instead of Stan's shrinkage
	// towards 10⁻³·I, which swamps posterior variances below 10⁻³. Not in Stan.
	Auto MetricKind = iota
	// Diag is a diagonal M⁻¹ adapted to the marginal variances (Stan's diag_e and default).
	Diag
	// Dense is a full M⁻¹ adapted to the covariance (Stan's dense_e).
	Dense
	// Unit is M⁻¹ = I, never adapted (Stan's unit_e).
	Unit
	// FisherDiag is a diagonal M⁻¹ adapted from the draws and their gradients,
	// M⁻¹ᵢᵢ = √(Var(xᵢ)/Var(∂ᵢ log π)), the diagonal that minimises the Fisher divergence
	// between the preconditioned target and a standard normal (Seyboldt, Carlson & Carpenter,
	// "Preconditioning Hamiltonian Monte Carlo by minimizing Fisher divergence", arXiv 2025;
	// nutpie's default). For a Gaussian it is √(Σᵢᵢ/(Σ⁻¹)ᵢᵢ): the marginal variance when the
	// coordinates are independent, between the marginal and conditional variances otherwise.
	// Stan's windows and regularisation are kept. Not in Stan.
	FisherDiag
)

// String returns Stan's names: "diag_e", "dense_e", "unit_e", and "auto_e", "fisher_diag_e".
func (m MetricKind) String() string {
	switch m {
	case Auto:
		return "auto_e"
	case FisherDiag:
		return "fisher_diag_e"
	case Diag:
		return "diag_e"
	case Dense:
		return "dense_e"
	case Unit:
		return "unit_e"
	}
	return fmt.Sprintf("MetricKind(%d)", int(m))
}

// autoMaxDim is the largest dimension for which Auto considers a dense metric.
const autoMaxDim = 250

// ParseMetric maps Stan's names ("diag_e", "dense_e", "unit_e", or "diag", "dense", "unit")
// and vigo's ("auto_e" or "auto", "fisher_diag_e" or "fisher_diag") to a MetricKind.
func ParseMetric(s string) (MetricKind, error) {
	switch s {
	case "diag_e", "diag":
		return Diag, nil
	case "dense_e", "dense":
		return Dense, nil
	case "unit_e", "unit":
		return Unit, nil
	case "auto_e", "auto":
		return Auto, nil
	case "fisher_diag_e", "fisher_diag":
		return FisherDiag, nil
	}
	return 0, fmt.Errorf("mcmc: ParseMetric: unknown metric (metric=%q; want diag_e, dense_e, unit_e, auto_e or fisher_diag_e)", s)
}

// Config is a sampling run. The zero value of every field means its default (Stan's, where
// Stan has one), given in parentheses below; Defaults returns the config with them filled
// in. A zero therefore never reaches the sampler: no warmup is asked for with NoWarmup, and
// a caller whose zero is a user's value (a command-line flag) must reject it itself. Every
// other value out of range (negative counts, NaN or infinite reals, TargetAccept outside
// (0, 1), MaxDepth above 30, non-finite Inits) makes Sample fail with an error naming the
// field and the value.
type Config struct {
	Algorithm Algorithm
	// Chains is the number of chains (default 4), run in parallel.
	Chains int
	// Warmup is the number of adaptation iterations per chain (default 1000). NoWarmup runs
	// none (the step size and metric are then StepSize and InvMetric as given).
	Warmup   int
	NoWarmup bool
	// Draws is the number of iterations kept per chain after warmup (default 1000).
	Draws int
	// Thin keeps every Thin-th draw (default 1).
	Thin int
	// SaveWarmup keeps the warmup iterations in Chain.WarmupDraws and Chain.WarmupStats.
	SaveWarmup bool
	// Seed seeds the run; chain c draws from rng.New(Seed, c).
	Seed uint64

	// MaxDepth is NUTS's maximum tree depth (default 10: at most 1023 leapfrog steps).
	MaxDepth int
	// Steps is StaticHMC's number of leapfrog steps per transition (default 10).
	Steps int
	// MaxDeltaH is the energy error H − H₀ above which a leapfrog step is a divergence
	// (default 1000).
	MaxDeltaH float64

	// StepSize is the initial step size ε (default 1); with warmup it is first tuned by
	// Stan's doubling/halving heuristic.
	StepSize float64
	// Metric is the form of the inverse metric (default Auto; Diag is Stan's default).
	Metric MetricKind
	// InvMetric is the initial inverse metric: D values (Diag, FisherDiag, Auto) or D×D
	// row-major (Dense, Auto); nil means the identity.
	InvMetric []float64

	// TargetAccept is dual averaging's target mean acceptance statistic δ (default 0.8).
	TargetAccept float64
	// Gamma, T0 and Kappa are dual averaging's regularisation scale γ (0.05), iteration
	// offset t₀ (10) and relaxation exponent κ (0.75) (Hoffman & Gelman 2014, §3.2.1).
	Gamma, T0, Kappa float64
	// InitBuffer, TermBuffer and Window are the warmup's fast initial interval (75
	// iterations), fast terminal interval (50) and first slow window (25, doubling).
	InitBuffer, TermBuffer, Window int

	// InitRadius r draws the initial point of each chain uniformly from (−r, r)^D on the
	// unconstrained scale (default 2, as Stan). Inits, when set, gives the initial point of
	// each chain instead (one row, used by every chain, or one per chain).
	InitRadius float64
	Inits      [][]float64

	// Progress, when set, is called every ProgressEvery iterations (default 100) of each
	// chain, from that chain's goroutine, and once when a chain ends; it must be safe for
	// concurrent use and must not block for long.
	Progress      func(Progress)
	ProgressEvery int
}

// Progress reports a chain's position: Iteration counts warmup and sampling iterations done
// out of Total.
type Progress struct {
	Chain, Iteration, Total int
	Warmup                  bool
	Done                    bool
}

// Defaults returns c with every zero field set to its default.
func (c Config) Defaults() Config {
	setInt := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	setF := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	setInt(&c.Chains, 4)
	if c.NoWarmup {
		c.Warmup = 0
	} else {
		setInt(&c.Warmup, 1000)
	}
	setInt(&c.Draws, 1000)
	setInt(&c.Thin, 1)
	setInt(&c.MaxDepth, 10)
	setInt(&c.Steps, 10)
	setF(&c.MaxDeltaH, 1000)
	setF(&c.StepSize, 1)
	setF(&c.TargetAccept, 0.8)
	setF(&c.Gamma, 0.05)
	setF(&c.T0, 10)
	setF(&c.Kappa, 0.75)
	setInt(&c.InitBuffer, 75)
	setInt(&c.TermBuffer, 50)
	setInt(&c.Window, 25)
	setF(&c.InitRadius, 2)
	setInt(&c.ProgressEvery, 100)
	return c
}

// validate checks a config with defaults filled in against a target of dimension dim. Each
// error names the Config field and its value.
func (c Config) validate(dim int) error {
	bad := func(field, want string, v any) error {
		return fmt.Errorf("mcmc: Sample: Config.%s must be %s (%s=%v)", field, want, field, v)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case dim < 1:
		return fmt.Errorf("mcmc: Sample: target has no dimensions (dim=%d)", dim)
	case c.Chains < 1:
		return bad("Chains", "positive (0 means the default, 4)", c.Chains)
	case c.Warmup < 0:
		return bad("Warmup", "non-negative (0 means the default, 1000; NoWarmup runs none)", c.Warmup)
	case c.Draws < 1:
		return bad("Draws", "positive (0 means the default, 1000)", c.Draws)
	case c.Thin < 1:
		return bad("Thin", "positive (0 means the default, 1)", c.Thin)
	case c.MaxDepth < 1 || c.MaxDepth > 30:
		return bad("MaxDepth", "in 1..30 (0 means the default, 10)", c.MaxDepth)
	case c.Steps < 1:
		return bad("Steps", "positive (0 means the default, 10)", c.Steps)
	case !(c.MaxDeltaH > 0) || !finite(c.MaxDeltaH):
		return bad("MaxDeltaH", "positive and finite (0 means the default, 1000)", c.MaxDeltaH)
	case !(c.StepSize > 0) || !finite(c.StepSize):
		return bad("StepSize", "positive and finite (0 means the default, 1)", c.StepSize)
	case !(c.TargetAccept > 0 && c.TargetAccept < 1):
		return bad("TargetAccept", "in (0, 1) (0 means the default, 0.8)", c.TargetAccept)
	case !(c.Gamma > 0) || !finite(c.Gamma):
		return bad("Gamma", "positive and finite (0 means the default, 0.05)", c.Gamma)
	case !(c.T0 >= 0) || !finite(c.T0):
		return bad("T0", "non-negative and finite (0 means the default, 10)", c.T0)
	case !(c.Kappa > 0 && c.Kappa <= 1):
		return bad("Kappa", "in (0, 1] (0 means the default, 0.75)", c.Kappa)
	case c.InitBuffer < 0:
		return bad("InitBuffer", "non-negative (0 means the default, 75)", c.InitBuffer)
	case c.TermBuffer < 0:
		return bad("TermBuffer", "non-negative (0 means the default, 50)", c.TermBuffer)
	case c.Window < 1:
		return bad("Window", "positive (0 means the default, 25)", c.Window)
	case !(c.InitRadius >= 0) || !finite(c.InitRadius):
		return bad("InitRadius", "non-negative and finite (0 means the default, 2)", c.InitRadius)
	case c.ProgressEvery < 1:
		return bad("ProgressEvery", "positive (0 means the default, 100)", c.ProgressEvery)
	case c.Algorithm != NUTS && c.Algorithm != StaticHMC:
		return bad("Algorithm", "NUTS or StaticHMC", c.Algorithm)
	case c.Metric < Auto || c.Metric > FisherDiag:
		return bad("Metric", "Auto, Diag, Dense, Unit or FisherDiag", c.Metric)
	}
	for i, z := range c.Inits {
		for j, v := range z {
			if !finite(v) {
				return fmt.Errorf("mcmc: Sample: Config.Inits[%d][%d] is not finite (value=%v)", i, j, v)
			}
		}
	}
	if c.InvMetric != nil {
		want := dim
		if c.Metric == Dense {
			want = dim * dim
		}
		if len(c.InvMetric) != want && !(c.Metric == Auto && len(c.InvMetric) == dim*dim) {
			return fmt.Errorf("mcmc: Sample: inverse metric has %d values, want %d (metric=%v, dim=%d)", len(c.InvMetric), want, c.Metric, dim)
		}
	}
	if c.Inits != nil {
		if len(c.Inits) != 1 && len(c.Inits) != c.Chains {
			return fmt.Errorf("mcmc: Sample: %d initial points for %d chains (want 1 or %d)", len(c.Inits), c.Chains, c.Chains)
		}
		for i, z := range c.Inits {
			if len(z) != dim {
				return fmt.Errorf("mcmc: Sample: initial point %d has %d values, want %d", i+1, len(z), dim)
			}
		}
	}
	return nil
}
