package model

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
)

// Param declares one parameter of a model: a name, a shape and a constraint, as a line of a
// Stan parameters block does.
//
// Dims is the shape: nil (or empty) for a scalar, {K} for a vector, {R, C} for a matrix, more
// entries for arrays. On the tape and in the bijectors values are stored row-major (last index
// fastest, as in Go and ad.Tape.AsMatrix); Stan names and the flat value vectors of
// ConstrainValues, Free and Names are column-major (first index fastest), as Stan's CSV output
// and posteriordb's draws flatten containers ("L[1,1]", "L[2,1]", "L[1,2]", …).
//
// Constraint is the transform from the unconstrained coordinates; nil means unconstrained
// (identity). Its Size must equal the product of Dims.
//
// Bounds, when set, makes the parameter an interval (lo, hi) whose ends are affine functions of
// the constrained values of parameters declared before it (Stan: real<lower=0, upper=1 - alpha1>
// beta1 is Bounds{Lower: {{Const: 0}}, Upper: {{Const: 1, Terms: {{"alpha1", -1}}}}}); the
// transform is bijector.VarInterval. Constraint must then be nil. Being data, the bounds are
// saved with the layout (Layout.Spec).
type Param struct {
	Name       string
	Dims       []int
	Constraint bijector.Bijector
	Bounds     *Bounds
}

// Bounds are the ends of an interval that depend on earlier parameters. Lower and Upper each
// hold one Affine, shared by every element, or one per element in row-major order. A point
// where lo ≥ hi is outside the support (x and log J are NaN there: a rejected point).
type Bounds struct {
	Lower, Upper []Affine
}

// Affine is Const + Σ_k Terms[k].Coef · value(Terms[k].Name), over constrained values of
// earlier parameters named with Stan's flattened names ("alpha1", "theta[2]", "L[2,1]"). It is
// evaluated left to right, ((Const + t₁) + t₂) + …, in float64 and on the tape alike.
type Affine struct {
	Const float64 `json:"const"`
	Terms []Term  `json:"terms,omitempty"`
}

// Term is one term Coef · value(Name) of an Affine.
type Term struct {
	Name string  `json:"name"`
	Coef float64 `json:"coef"`
}

// affine is an Affine resolved against the layout: terms point at (parameter, row-major
// element).
type affine struct {
	c     float64
	terms []term
}

type term struct {
	param, elem int
	coef        float64
}

// Layout maps the unconstrained vector z ∈ ℝ^Dim of a model to its named, constrained
// parameters. z holds the parameters' unconstrained coordinates one after the other, in
// declaration order (for a matrix or array, in the order its bijector defines; row-major for
// unconstrained ones). Parameters are transformed in declaration order, so Bounds may use
// earlier parameters.
//
// A Layout is immutable and safe for concurrent use; the float64 methods borrow scratch
// buffers from an internal pool and do not allocate in steady state.
type Layout struct {
	params []Param
	blocks []block
	dim    int // unconstrained size
	size   int // number of constrained values
	names  []string
	pool   sync.Pool // *scratch
}

type block struct {
	zlo, zhi   int      // unconstrained coordinates z[zlo:zhi]
	off, n     int      // constrained values x[off:off+n] (Names order)
	perm       []int    // Names-order position → row-major index; nil when they agree
	rows, cols int      // matrix shape when len(Dims) == 2, else 0
	lo, hi     []affine // resolved Bounds, or nil
}

type scratch struct {
	tape ad.Tape
	rm   []float64 // constrained values, row-major per parameter
	xn   []float64 // constrained values, Names order
	lo   []float64 // bounds of the parameter being transformed
	hi   []float64
	vars []ad.Var
	// views are the parameters' row-major slices of rm (paramValues).
	views [][]float64
}

// NewLayout checks the parameters and builds their layout. It returns an error for an empty
// or invalid name (Stan identifier rules), a repeated name, a negative dimension, a constraint
// whose Size differs from the product of Dims, both Constraint and Bounds set, or Bounds with
// the wrong number of entries, a non-finite constant or coefficient, or a term that is not a
// value of an earlier parameter.
func NewLayout(params ...Param) (*Layout, error) {
	l := &Layout{params: slices.Clone(params), blocks: make([]block, len(params))}
	seen := make(map[string]bool, len(params))
	index := map[string][2]int{} // Stan name of an earlier value → (parameter, row-major element)
	for i, p := range l.params {
		if !isIdent(p.Name) {
			return nil, fmt.Errorf("model: NewLayout: parameter %d: invalid name %q", i, p.Name)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("model: NewLayout: parameter %q declared twice", p.Name)
		}
		seen[p.Name] = true
		n := 1
		for _, d := range p.Dims {
			if d < 0 {
				return nil, fmt.Errorf("model: NewLayout: parameter %q: negative dimension in Dims=%v", p.Name, p.Dims)
			}
			n *= d
		}
		l.params[i].Dims = slices.Clone(p.Dims)
		free := n
		switch {
		case p.Bounds != nil && p.Constraint != nil:
			return nil, fmt.Errorf("model: NewLayout: parameter %q: both Constraint and Bounds set", p.Name)
		case p.Constraint != nil:
			if s := p.Constraint.Size(); s != n {
				return nil, fmt.Errorf("model: NewLayout: parameter %q: Dims=%v hold %d values, constraint %v has size %d", p.Name, p.Dims, n, p.Constraint, s)
			}
			free = p.Constraint.FreeSize()
		}
		b := &l.blocks[i]
		if p.Bounds != nil {
			var err error
			if b.lo, err = resolveAffine(p.Bounds.Lower, "Lower", n, index); err == nil {
				b.hi, err = resolveAffine(p.Bounds.Upper, "Upper", n, index)
			}
			if err != nil {
				return nil, fmt.Errorf("model: NewLayout: parameter %q: %w", p.Name, err)
			}
			l.params[i].Bounds = &Bounds{Lower: cloneAffine(p.Bounds.Lower), Upper: cloneAffine(p.Bounds.Upper)}
		}
		for e := range n {
			index[rowMajorName(p.Name, p.Dims, e)] = [2]int{i, e}
		}
		b.zlo, b.zhi = l.dim, l.dim+free
		b.off, b.n = l.size, n
		if len(p.Dims) == 2 {
			b.rows, b.cols = p.Dims[0], p.Dims[1]
		}
		l.dim += free
		l.size += n
		l.names = appendNames(l.names, p.Name, p.Dims)
		b.perm = colMajorPerm(p.Dims)
	}
	return l, nil
}

// resolveAffine checks the bounds of one end (field names Bounds.Lower or Bounds.Upper) of a
// parameter with n values and resolves their terms with index.
func resolveAffine(as []Affine, field string, n int, index map[string][2]int) ([]affine, error) {
	if len(as) != 1 && len(as) != n {
		return nil, fmt.Errorf("field Bounds.%s: %d entries, want 1 or %d", field, len(as), n)
	}
	out := make([]affine, len(as))
	for k, a := range as {
		if math.IsNaN(a.Const) || math.IsInf(a.Const, 0) {
			return nil, fmt.Errorf("field Bounds.%s[%d].Const=%g, want finite", field, k, a.Const)
		}
		out[k].c = a.Const
		for j, tm := range a.Terms {
			at, ok := index[tm.Name]
			if !ok {
				return nil, fmt.Errorf("field Bounds.%s[%d].Terms[%d].Name=%q: not a value of an earlier parameter", field, k, j, tm.Name)
			}
			if math.IsNaN(tm.Coef) || math.IsInf(tm.Coef, 0) {
				return nil, fmt.Errorf("field Bounds.%s[%d].Terms[%d].Coef=%g, want finite", field, k, j, tm.Coef)
			}
			out[k].terms = append(out[k].terms, term{param: at[0], elem: at[1], coef: tm.Coef})
		}
	}
	return out, nil
}

func cloneAffine(as []Affine) []Affine {
	out := make([]Affine, len(as))
	for k, a := range as {
		out[k] = Affine{Const: a.Const, Terms: slices.Clone(a.Terms)}
	}
	return out
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
	return elemName(name, idx)
}

// appendNames appends Stan's flattened names of a parameter, column-major: "x" for a scalar,
// "x[1]"… for a vector, "x[1,1]", "x[2,1]", … for a matrix.
func appendNames(names []string, name string, dims []int) []string {
	if len(dims) == 0 {
		return append(names, name)
	}
	n := 1
	for _, d := range dims {
		n *= d
	}
	idx := make([]int, len(dims))
	for range n {
		names = append(names, elemName(name, idx))
		for d := range idx { // first index fastest
			idx[d]++
			if idx[d] < dims[d] {
				break
			}
			idx[d] = 0
		}
	}
	return names
}

// colMajorPerm returns perm[k] = row-major index of the k-th element in column-major order,
// or nil for fewer than two dimensions (the orders agree).
func colMajorPerm(dims []int) []int {
	if len(dims) < 2 {
		return nil
	}
	n := 1
	for _, d := range dims {
		n *= d
	}
	perm := make([]int, n)
	idx := make([]int, len(dims))
	for k := range perm {
		r := 0
		for d, i := range idx {
			r = r*dims[d] + i
		}
		perm[k] = r
		for d := range idx {
			idx[d]++
			if idx[d] < dims[d] {
				break
			}
			idx[d] = 0
		}
	}
	return perm
}

// Dim returns the size of the unconstrained vector z.
func (l *Layout) Dim() int { return l.dim }

// Len returns the number of constrained values, len(Names()).
func (l *Layout) Len() int { return l.size }

// NumParams returns the number of declared parameters.
func (l *Layout) NumParams() int { return len(l.params) }

// Params returns a copy of the declared parameters (Dims and Bounds copied too).
func (l *Layout) Params() []Param {
	ps := slices.Clone(l.params)
	for i, p := range ps {
		ps[i].Dims = slices.Clone(p.Dims)
		if p.Bounds != nil {
			ps[i].Bounds = &Bounds{Lower: cloneAffine(p.Bounds.Lower), Upper: cloneAffine(p.Bounds.Upper)}
		}
	}
	return ps
}

// Index returns the position of the parameter called name (its slot in Constrain's out), or
// −1.
func (l *Layout) Index(name string) int {
	for i, p := range l.params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// Names returns Stan's flattened names of all constrained values, parameters in declaration
// order, each container column-major: "mu", "theta[1]", "theta[2]", "L[1,1]", "L[2,1]", ….
func (l *Layout) Names() []string { return slices.Clone(l.names) }

// Constrain records the constrained parameters at the unconstrained vector z (a node of size
// Dim) on t: out[i] is parameter i as a node (size = product of Dims; an R×C matrix node when
// Dims has two entries). It returns the sum of the log-Jacobians as a scalar node (a constant 0
// when no parameter is constrained). Unconstrained parameters are views of z. out is owned by
// the caller and must have length NumParams(); Constrain panics otherwise, or if z has the wrong
// size. Cost: the bijectors' Forward plus one Slice per parameter and one Add per constrained
// parameter.
func (l *Layout) Constrain(t *ad.Tape, z ad.Var, out []ad.Var) (logJ ad.Var) {
	if len(out) != len(l.params) || t.Size(z) != l.dim {
		panic(fmt.Sprintf("model: Layout.Constrain: len(out)=%d, size(z)=%d, want %d and %d", len(out), t.Size(z), len(l.params), l.dim))
	}
	var acc ad.Var
	have := false
	for i, p := range l.params {
		b := &l.blocks[i]
		u := t.Slice(z, b.zlo, b.zhi)
		x, lj, hasJ := u, ad.Var{}, true
		switch {
		case p.Bounds != nil:
			x, lj = bijector.VarInterval(t, u, affineVar(t, out, b.lo), affineVar(t, out, b.hi))
		case p.Constraint != nil:
			x, lj = p.Constraint.Forward(t, u)
		default:
			hasJ = false
		}
		if b.rows > 0 {
			if r, c := t.Shape(x); r != b.rows || c != b.cols {
				x = t.AsMatrix(x, b.rows, b.cols)
			}
		}
		out[i] = x
		if !hasJ || t.IsConst(lj) {
			continue
		}
		if have {
			acc = t.Add(acc, lj)
		} else {
			acc, have = lj, true
		}
	}
	if !have {
		return t.Const(0)
	}
	return acc
}

func (l *Layout) getScratch() *scratch {
	if s, ok := l.pool.Get().(*scratch); ok {
		return s
	}
	return &scratch{rm: make([]float64, l.size), xn: make([]float64, l.size), lo: make([]float64, l.size),
		hi: make([]float64, l.size), vars: make([]ad.Var, len(l.params))}
}

func (l *Layout) putScratch(s *scratch) {
	s.tape.Reset()
	l.pool.Put(s)
}

// putScratchVars returns a scratch whose tape was not used (only vars), skipping the Reset.
func (l *Layout) putScratchVars(s *scratch) {
	clear(s.vars)
	l.pool.Put(s)
}

// affineVar records resolved bounds on t from the constrained parameters prev: one node of
// size len(as).
func affineVar(t *ad.Tape, prev []ad.Var, as []affine) ad.Var {
	if len(as) == 1 { // the common case, without allocating
		return affineNode(t, prev, &as[0])
	}
	out := make([]ad.Var, len(as))
	for k := range as {
		out[k] = affineNode(t, prev, &as[k])
	}
	return t.Concat(out...)
}

// affineNode records one resolved affine bound, ((c + t₁) + t₂) + …, as a scalar node.
func affineNode(t *ad.Tape, prev []ad.Var, a *affine) ad.Var {
	if len(a.terms) == 0 {
		return t.Const(a.c)
	}
	var v ad.Var
	for j, tm := range a.terms {
		x := prev[tm.param]
		if t.Size(x) != 1 {
			x = t.Index(x, tm.elem)
		}
		if tm.coef != 1 {
			x = t.MulC(x, tm.coef)
		}
		switch {
		case j > 0:
			v = t.Add(v, x)
		case a.c != 0:
			v = t.AddC(x, a.c)
		default:
			v = x
		}
	}
	return v
}

// affineValues evaluates resolved bounds at the row-major constrained values rm into dst
// (len(as) values), in the order affineVar computes them.
func (l *Layout) affineValues(rm []float64, as []affine, dst []float64) []float64 {
	dst = dst[:len(as)]
	for k, a := range as {
		v := a.c
		for j, tm := range a.terms {
			x := rm[l.blocks[tm.param].off+tm.elem]
			if tm.coef != 1 {
				x *= tm.coef
			}
			switch {
			case j > 0:
				v += x
			case a.c != 0:
				v = x + a.c
			default:
				v = x
			}
		}
		dst[k] = v
	}
	return dst
}

// bounds evaluates the bounds of parameter i from the row-major constrained values of the
// earlier parameters in s.rm.
func (l *Layout) bounds(s *scratch, i int) (lo, hi []float64) {
	b := &l.blocks[i]
	return l.affineValues(s.rm, b.lo, s.lo), l.affineValues(s.rm, b.hi, s.hi)
}

// ConstrainValues writes the constrained values at z into x (Names order, len Len()) and
// returns the total log-Jacobian. It panics if a length is wrong. It allocates nothing in
// steady state.
func (l *Layout) ConstrainValues(z, x []float64) (logJ float64) {
	if len(z) != l.dim || len(x) != l.size {
		panic(fmt.Sprintf("model: Layout.ConstrainValues: len(z)=%d, len(x)=%d, want %d and %d", len(z), len(x), l.dim, l.size))
	}
	s := l.getScratch()
	defer l.putScratch(s)
	return l.constrainInto(s, z, x)
}

// constrainInto writes the constrained values at z into s.rm (row-major per parameter) and x
// (Names order) and returns log J.
func (l *Layout) constrainInto(s *scratch, z, x []float64) (logJ float64) {
	for i, p := range l.params {
		b := &l.blocks[i]
		u, xr := z[b.zlo:b.zhi], s.rm[b.off:b.off+b.n]
		switch {
		case p.Bounds != nil:
			lo, hi := l.bounds(s, i)
			logJ += bijector.VarIntervalConstrain(u, lo, hi, xr)
		case p.Constraint != nil:
			logJ += p.Constraint.Constrain(u, xr)
		default:
			copy(xr, u)
		}
		dst := x[b.off : b.off+b.n]
		if b.perm == nil {
			copy(dst, xr)
		} else {
			for k, r := range b.perm {
				dst[k] = xr[r]
			}
		}
	}
	return logJ
}

// paramValues returns per-parameter row-major views of s.rm (as on the tape), in a slice owned
// by s.
func (l *Layout) paramValues(s *scratch) [][]float64 {
	if len(s.views) != len(l.params) {
		s.views = make([][]float64, len(l.params))
		for i := range l.params {
			b := &l.blocks[i]
			s.views[i] = s.rm[b.off : b.off+b.n : b.off+b.n]
		}
	}
	return s.views
}

// Free writes the unconstrained vector for the constrained values x (Names order, len Len())
// into z (len Dim). It returns an error naming the parameter when a value is outside its
// support (or not finite): "model: Layout.Free: parameter sigma: bijector: Lower.Free: …".
// It panics if a length is wrong.
func (l *Layout) Free(x, z []float64) error {
	if len(z) != l.dim || len(x) != l.size {
		panic(fmt.Sprintf("model: Layout.Free: len(x)=%d, len(z)=%d, want %d and %d", len(x), len(z), l.size, l.dim))
	}
	s := l.getScratch()
	defer l.putScratch(s)
	return l.free(s, x, z, "Free")
}

func (l *Layout) free(s *scratch, x, z []float64, fn string) error {
	for i := range l.params {
		b := &l.blocks[i]
		src, xr := x[b.off:b.off+b.n], s.rm[b.off:b.off+b.n]
		if b.perm == nil {
			copy(xr, src)
		} else {
			for k, r := range b.perm {
				xr[r] = src[k]
			}
		}
	}
	for i, p := range l.params {
		b := &l.blocks[i]
		xr, u := s.rm[b.off:b.off+b.n], z[b.zlo:b.zhi]
		var err error
		switch {
		case p.Bounds != nil:
			lo, hi := l.bounds(s, i)
			err = bijector.VarIntervalFree(xr, lo, hi, u)
		case p.Constraint != nil:
			err = p.Constraint.Free(xr, u)
		default:
			for r, v := range xr {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					k := r // position in Names order
					if b.perm != nil {
						k = slices.Index(b.perm, r)
					}
					err = fmt.Errorf("%s = %g, want finite", l.names[b.off+k], v)
					break
				}
			}
			copy(u, xr)
		}
		if err != nil {
			return fmt.Errorf("model: Layout.%s: parameter %s: %w", fn, p.Name, err)
		}
	}
	return nil
}

// FreeNamed is Free with the constrained values looked up by Stan name (one posteriordb
// reference draw, for example): lookup(name) returns the value of "mu", "theta[1]", "L[2,1]",
// …. It returns an error naming the first name lookup does not know, or the parameter whose
// value is outside its support. Names lookup knows but the layout does not are ignored
// (generated quantities in a draw). It panics if len(z) != Dim().
func (l *Layout) FreeNamed(lookup func(name string) (float64, bool), z []float64) error {
	if len(z) != l.dim {
		panic(fmt.Sprintf("model: Layout.FreeNamed: len(z)=%d, want %d", len(z), l.dim))
	}
	s := l.getScratch()
	defer l.putScratch(s)
	for k, name := range l.names {
		v, ok := lookup(name)
		if !ok {
			return fmt.Errorf("model: Layout.FreeNamed: no value for %s", name)
		}
		s.xn[k] = v
	}
	return l.free(s, s.xn, z, "FreeNamed")
}

// FreeMap is FreeNamed with the values in a map keyed by Stan name.
func (l *Layout) FreeMap(values map[string]float64, z []float64) error {
	return l.FreeNamed(func(name string) (float64, bool) {
		v, ok := values[name]
		return v, ok
	}, z)
}
