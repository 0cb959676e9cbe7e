package family

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// MinBaseDF and MaxBaseDF bound the degrees of freedom of a Student-t flow base (FlowBaseDF):
// below 1 the base has no mean and its quantiles in the far tail overflow float64 range for
// ordinary noise; above MaxBaseDF it equals the Gaussian to within float64 noise in the bulk
// and the incomplete-beta iterations the quantile needs grow as √ν.
const (
	MinBaseDF = 1
	MaxBaseDF = 1000
)

// tBase is the Student-t base of a Flow: d independent t_ν marginals,
//
//	log p(x) = Σ_i [c_ν − (ν+1)/2 · log(1 + x_i²/ν)],   c_ν = lnΓ((ν+1)/2) − lnΓ(ν/2) − ½ log(νπ).
//
// The zero value (nu = 0) is the standard-normal base.
type tBase struct {
	nu float64
	c  float64 // c_ν
	r  float64 // φ(0)/f_ν(0): the slope of G = F_ν⁻¹∘Φ at 0
}

func newTBase(nu float64) tBase {
	if math.IsInf(nu, 1) {
		return tBase{}
	}
	if !(nu >= MinBaseDF && nu <= MaxBaseDF) {
		panic(fmt.Sprintf("family: FlowBaseDF: ν=%g, want %d to %d or +Inf", nu, MinBaseDF, MaxBaseDF))
	}
	c := mathx.Lgamma(0.5*(nu+1)) - mathx.Lgamma(0.5*nu) - 0.5*(math.Log(nu)+mathx.LogPi)
	return tBase{nu: nu, c: c, r: math.Exp(-mathx.LogSqrt2Pi - c)}
}

// gaussian reports whether the base is N(0, I).
func (b tBase) gaussian() bool { return b.nu == 0 }

// sdFactor is the standard deviation of one base coordinate: √(ν/(ν−2)) for ν > 2, and 1 for
// the Gaussian and for ν ≤ 2 (infinite variance: the scale is the t's own).
func (b tBase) sdFactor() float64 {
	if b.gaussian() || b.nu <= 2 {
		return 1
	}
	return math.Sqrt(b.nu / (b.nu - 2))
}

// logDensity returns Σ_i log p(x_i).
func (b tBase) logDensity(x []float64) float64 {
	if b.gaussian() {
		return -halfSq(x) - logNormConst(len(x))
	}
	s := 0.0
	for _, v := range x {
		s += math.Log1p(v * v / b.nu)
	}
	return float64(len(x))*b.c - 0.5*(b.nu+1)*s
}

// tapeLogDensity records Σ_i log p(x_i) for x on t.
func (b tBase) tapeLogDensity(t *ad.Tape, x ad.Var) ad.Var {
	if b.gaussian() {
		return t.AddC(t.MulC(t.Dot(x, x), -0.5), -logNormConst(t.Size(x)))
	}
	s := t.Sum(t.Log1p(t.MulC(t.Square(x), 1/b.nu)))
	return t.AddC(t.MulC(s, -0.5*(b.nu+1)), float64(t.Size(x))*b.c)
}

// transform writes x_i = G(ε_i) = F_ν⁻¹(Φ(ε_i)), which is t_ν-distributed when ε_i is standard
// normal (a fixed, increasing, odd map: no parameters, so no gradient flows through it).
func (b tBase) transform(eps, x []float64) {
	for i, e := range eps {
		x[i] = b.fromNormal(e)
	}
}

// fromNormal returns G(z) = F_ν⁻¹(Φ(z)) to near float64 accuracy for all finite z.
//
// Method. G is odd, so work with a = |z| > 0 and solve for t = G(a) > 0 in s = log t, on the
// smaller of the two probabilities so that neither side loses relative accuracy:
//
//	tail   (P(|Z| > a) < ½):  log I_{ν/(ν+t²)}(ν/2, ½) = log P(|Z| > a) = log 2Φ(−a)
//	centre (otherwise):       log(1 − I_{ν/(ν+t²)}(ν/2, ½)) = log P(|Z| < a) = log erf(a/√2)
//
// (P(|T| > t) = I_{ν/(ν+t²)}(ν/2, ½), Abramowitz & Stegun 26.7.1; mathx.LogRegIncBeta gives
// both logs with relative accuracy). Both sides are monotone in s with slope ±2t·f_ν(t)/P, O(1)
// to O(ν), so Newton's method in s converges quadratically; it is safeguarded by bisection in
// the bracket [a, t_a], where a ≤ G(a) (t_ν is heavier-tailed than N(0, 1)) and t_a solves the
// tail bound P(|T| > t) ≤ 2e^{c_ν}ν^{(ν−1)/2}t^{−ν}. The start is t_a when t_a² ≥ 10ν (there
// the bound is tight), else the smaller of t_a and the Cornish–Fisher expansion
// a + (a³+a)/(4ν) + (5a⁵+16a³+3a)/(96ν²) (A&S 26.7.5). For
// a < 10⁻⁴ the Taylor series G(a) = r·a + r((ν+1)r²/ν − 1)/6·a³ + O(a⁵), r = φ(0)/f_ν(0),
// is exact to float64. Cost: typically 3–5 incomplete-beta evaluations (O(√ν) each).
func (b tBase) fromNormal(z float64) float64 {
	a := math.Abs(z)
	if a == 0 || math.IsNaN(z) || math.IsInf(z, 0) {
		return z
	}
	nu := b.nu
	if a < 1e-4 {
		r := b.r
		return z * (r + r*((nu+1)*r*r/nu-1)/6*a*a)
	}
	lnorm, _ := mathx.LogNormCDF(-a)
	target := lnorm + mathx.Log2 // log P(|Z| > a)
	tail := target < -mathx.Log2
	if !tail {
		target = math.Log(math.Erf(a / math.Sqrt2))
	}
	lo := math.Log(a)
	hi := (mathx.Log2 + b.c + 0.5*(nu-1)*math.Log(nu) - (lnorm + mathx.Log2)) / nu
	if hi < lo { // cannot happen mathematically; guard against rounding
		hi = lo
	}
	if hi > 300 {
		// t > e³⁰⁰: ν/(ν+t²) underflows, and the tail bound's relative error, O(ν²/t²), is
		// far below rounding.
		return math.Copysign(math.Exp(hi), z)
	}
	s := hi
	if hi < 0.5*math.Log(10*nu) { // t_a² < 10ν: the tail bound is loose, Cornish–Fisher is not
		a2 := a * a
		cf := a + (a2*a+a)/(4*nu) + (5*a2*a2*a+16*a2*a+3*a)/(96*nu*nu)
		s = min(math.Log(cf), hi)
	}
	hi += 1e-9 * (1 + math.Abs(hi)) // the bound is tight in the far tail: keep the root inside
	for range 200 {
		r := 2*s - math.Log(nu) // log(t²/ν), without overflow for t up to the float64 range
		g := mathx.LogRegIncBeta(0.5*nu, 0.5, mathx.Logistic(-r), mathx.Logistic(r))
		lf := mathx.Log2 + b.c - 0.5*(nu+1)*mathx.Log1pExp(r) + s // log 2t·f_ν(t)
		var res, slope float64
		if tail {
			res, slope = g.LogI-target, -math.Exp(lf-g.LogI)
		} else {
			res, slope = g.LogJ-target, math.Exp(lf-g.LogJ)
		}
		step := -res / slope
		if math.Abs(step) < 1e-11 { // quadratic convergence: the error after it is ≲ 1e-20
			s += step
			break
		}
		if step > 0 {
			lo = s
		} else {
			hi = s
		}
		if next := s + step; next > lo && next < hi {
			s = next
		} else {
			s = 0.5 * (lo + hi)
		}
		if hi-lo < 1e-15*(1+math.Abs(s)) {
			break
		}
	}
	return math.Copysign(math.Exp(s), z)
}
