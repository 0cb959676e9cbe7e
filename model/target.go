package model

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
)

// Target is a log density over a flat unconstrained vector z ∈ ℝ^Dim: what VI families,
// samplers and optimisers consume. LogDensity records log p(z) on t for z, ONE vector node of
// size Dim, and returns it as a scalar node; the log-Jacobians of any constraining transforms
// are included, so that p is a density with respect to Lebesgue measure on ℝ^Dim. The value
// may be −∞ or NaN outside the support of a hand-written target; callers treat that as a
// rejected point.
//
// Concurrency: LogDensity is called from several goroutines at once, one tape each — fit's
// workers share a step's draws (fit.WithWorkers), mcmc runs its chains in parallel — so an
// implementation must be safe for concurrent use: it may read shared data, but scratch
// buffers it writes must be per call (or on the tape), never captured slices shared between
// calls.
type Target interface {
	Dim() int
	LogDensity(t *ad.Tape, z ad.Var) ad.Var
}

// Gradient resets t, evaluates tg at z, writes ∇ log p(z) into grad and returns log p(z).
// Reusing t keeps the evaluation allocation-free for targets that are. It panics if
// len(z) or len(grad) differs from tg.Dim().
func Gradient(t *ad.Tape, tg Target, z, grad []float64) float64 {
	if len(z) != tg.Dim() || len(grad) != len(z) {
		panic(fmt.Sprintf("model: Gradient: len(z)=%d, len(grad)=%d, Dim=%d", len(z), len(grad), tg.Dim()))
	}
	t.Reset()
	in := t.Input(z)
	out := tg.LogDensity(t, in)
	if t.IsConst(out) { // a target that does not depend on z
		clear(grad)
		return t.Float(out)
	}
	t.Backward(out)
	copy(grad, t.Grad(in))
	return t.Float(out)
}

// Func is a Target written directly on the tape over the unconstrained vector.
type Func struct {
	N int
	F func(t *ad.Tape, z ad.Var) ad.Var
}

// Dim returns f.N.
func (f Func) Dim() int { return f.N }

// LogDensity returns f.F(t, z). It panics if z does not have size N.
func (f Func) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	if n := t.Size(z); n != f.N {
		panic(fmt.Sprintf("model: Func.LogDensity: z has size %d, want %d", n, f.N))
	}
	return f.F(t, z)
}

// GradFunc adapts a hand-written log density with its analytic gradient to Target: F returns
// log p(x) and writes ∇ log p(x) into grad (len N, zeroed on entry). x aliases tape memory and
// must not be modified or retained. The result is one fused node; F is called once per
// LogDensity. It allocates only when z is a constant node (its gradient is then discarded).
type GradFunc struct {
	N int
	F func(x, grad []float64) float64
}

// Dim returns g.N.
func (g GradFunc) Dim() int { return g.N }

// LogDensity records F's value at z as one fused node with F's gradient as partials. It
// panics if z does not have size N.
func (g GradFunc) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	if n := t.Size(z); n != g.N {
		panic(fmt.Sprintf("model: GradFunc.LogDensity: z has size %d, want %d", n, g.N))
	}
	x := t.Value(z)
	fb := t.Fused()
	d := fb.Partial(z)
	if d == nil {
		d = make([]float64, g.N)
	}
	return fb.Done(g.F(x, d))
}

// Model is a Target built from a Layout and a log density written in the constrained
// parameters, the way a Stan program's model block is:
//
//	lay, _ := model.NewLayout(
//		model.Param{Name: "mu"},
//		model.Param{Name: "tau", Constraint: bijector.Lower(1, 0)},
//		model.Param{Name: "theta", Dims: []int{8}},
//	)
//	m := &model.Model{Layout: lay, Density: func(t *ad.Tape, p []ad.Var) ad.Var {
//		mu, tau, theta := p[0], p[1], p[2]
//		… return log prior + log likelihood as a scalar node
//	}}
//
// LogDensity(z) = Density(x(z)) + log J(z). Density receives one node per parameter in
// declaration order (Layout.Constrain's out); the slice is only valid during the call.
//
// A model describes its outputs too: Derived and Derive are its derived quantities (Stan's
// transformed parameters and generated quantities blocks, NumPyro's deterministic sites), which
// every writer of draws appends to the parameters (Columns, Row); NumObs and LogLik are the
// per-observation log-likelihood that PSIS-LOO and posterior predictive checks need. All are
// optional, and Check validates them.
type Model struct {
	Layout *Layout
	// Density records the log density of the constrained parameters p on t. It is called from
	// several goroutines at once, each with its own tape (see Target): it may read the data it
	// captures but must not write to memory shared between calls (no captured scratch slices).
	Density func(t *ad.Tape, p []ad.Var) ad.Var
	// NoJacobian leaves log J out: LogDensity is then the log density of the constrained
	// parameters evaluated at x(z) (posterior mode on the constrained scale; the Δ checks of
	// posteriordb's MODELS.md). The zero value includes log J, which is what a sampler or VI
	// over z needs.
	NoJacobian bool

	// Derived declares the derived quantities in output order: names (Stan identifiers, none
	// equal to a parameter's) and shapes, as Param without a constraint.
	Derived []Quantity
	// Derive computes the derived quantities from the constrained parameters: p[i] holds
	// parameter i and out[k] receives quantity k, both row-major (as on the tape) with the
	// product of Dims entries. It is deterministic: a function of p alone, with no random
	// numbers (see Row). It is called from several goroutines at once and must not keep p or
	// out. Required when Derived is not empty.
	Derive func(p, out [][]float64)

	// NumObs is the number of observations LogLik reports; 0 when the model has no LogLik.
	NumObs int
	// LogLik writes log p(y_n | θ) of each observation n into out (len NumObs) at the
	// constrained parameters p (as Derive's), all normalising constants kept, so that
	// Σ_n out[n] + log prior(θ) = Density(θ). Same concurrency rule as Derive.
	LogLik func(p [][]float64, out []float64)
	// Explain, when set, says why the log density is not finite at the unconstrained point z:
	// the model's own run-time error (a compiled Stan program's "normal_lpdf: Scale parameter
	// is -4, but must be positive!" with the statement's file:line:col), or nil when the
	// density is finite there or the model cannot tell. It evaluates the density once, on a
	// tape of its own; fit and vigo print it when a start point is rejected.
	Explain func(z []float64) error
}

// Explainer is a target that can say why its log density is not finite at a point
// (Model.Explain).
type Explainer interface {
	ExplainAt(z []float64) error
}

// ExplainAt returns Explain(z), or nil when m has no Explain.
func (m *Model) ExplainAt(z []float64) error {
	if m.Explain == nil {
		return nil
	}
	return m.Explain(z)
}

// Dim returns the unconstrained size m.Layout.Dim().
func (m *Model) Dim() int { return m.Layout.Dim() }

// LogDensity records Density(x(z)) + log J(z) on t (without log J if NoJacobian). It panics if
// z does not have size Dim. Besides Density's own nodes it records the Layout's transforms and
// one Add; it allocates nothing in steady state.
func (m *Model) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	l := m.Layout
	s := l.getScratch()
	defer l.putScratchVars(s)
	p := s.vars[:len(l.params)]
	lj := l.Constrain(t, z, p)
	lp := m.Density(t, p)
	if m.NoJacobian || t.IsConst(lj) {
		return lp
	}
	return t.Add(lp, lj)
}

// BatchTarget is a Target that can also record the log density of many points in one pass:
// the optional batched form VI estimators use for the S draws of a step (objective.Estimator
// calls it when the family can draw a batch too). Z is an S×Dim node (row-major, row s is the
// point z_s; a plain vector of size S·Dim is accepted), and the result is a vector node of size
// S whose element s is log p(z_s), the value LogDensity(z_s) records up to rounding (the sums
// may be formed in a different order), with the same gradient.
//
// Cost: what the target's arithmetic needs for S points, against S times LogDensity's nodes;
// a good implementation records O(1) nodes (one fused node with S·Dim partials, or matrix
// products over the S rows such as X·Bᵀ for a regression's linear predictors).
//
// ok = false says that this target has no batched form (a wrapper whose inner target has none)
// and that nothing was recorded: the caller then evaluates the rows one by one. The
// concurrency rule is Target's.
type BatchTarget interface {
	Target
	LogDensityBatch(t *ad.Tape, Z ad.Var) (lp ad.Var, ok bool)
}

// LogDensityRows records log p(z_s) for the S rows of Z (S·Dim values) one row at a time with
// LogDensity and returns them as one vector node of size S: the per-row form of
// BatchTarget.LogDensityBatch, for targets without a batched form and for tests. Cost: S
// LogDensity calls, S row views and one concatenation.
func LogDensityRows(t *ad.Tape, tg Target, Z ad.Var) ad.Var {
	d := tg.Dim()
	n := t.Size(Z)
	if d < 1 || n == 0 || n%d != 0 {
		panic(fmt.Sprintf("model: LogDensityRows: size %d is not a positive multiple of Dim=%d", n, d))
	}
	S := n / d
	var buf [16]ad.Var
	lps := buf[:0]
	if S > len(buf) {
		lps = make([]ad.Var, 0, S)
	}
	for s := range S {
		lps = append(lps, tg.LogDensity(t, t.Slice(Z, s*d, (s+1)*d)))
	}
	return t.Concat(lps...)
}
