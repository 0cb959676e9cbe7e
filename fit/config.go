package fit

import (
	"fmt"
	"math"
	"runtime"
)

// Init says how a fit starts.
type Init int

const (
	// InitLaplace (the default) finds the posterior mode in unconstrained space by L-BFGS and
	// the curvature there, starts q at that Laplace approximation and fits in coordinates where
	// it is N(0, I) (see Affine). On the posteriordb regressions, whose scales differ by 10⁴ and
	// whose coefficients correlate at −0.999, this is what lets a plain Gaussian family reach the
	// posterior where Stan's ADVI aborts or stops tens of sds away; it falls back to InitZero,
	// and says so in Result.InitNote, when the mode search fails (e.g. an unbounded density).
	InitLaplace Init = iota
	// InitZero starts q at N(0, InitScale²·I) in unconstrained space, as Stan's ADVI does.
	InitZero
)

// NaNPolicy says what a non-finite gradient does.
type NaNPolicy int

const (
	// NaNSkip (the default) drops the step, counts it in Result.Skipped and fails only when
	// MaxSkips steps in a row are non-finite.
	NaNSkip NaNPolicy = iota
	// NaNFail fails at the first non-finite gradient, naming the parameter and the step.
	NaNFail
)

// StopRule says how the stopping rule judges that the tracked ELBO has plateaued.
type StopRule int

const (
	// StopAuto (the zero value) takes StopHalves; DefaultRecipe chooses StopTrend for flows.
	StopAuto StopRule = iota
	// StopHalves compares the means of the two halves of the last Window tracking estimates:
	// a plateau when mean(second half) − mean(first half) < Tol. Suited to the Gaussian
	// families, whose tracked ELBO settles within a few hundred steps and whose step-size
	// jitter is far below Tol.
	StopHalves
	// StopTrend fits a least-squares line y_i = a + b·i to the last Window tracking estimates
	// (Window ≥ 3) and takes G = b·(Window − 1), the gain over the window, with its standard
	// error s and the residual standard deviation σ (the jitter of one estimate around the
	// trend, caused by the step size: common random numbers remove the Monte Carlo part). A
	// plateau is G + TrendZ·s < max(Tol, σ/2): with one-sided confidence the window gained less
	// than Tol or less than half the jitter, so a smaller step size helps more than more steps.
	// Simulated on traces with σ = 0.2 nats and Window 30 (fit/stop_test.go): a flat trace
	// counts as a plateau after a median of 37 estimates, one rising by 0.005 nats per
	// estimate after ≈110, and one rising by 0.02 per estimate never in 500; the half-means rule
	// with Window 6 fires on all of them within a few windows. With σ below Tol (a converged
	// Gaussian, a small step size) it is the plain confidence rule G + TrendZ·s < Tol. Cost
	// O(Window) per tracking estimate.
	StopTrend
	// StopNoise fits the same least-squares trend as StopTrend to the last Window tracking
	// estimates (Window ≥ 3) and calls a plateau as soon as the window's gain G is not
	// significantly above Tol: G − TrendZ·s ≤ Tol, s the gain's standard error from the
	// residual jitter. StopTrend asks for evidence that the fit has stopped gaining; StopNoise
	// asks for evidence that it is still gaining and stops (cuts the step size) when the gain
	// is lost in its own noise, so on a flat trace it fires at the first full window with
	// probability at least P(t ≤ TrendZ) for Student's t with Window − 2 degrees of freedom
	// (G/s is t-distributed; 0.93 for Window 10 and TrendZ 1.645), whatever the jitter. A trace
	// whose true window gain is G₀ > Tol is cut at one estimate with probability about
	// Φ(TrendZ − (G₀ − Tol)/s) (fit/defaults_test.go states simulated rates). The price of stopping
	// early is small by construction: a gain below its noise is one that more steps at this
	// step size would not show, and the step-size cut that follows lowers the jitter.
	// Cost O(Window) per tracking estimate.
	StopNoise
)

func (s StopRule) String() string {
	switch s {
	case StopAuto:
		return "auto"
	case StopHalves:
		return "halves"
	case StopTrend:
		return "trend"
	case StopNoise:
		return "noise"
	}
	return fmt.Sprintf("StopRule(%d)", int(s))
}

// Config is everything a user can set about a fit. The zero value means the defaults given
// with each field.
type Config struct {
	Seed uint64 // random seed; a run is reproducible bit for bit from it

	Samples int // S: Monte Carlo draws per gradient step; default 8
	// Antithetic draws the S base draws of a step as ⌈S/2⌉ standard normals ε and their
	// mirror images −ε (draw S−1−s is −draw s). For a q near a Gaussian the odd part of the
	// integrand — the linear term of ∇log p around the mean, the dominant part of the
	// reparameterisation gradient's noise — cancels within each pair, at no extra cost per
	// draw; each half is still an unbiased estimate, so the gradient stays unbiased.
	Antithetic bool
	LR         float64 // Adam step size in preconditioned coordinates; default 0.02
	MaxIter    int     // iteration cap; default 20000

	EvalEvery   int     // ELBO tracking estimate every EvalEvery steps; default 100
	EvalSamples int     // draws of the tracking estimate (common random numbers); default 256
	Window      int     // tracking estimates in the plateau window; default 6 (StopTrend: 30, StopNoise: 10)
	Tol         float64 // plateau: stop when the window's gain is below Tol nats; default 0.02
	Decays      int     // step-size reductions (×0.2 each) on a plateau before stopping; default 2; negative: none
	Stop        StopRule
	// TrendZ is StopTrend's one-sided normal quantile for the upper confidence bound of the
	// window's gain (StopNoise's for the lower bound); default 1.645 (95%).
	TrendZ float64
	// Average > 0 keeps an exponential moving average of the parameters with a time constant
	// of Average steps, p̄ ← p̄ + (p − p̄)/Average after every step (Polyak–Ruppert-style
	// iterate averaging: it removes the step-size jitter of the iterates), evaluates it with
	// the same common-random-number estimate at every tracking point and lets the result
	// report it when its estimate is the best seen (see Result.Reported). 0 takes the default
	// (none; DefaultRecipe sets FlowAverage for flows); a negative value turns it off. Cost: one
	// more tracking estimate per EvalEvery steps and O(NumParams) per step.
	Average int
	// ConfirmBest reports the best tracked iterate (or the averaged one) only when it beats
	// the last iterate on EvalSamples fresh draws, paired, by more than 2 standard errors: the
	// best of many tracking estimates on the same draws is biased upwards (it is partly the
	// iterate that suits those draws; fit/defaults_test.go's gauss2 case shows it). Cost
	// 2·EvalSamples target evaluations
	// at the end of the fit, when the best is not the last. DefaultRecipe sets it for flows.
	ConfirmBest bool

	Init      Init    // how q starts; default InitLaplace
	InitScale float64 // InitZero's standard deviation; default 0.1
	InitIter  int     // L-BFGS iteration cap of InitLaplace; default 1000
	// InitPoint, when not nil, is the initial point in unconstrained space (length d): where
	// InitLaplace's mode search starts, or the centre of InitZero's Gaussian. Default: 0.
	InitPoint []float64
	// Starts is the number of InitLaplace mode searches (multi-start, see searchModes and
	// Result.Modes): start 0 at InitPoint (or 0), then the InitPoints, then points drawn from
	// uniform(−r, r)^d, r = 2 (Stan's default initialisation), 4, 8 in turn, with streams of
	// Seed; q starts at the
	// mode of highest Laplace evidence. Default 1 (one search, from InitPoint: the fit of
	// before multi-start existed, bit for bit); at most MaxStarts; it is raised to
	// 1 + len(InitPoints) when lower.
	Starts int
	// StartsMax > Starts lets the search double its starts, up to StartsMax, while the
	// Good–Turing estimate of an unseen mode is above UnseenModeTol (Starts ≥ 2 only); 0 or
	// ≤ Starts: no doubling.
	StartsMax int
	// InitPoints are further user-given starting points of the mode search (length d each).
	InitPoints [][]float64

	// Optimizer is OptAdam (the default, "") or OptRMSprop; LR is its step size.
	Optimizer string

	NaN      NaNPolicy // what a non-finite gradient does; default NaNSkip
	MaxSkips int       // consecutive skipped steps before failing; default 100

	Workers   int // goroutines over a step's draws (at most 4 are used: the draws go in ≤ 4 blocks); default GOMAXPROCS. Results do not depend on it.
	DiagDraws int // draws for the final ELBO, PSIS k̂ and output; default 1000
}

func (c Config) withDefaults() Config {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	deff := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.Samples, 8)
	deff(&c.LR, 0.02)
	def(&c.MaxIter, 20000)
	def(&c.EvalEvery, 100)
	def(&c.EvalSamples, 256)
	if c.Stop == StopAuto {
		c.Stop = StopHalves
	}
	if c.Stop == StopTrend {
		def(&c.Window, 30)
	}
	if c.Stop == StopNoise {
		def(&c.Window, 10)
	}
	def(&c.Window, 6)
	deff(&c.TrendZ, 1.645)
	deff(&c.Tol, 0.02)
	def(&c.Decays, 2)
	deff(&c.InitScale, 0.1)
	def(&c.InitIter, 1000)
	def(&c.Starts, 1)
	def(&c.MaxSkips, 100)
	def(&c.Workers, runtime.GOMAXPROCS(0))
	def(&c.DiagDraws, 1000)
	return c
}

// validate reports the first bad field of c (after withDefaults). The float fields must be
// finite and ≥ 0: NaN fails every comparison, so each is tested as !(x >= 0) and for ±Inf,
// and a NaN Tol (a plateau never judged) or LR (every step NaN, blamed on the target) is
// named here rather than later.
func (c Config) validate() error {
	bad := func(name string, v any) error {
		return fmt.Errorf("fit: Config: %s must be positive (%s=%v)", name, name, v)
	}
	badFloat := func(name string, v float64) error {
		return fmt.Errorf("fit: Config: %s must be finite and ≥ 0 (%s=%v)", name, name, v)
	}
	nonNeg := func(x float64) bool { return x >= 0 && !math.IsInf(x, 1) } // false for NaN
	switch {
	case c.Samples < 0:
		return bad("Samples", c.Samples)
	case !nonNeg(c.LR):
		return badFloat("LR", c.LR)
	case c.MaxIter < 0:
		return bad("MaxIter", c.MaxIter)
	case c.EvalEvery < 0:
		return bad("EvalEvery", c.EvalEvery)
	case c.EvalSamples < 0:
		return bad("EvalSamples", c.EvalSamples)
	case c.Window < 0 || c.Window == 1:
		return fmt.Errorf("fit: Config: Window must be at least 2 (Window=%d)", c.Window)
	case c.Stop != StopHalves && c.Stop != StopTrend && c.Stop != StopNoise:
		return fmt.Errorf("fit: Config: unknown Stop %d", c.Stop)
	case (c.Stop == StopTrend || c.Stop == StopNoise) && c.Window < 3:
		return fmt.Errorf("fit: Config: Window must be at least 3 with %v (Window=%d)", c.Stop, c.Window)
	case !nonNeg(c.TrendZ):
		return badFloat("TrendZ", c.TrendZ)
	case !nonNeg(c.Tol):
		return badFloat("Tol", c.Tol)
	case c.Optimizer != "" && c.Optimizer != OptAdam && c.Optimizer != OptRMSprop:
		return fmt.Errorf("fit: Config: unknown Optimizer %q (want %s or %s)", c.Optimizer, OptAdam, OptRMSprop)
	case !nonNeg(c.InitScale):
		return badFloat("InitScale", c.InitScale)
	case c.Workers < 0:
		return bad("Workers", c.Workers)
	case c.DiagDraws < 0:
		return bad("DiagDraws", c.DiagDraws)
	case !finiteSlice(c.InitPoint):
		return fmt.Errorf("fit: Config: InitPoint has a non-finite value (InitPoint=%v)", c.InitPoint)
	case c.Starts < 0 || c.Starts > MaxStarts:
		return fmt.Errorf("fit: Config: Starts must be 1 to %d (Starts=%d)", MaxStarts, c.Starts)
	case c.StartsMax < 0 || c.StartsMax > MaxStarts:
		return fmt.Errorf("fit: Config: StartsMax must be 0 to %d (StartsMax=%d)", MaxStarts, c.StartsMax)
	case len(c.InitPoints) >= MaxStarts:
		return fmt.Errorf("fit: Config: at most %d InitPoints (len=%d)", MaxStarts-1, len(c.InitPoints))
	case c.Init != InitLaplace && c.Init != InitZero:
		return fmt.Errorf("fit: Config: unknown Init %d", c.Init)
	}
	for i, p := range c.InitPoints {
		if !finiteSlice(p) {
			return fmt.Errorf("fit: Config: InitPoints[%d] has a non-finite value (InitPoints[%d]=%v)", i, i, p)
		}
	}
	return nil
}
