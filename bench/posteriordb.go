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
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// The posteriordb benchmark (issue 3 item 8) runs every method on every public posterior of
// ../shared/data/posteriordb with seeds 1..n and measures, against posteriordb's 10,000
// reference draws on the constrained scale, the distances targets.md defines:
//
//	W1/sd      = (1/P) Σ_p W1(x_p, ref_p)/sd(ref_p)    (W1 on 1000 equal-count quantiles)
//	sd ratio   = (1/P) Σ_p sd(x_p)/sd(ref_p)
//	max|Δmean|/sd = max_p |mean(x_p) − mean(ref_p)|/sd(ref_p)
//
// over the P reported quantities of the posterior (Model.Names), together with wall time,
// target gradient evaluations and PSIS k̂ (unconstrained space, from the method). The report
// is a markdown table of medians over seeds with Stan ADVI's numbers from targets.md beside
// them and a per-posterior verdict: does vigo's best Gaussian family beat Stan ADVI's best
// on W1/sd?

// StanAlgo names the Stan ADVI algorithm whose targets.md numbers are printed beside a method.
type StanAlgo int

const (
	// StanNone: no Stan counterpart (low-rank, flows, …).
	StanNone StanAlgo = iota
	// StanMeanField: Stan's ADVI meanfield.
	StanMeanField
	// StanFullRank: Stan's ADVI fullrank.
	StanFullRank
)

func (a StanAlgo) String() string {
	switch a {
	case StanMeanField:
		return "MF"
	case StanFullRank:
		return "FR"
	}
	return "—"
}

// RunOptions are the benchmark-wide settings a method receives for one run.
type RunOptions struct {
	MaxIter int // iteration cap; 0 is the method's default
	Workers int // goroutines; 0 is the method's default. Results must not depend on it.
	Draws   int // approximate-posterior draws to compare with the reference; 0 means 1000
}

// validate rejects negative options (zero means the default); fn names the caller.
func (o RunOptions) validate(fn string) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxIter", o.MaxIter}, {"Workers", o.Workers}, {"Draws", o.Draws}} {
		if f.v < 0 {
			return fmt.Errorf("bench: %s: %s must not be negative (%s=%d; 0 is the default)", fn, f.name, f.name, f.v)
		}
	}
	return nil
}

// AllAbortedError is the error of a benchmark whose every run aborted: the report holds only
// aborts, so it is returned with this error (and a command exits non-zero) rather than as a
// success. First is the first run's error.
type AllAbortedError struct {
	Bench string // the runner, e.g. "Run"
	Runs  int
	First error
}

func (e *AllAbortedError) Error() string {
	return fmt.Sprintf("bench: %s: every run aborted (runs=%d); the first: %v", e.Bench, e.Runs, e.First)
}

func (e *AllAbortedError) Unwrap() error { return e.First }

// Outcome is what one run of a method on one posterior returns.
type Outcome struct {
	// Draws are draws of the model's reported quantities (Model.Names order) on the
	// constrained scale, as one or more chains.
	Draws     *diag.Draws
	KHat      float64 // PSIS k̂ in unconstrained space; NaN when the method has none
	GradEvals int     // target gradient evaluations, initialisation included
	Converged bool
	Status    string // how the run ended, in words
	// wall, when not zero, replaces the measured wall time of the run (a method timed by
	// an external program's own clock).
	wall time.Duration
}

// RunFunc runs a method once on model m with the given seed. Errors are failures of the run
// (an abort); they are reported in the table, not fatal to the benchmark, except a cancelled
// context.
type RunFunc func(ctx context.Context, m *zoo.Model, seed uint64, opt RunOptions) (*Outcome, error)

// Method is a way of approximating a posterior that the benchmark can run: a VI family with
// an objective (VIMethod), a flow, a sampler.
type Method struct {
	Name  string // command-line name, e.g. "fullrank"
	About string // one line for the report
	// Stan is the Stan ADVI algorithm printed beside this method's rows.
	Stan StanAlgo
	// Gaussian marks a Gaussian VI family: the verdict compares the best Gaussian method's
	// median W1/sd with Stan ADVI's best.
	Gaussian bool
	// Flow marks a normalizing-flow family: the report adds a table of the best flow per
	// posterior against issue 4's target (k̂ < 0.7 and W1/sd ≤ 0.10).
	Flow bool
	Run  RunFunc
}

// Methods returns every method the benchmark can run, in report order: the Gaussian and flow
// recipes (fit.DefaultRecipe of each kind, run by RecipeMethod; each flow also cold, from the
// Laplace start — the default since issue 17 — and "-before", fit.PreviousFlowRecipe) and NUTS. It is a table, built anew on each call: no registry.
func Methods() []Method {
	gauss := []struct {
		kind, about string
		stan        StanAlgo
	}{
		{fit.KindMeanField, "mean-field Gaussian", StanMeanField},
		{fit.KindFullRank, "full-rank Gaussian (Cholesky)", StanFullRank},
		{fit.KindLowRank, "rank-⌈√d⌉ plus diagonal Gaussian", StanNone},
	}
	var out []Method
	for _, g := range gauss {
		out = append(out, RecipeMethod(g.kind, g.about, g.stan, fit.DefaultRecipe(g.kind)))
	}
	flows := []struct{ kind, about string }{
		{fit.KindMAF, "2 IAF layers (MADE 32×32 tanh, direct connections)"},
		{fit.KindRealNVP, "4 affine coupling layers (MLP 32×32 tanh)"},
		{fit.KindBernstein, "triangular Bernstein flow (BF-VI; degree 20, MADE 10×10 tanh, direct connections, linear tails)"},
	}
	for _, f := range flows {
		warm := fit.DefaultRecipe(f.kind)
		cold := fit.DefaultRecipe(f.kind)
		cold.WarmStart = fit.WarmNone
		out = append(out, RecipeMethod(f.kind, f.about, StanNone, warm), RecipeMethod(f.kind+"-cold", f.about, StanNone, cold),
			RecipeMethod(f.kind+"-before", f.about, StanNone, fit.PreviousFlowRecipe(f.kind)))
	}
	return append(out, nutsMethod())
}

// MethodNames returns the names of Methods, in order.
func MethodNames() []string {
	var names []string
	for _, m := range Methods() {
		names = append(names, m.Name)
	}
	return names
}

// LookupMethod returns the method of Methods called name.
func LookupMethod(name string) (Method, error) {
	for _, m := range Methods() {
		if m.Name == name {
			return m, nil
		}
	}
	return Method{}, fmt.Errorf("bench: unknown method %q (have %s)", name, strings.Join(MethodNames(), ", "))
}

// RecipeMethod returns a method that runs recipe r with fit.Run — the seed, the iteration
// cap (RunOptions.MaxIter, when set) and the diagnostic draws (RunOptions.Draws, when set)
// of each run written into it — and reports the draws constrained to the model's reported
// quantities, with the fit's k̂ and gradient count (a warm start's stage included). vigo fit
// with the same recipe runs the same fit. About gets the recipe's estimator, S, step size,
// tolerance and warm start appended.
func RecipeMethod(name, about string, stan StanAlgo, r fit.Recipe) Method {
	about = fmt.Sprintf("%s; %s, S %d, %s step %g, %s rule tol %g", about, estimatorWords(r.Objective.Estimator),
		r.Objective.Samples, r.Optimizer.Name, r.Optimizer.LR, r.Stop.Rule, r.Stop.Tol)
	flow := fit.IsFlowKind(r.Family.Kind)
	if flow && r.WarmStart == fit.WarmFullRank {
		about += "; warm start from a full-rank fit"
	} else if flow {
		about += "; Laplace start"
	}
	return Method{Name: name, About: about, Stan: stan, Gaussian: !flow, Flow: flow,
		Run: func(ctx context.Context, m *zoo.Model, seed uint64, opt RunOptions) (*Outcome, error) {
			rr := r
			rr.Seed = seed
			if opt.MaxIter > 0 {
				rr.MaxIter = opt.MaxIter
			}
			if opt.Draws > 0 {
				rr.DiagDraws = opt.Draws
			}
			res, err := fit.Run(ctx, m, rr, fit.WithWorkers(opt.Workers))
			if err != nil {
				return nil, err
			}
			return fitOutcome(m, res), nil
		}}
}

// estimatorWords names a gradient estimator for the report.
func estimatorWords(est string) string {
	switch est {
	case fit.EstSTL:
		return "ELBO with STL gradient"
	case fit.EstELBO:
		return "plain ELBO gradient"
	case fit.EstIWELBO:
		return "IWELBO"
	case fit.EstDReG:
		return "IWELBO with DReG gradient"
	}
	return est
}

// fitOutcome turns a fit into an Outcome: the draws constrained to the model's reported
// quantities, with the fit's k̂ and gradient count.
func fitOutcome(m *zoo.Model, res *fit.Result) *Outcome {
	d := m.Dim()
	names := m.Names()
	n := len(res.Draws) / d
	rows := make([]float64, 0, n*len(names))
	x := make([]float64, len(names))
	for i := range n {
		rows = append(rows, m.Constrain(x, res.Draws[i*d:(i+1)*d])...)
	}
	return &Outcome{
		Draws:     &diag.Draws{Names: names, Chains: [][]float64{rows}},
		KHat:      res.KHat,
		GradEvals: res.GradEvals,
		Converged: res.Status == fit.Converged,
		Status:    res.Reason,
	}
}

// StanRef is one row of targets.md: Stan 2.21 ADVI (median over 3 seeds) and NUTS on a
// posterior, against the posteriordb reference draws.
type StanRef struct {
	Dims                            int
	MFW1SD, MFSDRatio, MFKHat       float64
	FRW1SD, FRSDRatio, FRKHat       float64
	NUTSW1SD, NUTSWall, NUTSESSPerS float64 // NUTS: W1/sd, sampling wall s, min bulk ESS per s
}

// W1SD returns the W1/sd of the given algorithm (NaN for StanNone).
func (s StanRef) W1SD(a StanAlgo) float64 {
	switch a {
	case StanMeanField:
		return s.MFW1SD
	case StanFullRank:
		return s.FRW1SD
	}
	return math.NaN()
}

// Best returns Stan ADVI's better algorithm on W1/sd and its value.
func (s StanRef) Best() (StanAlgo, float64) {
	if s.FRW1SD < s.MFW1SD {
		return StanFullRank, s.FRW1SD
	}
	return StanMeanField, s.MFW1SD
}

// StanTargets are the numbers of ../shared/docs/targets.md by posteriordb posterior name.
var StanTargets = map[string]StanRef{
	"arK-arK":                                 {7, 0.538, 0.512, 0.93, 0.142, 1.06, 0.52, 0.0242, 9.7, 294},
	"diamonds-diamonds":                       {26, 4.64, 0.715, 7.53, 6.30, 2.58, 32.77, 0.0311, 274.1, 5},
	"earnings-logearn_interaction":            {5, 5.60, 0.277, 11.36, 4.91e+04, 4.12e+04, math.Inf(1), 0.0270, 249.3, 3},
	"eight_schools-eight_schools_noncentered": {10, 0.186, 0.843, 0.51, 0.523, 1.10, 0.54, 0.0371, 0.4, 6161},
	"garch-garch11":                           {4, 0.259, 0.799, 0.80, 0.271, 1.12, 0.66, 0.0177, 4.1, 438},
	"gp_pois_regr-gp_pois_regr":               {13, 9.77, 2.89, 41.56, 8.95, 4.81, 52.82, 0.0188, 16.1, 88},
	"hmm_example-hmm_example":                 {6, 0.282, 1.07, 0.45, 0.171, 1.12, 0.40, 0.0233, 4.7, 494},
	"kidiq-kidscore_momhsiq":                  {4, 2.75, 0.478, 0.68, 3.42, 1.11, 1.07, 0.0260, 28.2, 55},
	"low_dim_gauss_mix-low_dim_gauss_mix":     {5, 1.34, 1.06, 0.91, 42.1, 6.64, 3.68, 0.0250, 17.0, 226},
	"mesquite-logmesquite":                    {8, 0.428, 0.501, 0.78, 0.348, 1.11, 0.23, 0.0246, 5.3, 298},
	"nes2000-nes":                             {10, 0.675, 0.436, 1.19, 1.31, 1.29, 1.44, 0.0266, 90.0, 20},
	"sblrc-blr":                               {6, 69.0, 8.04, 4.61, 38.7, 18.5, 3.76, 0.0440, 1.4, 570},
}

// Metrics are the accuracy measures of one set of draws against the reference draws.
type Metrics struct {
	W1SD, SDRatio, MaxMeanDiffSD float64
}

// Measure compares draws with the reference draws ref (matched by name; see diag.Compare).
// Cost O(P·N log N).
func Measure(draws, ref *diag.Draws) (Metrics, error) {
	d, err := diag.Compare(draws, ref)
	if err != nil {
		return Metrics{}, fmt.Errorf("bench: Measure: %w", err)
	}
	return Metrics{W1SD: d.W1SD, SDRatio: d.SDRatio, MaxMeanDiffSD: d.MaxMeanDiffSD}, nil
}

// SeedResult is one run: posterior × method × seed.
type SeedResult struct {
	Posterior, Method string
	Seed              uint64
	Wall              time.Duration
	GradEvals         int
	KHat              float64
	Metrics
	Converged bool
	Status    string
	Err       error // the run aborted; the other fields are zero
}

// Config says what the benchmark runs.
type Config struct {
	Posteriors []string // zoo short names or posteriordb names; nil means all of zoo.Names()
	Methods    []string // method names (Methods, then Extra); nil means meanfield, fullrank, lowrank
	Extra      []Method // methods beyond the table of Methods (a caller's own), selectable by name
	Seeds      int      // seeds 1..Seeds; 0 means 3
	Dir        string   // posteriordb directory (required)
	// Source is SourceZoo ("" too: the hand-written models) or SourceStan (each posterior's
	// Stan program from Full/models compiled by package stan; Posteriors nil means every
	// posterior with reference draws in Dir or Full, StanReferencePosteriors).
	Source string
	Full   string // posteriordb-full directory (SourceStan)
	RunOptions
	// Progress, when not nil, is called after every run (from the benchmark's goroutine).
	Progress func(SeedResult)
}

// DefaultMethods are the methods run when Config.Methods is nil.
var DefaultMethods = []string{"meanfield", "fullrank", "lowrank"}

// Report holds every run of a benchmark.
type Report struct {
	Posteriors []string // posteriordb names, in run order
	Methods    []Method
	Seeds      int
	Options    RunOptions
	Results    []SeedResult
}

// Run runs cfg's methods on cfg's posteriors with seeds 1..Seeds, one run at a time (wall
// times are per run). A failed run is recorded as an abort; when every run aborts, the report
// is returned with an *AllAbortedError. A cancelled context stops the benchmark and returns
// the partial report with the context's error. Negative Seeds or RunOptions are an error
// before any run.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Seeds == 0 {
		cfg.Seeds = 3
	}
	if cfg.Seeds < 0 {
		return nil, fmt.Errorf("bench: Run: Seeds must be positive (Seeds=%d)", cfg.Seeds)
	}
	if err := cfg.RunOptions.validate("Run"); err != nil {
		return nil, err
	}
	mnames := cfg.Methods
	if mnames == nil {
		mnames = DefaultMethods
	}
	rep := &Report{Seeds: cfg.Seeds, Options: cfg.RunOptions}
	for _, n := range mnames {
		i := slices.IndexFunc(cfg.Extra, func(m Method) bool { return m.Name == n })
		if i >= 0 {
			rep.Methods = append(rep.Methods, cfg.Extra[i])
			continue
		}
		m, err := LookupMethod(n)
		if err != nil {
			return nil, err
		}
		rep.Methods = append(rep.Methods, m)
	}
	dir := cfg.Dir
	if dir == "" {
		return nil, errors.New("bench: Run: Config.Dir is empty: give the posteriordb directory")
	}
	loads, err := posteriorLoaders(cfg)
	if err != nil {
		return nil, err
	}
	for _, ld := range loads {
		m, ref, err := ld.load()
		if err != nil && cfg.Source != SourceStan {
			return nil, err
		}
		rep.Posteriors = append(rep.Posteriors, ld.name)
		if err != nil { // a Stan program that does not compile: an abort row per method and seed
			for _, meth := range rep.Methods {
				for s := 1; s <= cfg.Seeds; s++ {
					r := SeedResult{Posterior: ld.name, Method: meth.Name, Seed: uint64(s), Err: err}
					rep.Results = append(rep.Results, r)
					if cfg.Progress != nil {
						cfg.Progress(r)
					}
				}
			}
			continue
		}
		for _, meth := range rep.Methods {
			for s := 1; s <= cfg.Seeds; s++ {
				r := runOne(ctx, m, ref, meth, uint64(s), cfg.RunOptions)
				if err := ctx.Err(); err != nil {
					return rep, err
				}
				rep.Results = append(rep.Results, r)
				if cfg.Progress != nil {
					cfg.Progress(r)
				}
			}
		}
	}
	if len(rep.Results) > 0 && !slices.ContainsFunc(rep.Results, func(r SeedResult) bool { return r.Err == nil }) {
		return rep, &AllAbortedError{Bench: "Run", Runs: len(rep.Results), First: rep.Results[0].Err}
	}
	return rep, nil
}

func runOne(ctx context.Context, m *zoo.Model, ref *diag.Draws, meth Method, seed uint64, opt RunOptions) SeedResult {
	r := SeedResult{Posterior: m.Posterior, Method: meth.Name, Seed: seed}
	start := time.Now()
	out, err := meth.Run(ctx, m, seed, opt)
	r.Wall = time.Since(start)
	if err == nil {
		r.Metrics, err = Measure(out.Draws, ref)
	}
	if err != nil {
		r.Err = err
		return r
	}
	r.GradEvals, r.KHat, r.Converged, r.Status = out.GradEvals, out.KHat, out.Converged, out.Status
	if out.wall > 0 {
		r.Wall = out.wall
	}
	return r
}

// loader loads one posterior's model and reference draws.
type loader struct {
	name string
	load func() (*zoo.Model, *diag.Draws, error)
}

// posteriorLoaders returns, for each posterior cfg runs (sorted by posteriordb name, each
// once), a function loading its model and reference draws.
func posteriorLoaders(cfg Config) ([]loader, error) {
	var loads []loader
	switch cfg.Source {
	case "", SourceZoo:
		pnames := cfg.Posteriors
		if pnames == nil {
			pnames = zoo.Names()
		}
		infos := make([]zoo.Info, len(pnames))
		for i, n := range pnames {
			info, err := zoo.Get(n)
			if err != nil {
				return nil, fmt.Errorf("bench: Run: %w", err)
			}
			infos[i] = info
		}
		slices.SortStableFunc(infos, func(a, b zoo.Info) int { return strings.Compare(a.Posterior, b.Posterior) })
		infos = slices.CompactFunc(infos, func(a, b zoo.Info) bool { return a.Name == b.Name })
		for _, info := range infos {
			loads = append(loads, loader{info.Posterior, func() (*zoo.Model, *diag.Draws, error) {
				m, err := zoo.Load(info.Name, cfg.Dir)
				if err != nil {
					return nil, nil, fmt.Errorf("bench: Run: %w", err)
				}
				ref, err := referenceDraws(m, cfg.Dir)
				return m, ref, err
			}})
		}
	case SourceStan:
		if cfg.Full == "" {
			return nil, errors.New("bench: Run: Config.Full is empty: the stan source needs the posteriordb-full directory")
		}
		pnames := cfg.Posteriors
		if pnames == nil {
			var err error
			if pnames, err = StanReferencePosteriors(cfg.Dir, cfg.Full); err != nil {
				return nil, err
			}
		}
		for i, n := range pnames {
			if info, err := zoo.Get(n); err == nil {
				pnames[i] = info.Posterior
			}
		}
		slices.Sort(pnames)
		for _, n := range slices.Compact(pnames) {
			loads = append(loads, loader{n, func() (*zoo.Model, *diag.Draws, error) {
				m, dir, err := stanPosterior(cfg.Dir, cfg.Full, n)
				if err != nil {
					return nil, nil, err
				}
				ref, err := referenceDraws(m, dir)
				return m, ref, err
			}})
		}
	default:
		return nil, fmt.Errorf("bench: Run: unknown Source %q (want %q or %q)", cfg.Source, SourceZoo, SourceStan)
	}
	return loads, nil
}

// referenceDraws loads the posterior's reference draws of the model's reported quantities as
// diag.Draws (one chain per posteriordb chain).
func referenceDraws(m *zoo.Model, dir string) (*diag.Draws, error) {
	all, err := model.LoadDraws(m.DrawsPath(dir))
	if err != nil {
		return nil, fmt.Errorf("bench: reference draws: %w", err)
	}
	names := m.Names()
	sel, err := all.Select(names...)
	if err != nil {
		return nil, fmt.Errorf("bench: reference draws (posterior=%s): %w", m.Posterior, err)
	}
	return sel, nil
}

// Summary is the medians over seeds of one posterior × method.
type Summary struct {
	Posterior string
	Method    Method
	Runs      int // runs that did not abort
	Converged int
	Aborts    []SeedResult
	Wall      float64 // seconds
	GradEvals float64
	KHat      float64
	Metrics
}

// Median returns the median of x (mean of the two middle values for even length), NaN for
// none. NaNs sort first and +Inf last (slices.Sort), so one non-finite value among three
// seeds does not decide the median. x is not modified.
func Median(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Summaries returns the medians over seeds for every posterior × method, posteriors in run
// order and methods in Config order.
func (r *Report) Summaries() []Summary {
	var out []Summary
	for _, p := range r.Posteriors {
		for _, m := range r.Methods {
			s := Summary{Posterior: p, Method: m}
			var wall, ge, kh, w1, sdr, mmd []float64
			for _, res := range r.Results {
				if res.Posterior != p || res.Method != m.Name {
					continue
				}
				if res.Err != nil {
					s.Aborts = append(s.Aborts, res)
					continue
				}
				s.Runs++
				if res.Converged {
					s.Converged++
				}
				wall = append(wall, res.Wall.Seconds())
				ge = append(ge, float64(res.GradEvals))
				kh = append(kh, res.KHat)
				w1 = append(w1, res.W1SD)
				sdr = append(sdr, res.SDRatio)
				mmd = append(mmd, res.MaxMeanDiffSD)
			}
			s.Wall, s.GradEvals, s.KHat = Median(wall), Median(ge), Median(kh)
			s.Metrics = Metrics{W1SD: Median(w1), SDRatio: Median(sdr), MaxMeanDiffSD: Median(mmd)}
			out = append(out, s)
		}
	}
	return out
}

// Verdict is the per-posterior comparison of vigo's best Gaussian family with Stan ADVI's
// best, both by median W1/sd.
type Verdict struct {
	Posterior  string
	VigoMethod string  // best Gaussian method ("" when none ran or all aborted)
	VigoW1SD   float64 // its median W1/sd
	StanAlgo   StanAlgo
	StanW1SD   float64
	NUTSW1SD   float64
	Known      bool // Stan numbers exist for this posterior
	Beats      bool // vigo's W1/sd ≤ Stan's (no worse)
}

// Verdicts returns one verdict per posterior from the summaries.
func (r *Report) Verdicts() []Verdict {
	sums := r.Summaries()
	var out []Verdict
	for _, p := range r.Posteriors {
		v := Verdict{Posterior: p, VigoW1SD: math.NaN(), StanW1SD: math.NaN(), NUTSW1SD: math.NaN()}
		for _, s := range sums {
			if s.Posterior != p || !s.Method.Gaussian || s.Runs == 0 || math.IsNaN(s.W1SD) {
				continue
			}
			if v.VigoMethod == "" || s.W1SD < v.VigoW1SD {
				v.VigoMethod, v.VigoW1SD = s.Method.Name, s.W1SD
			}
		}
		if ref, ok := StanTargets[p]; ok {
			v.Known = true
			v.StanAlgo, v.StanW1SD = ref.Best()
			v.NUTSW1SD = ref.NUTSW1SD
			v.Beats = v.VigoMethod != "" && v.VigoW1SD <= v.StanW1SD
		}
		out = append(out, v)
	}
	return out
}

// num formats a metric with three significant digits, "—" for NaN.
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case math.IsInf(x, 1):
		return "Inf"
	case math.IsInf(x, -1):
		return "−Inf"
	case x != 0 && (math.Abs(x) >= 1e4 || math.Abs(x) < 1e-3):
		return fmt.Sprintf("%.2e", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// Markdown writes the report: header, the table of medians with Stan ADVI beside each
// method, the verdict table, aborted runs and the per-seed results.
func (r *Report) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	resultmd.Write(&b, "vigo vs Stan ADVI on the posteriordb public posteriors", h)
	opt := r.Options
	p("- seeds 1..%d; iteration cap %s; draws per run %s; workers %s\n", r.Seeds, orDefault(opt.MaxIter), orDefault(opt.Draws), orDefault(opt.Workers))
	p("- methods:\n")
	for _, m := range r.Methods {
		p("  - `%s`: %s\n", m.Name, m.About)
	}
	p("\nMetrics (targets.md): against the 10,000 posteriordb reference draws on the constrained scale; ")
	p("W1/sd and sd ratio are means over parameters, max|Δmean|/sd the maximum; k̂ is PSIS Pareto k̂ of ")
	p("log p − log q on the run's draws in unconstrained space. Values are medians over seeds; ")
	p("\"conv\" counts seeds whose stopping rule converged (the rest hit the iteration cap). ")
	p("Stan columns: Stan 2.21 ADVI with defaults (MF = meanfield, FR = fullrank), from targets.md; ")
	p("\"W1/sd vs Stan\" says whether the row's W1/sd is no worse than that Stan algorithm's.\n\n")

	p("## Medians over seeds\n\n")
	p("| posterior | method | conv | wall s | grad evals | k̂ | max\\|Δmean\\|/sd | sd ratio | W1/sd | Stan | Stan k̂ | Stan sd ratio | Stan W1/sd | W1/sd vs Stan |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n")
	for _, s := range r.Summaries() {
		ref, known := StanTargets[s.Posterior]
		sk, ssd, sw, cmp := "—", "—", "—", "—"
		if known && s.Method.Stan != StanNone && !math.IsNaN(s.W1SD) {
			cmp = "worse"
			if s.W1SD <= ref.W1SD(s.Method.Stan) {
				cmp = "better"
			}
		}
		if known {
			switch s.Method.Stan {
			case StanMeanField:
				sk, ssd, sw = num(ref.MFKHat), num(ref.MFSDRatio), num(ref.MFW1SD)
			case StanFullRank:
				sk, ssd, sw = num(ref.FRKHat), num(ref.FRSDRatio), num(ref.FRW1SD)
			}
		}
		conv := fmt.Sprintf("%d/%d", s.Converged, s.Runs+len(s.Aborts))
		if len(s.Aborts) > 0 {
			conv += fmt.Sprintf(" (%d aborted)", len(s.Aborts))
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			s.Posterior, s.Method.Name, conv, num(s.Wall), gradNum(s.GradEvals), num(s.KHat),
			num(s.MaxMeanDiffSD), num(s.SDRatio), num(s.W1SD), s.Method.Stan, sk, ssd, sw, cmp)
	}

	vs := r.Verdicts()
	wins, known := 0, 0
	for _, v := range vs {
		if v.Known {
			known++
			if v.Beats {
				wins++
			}
		}
	}
	p("\n## Verdict: vigo's best Gaussian family vs Stan ADVI's best (median W1/sd)\n\n")
	p("vigo's best Gaussian family is no worse than Stan ADVI's best on %d of %d posteriors.\n\n", wins, known)
	p("| posterior | vigo best | vigo W1/sd | Stan best | Stan W1/sd | NUTS W1/sd | verdict |\n")
	p("|---|---|---:|---|---:|---:|---|\n")
	for _, v := range vs {
		p("| %s | %s | %s | %s | %s | %s | %s |\n", v.Posterior, orDash(v.VigoMethod), num(v.VigoW1SD),
			v.StanAlgo, num(v.StanW1SD), num(v.NUTSW1SD), verdictWords(v))
	}

	if fv := r.FlowVerdicts(); len(fv) > 0 {
		met := 0
		for _, v := range fv {
			if v.Meets {
				met++
			}
		}
		p("\n## Flows: the best flow per posterior vs the target k̂ < %.2g and W1/sd ≤ %.2g (medians)\n\n", FlowKHatTarget, FlowW1SDTarget)
		p("The best flow meets both on %d of %d posteriors. Best = the lowest median W1/sd among the flows with median k̂ < %.2g, else the lowest W1/sd.\n\n", met, len(fv), FlowKHatTarget)
		p("| posterior | best flow | k̂ | W1/sd | best Gaussian W1/sd | target met |\n")
		p("|---|---|---:|---:|---:|---|\n")
		for _, v := range fv {
			words := "**yes**"
			switch {
			case v.Method == "":
				words = "**no**: no flow run finished"
			case !v.Meets:
				var why []string
				if !(v.KHat < FlowKHatTarget) {
					why = append(why, "k̂ "+num(v.KHat)+" ≥ "+num(FlowKHatTarget))
				}
				if !(v.W1SD <= FlowW1SDTarget) {
					why = append(why, "W1/sd "+num(v.W1SD)+" > "+num(FlowW1SDTarget))
				}
				words = "**no**: " + strings.Join(why, ", ")
			}
			p("| %s | %s | %s | %s | %s | %s |\n", v.Posterior, orDash(v.Method), num(v.KHat), num(v.W1SD), num(v.GaussW1SD), words)
		}
	}

	var aborts []SeedResult
	for _, res := range r.Results {
		if res.Err != nil {
			aborts = append(aborts, res)
		}
	}
	if len(aborts) > 0 {
		p("\n## Aborted runs\n\n")
		for _, a := range aborts {
			p("- %s, %s, seed %d: %s\n", a.Posterior, a.Method, a.Seed, oneLine(a.Err.Error()))
		}
	}

	p("\n## Every run\n\n")
	p("| posterior | method | seed | wall s | grad evals | k̂ | max\\|Δmean\\|/sd | sd ratio | W1/sd | stopped |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, res := range r.Results {
		if res.Err != nil {
			p("| %s | %s | %d | %s | — | — | — | — | — | aborted |\n", res.Posterior, res.Method, res.Seed, num(res.Wall.Seconds()))
			continue
		}
		p("| %s | %s | %d | %s | %d | %s | %s | %s | %s | %s |\n", res.Posterior, res.Method, res.Seed,
			num(res.Wall.Seconds()), res.GradEvals, num(res.KHat), num(res.MaxMeanDiffSD),
			num(res.SDRatio), num(res.W1SD), oneLine(res.Status))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Issue 4's target for the best flow on a posterior.
const (
	FlowKHatTarget = 0.7
	FlowW1SDTarget = 0.10
)

// FlowVerdict is the best flow method on a posterior by median metrics.
type FlowVerdict struct {
	Posterior string
	Method    string // "" when no flow run finished
	KHat      float64
	W1SD      float64
	GaussW1SD float64 // the best Gaussian method's median W1/sd (NaN when none ran)
	Meets     bool    // KHat < FlowKHatTarget and W1SD ≤ FlowW1SDTarget
}

// FlowVerdicts returns, per posterior, the best flow: the lowest median W1/sd among the flow
// methods whose median k̂ is below FlowKHatTarget, else the lowest median W1/sd. Empty when no
// flow method ran.
func (r *Report) FlowVerdicts() []FlowVerdict {
	anyFlow := false
	for _, m := range r.Methods {
		anyFlow = anyFlow || m.Flow
	}
	if !anyFlow {
		return nil
	}
	sums := r.Summaries()
	var out []FlowVerdict
	for _, p := range r.Posteriors {
		v := FlowVerdict{Posterior: p, KHat: math.NaN(), W1SD: math.NaN(), GaussW1SD: math.NaN()}
		better := func(s Summary) bool {
			if v.Method == "" {
				return true
			}
			okS, okV := s.KHat < FlowKHatTarget, v.KHat < FlowKHatTarget
			if okS != okV {
				return okS
			}
			return s.W1SD < v.W1SD
		}
		for _, s := range sums {
			if s.Posterior != p || s.Runs == 0 || math.IsNaN(s.W1SD) {
				continue
			}
			if s.Method.Gaussian && !(s.W1SD >= v.GaussW1SD) {
				v.GaussW1SD = s.W1SD
			}
			if s.Method.Flow && better(s) {
				v.Method, v.KHat, v.W1SD = s.Method.Name, s.KHat, s.W1SD
			}
		}
		v.Meets = v.Method != "" && v.KHat < FlowKHatTarget && v.W1SD <= FlowW1SDTarget
		out = append(out, v)
	}
	return out
}

func verdictWords(v Verdict) string {
	switch {
	case !v.Known:
		return "no Stan numbers"
	case v.VigoMethod == "":
		return "**loses**: no vigo Gaussian run finished"
	case v.Beats:
		return fmt.Sprintf("**vigo better** (%s %s ≤ Stan %s %s)", v.VigoMethod, num(v.VigoW1SD), v.StanAlgo, num(v.StanW1SD))
	}
	return fmt.Sprintf("**Stan better** (%s %s > Stan %s %s)", v.VigoMethod, num(v.VigoW1SD), v.StanAlgo, num(v.StanW1SD))
}

func gradNum(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.0f", x)
}

func orDefault(n int) string {
	if n == 0 {
		return "default"
	}
	return fmt.Sprint(n)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// oneLine makes s safe inside a markdown table cell.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", "\\|")
}
