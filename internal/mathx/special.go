package mathx

import "math"

// This file holds the log-CDF special functions the truncated densities need, with their
// partial derivatives in the shape parameters (what Stan Math calls grad_reg_inc_gamma and
// inc_beta_dda/ddb). Derivatives are carried through the series and continued fractions in
// forward mode, so they converge together with the value.

// LogNormCDF returns log Φ(z) for the standard normal CDF Φ and its derivative
// d/dz log Φ(z) = φ(z)/Φ(z) (the inverse Mills ratio at −z).
//
// For z ≥ 0 it uses log1p(−erfc(z/√2)/2); for −20 ≤ z < 0 log(erfc(−z/√2)/2), whose relative
// accuracy is that of math.Erfc; below −20 the asymptotic series
// Φ(z) = φ(z)/(−z) · Σₙ (−1)ⁿ(2n−1)!!/z²ⁿ (Abramowitz & Stegun 26.2.12) with 12 terms, whose
// truncation error there is below 1e−20 relative (25!!/20²⁶).
func LogNormCDF(z float64) (v, dv float64) {
	switch {
	case math.IsNaN(z):
		return z, z
	case z >= 0:
		q := 0.5 * math.Erfc(z/math.Sqrt2)
		v = math.Log1p(-q)
	case z >= -20:
		v = math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
	default:
		if math.IsInf(z, -1) {
			return z, math.Inf(1)
		}
		// S = Σ (−1)ⁿ (2n−1)!!/z²ⁿ, summed from the smallest term.
		r := 1 / (z * z)
		s := 1.0
		for n := 12; n >= 1; n-- {
			s = 1 - float64(2*n-1)*r*s
		}
		v = -0.5*z*z - LogSqrt2Pi - math.Log(-z) + math.Log(s)
		return v, -z / s
	}
	return v, math.Exp(-0.5*z*z - LogSqrt2Pi - v)
}

// IncBeta holds the regularised incomplete beta function I = I_x(a, b) and its complement
// J = 1 − I in log form, with the partial derivatives of both logs in a and b.
type IncBeta struct {
	LogI, LogJ       float64
	DLogIda, DLogIdb float64
	DLogJda, DLogJdb float64
}

// dual is a number with two tangent components (∂/∂a, ∂/∂b).
type dual struct{ v, a, b float64 }

func (p dual) mul(q dual) dual {
	return dual{p.v * q.v, p.a*q.v + p.v*q.a, p.b*q.v + p.v*q.b}
}

func (p dual) inv() dual {
	r := 1 / p.v
	s := -r * r
	return dual{r, s * p.a, s * p.b}
}

func (p dual) add1() dual { return dual{1 + p.v, p.a, p.b} }

// tinyCF replaces exact zeros in the modified Lentz algorithm (Thompson & Barnett 1986).
const tinyCF = 1e-300

func guardCF(p dual) dual {
	if math.Abs(p.v) < tinyCF {
		p.v = tinyCF
	}
	return p
}

// logIncBetaCF returns log I_x(a, b) and its partials in a and b from the continued fraction
// I_x(a,b) = xᵃ(1−x)ᵇ/(a·B(a,b)) · 1/(1 + d₁/(1 + d₂/(1 + …))) with
// d₂ₘ₊₁ = −(a+m)(a+b+m)x/((a+2m)(a+2m+1)), d₂ₘ = m(b−m)x/((a+2m−1)(a+2m))
// (Abramowitz & Stegun 26.5.8), evaluated by the modified Lentz method with forward-mode
// tangents. y = 1 − x is passed separately for accuracy. Converges fast for
// x < (a+1)/(a+b+2); the number of iterations grows like √max(a, b).
func logIncBetaCF(a, b, x, y float64) (v, da, db float64) {
	lx, ly := math.Log(x), math.Log1p(-x)
	if y < 0.5 {
		ly = math.Log(y)
	}
	// log prefactor xᵃ yᵇ / (a B(a,b)) and its partials.
	pre := a*lx + b*ly - math.Log(a) - LogBeta(a, b)
	psiab := digamma(a + b)
	preA := lx - 1/a - digamma(a) + psiab
	preB := ly - digamma(b) + psiab

	// f = 1/(1 + d1/(1 + d2/(…))); we evaluate g = 1 + d1/(1 + …) by Lentz and return −log g.
	c := dual{v: 1}
	d := dual{}
	lg, lgA, lgB := 0.0, 0.0, 0.0
	for m := 1; m <= 10000; m++ {
		var coef dual
		fm := float64(m / 2)
		if m%2 == 1 {
			// d = −(a+k)(a+b+k)x/((a+2k)(a+2k+1)), k = (m−1)/2
			k := fm
			num := (a + k) * (a + b + k)
			den := (a + 2*k) * (a + 2*k + 1)
			cv := -num * x / den
			// ∂ log|coef| / ∂a = 1/(a+k) + 1/(a+b+k) − 1/(a+2k) − 1/(a+2k+1)
			la := 1/(a+k) + 1/(a+b+k) - 1/(a+2*k) - 1/(a+2*k+1)
			lb := 1 / (a + b + k)
			coef = dual{cv, cv * la, cv * lb}
		} else {
			k := fm
			// d = k(b−k)x/((a+2k−1)(a+2k))
			cv := k * (b - k) * x / ((a + 2*k - 1) * (a + 2*k))
			ca := -cv * (1/(a+2*k-1) + 1/(a+2*k))
			cb := k * x / ((a + 2*k - 1) * (a + 2*k))
			coef = dual{cv, ca, cb}
		}
		// Lentz: D = 1/(1 + coef·D), C = 1 + coef/C, Δ = C·D.
		d = guardCF(coef.mul(d).add1()).inv()
		c = guardCF(coef.mul(c.inv()).add1())
		del := c.mul(d)
		lg += math.Log(del.v)
		lgA += del.a / del.v
		lgB += del.b / del.v
		if math.Abs(del.v-1) < 1e-16 && math.Abs(del.a/del.v) <= 1e-16*(1+math.Abs(lgA)) &&
			math.Abs(del.b/del.v) <= 1e-16*(1+math.Abs(lgB)) {
			break
		}
	}
	return pre - lg, preA - lgA, preB - lgB
}

// LogRegIncBeta returns log I_x(a,b), log(1 − I_x(a,b)) and their partial derivatives in a and
// b, for a, b > 0 and x ∈ [0, 1] with y = 1 − x (pass y computed accurately when x is near 1).
// Whichever of I and 1 − I is smaller is computed directly by the continued fraction (on
// I_x(a,b) when x < (a+1)/(a+b+2), on I_y(b,a) otherwise), the other from it, so both logs
// keep relative accuracy. Invalid arguments give NaN fields.
// Cost: O(√max(a,b)) iterations of a few flops plus three digammas.
func LogRegIncBeta(a, b, x, y float64) IncBeta {
	switch {
	case !(a > 0) || !(b > 0) || !(x >= 0) || !(y >= 0) || math.IsInf(a, 1) || math.IsInf(b, 1):
		n := math.NaN()
		return IncBeta{n, n, n, n, n, n}
	case x == 0:
		return IncBeta{LogI: math.Inf(-1)}
	case y == 0:
		return IncBeta{LogJ: math.Inf(-1)}
	}
	var r IncBeta
	if x < (a+1)/(a+b+2) {
		r.LogI, r.DLogIda, r.DLogIdb = logIncBetaCF(a, b, x, y)
		r.LogJ = Log1mExp(r.LogI)
		w := -math.Exp(r.LogI - r.LogJ) // ∂ log J = −(I/J) ∂ log I
		r.DLogJda, r.DLogJdb = w*r.DLogIda, w*r.DLogIdb
	} else {
		var jb, ja float64
		r.LogJ, jb, ja = logIncBetaCF(b, a, y, x)
		r.DLogJda, r.DLogJdb = ja, jb
		r.LogI = Log1mExp(r.LogJ)
		w := -math.Exp(r.LogJ - r.LogI)
		r.DLogIda, r.DLogIdb = w*r.DLogJda, w*r.DLogJdb
	}
	return r
}

// LogRegIncGamma returns log P(a, x), log Q(a, x) for the regularised lower and upper
// incomplete gamma functions (P + Q = 1) and their partial derivatives in a, for a > 0, x ≥ 0.
//
// For x < a+1 the series P = xᵃe⁻ˣ/Γ(a+1) · Σₙ xⁿ/((a+1)⋯(a+n)) (A&S 6.5.29) is summed with
// its a-derivative term by term (all terms positive); otherwise the continued fraction
// Γ(a,x) = e⁻ˣxᵃ/(x+1−a− 1(1−a)/(x+3−a− 2(2−a)/(x+5−a− …))) (A&S 6.5.31) by modified Lentz
// with a forward-mode tangent. The other function follows from 1 − the first, in log space.
// Invalid arguments give NaN. Cost: O(x) series terms for x < a+1, O(√a)… CF steps otherwise.
func LogRegIncGamma(a, x float64) (logP, logQ, dlogPda, dlogQda float64) {
	switch {
	case !(a > 0) || !(x >= 0) || math.IsInf(a, 1):
		n := math.NaN()
		return n, n, n, n
	case x == 0:
		return math.Inf(-1), 0, 0, 0
	case math.IsInf(x, 1):
		return 0, math.Inf(-1), 0, 0
	}
	lx := math.Log(x)
	if x < a+1 {
		// Series for P.
		s, sA := 1.0, 0.0
		t, tl := 1.0, 0.0 // term and its log-derivative in a
		for n := 1; n < 100000; n++ {
			an := a + float64(n)
			t *= x / an
			tl -= 1 / an
			s += t
			sA += t * tl
			if t < 1e-17*s && math.Abs(t*tl) <= 1e-17*math.Abs(sA) {
				break
			}
		}
		logP = a*lx - x - Lgamma(a+1) + math.Log(s)
		dlogPda = lx - digamma(a+1) + sA/s
		logQ = Log1mExp(logP)
		dlogQda = -math.Exp(logP-logQ) * dlogPda
		return
	}
	// Continued fraction for Q: g = b₀ + a₁/(b₁ + a₂/(b₂ + …)), Q = xᵃe⁻ˣ/(Γ(a)·g).
	b := dual{v: x + 1 - a, a: -1}
	f := guardCF(b)
	c := f
	d := dual{}
	for i := 1; i <= 100000; i++ {
		fi := float64(i)
		an := dual{v: -fi * (fi - a), a: fi}
		b.v += 2
		d = guardCF(an.mul(d).add(b)).inv()
		c = guardCF(b.add(an.mul(c.inv())))
		del := c.mul(d)
		f = f.mul(del)
		if math.Abs(del.v-1) < 1e-16 && math.Abs(del.a/del.v) <= 1e-16*(1+math.Abs(f.a/f.v)) {
			break
		}
	}
	logQ = a*lx - x - Lgamma(a) - math.Log(f.v)
	dlogQda = lx - digamma(a) - f.a/f.v
	logP = Log1mExp(logQ)
	dlogPda = -math.Exp(logQ-logP) * dlogQda
	return
}

func (p dual) add(q dual) dual { return dual{p.v + q.v, p.a + q.a, p.b + q.b} }

// digamma returns ψ(x) with absolute error near 1e-15 (gonum's mathext.Digamma, behind
// Digamma, is off by up to 5e-11, which shows in the derivatives above). Reflection for x < 0,
// recurrence ψ(x) = ψ(x+1) − 1/x up to x ≥ 10, then the asymptotic series
// log x − 1/(2x) − Σ B₂ₖ/(2k x²ᵏ) (A&S 6.3.18) to the x⁻¹⁴ term.
func digamma(x float64) float64 {
	if x <= 0 && x == math.Floor(x) {
		return math.NaN()
	}
	if x < 0 {
		return digamma(1-x) - math.Pi/math.Tan(math.Pi*x)
	}
	r := 0.0
	for x < 10 {
		r -= 1 / x
		x++
	}
	z := 1 / (x * x)
	s := z * (1.0/12 - z*(1.0/120-z*(1.0/252-z*(1.0/240-z*(1.0/132-z*(691.0/32760-z/12))))))
	return r + math.Log(x) - 0.5/x - s
}

// LgammaDiff returns log Γ(x+k) − log Γ(x) for x > 0, k ≥ 0 without the cancellation of the
// plain difference when x is large (as in the negative binomial for large φ). For x ≥ 10 it
// uses Stirling's series: (x−½)·log1p(k/x) + k·log(x+k) − k + c(x+k) − c(x) with
// c(y) = 1/(12y) − 1/(360y³) + 1/(1260y⁵) − 1/(1680y⁷) + 1/(1188y⁹) − 691/(360360y¹¹) +
// 1/(156y¹³) (A&S 6.1.41), whose truncation error at y ≥ 10 is below 3e−17 (the next term,
// 3617/(122400y¹⁵)); otherwise the lgamma difference (absolute error ~1e−15 there).
func LgammaDiff(x, k float64) float64 {
	if x < 10 {
		return Lgamma(x+k) - Lgamma(x)
	}
	return (x-0.5)*math.Log1p(k/x) + k*math.Log(x+k) - k + stirlingCorr(x+k) - stirlingCorr(x)
}

func stirlingCorr(y float64) float64 {
	z := 1 / (y * y)
	return (1.0/12 - z*(1.0/360-z*(1.0/1260-z*(1.0/1680-z*(1.0/1188-z*(691.0/360360-z/156)))))) / y
}
