package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/nn"
	"github.com/vigo-bayes/vigo/objective"
)

// Flow family kinds: the names of the standard flow families of vigo fit --family and of the
// posteriordb benchmark (NewFlowFamily builds them).
const (
	KindMAF       = "maf"
	KindRealNVP   = "realnvp"
	KindBernstein = "bernstein"
)

// FlowOptions is the structure of a standard flow family. Zero fields take the kind's
// defaults, listed with each field.
type FlowOptions struct {
	// Layers: maf 2 IAF layers (orderings alternate), realnvp 4 coupling layers (masks
	// alternate), bernstein 1 triangular Bernstein layer (orderings alternate when more).
	Layers int `json:"layers,omitempty"`
	// Hidden are the conditioner's hidden layer sizes: [32 32] for maf and realnvp, [10 10]
	// for bernstein (the BF-VI paper's MADE).
	Hidden []int `json:"hidden,omitempty"`
	// Degree is the Bernstein polynomial degree M (bernstein only; default 20; the paper's
	// multivariate runs use 49).
	Degree int `json:"degree,omitempty"`
	// Activation of the conditioners' hidden layers: "tanh" (default), "relu" or "linear"
	// (the BF-VI reference code's MADE has none).
	Activation string `json:"activation,omitempty"`
	// Bounded selects the BF-VI paper's bounded map (a sigmoid before the polynomial, compact
	// support) for bernstein; the default is linear tails (support ℝ, and the warm start is
	// exact).
	Bounded bool `json:"bounded,omitempty"`
	// Seed seeds the conditioners' random initial weights (family.FlowSeed).
	Seed uint64 `json:"seed,omitempty"`
	// BaseDF is the degrees of freedom ν of a Student-t base (family.FlowBaseDF: independent
	// t_ν marginals, heavier tails than the posterior is the safe side for importance
	// sampling); 0 or +Inf is the standard-normal base. Any kind; family.MinBaseDF ≤ ν ≤
	// family.MaxBaseDF.
	BaseDF float64 `json:"base_df,omitempty"`
	// Affine adds one affine autoregressive layer (an IAF layer, flow.MAF with a MADE with
	// direct connections, the Activation above and log-scales soft-clamped at ±5) to a
	// bernstein flow, in the first Bernstein layer's (the model's native) order:
	//
	//   - "" or AffineNone: none. DefaultRecipe(bernstein) sets AffineLast; in AutoStages and
	//     vigo fit's flags "" keeps that default and AffineNone turns it off.
	//   - AffineLast: applied after the Bernstein layers, closest to z: with x = B(u) the
	//     Bernstein output, z_j = m_j(x_<j) + exp(s_j(x_<j))·x_j. Since x_<j ↦ z_<j is a
	//     bijection, s_j is a function of the preceding output coordinates, so the layer can
	//     carry a conditional scale that changes fast with an earlier coordinate — a funnel
	//     (centred eight schools: sd(θ_j − μ | τ) = τ, i.e. s_j ≈ log τ, linear in an earlier
	//     coordinate), which a Bernstein layer with linear tails must build from its
	//     polynomial's slope.
	//   - AffineFirst: applied before the Bernstein layers, on the base noise (a contrast: the
	//     polynomial layers then act on an already rescaled input).
	//
	// The layer starts at the identity, so the warm start is unchanged. Cost: one MADE pass
	// with K = 2 per draw on top of the Bernstein layers (a sequential inverse, d passes, for
	// external points only). bernstein only.
	Affine string `json:"affine,omitempty"`
	// AffineHidden are the hidden sizes of the affine layer's MADE; nil: [32 32] (the maf
	// kind's default).
	AffineHidden []int `json:"affine_hidden,omitempty"`
	// FrozenAffine fixes the input affine map of every Bernstein layer at α = softplus(0),
	// β = 0 and leaves it out of the parameters (flow.BernsteinFrozenAffine), as the BF-VI
	// reference code's multivariate runs do. bernstein only.
	FrozenAffine bool `json:"frozen_affine,omitempty"`
	// NoDirect builds the Bernstein layers' MADEs without direct input-to-output
	// connections, as TFP's AutoregressiveNetwork of the BF-VI reference code (the default
	// has them). bernstein only.
	NoDirect bool `json:"no_direct,omitempty"`
	// CoefInit is how the Bernstein coefficients start: "" or CoefInitIdentity, the
	// (near-)identity (q starts at the preconditioner's Gaussian); CoefInitPaper, the BF-VI
	// reference code's cold start (paperInit: first coordinate ϑ_k = −10 + 20·Φ(k/M), the
	// others from the conditioner's Glorot output with zero biases). CoefInitPaper needs the
	// bounded map, one Bernstein layer, no affine layer, and a recipe with warm_start none,
	// init.method zero and init.scale 1 (BFVIPaperRecipe). bernstein only.
	CoefInit string `json:"coef_init,omitempty"`
	// FixedOutput fixes family.Flow's elementwise output layer z = μ + exp(ω)⊙T(ε) at the
	// identity (family.FlowFixedOutput): q is the flow alone, as in the BF-VI reference code.
	// Without it the layer is trained with the flow, and its log-scale ω moves the whole
	// support exponentially fast in the steps (on the paper's improper eight-schools target
	// it spreads q far beyond the posterior: bench/results/bfvi.md). Any kind.
	FixedOutput bool `json:"fixed_output,omitempty"`
}

// Values of FlowOptions.CoefInit.
const (
	CoefInitIdentity = "identity"
	CoefInitPaper    = "paper"
)

// Values of FlowOptions.Affine.
const (
	AffineNone  = "none"
	AffineLast  = "last"
	AffineFirst = "first"
)

// checkHidden checks the hidden layer sizes of a conditioner (what names which one in the
// error: "" or "affine ").
func checkHidden(what string, hidden []int) error {
	if len(hidden) > flow.MaxHiddenLayers {
		return fmt.Errorf("fit: NewFlowFamily: %d %shidden layers, want at most %d", len(hidden), what, flow.MaxHiddenLayers)
	}
	for _, h := range hidden {
		if h < 1 || h > flow.MaxHiddenUnits {
			return fmt.Errorf("fit: NewFlowFamily: %shidden size %d, want 1 to %d", what, h, flow.MaxHiddenUnits)
		}
	}
	return nil
}

// defaultDegree is the bernstein kind's default polynomial degree.
const defaultDegree = 20

// maxFlowLayers caps FlowOptions.Layers.
const maxFlowLayers = 64

// NewFlowFamily returns the standard flow family kind (KindMAF, KindRealNVP, KindBernstein) on
// ℝ^d; every variant starts at N(0, I) (bounded Bernstein flows at a unit-variance
// near-identity), so inside Fit's preconditioning it starts at the Laplace or warm-start
// Gaussian.
//
//   - maf: flow.NewMAFStack, IAF direction (sampling and the plain ELBO gradient are one MADE
//     pass per layer), MADEs with direct connections (so every layer contains all affine
//     autoregressive maps) and log-scales soft-clamped at ±5.
//   - realnvp: flow.NewRealNVP, alternating-mask affine coupling layers with MLP conditioners;
//     both directions cost one pass per layer, so the STL gradient is cheap.
//   - bernstein: Layers triangular Bernstein flows (flow.NewBernsteinAR, BF-VI, Dürr et al.
//     2024) with MADE conditioners (direct connections) of degree Degree; orderings alternate
//     between layers. FlowOptions.Affine adds an affine autoregressive (IAF) layer after or
//     before them.
//
// Errors name the bad option.
func NewFlowFamily(kind string, d int, o FlowOptions) (*family.Flow, error) {
	if d < 1 {
		return nil, fmt.Errorf("fit: NewFlowFamily: dimension %d, want ≥ 1", d)
	}
	if o.Layers < 0 || o.Layers > maxFlowLayers {
		return nil, fmt.Errorf("fit: NewFlowFamily: layers %d, want 1 to %d", o.Layers, maxFlowLayers)
	}
	if err := checkHidden("", o.Hidden); err != nil {
		return nil, err
	}
	act := ad.Tanh
	if o.Activation != "" {
		a, err := flow.ParseActivation(o.Activation)
		if err != nil || a == ad.Sigmoid {
			return nil, fmt.Errorf("fit: NewFlowFamily: activation %q, want tanh, relu or linear", o.Activation)
		}
		act = a
	}
	if o.Degree != 0 && kind != KindBernstein {
		return nil, fmt.Errorf("fit: NewFlowFamily: degree is for %s only (kind=%s)", KindBernstein, kind)
	}
	if o.Bounded && kind != KindBernstein {
		return nil, fmt.Errorf("fit: NewFlowFamily: bounded tails are for %s only (kind=%s)", KindBernstein, kind)
	}
	switch o.Affine {
	case "", AffineNone:
		if o.AffineHidden != nil {
			return nil, fmt.Errorf("fit: NewFlowFamily: affine hidden sizes %v without an affine layer (affine=%q)", o.AffineHidden, o.Affine)
		}
	case AffineLast, AffineFirst:
		if kind != KindBernstein {
			return nil, fmt.Errorf("fit: NewFlowFamily: an affine layer (affine=%s) is for %s only (kind=%s)", o.Affine, KindBernstein, kind)
		}
	default:
		return nil, fmt.Errorf("fit: NewFlowFamily: affine %q, want %s, %s or %s", o.Affine, AffineNone, AffineLast, AffineFirst)
	}
	if err := checkHidden("affine ", o.AffineHidden); err != nil {
		return nil, err
	}
	if _, err := checkPaperOptions(kind, o); err != nil {
		return nil, err
	}
	fopts := []family.FlowOption{family.FlowSeed(o.Seed), family.FlowKind(kind)}
	if o.FixedOutput {
		fopts = append(fopts, family.FlowFixedOutput())
	}
	switch nu := o.BaseDF; {
	case nu == 0 || math.IsInf(nu, 1):
	case nu >= family.MinBaseDF && nu <= family.MaxBaseDF:
		fopts = append(fopts, family.FlowBaseDF(nu))
	default:
		return nil, fmt.Errorf("fit: NewFlowFamily: base degrees of freedom %g, want %d to %d (0: Gaussian base)", nu, family.MinBaseDF, family.MaxBaseDF)
	}
	layers := func(def int) int {
		if o.Layers == 0 {
			return def
		}
		return o.Layers
	}
	hidden := func(def ...int) []int {
		if o.Hidden == nil {
			return def
		}
		return clone(o.Hidden)
	}
	var f flow.Flow
	switch kind {
	case KindMAF:
		f = flow.NewMAFStack(d, layers(2), hidden(32, 32), []nn.MADEOption{nn.WithDirect(), nn.WithActivation(act)})
	case KindRealNVP:
		f = flow.NewRealNVP(d, layers(4), hidden(32, 32), flow.RealNVPActivation(act))
	case KindBernstein:
		M := o.Degree
		if M == 0 {
			M = defaultDegree
		}
		if M < 1 || M > flow.MaxDegree {
			return nil, fmt.Errorf("fit: NewFlowFamily: degree %d, want 1 to %d", M, flow.MaxDegree)
		}
		tails := flow.LinearTails
		if o.Bounded {
			tails = flow.BoundedTails
		}
		rev := make([]int, d)
		for i := range rev {
			rev[i] = d - i
		}
		L := layers(1)
		parts := make([]flow.Flow, L)
		bo := []flow.BernsteinOption{flow.BernsteinTails(tails)}
		if o.FrozenAffine {
			bo = append(bo, flow.BernsteinFrozenAffine())
		}
		for l := range parts {
			mo := []nn.MADEOption{nn.WithActivation(act)}
			if !o.NoDirect {
				mo = append(mo, nn.WithDirect())
			}
			if l%2 == 1 {
				mo = append(mo, nn.WithOrder(rev))
			}
			parts[l] = flow.NewBernsteinAR(nn.NewMADE(d, hidden(10, 10), M+1, mo...), bo...)
			if o.CoefInit == CoefInitPaper {
				parts[l] = paperInit{parts[l].(*flow.BernsteinAR)}
			}
		}
		if o.Affine == AffineLast || o.Affine == AffineFirst {
			ah := []int{32, 32}
			if o.AffineHidden != nil {
				ah = clone(o.AffineHidden)
			}
			aff := flow.NewMAF(nn.NewMADE(d, ah, 2, nn.WithDirect(), nn.WithActivation(act)))
			if o.Affine == AffineLast {
				parts = append(parts, aff)
			} else {
				parts = append([]flow.Flow{aff}, parts...)
			}
		}
		f = flow.Compose(parts...)
	default:
		return nil, fmt.Errorf("fit: NewFlowFamily: unknown flow kind %q (want %s, %s or %s)", kind, KindMAF, KindRealNVP, KindBernstein)
	}
	return family.NewFlow(f, fopts...), nil
}

// FlowObjective is the gradient estimator DefaultRecipe uses with a standard flow kind: the
// STL (sticking-the-landing) ELBO gradient for every kind (the flow families give log q's
// score at their own draws without inverting: family.DrawScorer).
func FlowObjective(kind string) objective.Options {
	return objective.Options{STL: IsFlowKind(kind)}
}

// AutoConfig configures Auto.
type AutoConfig struct {
	// Stages are the recipes tried in order; nil: AutoStages(FlowOptions{}) — mean field,
	// full rank, bernstein, maf, each with its DefaultRecipe. A flow stage whose WarmStart is
	// WarmFullRank starts from the last full-rank stage's fit when there was one (else it runs
	// its own full-rank stage).
	Stages []Recipe
	// Threshold is the k̂ a stage must get below to be usable; default (0): each stage's
	// sample-size threshold min(1 − 1/log₁₀ S, 0.7) for its S = DiagDraws draws.
	Threshold float64
	// Budget bounds the wall time of the whole search (0: none). A stage running when it
	// runs out is cancelled and kept as a partial fit; no stage starts after it.
	Budget time.Duration
}

// AutoStages are Auto's default stages: DefaultRecipe of meanfield, fullrank, bernstein and
// maf, the flows with structure flow (the bernstein-only options are dropped for maf) and
// warm-started from the full-rank stage (WarmFullRank), which Auto has fitted anyway.
func AutoStages(flow FlowOptions) []Recipe {
	out := []Recipe{DefaultRecipe(KindMeanField), DefaultRecipe(KindFullRank)}
	for _, k := range []string{KindBernstein, KindMAF} {
		r := DefaultRecipe(k)
		r.WarmStart = WarmFullRank
		fo := flow
		if k != KindBernstein {
			fo.Degree, fo.Bounded, fo.Affine, fo.AffineHidden = 0, false, "", nil
			fo.FrozenAffine, fo.NoDirect, fo.CoefInit = false, false, ""
		} else if fo.Affine == "" {
			fo.Affine = r.Family.Flow.Affine // the kind's default (AffineNone turns it off)
		}
		r.Family.Flow = &fo
		out = append(out, r)
	}
	return out
}

// AutoStage is one family Auto tried.
type AutoStage struct {
	Family string  // meanfield, fullrank, or a flow kind
	Recipe Recipe  // the stage's recipe
	Result *Result // nil when the stage failed
	Err    error   // why the stage failed
	Note   string  // warm start, budget
	Line   string  // the stage in one line: family, k̂, ELBO, time, what happens next
}

// AutoResult is the outcome of Auto: every stage tried and the one chosen.
type AutoResult struct {
	Stages []AutoStage
	Chosen int    // index into Stages
	Reason string // why that stage was chosen, in words
	// GradEvals and Elapsed are the totals of the whole search (every stage run).
	GradEvals int
	Elapsed   time.Duration
}

// Best returns the chosen stage's fit.
func (a *AutoResult) Best() *Result { return a.Stages[a.Chosen].Result }

// Auto fits increasingly flexible families — by default mean-field Gaussian, full-rank
// Gaussian, then bernstein and maf flows warm-started from the full-rank fit — and chooses
// among them. Each stage is a Recipe run by Run; the stages whose recipes have the same starts
// share the first one's multi-start mode search (DefaultStarts searches by default).
//
// Three things judge a stage. PSIS k̂ says whether q is good enough to use (below the
// threshold: cfg.Threshold when set, else the stage's own min(1 − 1/log₁₀ S, 0.7) for its S
// diagnostic draws — the threshold vigo fit's verdict uses). The modes the starts found say
// whether k̂ can be believed: a stage whose q misses a mode with mass (Assess: Uncovered > 0)
// is not good whatever its k̂, since k̂ cannot see mass q does not cover, and a Gaussian stage
// in that state escalates at once to an ensemble of its family with one member at each such
// mode and at the best, weights fitted to the evidence (autoEnsemble; the ensemble is a stage
// of its own, judged the same way). The ELBO ranks stages: ELBO = log Z − KL(q‖p), so a
// higher ELBO is a q closer to the posterior; a later stage leads only when its ELBO beats
// the leader's by more than twice their combined Monte Carlo standard error (a tie goes to
// the simpler family). The search stops when the leading stage is good, except that a
// mean-field fit below it is always followed by the next stage when d ≤ AutoFullRankMaxDim
// (full rank is cheap next to a flow): on garch11 mean-field passes (k̂ 0.59) with a 0.7-nat
// lower ELBO than full-rank and marginals off by W1/sd 0.23. The choice is the leading stage
// among the good ones; when none is, the ELBO leader among all (issue 14: the lowest k̂ kept
// a mean-field fit over a flow with a higher ELBO and half its W1/sd), with a warning. A
// stage that fails with an error is recorded and skipped. opts (observers, workers) apply to
// every stage; WithResume and the preconditioning options are not allowed.
//
// Cancellation: as Run — a cancelled ctx returns the partial search (the stages so far, the
// choice among them) with an error wrapping ctx.Err(); when no stage finished, the result is
// nil. The budget running out is not an error.
//
// Cost: the sum of the stages run (AutoResult.GradEvals counts the mode search once).
func Auto(ctx context.Context, target model.Target, cfg AutoConfig, opts ...Option) (*AutoResult, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if o.resume != nil || o.warm != nil {
		return nil, errors.New("fit: Auto: WithResume, WithWarmStart and WithPreconditioner are not allowed")
	}
	if err := CheckDim("fit: Auto", target.Dim()); err != nil {
		return nil, err
	}
	if cfg.Threshold < 0 || math.IsNaN(cfg.Threshold) || cfg.Budget < 0 {
		return nil, fmt.Errorf("fit: Auto: threshold %g and budget %v must be positive", cfg.Threshold, cfg.Budget)
	}
	stages := cfg.Stages
	if stages == nil {
		stages = AutoStages(FlowOptions{})
	}
	if len(stages) == 0 {
		return nil, errors.New("fit: Auto: no stages")
	}
	for i := range stages {
		if err := stages[i].Validate(); err != nil {
			return nil, fmt.Errorf("fit: Auto: stage %d (%s): %w", i, stages[i].Family.Kind, err)
		}
	}
	d := target.Dim()
	runCtx := ctx
	start := time.Now()
	if cfg.Budget > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithDeadline(ctx, start.Add(cfg.Budget))
		defer cancel()
	}
	out := &AutoResult{Chosen: -1}
	var fullRank *Result
	var search *modeSearch // the first stage's mode search, reused by the stages with the same starts
	for i, st := range stages {
		name := st.Family.Kind
		if ctx.Err() != nil {
			break
		}
		if runCtx.Err() != nil {
			out.Stages = append(out.Stages, AutoStage{Family: name, Recipe: st, Note: "not run",
				Line: fmt.Sprintf("%s: not run: the budget of %v was spent", name, cfg.Budget)})
			continue
		}
		as := AutoStage{Family: name, Recipe: st}
		so := opts[:len(opts):len(opts)]
		if search != nil {
			so = append(so, withSearch(search)) // the same starts: the same modes, searched once
		}
		if st.WarmStart == WarmFullRank {
			if fullRank != nil {
				so = append(so, WithWarmStart(fullRank))
				as.Note = "warm start from the full-rank fit"
			} else {
				as.Note = "warm start from its own full-rank fit: no full-rank stage before it"
			}
		}
		res, err := Run(runCtx, target, st, so...)
		if res != nil && errors.Is(err, runCtx.Err()) {
			err = nil // cancelled or out of budget: keep the partial fit
		}
		as.Result, as.Err = res, err
		if err == nil {
			out.GradEvals += res.GradEvals
			if name == KindFullRank {
				fullRank = res
			}
			if res.search != nil {
				search = res.search
			}
		}
		if err == nil && res.Status == Cancelled && ctx.Err() == nil {
			as.Note = strings.TrimPrefix(as.Note+"; budget ran out during the stage (partial fit)", "; ")
		}
		out.Stages = append(out.Stages, as)
		next := ""
		if i+1 < len(stages) {
			next = stages[i+1].Family.Kind
		}
		// Starts that reached modes q misses: escalate to an ensemble over the modes (a flow
		// started at one mode is not escalated: an ensemble of flows costs members × a flow).
		escalate := err == nil && res.Status != Cancelled && !IsFlowKind(name) && runCtx.Err() == nil &&
			len(res.Modes) > 1 && Assess(res).Uncovered > 0
		if escalate {
			out.note(len(out.Stages)-1, cfg.Threshold, false, "an ensemble over the modes", o.observers)
			es := autoEnsemble(runCtx, target, st, res, opts)
			if es.Result != nil {
				out.GradEvals += es.Result.GradEvals
			}
			out.Stages = append(out.Stages, es)
		}
		done := out.goodLeads(cfg.Threshold) &&
			!(name == KindMeanField && d <= AutoFullRankMaxDim && i+1 < len(stages))
		out.note(len(out.Stages)-1, cfg.Threshold, done, next, o.observers)
		if done {
			break
		}
	}
	out.Elapsed = time.Since(start)
	if err := out.choose(cfg.Threshold); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("fit: Auto: %w before any stage finished", context.Cause(ctx))
		}
		return nil, err
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("fit: Auto: %w (partial search)", context.Cause(ctx))
	}
	return out, nil
}

// AutoFullRankMaxDim is the largest dimension for which Auto follows a mean-field fit below
// its threshold with the full-rank fit anyway (d(d+1)/2 + d parameters; above it the full-rank
// stage runs only when mean-field fails).
const AutoFullRankMaxDim = 200

// threshold is the k̂ threshold of stage i: the user's, or the stage's sample-size threshold.
func (a *AutoResult) threshold(i int, user float64) float64 {
	if user > 0 {
		return user
	}
	if r := a.Stages[i].Result; r != nil && r.KHatThreshold > 0 {
		return r.KHatThreshold
	}
	return 0.7
}

// good reports whether stage i finished with k̂ below its threshold and q covering every mode
// the starts found (Assess).
func (a *AutoResult) good(i int, user float64) bool {
	r := a.Stages[i].Result
	return r != nil && r.KHat < a.threshold(i, user) && a.covers(i)
}

// leader returns the stage with the highest ELBO among the finished ones (only those below
// their thresholds when goodOnly): a later stage displaces the leader only when its ELBO is
// higher by more than twice the combined Monte Carlo standard error. −1 when there is none.
func (a *AutoResult) leader(user float64, goodOnly bool) int {
	best := -1
	for i, s := range a.Stages {
		r := s.Result
		if r == nil || math.IsNaN(r.ELBO) || math.IsInf(r.ELBO, 0) || (goodOnly && !a.good(i, user)) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := a.Stages[best].Result
		if r.ELBO-b.ELBO > 2*math.Hypot(r.ELBOSE, b.ELBOSE) {
			best = i
		}
	}
	return best
}

// stageLine describes one finished stage: its k̂ against its threshold, its ELBO, and what
// happens next (leader is the index of the stage leading on ELBO so far).
func stageLine(s *AutoStage, thr float64, good, done bool, leader int, next string) string {
	var b strings.Builder
	b.WriteString(s.Family)
	b.WriteString(": ")
	if s.Err != nil {
		fmt.Fprintf(&b, "failed (%v)", s.Err)
	} else {
		r := s.Result
		cmp := "≥"
		if r.KHat < thr {
			cmp = "<"
		}
		fmt.Fprintf(&b, "k̂ %s %s %.2g, ELBO %.5g ± %.2g, %d iterations, %.1f s (%s)",
			diag.FormatKhat(r.KHat), cmp, thr, r.ELBO, r.ELBOSE, r.Iterations, r.Elapsed.Seconds(), r.Status)
		if as := Assess(r); r.KHat < thr && !good {
			switch {
			case as.Uncovered > 0:
				fmt.Fprintf(&b, ", but q misses %d of the %d modes the starts found", as.Uncovered, as.Modes)
			case as.Rough:
				fmt.Fprintf(&b, ", but rough: the ELBO is %.3g nats below the importance-sampling log Z", as.ISGap)
			}
		}
	}
	if s.Note != "" {
		fmt.Fprintf(&b, "; %s", s.Note)
	}
	switch {
	case done:
		b.WriteString(": good enough, stop")
	case next == "":
		b.WriteString(": no more families to try")
	case good && s.Family == KindMeanField:
		fmt.Fprintf(&b, ": good enough, but try %s (cheap; a higher ELBO would be a closer fit)", next)
	case good && leader >= 0:
		fmt.Fprintf(&b, ": below the threshold, but an earlier family that is not has a clearly higher ELBO: try %s", next)
	default:
		fmt.Fprintf(&b, ": try %s", next)
	}
	return b.String()
}

// choose picks the stage: the ELBO leader among the stages below their thresholds; else the
// lowest k̂; else the highest ELBO.
func (a *AutoResult) choose(user float64) error {
	if i := a.leader(user, true); i >= 0 {
		s := a.Stages[i]
		a.Chosen = i
		a.Reason = fmt.Sprintf("%s has k̂ %s below %.2g", s.Family, diag.FormatKhat(s.Result.KHat), a.threshold(i, user)) + a.modesNote(i)
		if n := a.countGood(user); n > 1 {
			a.Reason += a.tieNote(i, n, user)
		}
		if others := a.others(i); others != "" {
			a.Reason += "; " + others
		}
		return nil
	}
	best := a.leader(user, false)
	if best < 0 {
		// No finite ELBO: the lowest k̂ among the finished stages.
		bestK := math.Inf(1)
		for i, s := range a.Stages {
			if s.Result != nil && (best < 0 || s.Result.KHat < bestK) {
				best, bestK = i, s.Result.KHat
			}
		}
	}
	if best < 0 {
		var errs []string
		for _, s := range a.Stages {
			if s.Err != nil {
				errs = append(errs, s.Family+": "+s.Err.Error())
			}
		}
		return fmt.Errorf("fit: Auto: no stage finished (%s)", strings.Join(errs, "; "))
	}
	a.Chosen = best
	s := a.Stages[best]
	if !a.finiteELBO(best) {
		a.Reason = fmt.Sprintf("no family reached its k̂ threshold and none has a finite ELBO; %s has the lowest k̂ (%s): do not trust it", s.Family, diag.FormatKhat(s.Result.KHat))
		return nil
	}
	a.Reason = fmt.Sprintf("no family reached its k̂ threshold with every mode covered; %s has the highest ELBO (%.5g ± %.2g; a later family leads only by more than 2 MCSE) and k̂ %s: treat it with care",
		s.Family, s.Result.ELBO, s.Result.ELBOSE, diag.FormatKhat(s.Result.KHat)) + a.modesNote(best)
	if others := a.others(best); others != "" {
		a.Reason += "; " + others
	}
	return nil
}

// countGood counts the stages below their thresholds.
// tieNote says why stage i, the ELBO leader of the n > 1 stages below their thresholds, was
// chosen: it has the highest ELBO, or one within 2 MCSE of the highest (a tie, which goes to
// the earlier, simpler family; leader).
func (a *AutoResult) tieNote(i, n int, user float64) string {
	r := a.Stages[i].Result
	top := i
	for j := range a.Stages {
		if a.good(j, user) && a.Stages[j].Result.ELBO > a.Stages[top].Result.ELBO {
			top = j
		}
	}
	if top == i {
		return fmt.Sprintf(" and the highest ELBO (%.5g) of the %d families below their thresholds", r.ELBO, n)
	}
	t := a.Stages[top]
	return fmt.Sprintf(" and an ELBO (%.5g) within 2 MCSE of the highest, %s's %.5g (difference %.2g < %.2g): a tie, which goes to the simpler family",
		r.ELBO, t.Family, t.Result.ELBO, t.Result.ELBO-r.ELBO, 2*math.Hypot(r.ELBOSE, t.Result.ELBOSE))
}

func (a *AutoResult) countGood(user float64) int {
	n := 0
	for i := range a.Stages {
		if a.good(i, user) {
			n++
		}
	}
	return n
}

// others lists the k̂ and ELBO of the stages other than i.
func (a *AutoResult) others(i int) string {
	var parts []string
	for j, s := range a.Stages {
		switch {
		case j == i:
		case s.Result == nil && s.Err != nil:
			parts = append(parts, s.Family+" failed")
		case s.Result == nil:
		default:
			parts = append(parts, fmt.Sprintf("%s had k̂ %s, ELBO %.5g", s.Family, diag.FormatKhat(s.Result.KHat), s.Result.ELBO))
		}
	}
	return strings.Join(parts, ", ")
}
