package fit

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/model"
)

// Transform names of ParamSpec, one per Stan constraint transform (package bijector).
const (
	TransformIdentity        = "identity"
	TransformLower           = "lower"            // x = lower + eᵘ
	TransformUpper           = "upper"            // x = upper − eᵘ
	TransformInterval        = "interval"         // x = lower + (upper − lower)·σ(u)
	TransformOrdered         = "ordered"          // Stan's ordered vector
	TransformPositiveOrdered = "positive_ordered" // Stan's positive_ordered vector
	TransformSimplex         = "simplex"          // stick-breaking simplex
	TransformCholeskyCorr    = "cholesky_factor_corr"
	TransformCholeskyCov     = "cholesky_factor_cov"
	// TransformAffineInterval is an interval whose bounds are affine functions of earlier
	// parameters (Stan: real<lower=0, upper=1 - alpha1> beta1): LowerAffine and UpperAffine.
	TransformAffineInterval = "affine_interval"
)

// ParamSpec is one parameter of a model.Layout in a form that survives JSON, so that a saved
// fit can map its unconstrained draws to the Stan parameters without the model or its data:
// the name, the shape and the constraint transform with its bounds.
type ParamSpec struct {
	Name      string   `json:"name"`
	Dims      []int    `json:"dims,omitempty"`
	Transform string   `json:"transform"`
	Lower     *float64 `json:"lower,omitempty"`
	Upper     *float64 `json:"upper,omitempty"`
	// LowerAffine and UpperAffine hold the bounds of an affine_interval: one entry (shared by
	// every element) or one per element in row-major order.
	LowerAffine []AffineBound `json:"lower_affine,omitempty"`
	UpperAffine []AffineBound `json:"upper_affine,omitempty"`
}

// AffineBound is Const + Σ Coef·value, over constrained values of earlier parameters named
// with Stan's flattened names ("alpha1", "L[2,1]").
type AffineBound struct {
	Const float64     `json:"const"`
	Terms []BoundTerm `json:"terms,omitempty"`
}

// BoundTerm is one term Coef·value(Name) of an AffineBound.
type BoundTerm struct {
	Name string  `json:"name"`
	Coef float64 `json:"coef"`
}

// DescribeLayout returns the specs of the parameters of lay. Bijectors are opaque values, so
// each transform is identified by its behaviour: the candidate transforms that fit its sizes
// are rebuilt with the bounds read off at u = ∓800 (where eᵘ and σ(u) underflow, so the bound
// comes out exactly) and accepted only if Constrain agrees bit for bit, value and log J, at a
// handful of test points. Dependent bounds (Param.Bounds) are identified as affine functions
// of the earlier parameters from their values at 0 and at the unit vectors, and accepted if
// they agree to 1e-12 (relative) at three other points. A parameter that matches nothing is an
// error naming it. Cost: a few Constrain calls per parameter, one Bounds call per earlier
// scalar.
func DescribeLayout(lay *model.Layout) ([]ParamSpec, error) {
	params := lay.Params()
	specs := make([]ParamSpec, len(params))
	for i, p := range params {
		s := ParamSpec{Name: p.Name, Dims: append([]int(nil), p.Dims...)}
		var err error
		switch {
		case p.Bounds != nil:
			err = describeBounds(&s, params[:i], p)
		case p.Constraint == nil:
			s.Transform = TransformIdentity
		default:
			err = describeBijector(&s, p.Constraint)
		}
		if err != nil {
			return nil, fmt.Errorf("fit: DescribeLayout: parameter %s: %w", p.Name, err)
		}
		specs[i] = s
	}
	return specs, nil
}

// NewLayoutFromSpecs rebuilds the layout that DescribeLayout described.
func NewLayoutFromSpecs(specs []ParamSpec) (*model.Layout, error) {
	params := make([]model.Param, len(specs))
	index := map[string][2]int{} // Stan name → (parameter, row-major element)
	for i, s := range specs {
		p := model.Param{Name: s.Name, Dims: s.Dims}
		n := 1
		for _, d := range s.Dims {
			if d < 0 {
				return nil, fmt.Errorf("fit: layout: parameter %s: negative dimension in dims %v", s.Name, s.Dims)
			}
			n *= d
		}
		b, err := s.bijector(n)
		if err != nil {
			return nil, fmt.Errorf("fit: layout: parameter %s: %w", s.Name, err)
		}
		p.Constraint = b
		if s.Transform == TransformAffineInterval {
			bounds, err := s.affineBounds(index, n)
			if err != nil {
				return nil, fmt.Errorf("fit: layout: parameter %s: %w", s.Name, err)
			}
			p.Bounds = bounds
		}
		params[i] = p
		for e := range n {
			index[rowMajorName(s.Name, s.Dims, e)] = [2]int{i, e}
		}
	}
	lay, err := model.NewLayout(params...)
	if err != nil {
		return nil, fmt.Errorf("fit: layout: %w", err)
	}
	return lay, nil
}

// bijector returns the fixed transform of s (nil for identity and affine_interval).
func (s *ParamSpec) bijector(n int) (bijector.Bijector, error) {
	need := func(v *float64, field string) (float64, error) {
		if v == nil {
			return 0, fmt.Errorf("transform %s needs field %q", s.Transform, field)
		}
		return *v, nil
	}
	switch s.Transform {
	case TransformIdentity, TransformAffineInterval:
		return nil, nil
	case TransformLower:
		lo, err := need(s.Lower, "lower")
		if err != nil {
			return nil, err
		}
		if math.IsNaN(lo) || math.IsInf(lo, 1) {
			return nil, fmt.Errorf("field \"lower\": %g, want finite", lo)
		}
		return bijector.Lower(n, lo), nil
	case TransformUpper:
		hi, err := need(s.Upper, "upper")
		if err != nil {
			return nil, err
		}
		if math.IsNaN(hi) || math.IsInf(hi, -1) {
			return nil, fmt.Errorf("field \"upper\": %g, want finite", hi)
		}
		return bijector.Upper(n, hi), nil
	case TransformInterval:
		lo, err := need(s.Lower, "lower")
		if err != nil {
			return nil, err
		}
		hi, err := need(s.Upper, "upper")
		if err != nil {
			return nil, err
		}
		if !(lo < hi) {
			return nil, fmt.Errorf("fields \"lower\", \"upper\": %g, %g, want lower < upper", lo, hi)
		}
		return bijector.Interval(n, lo, hi), nil
	case TransformOrdered:
		return bijector.Ordered(n), nil
	case TransformPositiveOrdered:
		return bijector.PositiveOrdered(n), nil
	case TransformSimplex:
		if n < 1 {
			return nil, fmt.Errorf("simplex of size %d", n)
		}
		return bijector.Simplex(n), nil
	case TransformCholeskyCorr:
		if len(s.Dims) != 2 || s.Dims[0] != s.Dims[1] || s.Dims[0] < 1 {
			return nil, fmt.Errorf("field \"dims\": %v, want K×K with K ≥ 1 for %s", s.Dims, s.Transform)
		}
		return bijector.CholeskyCorr(s.Dims[0]), nil
	case TransformCholeskyCov:
		if len(s.Dims) != 2 || s.Dims[0] < s.Dims[1] {
			return nil, fmt.Errorf("field \"dims\": %v, want M×N with M ≥ N for %s", s.Dims, s.Transform)
		}
		return bijector.CholeskyCov(s.Dims[0], s.Dims[1]), nil
	}
	return nil, fmt.Errorf("field \"transform\": unknown transform %q", s.Transform)
}

// affineBounds turns LowerAffine/UpperAffine into a Param.Bounds function. index maps the Stan
// names of earlier parameters' values to (parameter, row-major element).
func (s *ParamSpec) affineBounds(index map[string][2]int, n int) (func(*ad.Tape, []ad.Var) (ad.Var, ad.Var), error) {
	check := func(bs []AffineBound, field string) error {
		if len(bs) != 1 && len(bs) != n {
			return fmt.Errorf("field %q: %d bounds, want 1 or %d", field, len(bs), n)
		}
		for _, b := range bs {
			for _, term := range b.Terms {
				if _, ok := index[term.Name]; !ok {
					return fmt.Errorf("field %q: %q is not a value of an earlier parameter", field, term.Name)
				}
			}
		}
		return nil
	}
	if err := check(s.LowerAffine, "lower_affine"); err != nil {
		return nil, err
	}
	if err := check(s.UpperAffine, "upper_affine"); err != nil {
		return nil, err
	}
	lower, upper := s.LowerAffine, s.UpperAffine
	eval := func(t *ad.Tape, prev []ad.Var, bs []AffineBound) ad.Var {
		out := make([]ad.Var, len(bs))
		for k, b := range bs {
			v := t.Const(b.Const)
			for _, term := range b.Terms {
				at := index[term.Name]
				v = t.Add(v, t.MulC(t.Index(prev[at[0]], at[1]), term.Coef))
			}
			out[k] = v
		}
		if len(out) == 1 {
			return out[0]
		}
		return t.Concat(out...)
	}
	return func(t *ad.Tape, prev []ad.Var) (ad.Var, ad.Var) {
		return eval(t, prev, lower), eval(t, prev, upper)
	}, nil
}

// describeBijector identifies b among Stan's transforms (see DescribeLayout).
func describeBijector(s *ParamSpec, b bijector.Bijector) error {
	m, n := b.FreeSize(), b.Size()
	lo, hi := make([]float64, n), make([]float64, n)
	u := make([]float64, m)
	for i := range u {
		u[i] = -800
	}
	b.Constrain(u, lo)
	for i := range u {
		u[i] = 800
	}
	b.Constrain(u, hi)
	f := func(v float64) *float64 { return &v }
	var cands []ParamSpec
	add := func(c ParamSpec) {
		c.Name, c.Dims = s.Name, s.Dims
		cands = append(cands, c)
	}
	if m == n && n > 0 {
		add(ParamSpec{Transform: TransformIdentity})
		add(ParamSpec{Transform: TransformLower, Lower: f(lo[0])})
		add(ParamSpec{Transform: TransformUpper, Upper: f(lo[0])})
		if lo[0] < hi[0] {
			add(ParamSpec{Transform: TransformInterval, Lower: f(lo[0]), Upper: f(hi[0])})
		}
		add(ParamSpec{Transform: TransformOrdered})
		add(ParamSpec{Transform: TransformPositiveOrdered})
	}
	if m == n-1 {
		add(ParamSpec{Transform: TransformSimplex})
	}
	if len(s.Dims) == 2 {
		r, c := s.Dims[0], s.Dims[1]
		if r == c && m == r*(r-1)/2 {
			add(ParamSpec{Transform: TransformCholeskyCorr})
		}
		if r >= c && m == c*(c+1)/2+(r-c)*c {
			add(ParamSpec{Transform: TransformCholeskyCov})
		}
	}
	if m == 0 && n == 0 {
		add(ParamSpec{Transform: TransformIdentity})
	}
	for _, c := range cands {
		cb, err := c.bijector(n)
		if err != nil {
			continue
		}
		if cb == nil {
			cb = bijector.Identity(n)
		}
		if cb.FreeSize() == m && sameBijector(b, cb) {
			*s = c
			return nil
		}
	}
	return fmt.Errorf("constraint transform (free size %d, size %d) is none of Stan's transforms vigo can save", m, n)
}

// sameBijector compares a and b bit for bit on fixed test points.
func sameBijector(a, b bijector.Bijector) bool {
	m, n := a.FreeSize(), a.Size()
	u := make([]float64, m)
	xa, xb := make([]float64, n), make([]float64, n)
	for _, base := range []float64{0, 0.7, -1.3, 2.9} {
		for i := range u {
			u[i] = base + 0.37*float64(i%7) - 0.11*float64(i%3)
		}
		ja, jb := a.Constrain(u, xa), b.Constrain(u, xb)
		if math.Float64bits(ja) != math.Float64bits(jb) {
			return false
		}
		for i := range xa {
			if math.Float64bits(xa[i]) != math.Float64bits(xb[i]) {
				return false
			}
		}
	}
	return true
}

// describeBounds identifies p.Bounds as an affine function of the earlier parameters' values.
func describeBounds(s *ParamSpec, prev []model.Param, p model.Param) error {
	sizes := make([]int, len(prev))
	total := 0
	for j, q := range prev {
		sizes[j] = 1
		for _, d := range q.Dims {
			sizes[j] *= d
		}
		total += sizes[j]
	}
	var t ad.Tape
	eval := func(x []float64) (lo, hi []float64) {
		t.Reset()
		vars := make([]ad.Var, len(prev))
		off := 0
		for j, q := range prev {
			v := t.Const(x[off : off+sizes[j]]...)
			if len(q.Dims) == 2 {
				v = t.AsMatrix(v, q.Dims[0], q.Dims[1])
			}
			vars[j] = v
			off += sizes[j]
		}
		l, h := p.Bounds(&t, vars)
		return append([]float64(nil), t.Value(l)...), append([]float64(nil), t.Value(h)...)
	}
	x := make([]float64, total)
	lo0, hi0 := eval(x)
	n := 1
	for _, d := range p.Dims {
		n *= d
	}
	for _, b := range [][]float64{lo0, hi0} {
		if len(b) != 1 && len(b) != n {
			return fmt.Errorf("bounds have %d values, want 1 or %d", len(b), n)
		}
	}
	names := make([]string, 0, total)
	for j, q := range prev {
		for e := range sizes[j] {
			names = append(names, rowMajorName(q.Name, q.Dims, e))
		}
	}
	lower, upper := affineFrom(lo0), affineFrom(hi0)
	for k := range total {
		x[k] = 1
		lo, hi := eval(x)
		x[k] = 0
		addTerms(lower, lo, lo0, names[k])
		addTerms(upper, hi, hi0, names[k])
	}
	// Verify at points away from the probes.
	for _, base := range []float64{0.3, -1.7, 2.2} {
		for k := range x {
			x[k] = base + 0.29*float64(k%5)
		}
		lo, hi := eval(x)
		if !affineAgrees(lower, lo, names, x) || !affineAgrees(upper, hi, names, x) {
			return fmt.Errorf("dependent bounds are not affine in the earlier parameters; vigo cannot save them")
		}
	}
	s.Transform = TransformAffineInterval
	s.LowerAffine, s.UpperAffine = lower, upper
	return nil
}

func affineFrom(v0 []float64) []AffineBound {
	bs := make([]AffineBound, len(v0))
	for i, v := range v0 {
		bs[i].Const = v
	}
	return bs
}

func addTerms(bs []AffineBound, v, v0 []float64, name string) {
	for i := range bs {
		if c := v[i] - v0[i]; c != 0 {
			bs[i].Terms = append(bs[i].Terms, BoundTerm{Name: name, Coef: c})
		}
	}
}

func affineAgrees(bs []AffineBound, v []float64, names []string, x []float64) bool {
	at := make(map[string]float64, len(names))
	for k, nm := range names {
		at[nm] = x[k]
	}
	for i, b := range bs {
		want := b.Const
		for _, term := range b.Terms {
			want += term.Coef * at[term.Name]
		}
		// 1e-12 relative: the probes difference values of size ≈ 1, so an affine bound is
		// reproduced to a few ulps; a curved one misses by O(1).
		if math.IsNaN(v[i]) || math.Abs(v[i]-want) > 1e-12*(1+math.Abs(want)) {
			return false
		}
	}
	return true
}

// rowMajorName is Stan's flattened name of element e (row-major, as on the tape) of a
// parameter with the given dims: "mu", "theta[3]", "L[2,1]".
func rowMajorName(name string, dims []int, e int) string {
	if len(dims) == 0 {
		return name
	}
	idx := make([]int, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		idx[d] = e % dims[d]
		e /= dims[d]
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('[')
	for d, i := range idx {
		if d > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i + 1))
	}
	b.WriteByte(']')
	return b.String()
}
