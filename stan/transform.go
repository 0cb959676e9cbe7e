package stan

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
)

// tkind is one of Stan's constraint transforms of a declared parameter.
type tkind uint8

const (
	tIdentity tkind = iota
	tLower
	tUpper
	tLowerUpper
	tOffsetMult
	tSimplex
	tOrdered
	tPositiveOrdered
	tUnitVector
	tCholeskyCorr
	tCholeskyCov
	tCorrMatrix
	tCovMatrix
)

var tkindNames = [...]string{"identity", "lower", "upper", "lower_upper", "offset_multiplier", "simplex", "ordered", "positive_ordered", "unit_vector", "cholesky_factor_corr", "cholesky_factor_cov", "corr_matrix", "cov_matrix"}

// elementwise reports the transforms that act on each scalar alone.
func (k tkind) elementwise() bool { return k <= tOffsetMult }

// transform is Stan's transform of one declared parameter with all its array elements, from
// Stan's unconstrained order to the tape's row-major constrained values. It implements
// bijector.Bijector.
//
// Stan's unconstrained order (Stan 2.21's generated log_prob, which reads the unconstrained
// vector in declaration order): the array elements one after the other, last array index
// fastest, each element's own free coordinates contiguous; for the elementwise transforms of a
// matrix the coordinates are column-major (Eigen's order), for the structured ones in the
// order of the Stan Math *_constrain function (which is the order bijector uses).
//
// The elementwise formulas are Stan Math 2.21's lb/ub/lub/offset_multiplier_constrain:
//
//	lower:        x = lo + eᵘ,                  log J = u
//	upper:        x = hi − eᵘ,                  log J = u
//	lower_upper:  x = lo + (hi − lo)·σ(u),      log J = log(hi − lo) − |u| − 2·log1p(e^{−|u|})
//	offset/mult:  x = μ + s·u,                  log J = log s
//
// with an infinite bound reducing as in Stan (lower = −∞ is the identity). The structured
// transforms are bijector's (simplex: stick-breaking as Stan 2.21; ordered, positive_ordered,
// cholesky_factor_corr/cov); unit_vector, cov_matrix and corr_matrix follow Stan Math 2.21's
// unit_vector_constrain, cov_matrix_constrain and corr_matrix_constrain (see their Forward
// functions). Cost O(size) per Forward for the elementwise kinds (two
// nodes plus one Gather for a matrix), per element that of the bijector plus a Concat.
type transform struct {
	kind       tkind
	arr        int // number of array elements
	rows, cols int // one element's container shape (scalar 1×1, vector n×1, row_vector 1×n)
	// lo and hi are the bounds (offset and multiplier for tOffsetMult) of each scalar in Stan's
	// free order, or one shared value (len 1).
	lo, hi []float64
	// toTape[i] is the free-order index of tape element i (elementwise kinds), nil when the
	// orders agree.
	toTape []int
	inner  bijector.Bijector // one element's structured transform
	k      int               // structured: K (vector length or matrix order)
}

func (tr *transform) String() string {
	return fmt.Sprintf("stan %s[%d×%d×%d]", tkindNames[tr.kind], tr.arr, tr.rows, tr.cols)
}

// elemSize is one element's constrained size.
func (tr *transform) elemSize() int { return tr.rows * tr.cols }

func (tr *transform) Size() int { return tr.arr * tr.elemSize() }

func (tr *transform) FreeSize() int {
	switch tr.kind {
	case tSimplex:
		return tr.arr * (tr.k - 1)
	case tCholeskyCorr, tCorrMatrix:
		return tr.arr * tr.k * (tr.k - 1) / 2
	case tCovMatrix:
		return tr.arr * (tr.k + tr.k*(tr.k-1)/2)
	case tCholeskyCov:
		if tr.inner != nil {
			return tr.arr * tr.inner.FreeSize()
		}
	}
	return tr.Size()
}

func (tr *transform) elemFree() int { return tr.FreeSize() / max(tr.arr, 1) }

// newTransform builds the transform of a parameter of kind k with arr array elements of shape
// rows×cols. lo and hi are the bound values in row-major (tape) order per scalar, or one
// value; they are reordered to the free order here.
func newTransform(k tkind, arr, rows, cols int, lo, hi []float64) (*transform, error) {
	tr := &transform{kind: k, arr: arr, rows: rows, cols: cols, k: rows}
	if k.elementwise() {
		if rows > 1 && cols > 1 {
			n := rows * cols
			tr.toTape = make([]int, arr*n)
			for a := 0; a < arr; a++ {
				for r := 0; r < rows; r++ {
					for c := 0; c < cols; c++ {
						tr.toTape[a*n+r*cols+c] = a*n + c*rows + r
					}
				}
			}
		}
		reorder := func(v []float64) []float64 {
			if len(v) <= 1 || tr.toTape == nil {
				return v
			}
			out := make([]float64, len(v))
			for i, s := range tr.toTape {
				out[s] = v[i]
			}
			return out
		}
		tr.lo, tr.hi = reorder(lo), reorder(hi)
		for _, v := range [][]float64{tr.lo, tr.hi} {
			if len(v) != 0 && len(v) != 1 && len(v) != tr.Size() {
				return nil, fmt.Errorf("bound of size %d for %d values", len(v), tr.Size())
			}
		}
		for i := 0; i < max(len(tr.lo), len(tr.hi)); i++ {
			l, h := tr.bound(tr.lo, i), tr.bound(tr.hi, i)
			switch {
			case len(tr.lo) > 0 && math.IsNaN(l) || len(tr.hi) > 0 && math.IsNaN(h):
				return nil, fmt.Errorf("bound is NaN")
			case k == tLowerUpper && !(l < h):
				return nil, fmt.Errorf("lower bound %g not below upper bound %g", l, h)
			case k == tOffsetMult && !(h > 0 && !math.IsInf(h, 0)):
				return nil, fmt.Errorf("multiplier is %g, want positive finite", h)
			case k == tOffsetMult && math.IsInf(l, 0):
				return nil, fmt.Errorf("offset is %g, want finite", l)
			}
		}
		return tr, nil
	}
	switch k {
	case tSimplex:
		if rows < 1 {
			return nil, fmt.Errorf("simplex of size %d, want >= 1", rows)
		}
		tr.inner = bijector.Simplex(rows)
	case tOrdered:
		tr.inner = bijector.Ordered(rows)
	case tPositiveOrdered:
		tr.inner = bijector.PositiveOrdered(rows)
	case tCholeskyCorr:
		if rows < 1 {
			return nil, fmt.Errorf("cholesky_factor_corr of size %d, want >= 1", rows)
		}
		tr.inner = bijector.CholeskyCorr(rows)
	case tCholeskyCov:
		if rows < cols || cols < 0 {
			return nil, fmt.Errorf("cholesky_factor_cov[%d,%d]: want rows >= cols >= 0", rows, cols)
		}
		tr.inner = bijector.CholeskyCov(rows, cols)
	case tUnitVector:
		if rows < 1 {
			return nil, fmt.Errorf("unit_vector of size %d, want >= 1", rows)
		}
	case tCorrMatrix, tCovMatrix:
		if rows < 1 || cols != rows {
			return nil, fmt.Errorf("%s[%d,%d]: want a square matrix of size >= 1", tkindNames[k], rows, cols)
		}
	}
	return tr, nil
}

func (tr *transform) bound(v []float64, i int) float64 {
	switch len(v) {
	case 0:
		return math.NaN()
	case 1:
		return v[0]
	}
	return v[i]
}

// Forward records the constrained values (row-major) and log J for the free vector u.
func (tr *transform) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	if tr.kind.elementwise() {
		x, logJ = tr.forwardElementwise(t, u)
		if tr.toTape != nil {
			x = t.Gather(x, tr.toTape)
		}
		if tr.arr == 1 && tr.rows > 1 && tr.cols > 1 {
			x = t.AsMatrix(x, tr.rows, tr.cols)
		}
		return x, logJ
	}
	fs := tr.elemFree()
	xs := make([]ad.Var, tr.arr)
	var acc ad.Var
	for a := 0; a < tr.arr; a++ {
		ua := t.Slice(u, a*fs, (a+1)*fs)
		var xa, ja ad.Var
		switch tr.kind {
		case tUnitVector:
			xa, ja = unitVectorForward(t, ua)
		case tCovMatrix:
			xa, ja = covMatrixForward(t, ua, tr.k)
		case tCorrMatrix:
			xa, ja = corrMatrixForward(t, ua, tr.k)
		default:
			xa, ja = tr.inner.Forward(t, ua)
		}
		xs[a] = xa
		if a == 0 {
			acc = ja
		} else {
			acc = t.Add(acc, ja)
		}
	}
	if tr.arr == 0 {
		return t.Const(), t.Const(0)
	}
	if tr.arr == 1 {
		return xs[0], acc
	}
	return t.Concat(xs...), acc
}

func (tr *transform) forwardElementwise(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	n := t.Size(u)
	uv := t.Value(u)
	if tr.kind == tIdentity {
		return u, t.Const(0)
	}
	y, val, der := t.Map(u)
	dj := make([]float64, n)
	lj := 0.0
	for i := 0; i < n; i++ {
		ui := uv[i]
		lo, hi := tr.bound(tr.lo, i), tr.bound(tr.hi, i)
		kind := tr.kind
		if kind == tLowerUpper {
			switch {
			case math.IsInf(lo, -1) && math.IsInf(hi, 1):
				kind = tIdentity
			case math.IsInf(lo, -1):
				kind = tUpper
			case math.IsInf(hi, 1):
				kind = tLower
			}
		}
		if kind == tLower && math.IsInf(lo, -1) || kind == tUpper && math.IsInf(hi, 1) {
			kind = tIdentity
		}
		switch kind {
		case tIdentity:
			val[i], der[i] = ui, 1
		case tLower:
			e := math.Exp(ui)
			val[i], der[i] = lo+e, e
			lj += ui
			dj[i] = 1
		case tUpper:
			e := math.Exp(ui)
			val[i], der[i] = hi-e, -e
			lj += ui
			dj[i] = 1
		case tLowerUpper:
			d := hi - lo
			s := 1 / (1 + math.Exp(-ui))
			if ui > 0 {
				sm := math.Exp(-ui) / (1 + math.Exp(-ui))
				if s == 1 && !math.IsInf(ui, 0) {
					s = 1 - 1e-15
				}
				val[i] = math.FMA(d, s, lo)
				der[i] = d * s * sm
			} else {
				if s == 0 && !math.IsInf(ui, 0) {
					s = 1e-15
				}
				val[i] = math.FMA(d, s, lo)
				der[i] = d * s * (1 - s)
			}
			a := math.Abs(ui)
			lj += math.Log(d) - a - 2*math.Log1p(math.Exp(-a))
			dj[i] = 1 - 2/(1+math.Exp(-ui))
		case tOffsetMult:
			val[i], der[i] = lo+hi*ui, hi
			lj += math.Log(hi)
		}
	}
	return y, t.FusedVec(lj, []ad.Var{u}, [][]float64{dj})
}

// Constrain is Forward in float64 (on a private tape).
func (tr *transform) Constrain(u, x []float64) float64 {
	var t ad.Tape
	xv, lj := tr.Forward(&t, t.Const(u...))
	copy(x, t.Value(xv))
	return t.Float(lj)
}

// Free is the inverse of Forward: x row-major (tape order) to u in Stan's free order.
func (tr *transform) Free(x, u []float64) error {
	if tr.kind.elementwise() {
		for i := range u {
			xi := x[i]
			if tr.toTape != nil {
				xi = x[slicesIndex(tr.toTape, i)]
			}
			lo, hi := tr.bound(tr.lo, i), tr.bound(tr.hi, i)
			if math.IsNaN(xi) || math.IsInf(xi, 0) {
				return fmt.Errorf("value %d is %g, want finite", i+1, xi)
			}
			var ui float64
			switch tr.kind {
			case tIdentity:
				ui = xi
			case tLower:
				ui = lbFree(xi, lo)
			case tUpper:
				ui = ubFree(xi, hi)
			case tLowerUpper:
				switch {
				case math.IsInf(lo, -1) && math.IsInf(hi, 1):
					ui = xi
				case math.IsInf(lo, -1):
					ui = ubFree(xi, hi)
				case math.IsInf(hi, 1):
					ui = lbFree(xi, lo)
				default:
					if !(xi > lo && xi < hi) {
						ui = math.NaN()
					} else {
						p := (xi - lo) / (hi - lo)
						ui = math.Log(p) - math.Log1p(-p)
					}
				}
			case tOffsetMult:
				ui = (xi - lo) / hi
			}
			if math.IsNaN(ui) || math.IsInf(ui, 0) {
				return fmt.Errorf("value %g is outside its support (lower=%g, upper=%g)", xi, lo, hi)
			}
			u[i] = ui
		}
		return nil
	}
	es, fs := tr.elemSize(), tr.elemFree()
	for a := 0; a < tr.arr; a++ {
		xa, ua := x[a*es:(a+1)*es], u[a*fs:(a+1)*fs]
		var err error
		switch tr.kind {
		case tUnitVector:
			err = unitVectorFree(xa, ua)
		case tCovMatrix:
			err = covMatrixFree(xa, ua, tr.k)
		case tCorrMatrix:
			err = corrMatrixFree(xa, ua, tr.k)
		default:
			err = tr.inner.Free(xa, ua)
		}
		if err != nil {
			if tr.arr > 1 {
				return fmt.Errorf("element %d: %w", a+1, err)
			}
			return err
		}
	}
	return nil
}

func lbFree(x, lo float64) float64 {
	if math.IsInf(lo, -1) {
		return x
	}
	if !(x > lo) {
		return math.NaN()
	}
	return math.Log(x - lo)
}

func ubFree(x, hi float64) float64 {
	if math.IsInf(hi, 1) {
		return x
	}
	if !(x < hi) {
		return math.NaN()
	}
	return math.Log(hi - x)
}

func slicesIndex(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// unitVectorForward is Stan 2.21's unit_vector_constrain: x = u/‖u‖ with the "Jacobian" term
// −½·uᵀu that makes the density over u proper.
func unitVectorForward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	ss := t.Dot(u, u)
	x = t.Mul(u, t.PowC(ss, -0.5))
	return x, t.MulC(ss, -0.5)
}

// unitVectorFree is Stan's unit_vector_free: x itself, which must have unit norm (within
// 1e-8, Stan's CONSTRAINT_TOLERANCE).
func unitVectorFree(x, u []float64) error {
	ss := 0.0
	for _, v := range x {
		ss += v * v
	}
	if !(math.Abs(ss-1) <= 1e-8) {
		return fmt.Errorf("unit_vector has squared norm %g, want 1", ss)
	}
	copy(u, x)
	return nil
}
