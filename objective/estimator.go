package objective

import (
	"errors"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/model"
)

// Family is what an Estimator calls on a variational family, and nothing more: the sizes, the
// reparameterised draw with its log density, and the log density of a given point (for
// sticking-the-landing gradients and for the other members of an ensemble). family.Family
// satisfies it, and every family in package family is one; objective cannot name family's
// interface because the two packages sit on the same layer (DESIGN.md §1), so this is its
// subset, checked against family.Family in this package's tests.
type Family interface {
	// Dim is the dimension of z; it must equal the target's.
	Dim() int
	// NumParams is the length of the family's parameter vector φ.
	NumParams() int
	// NoiseDim is the length of the standard-normal noise one draw consumes.
	NoiseDim() int
	// Draw records z = T(ε; φ) and the total log q(z; φ).
	Draw(t *ad.Tape, params ad.Var, eps []float64) (z, logq ad.Var)
	// LogDensity records log q(z; φ) for z on the tape (params may be a constant).
	LogDensity(t *ad.Tape, params, z ad.Var) ad.Var
}

// EntropyFamily is a Family with a closed-form entropy H[q] = −E_q log q, the capability
// Options.Entropy needs (family.EntropyFamily satisfies it).
type EntropyFamily interface {
	Family
	Entropy(t *ad.Tape, params ad.Var) ad.Var
}

// BatchFamily is a Family that records the S draws of a step in one pass: DrawBatch maps the
// noise of S draws (S·NoiseDim values, draw after draw) to an S×Dim node Z whose row s is
// z_s = T(ε_s; φ) and a vector node logq of size S with log q(z_s; φ), the values and
// gradients Draw gives for each ε_s, up to rounding. family.BatchFamily satisfies it (the
// Gaussians, flows and Affine implement it). Its cost is what the family's arithmetic needs for
// S draws (matrix products over the S rows) instead of S times Draw's nodes.
type BatchFamily interface {
	Family
	DrawBatch(t *ad.Tape, params ad.Var, eps []float64) (Z, logq ad.Var)
}

// BatchDensityFamily is a BatchFamily that also records log q(Z_s·; φ) of S given points as
// one vector node (for sticking the landing on the batched path; family.BatchDensityFamily
// satisfies it).
type BatchDensityFamily interface {
	BatchFamily
	LogDensityBatch(t *ad.Tape, params, Z ad.Var) ad.Var
}

// DrawScoreFamily is a Family that gives the score of q at its own draw without inverting its
// map (family.DrawScorer satisfies it): DrawScore writes the draw z for the noise eps and
// g = ∇_z log q(z; φ) at it, and returns log q(z; φ). With STL and one member, the Estimator
// records the stopped log q of a draw as the linear node ⟨g, z⟩ + (log q − ⟨g, z⟩) — whose value
// is log q and whose gradient in z is the score — instead of LogDensity at z (for a flow an
// inversion on the tape). The surrogate's gradient is then the same up to rounding; where
// DrawScore fails (a singular Jacobian) the draw falls back to LogDensity.
type DrawScoreFamily interface {
	Family
	DrawScore(params, eps, z, gz []float64) (logq float64, err error)
}

// Options selects the objective and its gradient estimator.
type Options struct {
	// K is the number of importance samples per group: 0 or 1 gives the ELBO, K > 1 the
	// IWELBO (MISELBO with an ensemble).
	K int
	// Entropy uses the closed-form entropy: ELBO = (1/S) Σ_s log p(z_s) + H[q]. Only for the
	// ELBO (K = 1) of a single EntropyFamily. Its value is not a function of the log-weight
	// grid and differs from the plain ELBO estimate by a zero-mean Monte Carlo term.
	Entropy bool
	// STL drops the score term ∂log q(z; φ)/∂φ|_z from the gradient: log q enters with its
	// parameters held constant while z keeps its path to φ. For K = 1 this is "sticking the
	// landing" (Roeder, Wu & Duvenaud 2017, NeurIPS, eq. 8); for K > 1 it is the doubly
	// reparameterised gradient (Tucker, Lawson, Gu & Maddison 2019, ICLR, eq. 5), which weights
	// each path term by the squared normalised weight w̃_ℓ² and, unlike plain STL, is unbiased
	// for the IWELBO. Both are unbiased and their variance vanishes as q → p/Z. With an
	// ensemble (MISELBO) the mixture density is stopped in all its parameters; this is
	// unbiased for K = 1 (the stratified draws come from the mixture, whose expected score is
	// zero) and not offered for K > 1. The value is the same with or without STL.
	STL bool
}

// Estimator evaluates an objective and its gradient with respect to the variational
// parameters. It owns one tape and its buffers, so evaluations allocate nothing in steady
// state; it is not safe for concurrent use — give each worker its own (they are cheap).
//
// Each group of K draws is recorded on the tape, differentiated with BackwardSince and rewound,
// so the tape never holds more than one group and memory does not grow with S.
//
// Batched draws. For the ELBO of one family (K = 1, one member) whose family is a
// BatchFamily (with STL, a BatchDensityFamily or a DrawScoreFamily) and whose target is a model.BatchTarget,
// Evaluate records all S draws and their log densities in one pass instead: Z, log q =
// DrawBatch(ε_1..S), log p = LogDensityBatch(Z), and one backward pass of Σ_s (log p(z_s) −
// log q(z_s)) (Σ_s log p(z_s) with the closed-form entropy; with STL log q of the rows of Z
// at the stopped parameters: one linear node over the S scores when the family is a
// DrawScoreFamily, else LogDensityBatch of the family). The estimate and its gradient are the same as the per-draw path's up to rounding
// (sums in a different order); the tape then holds the S draws at once (memory O(S) instead of
// O(1) in S). If a log weight is −Inf, or the target has no batched form (ok = false), that
// Evaluate falls back to the per-draw path, which drops such draws from the gradient.
type Estimator struct {
	target  model.Target
	members []Family
	bfam    BatchFamily        // members[0] when the batched path applies, else nil
	bden    BatchDensityFamily // members[0] with STL on the batched path
	dscore  DrawScoreFamily    // members[0] with STL and one member, when it gives scores
	btgt    model.BatchTarget  // target as a BatchTarget, with bfam
	offs    []int              // params of member a are params[offs[a]:offs[a+1]]
	noise   int                // Σ_a NoiseDim_a
	k       int
	opts    Options

	tape          ad.Tape
	views, cviews []ad.Var // per-member parameter views (live, constant)
	lqs           []ad.Var // per-member log densities of one draw
	lqv           []float64
	terms         []ad.Var // surrogate terms of the retained draws of a group
	kidx          []int    // their indices in the group
	coef          []float64
	logw, groups  []float64
	lastRows      int
}

// New returns the ELBO/IWELBO estimator for one family.
func New(target model.Target, fam Family, opts Options) (*Estimator, error) {
	return NewEnsemble(target, []Family{fam}, opts)
}

// NewEnsemble returns the MISELBO estimator for an ensemble of A = len(members) families
// (A = 1 is New). The parameter vector is the concatenation of the members' parameters; the
// noise of one evaluation is member-major: member a's S·K draws of NoiseDim_a values each.
func NewEnsemble(target model.Target, members []Family, opts Options) (*Estimator, error) {
	if len(members) == 0 {
		return nil, errors.New("objective: NewEnsemble: no members")
	}
	k := max(opts.K, 1)
	if opts.K < 0 {
		return nil, fmt.Errorf("objective: New: K must be ≥ 1 (K=%d)", opts.K)
	}
	e := &Estimator{target: target, members: members, k: k, opts: opts}
	e.offs = make([]int, len(members)+1)
	for a, f := range members {
		if f.Dim() != target.Dim() {
			return nil, fmt.Errorf("objective: New: member %d has dimension %d, target %d", a, f.Dim(), target.Dim())
		}
		e.offs[a+1] = e.offs[a] + f.NumParams()
		e.noise += f.NoiseDim()
	}
	A := len(members)
	switch {
	case opts.Entropy && (k > 1 || A > 1 || opts.STL):
		return nil, fmt.Errorf("objective: New: closed-form entropy needs K=1, one member and no STL (K=%d, members=%d, STL=%v)", k, A, opts.STL)
	case opts.STL && A > 1 && k > 1:
		return nil, fmt.Errorf("objective: New: STL with an ensemble needs K=1 (K=%d)", k)
	}
	if opts.Entropy {
		if _, ok := members[0].(EntropyFamily); !ok {
			return nil, fmt.Errorf("objective: New: family %T has no closed-form entropy", members[0])
		}
	}
	if ds, ok := members[0].(DrawScoreFamily); ok && opts.STL && A == 1 {
		e.dscore = ds
	}
	if bf, ok := members[0].(BatchFamily); ok && A == 1 && k == 1 {
		bd, okd := members[0].(BatchDensityFamily)
		if bt, ok := target.(model.BatchTarget); ok && (!opts.STL || okd || e.dscore != nil) {
			e.bfam, e.btgt = bf, bt
			if opts.STL {
				e.bden = bd
			}
		}
	}
	e.views = make([]ad.Var, A)
	e.cviews = make([]ad.Var, A)
	e.lqs = make([]ad.Var, A)
	e.lqv = make([]float64, A)
	e.terms = make([]ad.Var, k)
	e.coef = make([]float64, k)
	e.kidx = make([]int, k)
	return e, nil
}

// NumParams returns the length of the parameter vector (all members).
func (e *Estimator) NumParams() int { return e.offs[len(e.offs)-1] }

// K returns the number of importance samples per group.
func (e *Estimator) K() int { return e.k }

// NoiseLen returns the length of the base noise for S groups: S·K·Σ_a NoiseDim_a.
func (e *Estimator) NoiseLen(S int) int { return S * e.k * e.noise }

// Evaluate returns the objective at params for the base noise eps (standard normal, length
// NoiseLen(S) for some S ≥ 1) and, when grad is not nil, writes its gradient into grad
// (len NumParams). The gradient is that of the estimate for this eps (reparameterisation),
// adjusted as Options says. Cost: S·K·A draws and target evaluations, plus S·K·A² member log
// densities for an ensemble of A.
//
// A draw whose log weight is −Inf (log p = −Inf) has importance weight zero: it is rewound
// from the tape and contributes nothing to the gradient; for K = 1 the value is then −Inf.
// NaN values propagate to the result (the caller's NaN policy decides).
func (e *Estimator) Evaluate(params, eps, grad []float64) float64 {
	n := e.NumParams()
	if len(params) != n || (grad != nil && len(grad) != n) {
		panic(fmt.Sprintf("objective: Evaluate: len(params)=%d, len(grad)=%d, want %d", len(params), len(grad), n))
	}
	per := e.k * e.noise
	if len(eps) == 0 || len(eps)%per != 0 {
		panic(fmt.Sprintf("objective: Evaluate: len(eps)=%d is not a positive multiple of K·NoiseDim=%d", len(eps), per))
	}
	S := len(eps) / per
	A := len(e.members)
	rows := A * S
	e.lastRows = rows
	e.logw = grow(e.logw, rows*e.k)
	e.groups = grow(e.groups, rows)

	t := &e.tape
	t.Reset()
	P := t.Input(params)
	for a := range A {
		e.views[a] = P
		if A > 1 {
			e.views[a] = t.Slice(P, e.offs[a], e.offs[a+1])
		}
	}
	if e.opts.STL {
		C := t.Const(params...)
		for a := range A {
			e.cviews[a] = C
			if A > 1 {
				e.cviews[a] = t.Slice(C, e.offs[a], e.offs[a+1])
			}
		}
	}
	m := t.Mark()
	off := 0
	sum, done := 0.0, false
	if e.bfam != nil {
		sum, done = e.evaluateBatch(P, m, eps, grad != nil, S)
	}
	for a, fam := range e.members {
		if done {
			break
		}
		nd := fam.NoiseDim()
		for s := range S {
			row := a*S + s
			lw := e.logw[row*e.k : (row+1)*e.k]
			kept := 0
			g := 0.0
			for l := range e.k {
				ms := t.Mark()
				z, lq := fam.Draw(t, e.views[a], eps[off:off+nd])
				off += nd
				lp := e.target.LogDensity(t, z)
				lqv, q := e.logQ(a, z, lq)
				lw[l] = t.Float(lp) - lqv
				if e.opts.Entropy {
					g = t.Float(lp)
				}
				if grad == nil {
					t.Rewind(ms)
					continue
				}
				var term ad.Var
				if e.dscore != nil {
					term = e.scoreSurrogate(params, eps[off-nd:off], z, lp)
				} else {
					term = e.surrogate(z, lp, q)
				}
				if math.IsInf(t.Float(term), -1) || t.IsConst(term) {
					t.Rewind(ms)
					continue
				}
				e.terms[kept] = term
				e.kidx[kept] = l
				kept++
			}
			switch {
			case e.opts.Entropy:
			case e.k == 1:
				g = lw[0]
			default:
				g = logMeanExp(lw)
			}
			e.groups[row] = g
			sum += g
			if kept > 0 {
				out := e.terms[0]
				if e.k > 1 {
					lse := logSumExp(lw)
					for i, l := range e.kidx[:kept] {
						w := math.Exp(lw[l] - lse) // normalised weight w̃_ℓ
						if e.opts.STL {
							w *= w
						}
						e.coef[i] = w
					}
					out = t.Dot(t.Concat(e.terms[:kept]...), t.ConstRef(e.coef[:kept]))
				}
				// P was recorded before m, so BackwardSince only adds to its adjoint (views of
				// P share it and are never cleared): the groups' gradients accumulate there and
				// are read once, after the last group.
				t.BackwardSince(m, out)
			}
			t.Rewind(m)
		}
	}
	val := sum / float64(rows)
	if grad != nil {
		// One multiplication per parameter, not a division: with thousands of parameters
		// (a Bernstein flow has ≈ 6,000) the divisions were ≈ 10% of a step. The result can
		// differ from v/rows in the last bit when rows is not a power of two.
		inv := 1 / float64(rows)
		clear(grad)
		kernel.Axpy(inv, t.Grad(P), grad) // grad = inv·∂ (0 + a·x: the same rounded product per element)
	}
	if e.opts.Entropy {
		H := e.members[0].(EntropyFamily).Entropy(t, P)
		h := t.Float(H)
		val += h
		for i := range e.groups[:rows] {
			e.groups[i] += h
		}
		if grad != nil {
			t.ZeroGrad(P)
			t.BackwardSince(m, H)
			for i, v := range t.Grad(P) {
				grad[i] += v
			}
		}
		t.Rewind(m)
	}
	return val
}

// evaluateBatch is the batched path of Evaluate (see Estimator) for S draws, after P and the
// mark m are recorded: it fills logw and groups, runs the backward pass when grad is set and
// returns the sum of the group values. done = false (the tape rewound to m) when the target
// has no batched form or a log weight is −Inf: the per-draw path then does the evaluation.
func (e *Estimator) evaluateBatch(P ad.Var, m ad.Mark, eps []float64, grad bool, S int) (sum float64, done bool) {
	t := &e.tape
	Z, LQ := e.bfam.DrawBatch(t, P, eps)
	LP, ok := e.btgt.LogDensityBatch(t, Z)
	if !ok {
		t.Rewind(m)
		return 0, false
	}
	lp, lq := t.Value(LP), t.Value(LQ)
	if len(lp) != S || len(lq) != S {
		panic(fmt.Sprintf("objective: Evaluate: batched target and family gave %d and %d values for %d draws", len(lp), len(lq), S))
	}
	for s := range S {
		lw := lp[s] - lq[s]
		if math.IsInf(lw, -1) {
			t.Rewind(m)
			return 0, false
		}
		e.logw[s] = lw
		g := lw
		if e.opts.Entropy {
			g = lp[s]
		}
		e.groups[s] = g
		sum += g
	}
	if grad {
		out := LP
		switch {
		case e.dscore != nil:
			out = t.Sub(t.Sum(LP), e.stoppedLogQBatch(t.Value(P), eps, Z, S))
		case e.bden != nil:
			out = t.Sub(LP, e.bden.LogDensityBatch(t, e.cviews[0], Z))
		case !e.opts.Entropy:
			out = t.Sub(LP, LQ)
		}
		if out = t.Sum(out); !t.IsConst(out) {
			t.BackwardSince(m, out)
		}
	}
	t.Rewind(m)
	return sum, true
}

// logQ returns the value of the proposal log density of a draw of member a — log q_a(z), or
// for an ensemble the log mixture density — and the node to differentiate (for STL, with the
// parameters of the mixture stopped). The value is taken from Draw's log q for the member's
// own term, so it does not depend on the gradient options.
func (e *Estimator) logQ(a int, z, lq ad.Var) (float64, ad.Var) {
	t := &e.tape
	A := len(e.members)
	if A == 1 {
		return t.Float(lq), lq
	}
	for j, f := range e.members {
		switch {
		case j == a:
			e.lqv[j] = t.Float(lq)
			e.lqs[j] = lq
			if e.opts.STL {
				e.lqs[j] = f.LogDensity(t, e.cviews[j], z)
			}
		case e.opts.STL:
			e.lqs[j] = f.LogDensity(t, e.cviews[j], z)
			e.lqv[j] = t.Float(e.lqs[j])
		default:
			e.lqs[j] = f.LogDensity(t, e.views[j], z)
			e.lqv[j] = t.Float(e.lqs[j])
		}
	}
	logA := math.Log(float64(A))
	mix := t.AddC(t.LogSumExp(t.Concat(e.lqs...)), -logA)
	return logSumExp(e.lqv) - logA, mix
}

// surrogate records the node whose gradient is one draw's contribution: log p − log q
// (plain), log p − log q with the parameters of q stopped (STL), or log p alone (closed-form
// entropy). q is the node logQ returned.
func (e *Estimator) surrogate(z, lp, q ad.Var) ad.Var {
	t := &e.tape
	switch {
	case e.opts.Entropy:
		return lp
	case e.opts.STL && len(e.members) == 1:
		return t.Sub(lp, e.members[0].LogDensity(t, e.cviews[0], z))
	default:
		return t.Sub(lp, q)
	}
}

// stoppedLogQ records log q(z) of the member's own draw from eps with the parameters stopped:
// ⟨g, z⟩ + (log q − ⟨g, z_draw⟩), g the score DrawScore gives (see DrawScoreFamily), or
// LogDensity at the constant parameters when DrawScore fails.
func (e *Estimator) stoppedLogQ(params, eps []float64, z ad.Var) ad.Var {
	t := &e.tape
	d := t.Size(z)
	zs, g := t.Scratch(d), t.Scratch(d)
	lq, err := e.dscore.DrawScore(params, eps, zs, g)
	if err != nil {
		return e.members[0].LogDensity(t, e.cviews[0], z)
	}
	dot := 0.0
	for i, v := range g {
		dot += v * zs[i]
	}
	return t.AddC(t.Dot(z, t.ConstRef(g)), lq-dot)
}

// scoreSurrogate is surrogate for STL through DrawScore: log p − stoppedLogQ.
func (e *Estimator) scoreSurrogate(params, eps []float64, z, lp ad.Var) ad.Var {
	return e.tape.Sub(lp, e.stoppedLogQ(params, eps, z))
}

// stoppedLogQBatch records Σ_s log q(Z_s·) with the parameters stopped, for the S rows of the
// batched draw Z: one node ⟨G, Z⟩ + Σ_s (log q_s − ⟨g_s, z_s⟩) over the rows' scores, plus
// LogDensity at the constant parameters for each row whose DrawScore failed (its row of G is
// zero).
func (e *Estimator) stoppedLogQBatch(params, eps []float64, Z ad.Var, S int) ad.Var {
	t := &e.tape
	nd := e.members[0].NoiseDim()
	n := t.Size(Z)
	d := n / S
	zs, G := t.Scratch(n), t.Scratch(n)
	c := 0.0
	var failed []ad.Var
	for s := range S {
		z, g := zs[s*d:(s+1)*d], G[s*d:(s+1)*d]
		lq, err := e.dscore.DrawScore(params, eps[s*nd:(s+1)*nd], z, g)
		if err != nil {
			clear(g)
			failed = append(failed, e.members[0].LogDensity(t, e.cviews[0], t.Slice(Z, s*d, (s+1)*d)))
			continue
		}
		c += lq
		for i, v := range g {
			c -= v * z[i]
		}
	}
	out := t.AddC(t.Dot(Z, t.ConstRef(G)), c)
	for _, f := range failed {
		out = t.Add(out, f)
	}
	return out
}

// LogWeights returns the log-weight grid of the last Evaluate: (A·S)×K row-major, rows
// member-major, each log p(z) − log q(z) with q the member (or, for an ensemble, the mixture).
// IWELBO(LogWeights(), K) is the value Evaluate returned, except with closed-form entropy.
// The slice is reused by the next Evaluate.
func (e *Estimator) LogWeights() []float64 { return e.logw[:e.lastRows*e.k] }

// GroupValues returns the A·S per-group terms of the last Evaluate, whose mean is the value:
// their standard deviation over √(A·S) is the Monte Carlo standard error of the estimate
// (for an ensemble, rows of different members are not identically distributed; use it as an
// upper bound). The slice is reused by the next Evaluate.
func (e *Estimator) GroupValues() []float64 { return e.groups[:e.lastRows] }

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
