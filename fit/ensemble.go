package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/rng"
)

// Weight rules of EnsembleRecipe.Weights.
const (
	// WeightsUniform gives every member the weight 1/S: the balance heuristic of multiple
	// importance sampling, as MISELBO (Kviman et al. 2022) uses.
	WeightsUniform = "uniform"
	// WeightsEvidence fits the weights to the evidence: the w on the simplex that maximise the
	// mixture's ELBO, E_{q_w}[log p] + H[q_w] with q_w = Σ_s w_s q_s (see fitWeights), on one
	// set of draws, and keeps them when on another set their mixture ELBO beats the uniform
	// mixture's by more than 2 standard errors (else the weights are uniform and
	// EnsembleResult.WeightNote says why): members that overlap make the ELBO nearly flat in
	// w, and its maximiser on finite draws then follows Monte Carlo noise.
	WeightsEvidence = "evidence"
)

// Limits of an EnsembleRecipe (hard caps, like MaxSamples): MaxEnsembleMembers members, and
// ensemble.l at most MaxSamples. The evaluation of the bounds holds S·N draws' log densities
// under every member (S²·N values, N ≥ ensembleMinGroups·L draws per member), which Validate
// bounds by MaxDrawValues.
const MaxEnsembleMembers = 64

// ensembleMinGroups is the least number of groups of L draws per member in the evaluation of
// the bounds, so that their standard errors are estimated from at least this many values.
const ensembleMinGroups = 10

// RNG streams of an ensemble fit (seed: the recipe's; the members use derived seeds). The
// diagnostic draws of the mixture use drawStream, so Saved.Sample repeats them.
const (
	ensembleEvalStream   = 5 // draws of the bounds (MISELBO, mean ELBO, JSD)
	ensembleWeightStream = 6 // draws the evidence weights are fitted on
)

// EnsembleRecipe makes a Recipe an ensemble of variational approximations (Recipe.Ensemble):
// Members fits of the recipe's family, trained independently against the same target, member s
// with the seed rng.Derive(Recipe.Seed, s) and — when Starts are given — from the initial point
// Starts[s mod len(Starts)] (else from the recipe's own init). The fitted approximation is their
// mixture (family.Mixture) with weights by the Weights rule, scored by MISELBO with L draws per
// member (Kviman et al. 2022, AISTATS; objective.Bounds).
type EnsembleRecipe struct {
	// Members is S, 1 to MaxEnsembleMembers.
	Members int `json:"members"`
	// L is the number of draws per member in each importance-weighted group of MISELBO_L
	// and of the mean IWELBO_L, 1 to MaxSamples (the JSD and the ELBOs use L = 1 on the same
	// draws).
	L int `json:"l"`
	// Weights is WeightsUniform or WeightsEvidence.
	Weights string `json:"weights"`
	// Starts are initial points in unconstrained space (each of length d), one or more, at
	// most Members; nil: every member starts where the recipe says (Init).
	Starts [][]float64 `json:"starts,omitempty"`
}

// DefaultEnsemble returns the ensemble of S members vigo fit --ensemble S runs: uniform
// weights and MISELBO with L = 10 draws per member.
func DefaultEnsemble(S int) *EnsembleRecipe {
	return &EnsembleRecipe{Members: S, L: 10, Weights: WeightsUniform}
}

// validate names the first bad field of e ("ensemble.members", …).
func (e *EnsembleRecipe) validate() error {
	bad := func(field string, v any, want string) error {
		return &FieldError{Field: field, Err: fmt.Errorf("fit: Recipe: %s = %v, want %s", field, v, want)}
	}
	switch {
	case e.Members < 1 || e.Members > MaxEnsembleMembers:
		return bad("ensemble.members", e.Members, fmt.Sprintf("1 to %d (fit.MaxEnsembleMembers, a hard cap)", MaxEnsembleMembers))
	case e.L < 1 || e.L > MaxSamples:
		return bad("ensemble.l", e.L, fmt.Sprintf("1 to %d (fit.MaxSamples, a hard cap)", MaxSamples))
	case ensembleMinGroups*e.L*e.Members*e.Members > MaxDrawValues:
		return bad("ensemble.l", e.L, fmt.Sprintf("at most %d with %d members: the bounds hold %d·L·S² log densities at once, at most fit.MaxDrawValues = %d (a hard cap)",
			MaxDrawValues/(ensembleMinGroups*e.Members*e.Members), e.Members, ensembleMinGroups, MaxDrawValues))
	case !oneOf(e.Weights, WeightsUniform, WeightsEvidence):
		return bad("ensemble.weights", fmt.Sprintf("%q", e.Weights), WeightsUniform+" or "+WeightsEvidence)
	case len(e.Starts) > e.Members:
		return bad("ensemble.starts", fmt.Sprintf("%d points", len(e.Starts)), fmt.Sprintf("at most ensemble.members = %d", e.Members))
	}
	for i, p := range e.Starts {
		for j, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return bad(fmt.Sprintf("ensemble.starts[%d][%d]", i, j), v, "a finite value")
			}
		}
	}
	return nil
}

// validateFor checks the dimension-dependent values: the starts' lengths and the evaluation
// draws times d.
func (e *EnsembleRecipe) validateFor(d, diagDraws int) error {
	for i, p := range e.Starts {
		if len(p) != d {
			return &FieldError{Field: fmt.Sprintf("ensemble.starts[%d]", i), Err: fmt.Errorf("fit: Run: ensemble.starts[%d] has %d values, the target's dimension is %d", i, len(p), d)}
		}
	}
	if n := e.evalDraws(diagDraws); n > MaxDrawValues/d {
		return &FieldError{Field: "ensemble.l", Err: fmt.Errorf("fit: Recipe: ensemble.l = %d: %d evaluation draws per member × %d values is more than fit.MaxDrawValues = %d (a hard cap)", e.L, n, d, MaxDrawValues)}
	}
	return nil
}

// evalDraws is N, the draws per member of the bounds: G groups of L, G = max(10, ⌈D/(S·L)⌉)
// for D diagnostic draws, so that the S·N draws are at least D.
func (e *EnsembleRecipe) evalDraws(diagDraws int) int {
	per := e.Members * e.L
	g := max(ensembleMinGroups, (diagDraws+per-1)/per)
	return g * e.L
}

func (e *EnsembleRecipe) clone() *EnsembleRecipe {
	if e == nil {
		return nil
	}
	c := *e
	if e.Starts != nil {
		c.Starts = make([][]float64, len(e.Starts))
		for i, p := range e.Starts {
			c.Starts[i] = clone(p)
		}
	}
	return &c
}

// EnsembleResult is what an ensemble fit adds to its Result (Result.Ensemble): the members'
// fits and the ensemble's bounds on log Z. The Result itself is the mixture: Family is the
// family.Mixture of the members (behind an identity Affine), its diagnostics (ELBO, k̂,
// verdict, draws) are those of the mixture on DiagDraws stratified draws.
type EnsembleResult struct {
	// Members are the members' fits, in order; member s ran Member(s) of the recipe.
	Members []*Result
	// Weights are the mixture weights (normalised); WeightNote says how they were chosen.
	Weights    []float64
	WeightNote string
	// Bounds are MISELBO_L, the mean IWELBO_L, MISELBO_1, the mean ELBO and the JSD with their
	// standard errors, and each member's ELBO, on S·N fresh stratified draws (N per member).
	objective.Bounds
}

// EnsembleState is the resumable state of an ensemble fit (State.Ensemble): per member, its
// finished fit or where it stopped.
type EnsembleState struct {
	Members []MemberState `json:"members"`
}

// MemberState is one member of an ensemble's State: Done with its reported parameters and
// diagnostics (it is not fitted again on resume), or State where it stopped (nil: not started).
type MemberState struct {
	Done        bool         `json:"done"`
	Params      []float64    `json:"params,omitempty"`
	Reported    string       `json:"reported,omitempty"`
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"`
	State       *State       `json:"state,omitempty"`
}

func (e *EnsembleState) clone() *EnsembleState {
	if e == nil {
		return nil
	}
	c := &EnsembleState{Members: make([]MemberState, len(e.Members))}
	for i, m := range e.Members {
		c.Members[i] = m
		c.Members[i].Params = clone(m.Params)
		if m.Diagnostics != nil {
			d := *m.Diagnostics
			c.Members[i].Diagnostics = &d
		}
		if m.State != nil {
			c.Members[i].State = m.State.clone()
		}
	}
	return c
}

// Member returns the recipe of member s of an ensemble recipe: r without its Ensemble, with
// the seed rng.Derive(r.Seed, s) and the initial point Starts[s mod len(Starts)] when there
// are starts. It returns r unchanged (a copy) when r is not an ensemble.
func (r *Recipe) Member(s int) Recipe {
	m := r.clone()
	e := r.Ensemble
	if e == nil {
		return m
	}
	m.Ensemble = nil
	m.Seed = rng.Derive(r.Seed, uint64(s))
	if len(e.Starts) > 0 {
		// One mode search, from the member's start: a multi-start search would take every
		// member to the same, best mode.
		m.Init.Point = clone(e.Starts[s%len(e.Starts)])
		m.Init.Starts, m.Init.Points = 1, nil
	}
	return m
}

// runEnsemble is Run for a recipe with an Ensemble: the members in parallel (WithWorkers
// goroutines in all, each member's own steps on one of them or more), each by Run of its
// member recipe, then the mixture, its bounds and its diagnostics. The result is
// bit-identical for any number of workers: each member's fit is, and the members are combined
// in order. WithResume takes a State of an earlier ensemble fit of the same recipe: members
// Done are kept as they were, a member stopped part way resumes, the others start.
//
// The Result's Iterations and Skipped are the members' sums, GradEvals the members' sum plus
// the draws of the bounds, of the evidence weights and of the diagnostics, Elapsed the wall
// time of the whole; Trace is empty (each member has its own). Cancelled, it is the mixture of
// the members that have a result (finished or partial) with Status Cancelled, and nil when no
// member started.
func runEnsemble(ctx context.Context, target model.Target, r Recipe, o options) (*Result, error) {
	start := time.Now()
	d := target.Dim()
	e := r.Ensemble
	if err := e.validateFor(d, r.DiagDraws); err != nil {
		return nil, err
	}
	S := e.Members
	var prev *EnsembleState
	if o.resume != nil {
		prev = o.resume.Ensemble
		if prev == nil || len(prev.Members) != S {
			n := 0
			if prev != nil {
				n = len(prev.Members)
			}
			return nil, fmt.Errorf("fit: Run: resume: the state holds an ensemble of %d members, the recipe has ensemble.members = %d", n, S)
		}
	}
	// Without starts of its own, the ensemble spreads its members over the modes of one
	// multi-start search of its recipe (the best min(S, modes) modes by Laplace evidence,
	// cycled when there are fewer modes than members; Member runs one search from each):
	// members that searched on their own would all start at the same, best mode. The result's
	// recipe records the starts, and its verdict (Assess) checks that the mixture covers the
	// modes the search found.
	var search *modeSearch
	if len(e.Starts) == 0 && r.Init.Method == InitMethodLaplace && r.Init.Starts > 1 {
		search = searchModes(target, r.Config(o.workers).withDefaults())
		e = e.clone()
		for _, m := range search.modes[:min(S, len(search.modes))] {
			e.Starts = append(e.Starts, clone(m.Z))
		}
		r.Ensemble = e
	}
	W := o.workers
	if W <= 0 {
		W = maxProcs()
	}
	par := max(1, min(W, S))
	per := max(1, W/par)

	var mu sync.Mutex // serialises the observers: members report from their own goroutines
	observe := func(s int) []Option {
		if len(o.observers) == 0 {
			return nil
		}
		return []Option{WithProgress(func(p Progress) {
			p.Stage = fmt.Sprintf("%s member %d/%d", p.Stage, s+1, S)
			mu.Lock()
			defer mu.Unlock()
			for _, f := range o.observers {
				f(p)
			}
		})}
	}
	members := make([]*Result, S)
	errs := make([]error, S)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for s := range S {
		mr := r.Member(s)
		if prev != nil && prev.Members[s].Done {
			members[s], errs[s] = restoreMember(target, mr, prev.Members[s])
			continue
		}
		if ctx.Err() != nil {
			continue // not started; the members done before are still restored
		}
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			continue
		}
		mopts := []Option{WithWorkers(per)}
		mopts = append(mopts, observe(s)...)
		if o.warm != nil {
			mopts = append(mopts, func(oo *options) { oo.warm = o.warm })
		}
		if prev != nil && prev.Members[s].State != nil {
			mopts = append(mopts, WithResume(prev.Members[s].State))
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			members[s], errs[s] = Run(ctx, target, mr, mopts...)
		}()
	}
	wg.Wait()
	var cancelled error
	for s, err := range errs {
		switch {
		case err == nil:
		case members[s] != nil && errors.Is(err, context.Cause(ctx)):
			cancelled = err
		default:
			return nil, fmt.Errorf("fit: Run: ensemble member %d: %w", s, err)
		}
	}
	if ctx.Err() != nil && cancelled == nil {
		cancelled = fmt.Errorf("fit: %w before every ensemble member started (partial result)", context.Cause(ctx))
	}
	st := &State{Ensemble: &EnsembleState{Members: make([]MemberState, S)}}
	var have []*Result
	for s, m := range members {
		if m == nil {
			continue
		}
		have = append(have, m)
		ms := &st.Ensemble.Members[s]
		ms.State = m.State.clone()
		if m.Status != Cancelled {
			ms.Done, ms.Params, ms.Reported = true, clone(m.Params), m.Reported
			dg := diagnosticsOf(m)
			ms.Diagnostics = &dg
		}
	}
	if len(have) == 0 {
		return nil, cancelled
	}
	res, err := combine(target, r, have)
	if err != nil {
		return nil, err
	}
	if search != nil {
		res.GradEvals += search.evals
		res.adoptModes(&Result{Starts: search.starts, StartsFailed: search.failed, StartsFailedWhy: errText(search.why), Modes: search.modes})
	}
	res.State = st
	rc := r.clone()
	res.Recipe = &rc
	if cancelled != nil {
		res.Status = Cancelled
		res.Reason = fmt.Sprintf("cancelled: %d of %d members finished; %s", countDone(st), S, res.Reason)
	}
	res.Elapsed = time.Since(start)
	if cancelled != nil {
		return res, fmt.Errorf("fit: %w: ensemble of %d members with %d finished (partial result)", context.Cause(ctx), S, countDone(st))
	}
	return res, nil
}

func countDone(st *State) int {
	n := 0
	for _, m := range st.Ensemble.Members {
		if m.Done {
			n++
		}
	}
	return n
}

// diagnosticsOf is the Diagnostics record of a Result (as NewSaved writes it).
func diagnosticsOf(res *Result) Diagnostics {
	return Diagnostics{
		Status: res.Status.String(), Reason: res.Reason, Iterations: res.Iterations,
		GradEvals: res.GradEvals, Skipped: res.Skipped, InitNote: res.InitNote,
		ELBO: res.ELBO, ELBOSE: res.ELBOSE, KHat: res.KHat, KHatThreshold: res.KHatThreshold, KHatSD: res.KHatSD,
		PSISESS: res.PSISESS, Draws: len(res.LogQ), Verdict: res.Verdict,
		ElapsedSeconds: res.Elapsed.Seconds(),
	}
}

// restoreMember rebuilds the Result of a finished member from its MemberState without fitting
// it again: the family from the member recipe and the saved preconditioner, the saved
// parameters and diagnostics, and the diagnostic draws drawn again (the same stream, so the
// same draws). The warm-start stage of a flow member is not kept (Result.WarmStart is nil).
func restoreMember(target model.Target, mr Recipe, ms MemberState) (*Result, error) {
	st, dg := ms.State, ms.Diagnostics
	if st == nil || dg == nil {
		return nil, errors.New("fit: Run: resume: a member marked done has no state or diagnostics")
	}
	base, err := mr.Family.NewFamily(target.Dim(), mr.Seed)
	if err != nil {
		return nil, err
	}
	aff, err := family.NewAffine(base, st.Shift, st.Scale, st.Diag)
	if err != nil {
		return nil, fmt.Errorf("fit: Run: resume: %w", err)
	}
	if len(ms.Params) != aff.NumParams() {
		return nil, fmt.Errorf("fit: Run: resume: member has %d parameters, its family needs %d", len(ms.Params), aff.NumParams())
	}
	status := Status(-1)
	for _, v := range []Status{Converged, MaxIterReached, Cancelled} {
		if v.String() == dg.Status {
			status = v
		}
	}
	if status < 0 {
		return nil, fmt.Errorf("fit: Run: resume: member status %q, want converged or iteration cap reached", dg.Status)
	}
	rc := mr.clone()
	res := &Result{
		Family: aff, Params: clone(ms.Params), Status: status, Reason: dg.Reason, Reported: ms.Reported,
		Iterations: dg.Iterations, GradEvals: dg.GradEvals, Skipped: dg.Skipped, InitNote: dg.InitNote,
		Trace: clone(st.Trace), Elapsed: time.Duration(dg.ElapsedSeconds * float64(time.Second)),
		ELBO: dg.ELBO, ELBOSE: dg.ELBOSE, KHat: dg.KHat, KHatThreshold: dg.KHatThreshold, KHatSD: dg.KHatSD,
		PSISESS: dg.PSISESS, Verdict: dg.Verdict, State: st.clone(), Recipe: &rc,
	}
	res.Draws, res.LogQ = sampleAffine(aff, res.Params, mr.Seed, dg.Draws)
	res.LogP = logDensities(target, res.Draws, dg.Draws)
	return res, nil
}

// logDensities returns log p at the n rows of z.
func logDensities(target model.Target, z []float64, n int) []float64 {
	d := target.Dim()
	out := make([]float64, n)
	var t ad.Tape
	for i := range n {
		t.Reset()
		out[i] = t.Float(target.LogDensity(&t, t.Input(z[i*d:(i+1)*d])))
	}
	return out
}

// combine builds the ensemble's Result from its members' fits: the mixture with its weights,
// the bounds on fresh draws, and the mixture's diagnostics.
func combine(target model.Target, r Recipe, members []*Result) (*Result, error) {
	e := r.Ensemble
	S := len(members)
	d := target.Dim()
	fams := make([]family.Family, S)
	var params []float64
	res := &Result{}
	status := Converged
	var reasons []string
	inits := map[string]bool{}
	var initNotes []string
	for s, m := range members {
		fams[s] = m.Family
		params = append(params, m.Params...)
		res.Iterations += m.Iterations
		res.GradEvals += m.GradEvals
		res.Skipped += m.Skipped
		if m.Status == MaxIterReached && status == Converged {
			status = MaxIterReached
		}
		reasons = append(reasons, fmt.Sprintf("member %d %s", s, m.Status))
		if !inits[m.InitNote] {
			inits[m.InitNote] = true
			initNotes = append(initNotes, m.InitNote)
		}
	}
	uni, err := family.NewMixture(fams, nil)
	if err != nil {
		return nil, fmt.Errorf("fit: Run: ensemble: %w", err)
	}
	// The evaluation draws do not depend on the weights (each member draws its own), so one
	// set scores both the uniform and the fitted weights.
	n := e.evalDraws(r.DiagDraws)
	lp, lq := ensembleDraws(target, uni, params, rng.New(r.Seed, ensembleEvalStream), n)
	res.GradEvals += S * n
	weights := uni.Weights()
	note := "uniform (the balance heuristic)"
	if e.Weights == WeightsEvidence && S > 1 {
		wlp, wlq := ensembleDraws(target, uni, params, rng.New(r.Seed, ensembleWeightStream), n)
		res.GradEvals += S * n
		fitted, iters := fitWeights(wlp, wlq, S)
		gain, se := weightGain(lp, lq, S, fitted, weights)
		how := fmt.Sprintf("the mixture ELBO maximised over the simplex on %d draws per member (%d iterations); on %d other draws per member it gains %.3g ± %.2g nats over uniform weights", n, iters, n, gain, se)
		if gain > 2*se {
			weights = fitted
			note = "fitted to the evidence: " + how
		} else {
			note = "uniform (the balance heuristic), kept because the evidence weights did not gain 2 standard errors: " + how
		}
	}
	mix, err := family.NewMixture(fams, weights)
	if err != nil {
		return nil, fmt.Errorf("fit: Run: ensemble: %w", err)
	}
	b, err := objective.EnsembleBounds(lp, lq, S, e.L, mix.Weights())
	if err != nil {
		return nil, fmt.Errorf("fit: Run: ensemble: %w", err)
	}
	ident := make([]float64, d)
	for i := range ident {
		ident[i] = 1
	}
	aff, err := family.NewAffine(mix, make([]float64, d), ident, true)
	if err != nil {
		return nil, fmt.Errorf("fit: Run: ensemble: %w", err)
	}
	res.Family, res.Params = aff, params
	res.Status = status
	res.Reason = fmt.Sprintf("ensemble of %d: %s", S, strings.Join(reasons, ", "))
	res.Reported = "the members' reported iterates"
	res.InitNote = strings.Join(initNotes, "; ")
	res.Ensemble = &EnsembleResult{Members: members, Weights: mix.Weights(), WeightNote: note, Bounds: b}
	diagnoseMixture(target, res, r.Seed, r.DiagDraws)
	return res, nil
}

// ensembleDraws draws n points from each member of mix (member-major, each with its own
// noise from stream) and returns their log p (S·n) and their log densities under every member
// (S·n × S).
func ensembleDraws(target model.Target, mix *family.Mixture, params []float64, stream *rng.Stream, n int) (lp, lq []float64) {
	S, d := mix.Len(), mix.Dim()
	lp = make([]float64, S*n)
	lq = make([]float64, S*n*S)
	z := make([]float64, d)
	var t ad.Tape
	probers := make([]family.LogProber, S)
	for j := range S {
		probers[j] = mix.Member(j).(family.LogProber) // NewMixture checked it
	}
	for s := range S {
		m := mix.Member(s)
		eps := make([]float64, m.NoiseDim())
		ps := mix.MemberParams(params, s)
		for i := range n {
			for k := range eps {
				eps[k] = stream.NormFloat64()
			}
			row := s*n + i
			own := m.Sample(ps, eps, z)
			t.Reset()
			lp[row] = t.Float(target.LogDensity(&t, t.Input(z)))
			out := lq[row*S : (row+1)*S]
			for j, p := range probers {
				out[j] = own // the member's own log density as its draw returned it
				if j != s {
					out[j] = p.LogProb(mix.MemberParams(params, j), z)
				}
			}
		}
	}
	return lp, lq
}

// fitWeights returns the weights w on the simplex that maximise the mixture's ELBO estimated
// on the fixed member-major draws (n per member; lq their log densities under every member):
//
//	F(w) = Σ_s w_s ĝ_s(w),   ĝ_s(w) = mean over member s's draws of log p − log Σ_j w_j q_j,
//
// an unbiased estimate of E_{q_w}[log p] + H[q_w] for every w (each member's draws do not
// depend on w), concave in w (the entropy of a mixture is concave in its weights). Its
// gradient is ĝ_s − 1 up to Monte Carlo error, so the exponentiated-gradient (mirror ascent)
// step w_s ← w_s·exp(η ĝ_s)/Σ is taken with η = 1, halved when F does not increase. When the
// members are well separated ĝ_s ≈ ELBO_s − log w_s and one step gives w_s ∝ exp(ELBO_s),
// the evidence weights of mixtures of Laplace approximations; members that overlap (the same
// mode found twice) share that mode's weight instead of each taking it, which w ∝ exp(ELBO_s)
// would not do. It returns the weights and the iterations made (at most 500; it stops when no
// weight moves by more than 1e-10).
func fitWeights(lp, lq []float64, S int) ([]float64, int) {
	n := len(lp) / S
	w := make([]float64, S)
	for s := range w {
		w[s] = 1 / float64(S)
	}
	mix := make([]float64, len(lp))
	g := make([]float64, S)
	eval := func(w []float64) float64 {
		objective.WeightedMixtureLogWeights(mix, lp, lq, w)
		F := 0.0
		for s := range S {
			g[s] = objective.ELBO(mix[s*n : (s+1)*n])
			if w[s] > 0 {
				F += w[s] * g[s]
			}
		}
		return F
	}
	F := eval(w)
	if math.IsNaN(F) || math.IsInf(F, 0) {
		return w, 0 // not finite: keep the balance heuristic
	}
	eta := 1.0
	next := make([]float64, S)
	it := 0
	for it = 1; it <= 500; it++ {
		gs := append([]float64(nil), g...)
		moved := 0.0
		for tries := 0; ; tries++ {
			mx := math.Inf(-1)
			for s := range S {
				if w[s] > 0 {
					mx = max(mx, eta*gs[s])
				}
			}
			sum := 0.0
			for s := range S {
				next[s] = 0
				if w[s] > 0 {
					next[s] = w[s] * math.Exp(eta*gs[s]-mx)
				}
				sum += next[s]
			}
			for s := range next {
				next[s] /= sum
			}
			Fn := eval(next)
			if Fn >= F || tries >= 30 {
				if Fn < F { // no ascent at any step size: at the optimum within rounding
					eval(w)
					return w, it
				}
				F = Fn
				break
			}
			eta /= 2
		}
		for s := range S {
			moved = max(moved, math.Abs(next[s]-w[s]))
		}
		copy(w, next)
		if moved < 1e-10 {
			break
		}
	}
	return w, min(it, 500)
}

// weightGain is the difference of the mixture ELBO estimates, Σ_s w_s mean_s(log p − log q_w)
// − Σ_s u_s mean_s(log p − log q_u), on member-major draws (n per member, log densities lq
// under every member), and its standard error: the draws of different members are
// independent, so var = Σ_s var_s(h)/n with h = w_s(log p − log q_w) − u_s(log p − log q_u)
// over member s's draws (both estimates on the same draws: the difference is paired).
func weightGain(lp, lq []float64, S int, w, u []float64) (gain, se float64) {
	n := len(lp) / S
	mw, mu := make([]float64, len(lp)), make([]float64, len(lp))
	objective.WeightedMixtureLogWeights(mw, lp, lq, w)
	objective.WeightedMixtureLogWeights(mu, lp, lq, u)
	h := make([]float64, n)
	v := 0.0
	for s := range S {
		for i := range h {
			h[i] = 0
			if w[s] > 0 {
				h[i] += w[s] * mw[s*n+i]
			}
			h[i] -= u[s] * mu[s*n+i]
		}
		m, sm := meanSE(h)
		gain += m
		v += sm * sm
	}
	return gain, math.Sqrt(v)
}

// diagnoseMixture computes the ensemble Result's diagnostics on n stratified draws of the
// mixture (family.Mixture.Strata; the draws Saved.Sample repeats): the mixture's ELBO and its
// standard error, PSIS k̂ of log p − log q_w, and the verdict.
func diagnoseMixture(target model.Target, res *Result, seed uint64, n int) {
	res.Draws, res.LogQ = sampleAffine(res.Family, res.Params, seed, n)
	res.LogP = logDensities(target, res.Draws, n)
	res.GradEvals += n
	logw := make([]float64, n)
	finite := true
	for i := range n {
		logw[i] = res.LogP[i] - res.LogQ[i]
		if math.IsNaN(logw[i]) || math.IsInf(logw[i], 0) {
			finite = false
		}
	}
	res.ELBO, res.ELBOSE = meanSE(logw)
	res.KHatThreshold = diag.KhatThreshold(n)
	en := res.Ensemble
	note := fmt.Sprintf("; ensemble of %d members: MISELBO_%d %.6g, mean ELBO %.6g, JSD %.3g ± %.2g (of at most log %d = %.3g)",
		len(en.Members), en.L, en.MISELBO, en.MeanELBO, en.JSD, en.JSDSE, len(en.Members), math.Log(float64(len(en.Members))))
	advice := "try more members, other starts or a richer member family"
	if !finite {
		res.KHat = math.Inf(1)
		res.Verdict = "log p − log q is not finite on some draws: do not trust this approximation — " + advice + note
		return
	}
	ps, err := diag.PSIS(logw)
	if err != nil {
		res.KHat = math.Inf(1)
		res.Verdict = "PSIS failed (" + err.Error() + "): do not trust this approximation — " + advice + note
		return
	}
	res.KHat, res.PSISESS = ps.K, ps.ESS
	res.KHatSD = math.Sqrt(diag.KhatBootVar(logw, khatBoot, rng.New(seed, 3).Rand))
	res.Verdict = diag.Verdict(ps.K, n, advice) + borderline(ps.K, res.KHatThreshold, res.KHatSD) + note
}

// maxProcs is GOMAXPROCS, the workers of WithWorkers(0).
func maxProcs() int { return runtime.GOMAXPROCS(0) }
