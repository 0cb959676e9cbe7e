package bijector

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Identity returns the identity transform on ℝⁿ: x = u, log J = 0. Free rejects non-finite
// values.
func Identity(n int) Bijector {
	if n < 0 {
		panic(fmt.Sprintf("bijector: Identity: n=%d", n))
	}
	return identity{n}
}

type identity struct{ n int }

func (b identity) FreeSize() int  { return b.n }
func (b identity) Size() int      { return b.n }
func (b identity) String() string { return fmt.Sprintf("identity[%d]", b.n) }

// Forward returns u itself and a constant 0.
func (b identity) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	checkVar("Identity", "Forward", t, u, b.n)
	return u, t.Const(0)
}

func (b identity) Constrain(u, x []float64) float64 {
	checkLens("Identity", "Constrain", u, x, b.n, b.n)
	copy(x, u)
	return 0
}

func (b identity) Free(x, u []float64) error {
	checkLens("Identity", "Free", u, x, b.n, b.n)
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return domainErr("Identity", "x[%d] = %g, want finite", i, v)
		}
	}
	copy(u, x)
	return nil
}

// Lower returns the lower-bound transform on n elements: x = lo + eᵘ, log J = Σ u
// (Stan's lb_constrain). A lower bound of −∞ gives Identity(n), as in Stan. It panics if lo is
// NaN or +∞. Cost O(n); Forward is two nodes.
func Lower(n int, lo float64) Bijector {
	if n < 0 || math.IsNaN(lo) || math.IsInf(lo, 1) {
		panic(fmt.Sprintf("bijector: Lower: n=%d, lo=%g", n, lo))
	}
	if math.IsInf(lo, -1) {
		return identity{n}
	}
	return lower{n, lo}
}

type lower struct {
	n  int
	lo float64
}

func (b lower) FreeSize() int  { return b.n }
func (b lower) Size() int      { return b.n }
func (b lower) String() string { return fmt.Sprintf("lower[%d](%g)", b.n, b.lo) }

func (b lower) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	checkVar("Lower", "Forward", t, u, b.n)
	uv := t.Value(u)
	x, val, d := t.Map(u)
	for i, ui := range uv {
		e := math.Exp(ui)
		val[i] = b.lo + e
		d[i] = e
	}
	return x, t.Sum(u)
}

func (b lower) Constrain(u, x []float64) float64 {
	checkLens("Lower", "Constrain", u, x, b.n, b.n)
	lj := 0.0
	for i, ui := range u {
		x[i] = b.lo + math.Exp(ui)
		lj += ui
	}
	return lj
}

func (b lower) Free(x, u []float64) error {
	checkLens("Lower", "Free", u, x, b.n, b.n)
	for i, v := range x {
		if !(v > b.lo) || math.IsInf(v, 1) {
			return domainErr("Lower", "x[%d] = %g, want finite and > %g", i, v, b.lo)
		}
		u[i] = math.Log(v - b.lo)
	}
	return nil
}

// Upper returns the upper-bound transform on n elements: x = hi − eᵘ, log J = Σ u
// (Stan's ub_constrain). An upper bound of +∞ gives Identity(n). It panics if hi is NaN or −∞.
func Upper(n int, hi float64) Bijector {
	if n < 0 || math.IsNaN(hi) || math.IsInf(hi, -1) {
		panic(fmt.Sprintf("bijector: Upper: n=%d, hi=%g", n, hi))
	}
	if math.IsInf(hi, 1) {
		return identity{n}
	}
	return upper{n, hi}
}

type upper struct {
	n  int
	hi float64
}

func (b upper) FreeSize() int  { return b.n }
func (b upper) Size() int      { return b.n }
func (b upper) String() string { return fmt.Sprintf("upper[%d](%g)", b.n, b.hi) }

func (b upper) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	checkVar("Upper", "Forward", t, u, b.n)
	uv := t.Value(u)
	x, val, d := t.Map(u)
	for i, ui := range uv {
		e := math.Exp(ui)
		val[i] = b.hi - e
		d[i] = -e
	}
	return x, t.Sum(u)
}

func (b upper) Constrain(u, x []float64) float64 {
	checkLens("Upper", "Constrain", u, x, b.n, b.n)
	lj := 0.0
	for i, ui := range u {
		x[i] = b.hi - math.Exp(ui)
		lj += ui
	}
	return lj
}

func (b upper) Free(x, u []float64) error {
	checkLens("Upper", "Free", u, x, b.n, b.n)
	for i, v := range x {
		if !(v < b.hi) || math.IsInf(v, -1) {
			return domainErr("Upper", "x[%d] = %g, want finite and < %g", i, v, b.hi)
		}
		u[i] = math.Log(b.hi - v)
	}
	return nil
}

// Interval returns the transform onto (lo, hi)ⁿ: x = lo + (hi − lo)·σ(u) with σ the logistic
// function, log J = Σ log(hi − lo) + log σ(u) + log σ(−u) (Stan's lub_constrain). Infinite
// bounds reduce to Lower, Upper or Identity, as in Stan. It panics unless lo < hi.
//
// x is computed as hi − (hi − lo)·σ(−u) for u > 0 so that both ends keep full relative
// precision, and log J as log(hi−lo) − |u| − 2·log1p(e^{−|u|}), finite for any finite u.
// Forward is two nodes (one Map, one fused log J). Cost O(n).
func Interval(n int, lo, hi float64) Bijector {
	if n < 0 || !(lo < hi) {
		panic(fmt.Sprintf("bijector: Interval: n=%d, lo=%g, hi=%g, want lo < hi", n, lo, hi))
	}
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		return identity{n}
	case math.IsInf(lo, -1):
		return upper{n, hi}
	case math.IsInf(hi, 1):
		return lower{n, lo}
	}
	return interval{n, lo, hi}
}

type interval struct {
	n      int
	lo, hi float64
}

func (b interval) FreeSize() int  { return b.n }
func (b interval) Size() int      { return b.n }
func (b interval) String() string { return fmt.Sprintf("interval[%d](%g, %g)", b.n, b.lo, b.hi) }

// logitValue returns lo + w·σ(u) computed from the nearer end, and σ(u), σ(−u).
func logitValue(u, lo, hi float64) (x, s, sm float64) {
	s, sm = mathx.Logistic(u), mathx.Logistic(-u)
	if u > 0 {
		return hi - (hi-lo)*sm, s, sm
	}
	return lo + (hi-lo)*s, s, sm
}

// logSigmoidPair returns log σ(u) + log σ(−u) = −|u| − 2·log1p(e^{−|u|}).
func logSigmoidPair(u float64) float64 {
	a := math.Abs(u)
	return -a - 2*math.Log1p(math.Exp(-a))
}

func (b interval) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	checkVar("Interval", "Forward", t, u, b.n)
	uv := t.Value(u)
	w := b.hi - b.lo
	x, val, d := t.Map(u)
	for i, ui := range uv {
		xi, s, sm := logitValue(ui, b.lo, b.hi)
		val[i] = xi
		d[i] = w * s * sm
	}
	fb := t.Fused()
	du := fb.Partial(u)
	lj := float64(b.n) * math.Log(w)
	for i, ui := range uv {
		lj += logSigmoidPair(ui)
		if du != nil {
			du[i] = -math.Tanh(ui / 2) // d/du [log σ(u) + log σ(−u)] = σ(−u) − σ(u)
		}
	}
	return x, fb.Done(lj)
}

func (b interval) Constrain(u, x []float64) float64 {
	checkLens("Interval", "Constrain", u, x, b.n, b.n)
	lj := float64(b.n) * math.Log(b.hi-b.lo)
	for i, ui := range u {
		x[i], _, _ = logitValue(ui, b.lo, b.hi)
		lj += logSigmoidPair(ui)
	}
	return lj
}

func (b interval) Free(x, u []float64) error {
	checkLens("Interval", "Free", u, x, b.n, b.n)
	for i, v := range x {
		if !(v > b.lo && v < b.hi) {
			return domainErr("Interval", "x[%d] = %g, want in (%g, %g)", i, v, b.lo, b.hi)
		}
		u[i] = math.Log(v-b.lo) - math.Log(b.hi-v)
	}
	return nil
}

// VarInterval is the interval transform with bounds that are tape values, for a parameter
// whose support depends on other parameters (garch11: 0 < beta1 < 1 − alpha1):
//
//	x = lo + (hi − lo)·σ(u),  log J = Σ log(hi − lo) + log σ(u) + log σ(−u).
//
// u has size n ≥ 1; lo and hi each have size 1 (broadcast) or n. Gradients flow to u, lo and
// hi. Bounds must be finite with lo < hi; otherwise x and log J are NaN (a rejected point),
// never a panic. For n = 1 it records two fused nodes; otherwise six nodes. Cost O(n).
func VarInterval(t *ad.Tape, u, lo, hi ad.Var) (x, logJ ad.Var) {
	n := t.Size(u)
	nl, nh := t.Size(lo), t.Size(hi)
	if (nl != 1 && nl != n) || (nh != 1 && nh != n) {
		panic(fmt.Sprintf("bijector: VarInterval: sizes u=%d, lo=%d, hi=%d", n, nl, nh))
	}
	uv, lv, hv := t.Value(u), t.Value(lo), t.Value(hi)
	if n == 1 {
		u0, l0, h0 := uv[0], lv[0], hv[0]
		xv, s, sm := logitValue(u0, l0, h0)
		w := h0 - l0
		if !(w > 0) || math.IsInf(w, 0) {
			xv, w = math.NaN(), math.NaN()
		}
		fb := t.Fused()
		addPartial(fb, u, w*s*sm)
		addPartial(fb, lo, sm)
		addPartial(fb, hi, s)
		x = fb.Done(xv)
		fb = t.Fused()
		addPartial(fb, u, -math.Tanh(u0/2))
		addPartial(fb, lo, -1/w)
		addPartial(fb, hi, 1/w)
		return x, fb.Done(math.Log(w) + logSigmoidPair(u0))
	}
	s, sv, sd := t.Map(u)
	for i, ui := range uv {
		sv[i] = mathx.Logistic(ui)
		sd[i] = sv[i] * mathx.Logistic(-ui)
	}
	w := t.Sub(hi, lo)
	x = t.Add(lo, t.Mul(w, s))
	wv := t.Value(w)
	fb := t.Fused()
	du := fb.Partial(u)
	dw := fb.Partial(w)
	lj := 0.0
	for i, ui := range uv {
		lj += logSigmoidPair(ui)
		if du != nil {
			du[i] = -math.Tanh(ui / 2)
		}
	}
	for i, wi := range wv {
		if !(wi > 0) || math.IsInf(wi, 0) {
			wi = math.NaN()
		}
		if len(wv) == 1 {
			lj += float64(n) * math.Log(wi)
			if dw != nil {
				dw[0] = float64(n) / wi
			}
		} else {
			lj += math.Log(wi)
			if dw != nil {
				dw[i] = 1 / wi
			}
		}
	}
	return x, fb.Done(lj)
}

// addPartial registers the scalar v with partial d, adding to any earlier partial (v may be
// passed twice); constants are skipped.
func addPartial(fb ad.FusedBuilder, v ad.Var, d float64) {
	if p := fb.Partial(v); p != nil {
		p[0] += d
	}
}

// at returns v[i], broadcasting a length-1 slice.
func at(v []float64, i int) float64 {
	if len(v) == 1 {
		return v[0]
	}
	return v[i]
}

// VarIntervalConstrain is VarInterval in float64: it writes x and returns log J. lo and hi have
// length 1 or len(u); it panics otherwise.
func VarIntervalConstrain(u, lo, hi, x []float64) float64 {
	n := len(u)
	if len(x) != n || (len(lo) != 1 && len(lo) != n) || (len(hi) != 1 && len(hi) != n) {
		panic(fmt.Sprintf("bijector: VarIntervalConstrain: lengths u=%d, lo=%d, hi=%d, x=%d", n, len(lo), len(hi), len(x)))
	}
	lj := 0.0
	for i, ui := range u {
		l, h := at(lo, i), at(hi, i)
		w := h - l
		if !(w > 0) || math.IsInf(w, 0) {
			x[i] = math.NaN()
			lj = math.NaN()
			continue
		}
		x[i], _, _ = logitValue(ui, l, h)
		lj += math.Log(w) + logSigmoidPair(ui)
	}
	return lj
}

// VarIntervalFree is the inverse of VarInterval: u = log(x − lo) − log(hi − x). It returns an
// error unless lo < x < hi elementwise with finite bounds.
func VarIntervalFree(x, lo, hi, u []float64) error {
	n := len(x)
	if len(u) != n || (len(lo) != 1 && len(lo) != n) || (len(hi) != 1 && len(hi) != n) {
		panic(fmt.Sprintf("bijector: VarIntervalFree: lengths x=%d, lo=%d, hi=%d, u=%d", n, len(lo), len(hi), len(u)))
	}
	for i, v := range x {
		l, h := at(lo, i), at(hi, i)
		if math.IsInf(l, 0) || math.IsInf(h, 0) {
			return domainErr("VarInterval", "bounds (%g, %g) for x[%d], want finite", l, h, i)
		}
		if !(v > l && v < h) {
			return domainErr("VarInterval", "x[%d] = %g, want in (%g, %g)", i, v, l, h)
		}
		u[i] = math.Log(v-l) - math.Log(h-v)
	}
	return nil
}
