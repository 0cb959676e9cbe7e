// Package reparam makes the parameterisation of a hierarchical model a choice instead of a
// rewrite: a model is written once in its original (centred) coordinates with its
// location–scale latent groups declared, θ ~ D(μ, σ) with μ and σ computed from other
// parameters, and Spec.Model builds it in centred, non-centred or partially centred form per
// group. The partial centring is the variationally inferred parameterisation (VIP) of Gorinova,
// Moore & Hoffman (2020, "Automatic reparameterisation of probabilistic programs", ICML, §3):
// with λ ∈ [0, 1] the sampled coordinate is θ̃ and
//
//	θ̃ ~ D(λμ, σ^λ),   θ = μ + σ^{1−λ}(θ̃ − λμ),
//
// so λ = 1 is the centred parameterisation (CP, θ̃ = θ) and λ = 0 the non-centred one (NCP,
// θ = μ + σθ̃ with θ̃ ~ D(0, 1)), Kingma & Welling's (2014) differentiable non-centred
// parameterisation (DNCP) by the location–scale construction. The change of variables is
// exact: D(θ̃ | λμ, σ^λ) = D(θ | μ, σ)·|∂θ/∂θ̃| because |∂θ/∂θ̃| = σ^{1−λ} per element, so every
// λ gives the same posterior over θ and only its geometry changes.
//
// Choose (the correlation criterion of Kingma & Welling 2014, §4, at a pilot posterior) and
// LearnLambda (VIP: λ learned with the variational parameters on the ELBO) pick λ per group;
// both explain their choice (Choice.String).
//
// The built model reports each group's latent in its original coordinates as a derived
// quantity named as in the Spec's layout; its sampled coordinate is the parameter
// Name + "_tilde".
package reparam

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// Family is the location–scale family of a group's prior: θ = μ + σ·ε with ε from the
// family's standard member.
type Family int

// The families: Normal, Student-t (Group.Nu degrees of freedom), logistic, Laplace (double
// exponential) and Cauchy, with the densities of package density.
const (
	Normal Family = iota
	StudentT
	Logistic
	Laplace
	Cauchy
)

func (f Family) String() string {
	switch f {
	case Normal:
		return "normal"
	case StudentT:
		return "student_t"
	case Logistic:
		return "logistic"
	case Laplace:
		return "laplace"
	case Cauchy:
		return "cauchy"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// varianceFactor is c_F, the conditional variance of the family's standard member as the
// correlation criterion sees it: 1/(−(log f)”(0)), the inverse curvature of the standard log
// density at its centre (the Laplace approximation of the prior around μ). Normal 1,
// Student-t ν/(ν+1), logistic 2 (log f = −x − 2 log(1 + e^{−x}) has curvature −1/2 at 0),
// Cauchy 1/2. The Laplace density has a kink at 0, so its variance 2 stands in.
func (f Family) varianceFactor(nu float64) float64 {
	switch f {
	case StudentT:
		return nu / (nu + 1)
	case Logistic:
		return 2
	case Laplace:
		return 2
	case Cauchy:
		return 0.5
	}
	return 1
}

// Group declares a location–scale latent group: the parameter named Param (a scalar or a
// vector, unconstrained in Spec.Layout) has prior θ ~ Family(μ, σ) elementwise, with
// μ = Loc(t, p) and σ = Scale(t, p) computed from the parameters in original coordinates p
// (indexed as Spec.Layout's parameters). Loc and Scale return a scalar node or a node of θ's
// size; σ must be positive (a point where it is not has log density NaN: a rejected point).
// They may read the parameters that are not groups and the groups declared before this one;
// the entries of this group and of later groups hold a zero constant while they run. They are
// called from several goroutines at once (see model.Model.Density).
type Group struct {
	Param  string
	Family Family
	Nu     float64 // degrees of freedom of StudentT (> 0); ignored otherwise
	Loc    func(t *ad.Tape, p []ad.Var) ad.Var
	Scale  func(t *ad.Tape, p []ad.Var) ad.Var
}

// Spec is a model written in its original coordinates with its location–scale groups
// declared.
//
// Density records the log density of the parameters p (one node per parameter of Layout, in
// original coordinates) WITHOUT the groups' priors, which the built model adds in the chosen
// coordinates. Derived, Derive, NumObs and LogLik are the model's own outputs as in
// model.Model, computed from the parameters in original coordinates; the built model puts the
// groups' latents before Derived.
type Spec struct {
	Layout  *model.Layout
	Density func(t *ad.Tape, p []ad.Var) ad.Var
	Groups  []Group

	Derived []model.Quantity
	Derive  func(p, out [][]float64)
	NumObs  int
	LogLik  func(p [][]float64, out []float64)
}

// CP and NCP are the two ends of the partial centring: λ = 1 (centred) and λ = 0 (non-centred).
const (
	CP  = 1.0
	NCP = 0.0
)

// compiled is a checked Spec: the parameter index of every group and its size.
type compiled struct {
	spec   *Spec
	params []model.Param
	idx    []int // idx[g]: parameter index of group g
	size   []int
	group  []int // group[i]: the group of parameter i, or −1
}

// check validates s and indexes its groups. Errors name the field:
// "reparam: Groups[1].Param: "tau" is constrained, want an unconstrained scalar or vector".
func (s *Spec) check(fn string) (*compiled, error) {
	if s == nil || s.Layout == nil {
		return nil, fmt.Errorf("reparam: %s: Spec.Layout is nil", fn)
	}
	if s.Density == nil {
		return nil, fmt.Errorf("reparam: %s: Spec.Density is nil", fn)
	}
	c := &compiled{spec: s, params: s.Layout.Params()}
	c.group = make([]int, len(c.params))
	for i := range c.group {
		c.group[i] = -1
	}
	for g, gr := range s.Groups {
		field := fmt.Sprintf("Groups[%d]", g)
		i := s.Layout.Index(gr.Param)
		if i < 0 {
			return nil, fmt.Errorf("reparam: %s: %s.Param: no parameter %q in the layout", fn, field, gr.Param)
		}
		p := c.params[i]
		if p.Bounds != nil || (p.Constraint != nil && !isIdentity(p.Constraint)) || len(p.Dims) > 1 {
			return nil, fmt.Errorf("reparam: %s: %s.Param: %q is constrained or has rank %d, want an unconstrained scalar or vector", fn, field, gr.Param, len(p.Dims))
		}
		if c.group[i] >= 0 {
			return nil, fmt.Errorf("reparam: %s: %s.Param: %q is already Groups[%d]", fn, field, gr.Param, c.group[i])
		}
		if gr.Loc == nil || gr.Scale == nil {
			return nil, fmt.Errorf("reparam: %s: %s: Loc and Scale are required (Param=%q)", fn, field, gr.Param)
		}
		if gr.Family < Normal || gr.Family > Cauchy {
			return nil, fmt.Errorf("reparam: %s: %s.Family: unknown family (Family=%d)", fn, field, int(gr.Family))
		}
		if gr.Family == StudentT && !(gr.Nu > 0 && !math.IsInf(gr.Nu, 1)) {
			return nil, fmt.Errorf("reparam: %s: %s.Nu: want positive and finite for student_t (Nu=%g)", fn, field, gr.Nu)
		}
		c.group[i] = g
		c.idx = append(c.idx, i)
		n := 1
		if len(p.Dims) == 1 {
			n = p.Dims[0]
		}
		c.size = append(c.size, n)
	}
	names := map[string]bool{}
	for _, p := range c.params {
		names[p.Name] = true
	}
	for _, i := range c.idx {
		if n := c.params[i].Name + "_tilde"; names[n] {
			return nil, fmt.Errorf("reparam: %s: parameter %q clashes with the sampled coordinate of group %q", fn, n, c.params[i].Name)
		}
	}
	for i, p := range c.params {
		if p.Bounds == nil {
			continue
		}
		for _, a := range slices.Concat(p.Bounds.Lower, p.Bounds.Upper) {
			for _, tm := range a.Terms {
				if j := s.Layout.Index(tm.Name); j >= 0 && c.group[j] >= 0 {
					return nil, fmt.Errorf("reparam: %s: parameter %q: its bounds use group %q, whose coordinates change", fn, c.params[i].Name, tm.Name)
				}
			}
		}
	}
	return c, nil
}

func isIdentity(b bijector.Bijector) bool {
	d, ok := b.(bijector.Describer)
	return ok && d.Spec().Kind == bijector.KindIdentity
}

// checkLambda validates λ: one value in [0, 1] per group.
func (c *compiled) checkLambda(fn string, lambda []float64) error {
	if len(lambda) != len(c.idx) {
		return fmt.Errorf("reparam: %s: %d values of lambda for %d groups", fn, len(lambda), len(c.idx))
	}
	for g, l := range lambda {
		if !(l >= 0 && l <= 1) {
			return fmt.Errorf("reparam: %s: lambda[%d] = %g (group %q), want in [0, 1]", fn, g, l, c.spec.Groups[g].Param)
		}
	}
	return nil
}

// groupTerm returns θ (original coordinates) and the log prior term of group g in the
// coordinates θ̃ for partial centring lam (a scalar node; a constant 0 or 1 takes the exact
// NCP or CP formula), with μ and σ the group's location and scale nodes:
//
//	CP:  θ = θ̃,            term = log D(θ | μ, σ)
//	NCP: θ = μ + σ·θ̃,       term = log D(θ̃ | 0, 1)
//	λ:   θ = μ + σ^{1−λ}(θ̃ − λμ), term = log D(θ̃ | λμ, σ^λ)
func (c *compiled) groupTerm(t *ad.Tape, g int, tilde, mu, sigma, lam ad.Var) (theta, term ad.Var) {
	gr := &c.spec.Groups[g]
	if t.IsConst(lam) {
		switch t.Float(lam) {
		case 1:
			return tilde, logPrior(t, gr, tilde, mu, sigma)
		case 0:
			return t.Add(mu, t.Mul(sigma, tilde)), logPrior(t, gr, tilde, t.Const(0), t.Const(1))
		}
	}
	ls := t.Log(sigma)
	sl := t.Exp(t.Mul(lam, ls))
	s1 := t.Exp(t.Mul(t.AddC(t.Neg(lam), 1), ls))
	lmu := t.Mul(lam, mu)
	theta = t.Add(mu, t.Mul(s1, t.Sub(tilde, lmu)))
	return theta, logPrior(t, gr, tilde, lmu, sl)
}

// logPrior is Σ log D(x | loc, scale) for the group's family.
func logPrior(t *ad.Tape, gr *Group, x, loc, scale ad.Var) ad.Var {
	switch gr.Family {
	case StudentT:
		return density.StudentT(t, x, t.Const(gr.Nu), loc, scale)
	case Logistic:
		return density.Logistic(t, x, loc, scale)
	case Laplace:
		return density.Laplace(t, x, loc, scale)
	case Cauchy:
		return density.Cauchy(t, x, loc, scale)
	}
	return density.Normal(t, x, loc, scale)
}

// eval records, for the sampled coordinates q (one node per parameter, groups in θ̃), the
// parameters in original coordinates into p and returns the log density: Density(p) plus every
// group's prior term, except group skip's (skip < 0: none). lam holds one scalar node per
// group.
func (c *compiled) eval(t *ad.Tape, q, p, lam []ad.Var, skip int) ad.Var {
	copy(p, q)
	for _, i := range c.idx {
		p[i] = t.Const(0)
	}
	lp := t.Const(0)
	for g, i := range c.idx {
		gr := &c.spec.Groups[g]
		mu, sigma := gr.Loc(t, p), gr.Scale(t, p)
		theta, term := c.groupTerm(t, g, q[i], mu, sigma, lam[g])
		p[i] = theta
		if g != skip {
			lp = t.Add(lp, term)
		}
	}
	return t.Add(c.spec.Density(t, p), lp)
}

// layout is the built model's layout: the Spec's parameters with each group's renamed to
// Name + "_tilde" (same shapes, same order, so z has the same meaning block by block).
func (c *compiled) layout() (*model.Layout, error) {
	ps := slices.Clone(c.params)
	for _, i := range c.idx {
		ps[i].Name += "_tilde"
	}
	return model.NewLayout(ps...)
}

// Model builds the model with partial centring lambda[g] for group g (CP = 1, NCP = 0). Its
// parameters are the Spec's with each group's coordinate θ̃ named Name + "_tilde"; its derived
// quantities are the groups' θ in original coordinates (named Name) followed by the Spec's
// Derived. The log density, Jacobians included, is that of the Spec's model under the change of
// variables θ = μ + σ^{1−λ}(θ̃ − λμ). Cost per evaluation: the Spec's Density plus O(size)
// per group. Errors name the bad λ or field.
func (s *Spec) Model(lambda []float64) (*model.Model, error) {
	c, err := s.check("Spec.Model")
	if err != nil {
		return nil, err
	}
	if err := c.checkLambda("Spec.Model", lambda); err != nil {
		return nil, err
	}
	return c.model(slices.Clone(lambda))
}

func (c *compiled) model(lambda []float64) (*model.Model, error) {
	lay, err := c.layout()
	if err != nil {
		return nil, fmt.Errorf("reparam: Spec.Model: %w", err)
	}
	np := len(c.params)
	m := &model.Model{Layout: lay, NumObs: c.spec.NumObs}
	m.Density = func(t *ad.Tape, q []ad.Var) ad.Var {
		p := make([]ad.Var, np)
		lam := make([]ad.Var, len(lambda))
		for g, l := range lambda {
			lam[g] = t.Const(l)
		}
		return c.eval(t, q, p, lam, -1)
	}
	for _, i := range c.idx {
		m.Derived = append(m.Derived, model.Quantity{Name: c.params[i].Name, Dims: c.params[i].Dims})
	}
	m.Derived = append(m.Derived, c.spec.Derived...)
	pool := &sync.Pool{New: func() any { return new(ad.Tape) }}
	ng := len(c.idx)
	m.Derive = func(q, out [][]float64) {
		p, _, _ := c.original(pool, q, lambda)
		for g, i := range c.idx {
			copy(out[g], p[i])
		}
		if c.spec.Derive != nil {
			c.spec.Derive(p, out[ng:])
		}
	}
	if c.spec.LogLik != nil {
		m.LogLik = func(q [][]float64, out []float64) {
			p, _, _ := c.original(pool, q, lambda)
			c.spec.LogLik(p, out)
		}
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("reparam: Spec.Model: %w", err)
	}
	return m, nil
}

// original maps constrained values q (row-major, as on the tape; groups in θ̃ for lambda) to
// the parameters in original coordinates, and returns each group's μ and σ broadcast to its
// size, evaluating Loc and Scale on a pooled tape.
func (c *compiled) original(pool *sync.Pool, q [][]float64, lambda []float64) (p, mus, sigmas [][]float64) {
	t := pool.Get().(*ad.Tape)
	defer pool.Put(t)
	t.Reset()
	pv := make([]ad.Var, len(q))
	for i, v := range q {
		pv[i] = t.Const(v...)
	}
	tilde := slices.Clone(pv)
	for _, i := range c.idx {
		pv[i] = t.Const(0)
	}
	p = slices.Clone(q)
	mus, sigmas = make([][]float64, len(c.idx)), make([][]float64, len(c.idx))
	for g, i := range c.idx {
		gr := &c.spec.Groups[g]
		mu, sigma := bcast(t, gr.Loc(t, pv), c.size[g]), bcast(t, gr.Scale(t, pv), c.size[g])
		theta, _ := c.groupTerm(t, g, tilde[i], mu, sigma, t.Const(lambda[g]))
		p[i] = slices.Clone(t.Value(theta))
		mus[g], sigmas[g] = slices.Clone(t.Value(mu)), slices.Clone(t.Value(sigma))
		pv[i] = t.Const(p[i]...)
	}
	return p, mus, sigmas
}

// constrained returns the constrained values of the parameters of lay at z, row-major per
// parameter (as Density sees them).
func constrained(pool *sync.Pool, lay *model.Layout, z []float64) [][]float64 {
	t := pool.Get().(*ad.Tape)
	defer pool.Put(t)
	t.Reset()
	out := make([]ad.Var, lay.NumParams())
	lay.Constrain(t, t.Input(z), out)
	q := make([][]float64, len(out))
	for i, v := range out {
		q[i] = slices.Clone(t.Value(v))
	}
	return q
}

// Converter maps unconstrained points between two partial centrings of the same Spec; it is
// what mcmc.Reparam needs to mix kernels in two parameterisations.
type Converter struct {
	c        *compiled
	from, to []float64
	lay      *model.Layout
	pool     *sync.Pool
}

// Converter returns the map from the unconstrained coordinates of s.Model(from) to those of
// s.Model(to). Errors name the bad λ or field.
func (s *Spec) Converter(from, to []float64) (*Converter, error) {
	c, err := s.check("Spec.Converter")
	if err != nil {
		return nil, err
	}
	if err := c.checkLambda("Spec.Converter", from); err != nil {
		return nil, err
	}
	if err := c.checkLambda("Spec.Converter", to); err != nil {
		return nil, err
	}
	lay, err := c.layout()
	if err != nil {
		return nil, fmt.Errorf("reparam: Spec.Converter: %w", err)
	}
	return &Converter{c: c, from: slices.Clone(from), to: slices.Clone(to), lay: lay,
		pool: &sync.Pool{New: func() any { return new(ad.Tape) }}}, nil
}

// Convert writes into dst (len Dim) the point of the target parameterisation that represents
// the same parameters as z in the source one: the non-group blocks are copied and each group's
// θ (from z by the source map) is mapped to θ̃ = λμ + (θ − μ)/σ^{1−λ}, the inverse of
// θ = μ + σ^{1−λ}(θ̃ − λμ), with λ the target's. Safe for concurrent use; dst may alias z.
// Cost: one constrain pass and one evaluation of every group's Loc and Scale.
func (v *Converter) Convert(dst, z []float64) {
	c := v.c
	p, mus, sigmas := c.original(v.pool, constrained(v.pool, v.lay, z), v.from)
	blocks := splitBlocks(c.params, slices.Clone(z))
	for g, i := range c.idx {
		l, mu, sigma := v.to[g], mus[g], sigmas[g]
		b := make([]float64, c.size[g])
		for k, th := range p[i] {
			switch l {
			case 1:
				b[k] = th
			case 0:
				b[k] = (th - mu[k]) / sigma[k]
			default:
				b[k] = l*mu[k] + (th-mu[k])*math.Exp(-(1-l)*math.Log(sigma[k]))
			}
		}
		blocks[i] = b
	}
	joinBlocks(c.params, blocks, dst)
}

// bcast returns v as a node of size n (a scalar is repeated).
func bcast(t *ad.Tape, v ad.Var, n int) ad.Var {
	if t.Size(v) == n {
		return v
	}
	return t.Add(v, t.Const(make([]float64, n)...))
}

// splitBlocks cuts z into the parameters' unconstrained blocks. Group parameters are
// unconstrained, so their block is their value; the other blocks are carried unchanged.
func splitBlocks(ps []model.Param, z []float64) [][]float64 {
	out := make([][]float64, len(ps))
	off := 0
	for i, p := range ps {
		n := freeSize(p)
		out[i] = z[off : off+n]
		off += n
	}
	return out
}

func joinBlocks(ps []model.Param, blocks [][]float64, dst []float64) {
	off := 0
	for i, p := range ps {
		n := freeSize(p)
		copy(dst[off:off+n], blocks[i])
		off += n
	}
}

// freeSize is the number of unconstrained coordinates of p.
func freeSize(p model.Param) int {
	if p.Constraint != nil {
		return p.Constraint.FreeSize()
	}
	n := 1
	for _, d := range p.Dims {
		n *= d
	}
	return n
}

// formName names a partial centring: "CP", "NCP" or "λ=0.37".
func formName(l float64) string {
	switch l {
	case 1:
		return "CP"
	case 0:
		return "NCP"
	}
	return fmt.Sprintf("λ=%.2f", l)
}
