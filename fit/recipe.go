package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/objective"
)

// RecipeVersion is the version of the Recipe's JSON form. A reader accepts versions up to it
// and refuses newer ones, naming the field. History: version 2 added init.starts and
// init.points (multi-start); a version-1 recipe without init.starts runs one start, as it
// did when it was written. Version 3 added objective.antithetic, stop.confirm_best and the
// stop rule "noise" (issue 17's flow defaults); a version-2 recipe lacks the two fields and
// runs as it did. An older vigo refuses a version-3 recipe rather than ignore those fields.
// A change of DefaultRecipe's values alone (session 4: realnvp's stop.window 7; session 5: the
// flows' STL gradient, 12 draws, windows and bernstein's affine layer) is no new version: a
// recipe stores every field, so one written earlier runs as it was written.
const RecipeVersion = 3

// Recipe fully describes a fit: the family, the objective and its gradient estimator, the
// optimiser, the stopping rule, the iteration cap, the warm start, the initial point, the seed
// and the diagnostics. Every caller that runs the same Recipe on the same target — vigo fit,
// vigo bench, Auto's stages, x/bfvi, a user's program — runs the same estimator and gets the
// same fit bit for bit (Run; the number of workers never changes the result).
//
// A Recipe stores the values that run, never "0 means default": start from DefaultRecipe(kind),
// which fills in what is right for that kind, and change fields. Validate names every bad
// value. The JSON form (snake_case field names) is what fit.json stores under "recipe".
type Recipe struct {
	Version   int             `json:"version"`
	Family    FamilyRecipe    `json:"family"`
	Objective ObjectiveRecipe `json:"objective"`
	Optimizer OptimizerRecipe `json:"optimizer"`
	Stop      StopRecipe      `json:"stop"`
	// MaxIter is the iteration cap of the fit (of each stage of a warm-started flow).
	MaxIter int `json:"max_iter"`
	// WarmStart is WarmNone or WarmFullRank: fit DefaultRecipe(fullrank) first (with this
	// Recipe's seed, cap, init, NaN policy and diagnostic draws) and start the family at its
	// Gaussian moment match, in its whitened coordinates (WithWarmStart). Flows default to
	// WarmFullRank.
	WarmStart string     `json:"warm_start"`
	Init      InitRecipe `json:"init"`
	Seed      uint64     `json:"seed"`
	// DiagDraws are the fresh draws of the final ELBO, PSIS k̂ and the output.
	DiagDraws int `json:"diag_draws"`
	// NaN is NaNPolicySkip (drop a step with a non-finite gradient; fail after MaxSkips in a
	// row) or NaNPolicyFail (fail at the first one).
	NaN      string `json:"nan"`
	MaxSkips int    `json:"max_skips"`
	// Ensemble, when not nil, makes the fit an ensemble of this recipe's family (see
	// EnsembleRecipe); nil: one fit.
	Ensemble *EnsembleRecipe `json:"ensemble,omitempty"`
}

// FamilyRecipe names a variational family and its structure.
type FamilyRecipe struct {
	// Kind is KindMeanField, KindFullRank, KindLowRank, KindMAF, KindRealNVP or KindBernstein.
	Kind string `json:"kind"`
	// Rank of the lowrank family; 0 takes ⌈√d⌉ for the target's dimension d.
	Rank int `json:"rank,omitempty"`
	// Flow is the structure of a flow kind (nil for the Gaussians); its zero fields take the
	// kind's defaults (FlowOptions).
	Flow *FlowOptions `json:"flow,omitempty"`
}

// Gradient estimators of ObjectiveRecipe.Estimator.
const (
	// EstELBO is the ELBO with the plain reparameterisation gradient (Kingma & Welling 2014).
	EstELBO = "elbo"
	// EstSTL is the ELBO with the sticking-the-landing gradient (Roeder, Wu & Duvenaud 2017).
	EstSTL = "stl"
	// EstIWELBO is the importance-weighted ELBO over K draws (Burda, Grosse & Salakhutdinov
	// 2016) with the plain reparameterisation gradient.
	EstIWELBO = "iwelbo"
	// EstDReG is the IWELBO with the doubly reparameterised gradient (Tucker et al. 2019).
	EstDReG = "dreg"
)

// ObjectiveRecipe is the objective, its gradient estimator and its Monte Carlo sizes.
type ObjectiveRecipe struct {
	Estimator string `json:"estimator"` // EstELBO, EstSTL, EstIWELBO or EstDReG
	Samples   int    `json:"samples"`   // S: groups of K draws per gradient step
	K         int    `json:"k"`         // draws per importance-weighted group; 1 for the ELBO
	// Antithetic pairs each step's base draws with their negatives (Config.Antithetic);
	// absent (false) in recipes written before it existed.
	Antithetic bool `json:"antithetic,omitempty"`
}

// Optimisers of OptimizerRecipe.Name.
const (
	OptAdam    = "adam"    // Adam (Kingma & Ba 2015), β₁ 0.9, β₂ 0.999
	OptRMSprop = "rmsprop" // RMSprop as Keras implements it (ρ 0.9, ε 1e-7), as the BF-VI paper uses
)

// OptimizerRecipe is the stochastic optimiser and its step size, in the fit's preconditioned
// coordinates (the stopping rule cuts it by ×0.2 on each plateau).
type OptimizerRecipe struct {
	Name string  `json:"name"` // OptAdam or OptRMSprop
	LR   float64 `json:"lr"`
}

// Stopping rules of StopRecipe.Rule.
const (
	RuleHalves = "halves" // StopHalves
	RuleTrend  = "trend"  // StopTrend
	RuleNoise  = "noise"  // StopNoise
)

// StopRecipe is the stopping rule and the tracking estimates it judges (see Config and
// StopRule for the rules' definitions).
type StopRecipe struct {
	Rule        string  `json:"rule"`         // RuleHalves, RuleTrend or RuleNoise
	EvalEvery   int     `json:"eval_every"`   // steps between tracking estimates
	EvalSamples int     `json:"eval_samples"` // draws of a tracking estimate (common random numbers)
	Window      int     `json:"window"`       // tracking estimates in the plateau window
	Tol         float64 `json:"tol"`          // plateau tolerance in nats
	Decays      int     `json:"decays"`       // step-size cuts (×0.2) before stopping
	TrendZ      float64 `json:"trend_z"`      // RuleTrend's and RuleNoise's one-sided normal quantile
	// Average is the time constant in steps of the moving average of the iterates; 0: none.
	Average int `json:"average"`
	// ConfirmBest checks the best tracked iterate on fresh draws before reporting it
	// (Config.ConfirmBest); absent (false) in recipes written before it existed.
	ConfirmBest bool `json:"confirm_best,omitempty"`
}

// Initialisation methods of InitRecipe.Method.
const (
	InitMethodLaplace = "laplace" // InitLaplace
	InitMethodZero    = "zero"    // InitZero
)

// InitRecipe says where the fit starts.
type InitRecipe struct {
	Method string  `json:"method"` // InitMethodLaplace or InitMethodZero
	Scale  float64 `json:"scale"`  // InitMethodZero's standard deviation
	Iter   int     `json:"iter"`   // L-BFGS cap of the Laplace mode search
	// Point, when not nil, is the initial point in unconstrained space (length d): the start
	// of the Laplace mode search, or the centre of InitMethodZero's Gaussian. vigo fit --init
	// reads it from CmdStan's init JSON on the constrained scale.
	Point []float64 `json:"point,omitempty"`
	// Starts is the number of Laplace mode searches (Config.Starts): start 0 at Point (or 0),
	// then Points, then uniform(−r, r)^d draws from streams of the seed (r = 2, 4, 8 in turn);
	// q starts at the mode
	// of highest Laplace evidence, and the verdict reports the modes found. 1 to MaxStarts,
	// ≥ 1 + len(Points); 1 with method zero. DefaultRecipe: DefaultStarts. vigo fit --starts.
	Starts int `json:"starts"`
	// StartsMax, when above Starts, lets the search double its starts up to it while modes
	// reached by a single start suggest unseen ones (Config.StartsMax, UnseenModeTol); 0: no
	// doubling. At most MaxStarts. DefaultRecipe: DefaultStartsMax.
	StartsMax int `json:"starts_max"`
	// Points are further user-given starting points of the mode search, unconstrained
	// (length d each).
	Points [][]float64 `json:"points,omitempty"`
}

// DefaultStarts is DefaultRecipe's init.starts: the mode searches of a default fit. Each costs
// an L-BFGS run and a Hessian, small next to the VI fit (bench/results/multistart_cost.md);
// a mode whose basin covers a fraction f of each start box is missed by the K − 1 random
// starts with probability (1 − f)^(K−1) (16: ≈ 4% for f = 0.2; the trust benchmark's two-mode
// mixture in d = 2 was missed by the 7 random starts of one seed in 3 with K = 8).
const DefaultStarts = 16

// DefaultStartsMax is DefaultRecipe's init.starts_max: the doubling stops at 64 starts.
const DefaultStartsMax = 64

// Warm starts of Recipe.WarmStart.
const (
	WarmNone     = "none"
	WarmFullRank = "fullrank"
)

// NaN policies of Recipe.NaN.
const (
	NaNPolicySkip = "skip"
	NaNPolicyFail = "fail"
)

// Kinds lists every family kind a Recipe can name, in order of flexibility.
func Kinds() []string {
	return []string{KindMeanField, KindFullRank, KindLowRank, KindMAF, KindRealNVP, KindBernstein}
}

// IsFlowKind reports whether kind is one of the flow families.
func IsFlowKind(kind string) bool {
	return kind == KindMAF || kind == KindRealNVP || kind == KindBernstein
}

// DefaultRecipe returns the recipe vigo uses for family kind, every field filled in.
//
// The Gaussians (meanfield, fullrank, lowrank): the ELBO with the STL gradient, S = 8, Adam
// at 0.02, the half-means plateau rule (6 estimates of 256 draws every 100 steps, tol 0.02
// nats, 2 cuts), 20,000 steps, the Laplace start from the best of DefaultStarts mode searches
// (init.starts; the verdict reports the modes they found). STL is the Gaussians' estimator because its
// variance vanishes as q approaches the posterior; it is what the posteriordb benchmark
// measured.
//
// The flows: flowDefaults (fit/defaults.go) — the Laplace start, few draws per step with
// antithetic pairs, the noise rule (StopNoise) on cheap tracking estimates — chosen by
// measurement for fewer gradient evaluations at the same accuracy (bench/results/flows.md);
// PreviousFlowRecipe is the flow recipe of before.
//
// An unknown kind gives a recipe that Validate rejects, naming the kind.
func DefaultRecipe(kind string) Recipe {
	r := Recipe{
		Version:   RecipeVersion,
		Family:    FamilyRecipe{Kind: kind},
		Objective: ObjectiveRecipe{Estimator: EstSTL, Samples: 8, K: 1},
		Optimizer: OptimizerRecipe{Name: OptAdam, LR: 0.02},
		Stop: StopRecipe{Rule: RuleHalves, EvalEvery: 100, EvalSamples: 256, Window: 6, Tol: 0.02,
			Decays: 2, TrendZ: 1.645},
		MaxIter:   20000,
		WarmStart: WarmNone,
		Init:      InitRecipe{Method: InitMethodLaplace, Scale: 0.1, Iter: 1000, Starts: DefaultStarts, StartsMax: DefaultStartsMax},
		Seed:      1,
		DiagDraws: 1000,
		NaN:       NaNPolicySkip,
		MaxSkips:  100,
	}
	if IsFlowKind(kind) {
		flowDefaults(&r)
	}
	return r
}

// Limits on the sizes a Recipe can request, so that a recipe file, the recipe stored in a
// fit.json or a flag of vigo fit cannot make a fit allocate without bound. Validate checks
// the sizes alone, Run their products with the target's dimension d. They are hard caps, far
// above what a fit needs, because the buffers they size are held in memory at once:
//
//	MaxSamples      objective.samples and objective.samples × objective.k (draws per
//	                gradient step; vigo fit --samples, --k)
//	MaxEvalSamples  stop.eval_samples (draws of one tracking estimate)
//	MaxDiagDraws    diag_draws (vigo fit --draws, ×4 with --psis-resample)
//	MaxDrawValues   draws × d of one buffer of draws (2 GiB of float64): Run checks
//	                diag_draws·d, samples·k·d and eval_samples·d; write more draws with
//	                several runs of vigo draw with different --seed values
//	MaxTracePoints  max_iter / eval_every, the tracking estimates kept in the trace and in
//	                fit.json (vigo fit --iter); raise stop.eval_every for a longer run
//	MaxFlowWeights  the weights of a flow's conditioner networks over its layers (family.flow
//	                hidden, layers and degree; Run counts the input and output layers with d)
const (
	MaxSamples     = 1 << 16
	MaxEvalSamples = 1 << 20
	MaxDiagDraws   = 1 << 24
	MaxDrawValues  = 1 << 28
	MaxTracePoints = 1 << 20
	MaxFlowWeights = 1 << 26
)

// FieldError is a Recipe error that names the JSON field at fault ("optimizer.lr",
// "init.point[1]", "family.flow", …), so a caller can map it to its own name for the field
// (vigo fit maps it to a flag) without parsing the message.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports the first bad value of r, naming its JSON field; NaN and ±Inf are bad
// everywhere, and so are sizes above the limits (MaxSamples and the others, whose doc says
// how to go further). It does not know the target: Run checks the dimension-dependent values
// (the lowrank rank, the initial point's length, the sizes times d).
func (r *Recipe) Validate() error {
	bad := func(field string, v any, want string) error {
		return &FieldError{Field: field, Err: fmt.Errorf("fit: Recipe: %s = %v, want %s", field, v, want)}
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case r.Version < 1 || r.Version > RecipeVersion:
		return bad("version", r.Version, fmt.Sprintf("1 to %d (a newer vigo wrote it?)", RecipeVersion))
	case !oneOf(r.Family.Kind, Kinds()...):
		return bad("family.kind", fmt.Sprintf("%q", r.Family.Kind), strings.Join(Kinds(), ", "))
	case r.Family.Rank < 0:
		return bad("family.rank", r.Family.Rank, "≥ 1 (0: ⌈√d⌉)")
	case r.Family.Rank != 0 && r.Family.Kind != KindLowRank:
		return bad("family.rank", r.Family.Rank, "0 for family "+r.Family.Kind+" (a rank is for lowrank)")
	case r.Family.Flow != nil && !IsFlowKind(r.Family.Kind):
		return bad("family.flow", "set", "absent for family "+r.Family.Kind)
	case !oneOf(r.Objective.Estimator, EstELBO, EstSTL, EstIWELBO, EstDReG):
		return bad("objective.estimator", fmt.Sprintf("%q", r.Objective.Estimator), "elbo, stl, iwelbo or dreg")
	case r.Objective.Samples < 1 || r.Objective.Samples > MaxSamples:
		return bad("objective.samples", r.Objective.Samples, fmt.Sprintf("1 to %d (fit.MaxSamples, a hard cap)", MaxSamples))
	case r.Objective.K < 1 || r.Objective.K > MaxSamples:
		return bad("objective.k", r.Objective.K, fmt.Sprintf("1 to %d (fit.MaxSamples, a hard cap)", MaxSamples))
	case r.Objective.Samples*r.Objective.K > MaxSamples:
		return bad("objective.k", r.Objective.K, fmt.Sprintf("at most %d with objective.samples = %d: samples × k is at most %d draws per step (fit.MaxSamples, a hard cap)",
			MaxSamples/r.Objective.Samples, r.Objective.Samples, MaxSamples))
	case (r.Objective.Estimator == EstELBO || r.Objective.Estimator == EstSTL) && r.Objective.K != 1:
		return bad("objective.k", r.Objective.K, "1 for estimator "+r.Objective.Estimator+" (iwelbo or dreg for K > 1)")
	case !oneOf(r.Optimizer.Name, OptAdam, OptRMSprop):
		return bad("optimizer.name", fmt.Sprintf("%q", r.Optimizer.Name), "adam or rmsprop")
	case !(r.Optimizer.LR > 0) || !finite(r.Optimizer.LR):
		return bad("optimizer.lr", r.Optimizer.LR, "a finite value > 0")
	case !oneOf(r.Stop.Rule, RuleHalves, RuleTrend, RuleNoise):
		return bad("stop.rule", fmt.Sprintf("%q", r.Stop.Rule), "halves, trend or noise")
	case r.Stop.EvalEvery < 1:
		return bad("stop.eval_every", r.Stop.EvalEvery, "≥ 1")
	case r.Stop.EvalSamples < 1 || r.Stop.EvalSamples > MaxEvalSamples:
		return bad("stop.eval_samples", r.Stop.EvalSamples, fmt.Sprintf("1 to %d (fit.MaxEvalSamples, a hard cap)", MaxEvalSamples))
	case r.Stop.Window < 2 || (r.Stop.Rule != RuleHalves && r.Stop.Window < 3):
		return bad("stop.window", r.Stop.Window, "≥ 2 (≥ 3 for the trend and noise rules)")
	case !(r.Stop.Tol > 0) || !finite(r.Stop.Tol):
		return bad("stop.tol", r.Stop.Tol, "a finite value > 0")
	case r.Stop.Decays < 0:
		return bad("stop.decays", r.Stop.Decays, "≥ 0")
	case !(r.Stop.TrendZ > 0) || !finite(r.Stop.TrendZ):
		// > 0, not ≥ 0: Config reads a zero TrendZ as its default 1.645, so 0 would not run as written.
		return bad("stop.trend_z", r.Stop.TrendZ, "a finite value > 0")
	case r.Stop.Average < 0:
		return bad("stop.average", r.Stop.Average, "≥ 0 (0: no averaging)")
	case r.MaxIter < 1:
		return bad("max_iter", r.MaxIter, "≥ 1")
	case r.MaxIter/r.Stop.EvalEvery > MaxTracePoints:
		return bad("max_iter", r.MaxIter, fmt.Sprintf("at most %d with stop.eval_every = %d: the trace keeps at most %d tracking estimates (fit.MaxTracePoints; raise stop.eval_every for a longer run)",
			MaxTracePoints*r.Stop.EvalEvery, r.Stop.EvalEvery, MaxTracePoints))
	case !oneOf(r.WarmStart, WarmNone, WarmFullRank):
		return bad("warm_start", fmt.Sprintf("%q", r.WarmStart), "none or fullrank")
	case !oneOf(r.Init.Method, InitMethodLaplace, InitMethodZero):
		return bad("init.method", fmt.Sprintf("%q", r.Init.Method), "laplace or zero")
	case !(r.Init.Scale > 0) || !finite(r.Init.Scale):
		return bad("init.scale", r.Init.Scale, "a finite value > 0")
	case r.Init.Iter < 1:
		return bad("init.iter", r.Init.Iter, "≥ 1")
	case r.Init.Starts == 0 && r.Version == 1:
		// version 1 had no init.starts: one start
	case r.Init.Starts < 1 || r.Init.Starts > MaxStarts:
		return bad("init.starts", r.Init.Starts, fmt.Sprintf("1 to %d (fit.MaxStarts, a hard cap)", MaxStarts))
	case r.Init.Starts < 1+len(r.Init.Points):
		return bad("init.starts", r.Init.Starts, fmt.Sprintf("at least %d: the initial point and the %d init.points are starts", 1+len(r.Init.Points), len(r.Init.Points)))
	case r.Init.StartsMax < 0 || r.Init.StartsMax > MaxStarts:
		return bad("init.starts_max", r.Init.StartsMax, fmt.Sprintf("0 (no doubling) to %d (fit.MaxStarts, a hard cap)", MaxStarts))
	case r.Init.Starts > 1 && r.Init.Method != InitMethodLaplace:
		return bad("init.starts", r.Init.Starts, "1 with init.method "+r.Init.Method+" (starts are mode searches: method laplace)")
	case r.DiagDraws < 2 || r.DiagDraws > MaxDiagDraws:
		return bad("diag_draws", r.DiagDraws, fmt.Sprintf("2 to %d (fit.MaxDiagDraws, a hard cap; more draws: vigo draw with several --seed values)", MaxDiagDraws))
	case !oneOf(r.NaN, NaNPolicySkip, NaNPolicyFail):
		return bad("nan", fmt.Sprintf("%q", r.NaN), "skip or fail")
	case r.MaxSkips < 1:
		return bad("max_skips", r.MaxSkips, "≥ 1")
	}
	for i, v := range r.Init.Point {
		if !finite(v) {
			return bad(fmt.Sprintf("init.point[%d]", i), v, "a finite value")
		}
	}
	for k, p := range r.Init.Points {
		for i, v := range p {
			if !finite(v) {
				return bad(fmt.Sprintf("init.points[%d][%d]", k, i), v, "a finite value")
			}
		}
	}
	if r.Ensemble != nil {
		if err := r.Ensemble.validate(); err != nil {
			return err
		}
	}
	if err := r.validatePaper(); err != nil {
		return err
	}
	if f := r.Family.Flow; f != nil {
		// Count the hidden-to-hidden weights before NewFlowFamily builds the flow on ℝ¹, so
		// that hidden sizes within flow.MaxHiddenUnits but many of them do not allocate.
		if err := checkHidden("", f.Hidden); err != nil {
			return &FieldError{Field: "family.flow", Err: fmt.Errorf("fit: Recipe: family.flow: %w", err)}
		}
		if err := checkHidden("affine ", f.AffineHidden); err != nil {
			return &FieldError{Field: "family.flow", Err: fmt.Errorf("fit: Recipe: family.flow: %w", err)}
		}
		if n := flowWeights(r.Family.Kind, *f, 0); n > MaxFlowWeights {
			return bad("family.flow.hidden", f.Hidden, fmt.Sprintf("at most %d weights between the conditioners' hidden layers, not %.0f (fit.MaxFlowWeights, a hard cap: fewer or smaller hidden layers or fewer layers)", MaxFlowWeights, n))
		}
		if _, err := NewFlowFamily(r.Family.Kind, 1, *f); err != nil {
			return &FieldError{Field: "family.flow", Err: fmt.Errorf("fit: Recipe: family.flow: %w", err)}
		}
	}
	return nil
}

// flowWeights estimates the number of conditioner weights of the flow of kind with options o
// on ℝ^d (d = 0: the hidden-to-hidden weights only), in float64 so that no size overflows:
// per layer, Σ h_i·h_{i+1} between hidden layers plus d·h_first + K·d·h_last for the input
// and output layers (d·K·d without hidden layers), K the outputs per coordinate (M + 1 for a
// Bernstein MADE of degree M, 2 for a MAF or a coupling layer), and the same with K = 2 for
// the affine layer. Unset layers, hidden sizes and degree count at NewFlowFamily's defaults.
func flowWeights(kind string, o FlowOptions, d int) float64 {
	layers, hidden, k := 2, []int{32, 32}, 2.0
	switch kind {
	case KindRealNVP:
		layers = 4
	case KindBernstein:
		layers, hidden, k = 1, []int{10, 10}, defaultDegree+1
		if o.Degree != 0 {
			k = float64(o.Degree) + 1
		}
	}
	if o.Layers != 0 {
		layers = o.Layers
	}
	if o.Hidden != nil {
		hidden = o.Hidden
	}
	fd := float64(d)
	net := func(h []int, k float64) float64 {
		if len(h) == 0 {
			return fd * k * fd
		}
		n := fd*float64(h[0]) + k*fd*float64(h[len(h)-1])
		for i := 0; i+1 < len(h); i++ {
			n += float64(h[i]) * float64(h[i+1])
		}
		return n
	}
	n := float64(layers) * net(hidden, k)
	if o.Affine != "" && o.Affine != AffineNone {
		ah := o.AffineHidden
		if ah == nil {
			ah = []int{32, 32}
		}
		n += net(ah, 2)
	}
	return n
}

func oneOf(s string, set ...string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// Describe names the family in a few words: "meanfield", "lowrank (rank 3)", "bernstein flow
// (degree 20, 1 layer, normal base)".
func (f FamilyRecipe) Describe(d int) string {
	switch f.Kind {
	case KindLowRank:
		return fmt.Sprintf("%s (rank %d)", f.Kind, f.rank(d))
	case KindMAF, KindRealNVP, KindBernstein:
		var o FlowOptions
		if f.Flow != nil {
			o = *f.Flow
		}
		base := "normal base"
		if o.BaseDF != 0 && !math.IsInf(o.BaseDF, 1) {
			base = fmt.Sprintf("Student-t base, ν = %g", o.BaseDF)
		}
		parts := []string{}
		if o.Layers != 0 {
			parts = append(parts, fmt.Sprintf("%d layers", o.Layers))
		}
		if f.Kind == KindBernstein {
			deg := o.Degree
			if deg == 0 {
				deg = defaultDegree
			}
			parts = append(parts, fmt.Sprintf("degree %d", deg))
			if o.Bounded {
				parts = append(parts, "bounded")
			}
			if o.Affine != "" && o.Affine != AffineNone {
				parts = append(parts, "affine layer "+o.Affine)
			}
			parts = append(parts, paperParts(o)...)
		}
		if o.Hidden != nil {
			parts = append(parts, fmt.Sprintf("hidden %v", o.Hidden))
		}
		if o.Activation != "" {
			parts = append(parts, o.Activation)
		}
		parts = append(parts, base)
		return fmt.Sprintf("%s (flow, %s)", f.Kind, strings.Join(parts, ", "))
	}
	return f.Kind
}

// rank is the lowrank family's rank on ℝ^d.
func (f FamilyRecipe) rank(d int) int {
	if f.Rank != 0 {
		return f.Rank
	}
	return int(math.Ceil(math.Sqrt(float64(d))))
}

// CheckDim returns an error unless d ≥ 1, the dimension every family and fit needs: a model
// with no parameters has nothing to approximate. fn names the caller in the error
// ("fn: target dimension 0: a target needs at least one parameter"). Fit, Run, Auto and
// FamilyRecipe.NewFamily check it; the family constructors (family.NewMeanField, …) panic
// on d < 1 instead, as a programmer error, so code that builds a family from a user's model
// calls CheckDim (or NewFamily) first.
func CheckDim(fn string, d int) error {
	if d < 1 {
		return fmt.Errorf("%s: target dimension %d: a target needs at least one parameter", fn, d)
	}
	return nil
}

// NewFamily builds the family f names on ℝ^d: the one place where a family is made from its
// name. A flow's conditioner weights are seeded by seed (FlowOptions.Seed, when not zero,
// takes precedence). Errors name the bad field.
func (f FamilyRecipe) NewFamily(d int, seed uint64) (family.Family, error) {
	if err := CheckDim("fit: NewFamily", d); err != nil {
		return nil, err
	}
	switch f.Kind {
	case KindMeanField:
		return family.NewMeanField(d), nil
	case KindFullRank:
		return family.NewFullRank(d), nil
	case KindLowRank:
		k := f.rank(d)
		if k < 1 || k > d {
			return nil, &FieldError{Field: "family.rank", Err: fmt.Errorf("fit: NewFamily: family.rank = %d, want 1 to %d (the target's dimension)", k, d)}
		}
		return family.NewLowRank(d, k), nil
	case KindMAF, KindRealNVP, KindBernstein:
		var o FlowOptions
		if f.Flow != nil {
			o = *f.Flow
		}
		if o.Seed == 0 {
			o.Seed = seed
		}
		return NewFlowFamily(f.Kind, d, o)
	}
	return nil, &FieldError{Field: "family.kind", Err: fmt.Errorf("fit: NewFamily: family.kind = %q, want %s", f.Kind, strings.Join(Kinds(), ", "))}
}

// objective is the estimator's objective.Options.
func (o ObjectiveRecipe) options() objective.Options {
	return objective.Options{K: o.K, STL: o.Estimator == EstSTL || o.Estimator == EstDReG}
}

// Config is the loop configuration of r (everything but the family, the objective's
// estimator and the warm start), with workers goroutines.
func (r *Recipe) Config(workers int) Config {
	c := Config{
		Seed: r.Seed, Samples: r.Objective.Samples, Antithetic: r.Objective.Antithetic, LR: r.Optimizer.LR, MaxIter: r.MaxIter,
		EvalEvery: r.Stop.EvalEvery, EvalSamples: r.Stop.EvalSamples, Window: r.Stop.Window,
		Tol: r.Stop.Tol, Decays: r.Stop.Decays, TrendZ: r.Stop.TrendZ, Average: r.Stop.Average, ConfirmBest: r.Stop.ConfirmBest,
		InitScale: r.Init.Scale, InitIter: r.Init.Iter, InitPoint: r.Init.Point,
		Starts: max(r.Init.Starts, 1), StartsMax: r.Init.StartsMax, InitPoints: r.Init.Points,
		MaxSkips: r.MaxSkips, Workers: workers, DiagDraws: r.DiagDraws,
		Stop: StopHalves, Optimizer: r.Optimizer.Name,
	}
	switch r.Stop.Rule {
	case RuleTrend:
		c.Stop = StopTrend
	case RuleNoise:
		c.Stop = StopNoise
	}
	if r.Stop.Average == 0 {
		c.Average = -1 // none
	}
	if r.Stop.Decays == 0 {
		c.Decays = -1
	}
	if r.Init.Method == InitMethodZero {
		c.Init = InitZero
	}
	if r.NaN == NaNPolicyFail {
		c.NaN = NaNFail
	}
	return c
}

// warmRecipe is the full-rank stage of a warm-started recipe: DefaultRecipe(fullrank) with
// r's seed, iteration cap, initialisation, NaN policy and diagnostic draws.
func (r *Recipe) warmRecipe() Recipe {
	g := DefaultRecipe(KindFullRank)
	g.Seed, g.MaxIter, g.Init, g.NaN, g.MaxSkips, g.DiagDraws = r.Seed, r.MaxIter, r.Init, r.NaN, r.MaxSkips, r.DiagDraws
	return g
}

// WithWorkers spreads each step's draws over n goroutines (at most 4 are used: the draws go
// in ≤ 4 blocks); 0 is GOMAXPROCS. The result does not depend on n.
func WithWorkers(n int) Option { return func(o *options) { o.workers = n } }

// Run fits the family of recipe r to target and checks it: the one entry point behind vigo
// fit, vigo bench, Auto and x/bfvi. With r.WarmStart = WarmFullRank it first fits the full-rank
// stage (warmRecipe; the result's WarmStart) and starts the family at it, unless WithWarmStart
// gives the previous fit to start from; GradEvals and Elapsed then include that stage. The
// result carries a copy of r.
//
// With r.Ensemble it fits an ensemble instead (EnsembleRecipe): the members' recipes
// (Recipe.Member) run in parallel, and the result is their mixture with Result.Ensemble.
//
// Concurrency: target.Density (or LogDensity) is called from up to four goroutines at once,
// one tape each (see model.Target); an ensemble's members add up to WithWorkers goroutines.
//
// Cancellation: as Fit — the partial result together with an error wrapping the context's
// cause; other errors come with a nil result.
func Run(ctx context.Context, target model.Target, r Recipe, opts ...Option) (*Result, error) {
	d := target.Dim()
	if err := CheckDim("fit: Run", d); err != nil {
		return nil, err
	}
	if err := r.ValidateFor(d); err != nil {
		return nil, err
	}
	var o options
	for _, f := range opts {
		f(&o)
	}
	if r.Ensemble != nil {
		return runEnsemble(ctx, target, r, o)
	}
	fam, err := r.Family.NewFamily(d, r.Seed)
	if err != nil {
		return nil, err
	}
	staged := make([]func(Progress), len(o.observers))
	for i, f := range o.observers {
		kind := r.Family.Kind
		staged[i] = func(p Progress) { p.Stage = kind; f(p) }
	}
	fitOpts := append(opts[:len(opts):len(opts)], func(oo *options) { oo.observers = staged })
	cfg := r.Config(o.workers)
	var warm *Result
	if r.WarmStart == WarmFullRank && o.warm == nil && o.resume == nil {
		wr := r.warmRecipe()
		warm, err = Run(ctx, target, wr, opts...)
		if err != nil && !errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("fit: Run: warm-start stage: %w", err)
		}
		fitOpts = append(fitOpts, WithWarmStart(warm))
	}
	res, err := Fit(ctx, target, fam, r.Objective.options(), cfg, fitOpts...)
	if res == nil {
		return nil, err
	}
	rc := r.clone()
	res.Recipe = &rc
	if warm != nil {
		res.WarmStart = warm
		res.GradEvals += warm.GradEvals
		res.Elapsed += warm.Elapsed
	}
	return res, err
}

// ValidateFor is Validate and the checks that need the target's dimension d, which Run makes
// before it allocates anything: the initial point's length, and the sizes times d against
// MaxDrawValues and MaxFlowWeights (Validate has bounded each factor, so the products do not
// overflow). The lowrank rank is checked by FamilyRecipe.NewFamily.
func (r *Recipe) ValidateFor(d int) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if d < 1 {
		return nil // FamilyRecipe.NewFamily names the dimension
	}
	if r.Init.Point != nil && len(r.Init.Point) != d {
		return &FieldError{Field: "init.point", Err: fmt.Errorf("fit: Run: init.point has %d values, the target's dimension is %d", len(r.Init.Point), d)}
	}
	for k, p := range r.Init.Points {
		if len(p) != d {
			return &FieldError{Field: fmt.Sprintf("init.points[%d]", k), Err: fmt.Errorf("fit: Run: init.points[%d] has %d values, the target's dimension is %d", k, len(p), d)}
		}
	}

	for _, c := range []struct {
		field string
		n     int
		hint  string
	}{{"diag_draws", r.DiagDraws, "; more draws: vigo draw with several --seed values"},
		{"objective.samples × objective.k", r.Objective.Samples * r.Objective.K, ""},
		{"stop.eval_samples", r.Stop.EvalSamples, ""}} {
		if c.n > MaxDrawValues/d {
			return &FieldError{Field: c.field, Err: fmt.Errorf("fit: Recipe: %s = %d, want at most %d for the target's dimension %d: %d draws × %d values is more than fit.MaxDrawValues = %d held at once (a hard cap%s)",
				c.field, c.n, MaxDrawValues/d, d, c.n, d, MaxDrawValues, c.hint)}
		}
	}
	if f := r.Family.Flow; f != nil {
		if n := flowWeights(r.Family.Kind, *f, d); n > MaxFlowWeights {
			return &FieldError{Field: "family.flow.hidden", Err: fmt.Errorf("fit: Recipe: family.flow.hidden = %v: about %.0f conditioner weights in dimension %d, more than fit.MaxFlowWeights = %d (a hard cap: fewer or smaller hidden layers, fewer layers or a lower degree)",
				f.Hidden, n, d, MaxFlowWeights)}
		}
	}
	return nil
}

// clone returns a deep copy of r.
func (r *Recipe) clone() Recipe {
	c := *r
	c.Init.Point = clone(r.Init.Point)
	if r.Init.Points != nil {
		c.Init.Points = make([][]float64, len(r.Init.Points))
		for i, p := range r.Init.Points {
			c.Init.Points[i] = clone(p)
		}
	}
	c.Ensemble = r.Ensemble.clone()
	if r.Family.Flow != nil {
		f := *r.Family.Flow
		f.Hidden, f.AffineHidden = clone(f.Hidden), clone(f.AffineHidden)
		c.Family.Flow = &f
	}
	return c
}
