package flow

import (
	"errors"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Tails says what a Bernstein flow does beyond the unit interval its polynomial lives on.
type Tails uint8

const (
	// BoundedTails is the map of the BF-VI paper: the affine input v = α·u + β is squashed by
	// the logistic sigmoid into (0, 1) before the polynomial, so z = h(σ(v)) ranges over the
	// open interval (ϑ_0, ϑ_M) and q has compact support.
	BoundedTails Tails = iota
	// LinearTails drops the sigmoid: z = h̃(v) with h̃ the polynomial on [0, 1] continued by
	// the straight lines through its end points with its end slopes, h̃(v) = ϑ_0 + M·δ_1·v for
	// v < 0 and ϑ_M + M·δ_M·(v − 1) for v > 1. The map is onto ℝ, C¹, and q has Gaussian tails
	// whose widths (M·δ_1·α and M·δ_M·α) are trained.
	LinearTails
)

func (t Tails) String() string {
	switch t {
	case BoundedTails:
		return "bounded"
	case LinearTails:
		return "linear"
	}
	return fmt.Sprintf("Tails(%d)", uint8(t))
}

// ErrOutsideSupport is returned by the inverse of a bounded Bernstein flow for a point outside
// the open interval (ϑ_0, ϑ_M) of a coordinate: q has density zero there.
var ErrOutsideSupport = errors.New("flow: point outside the support of the bounded Bernstein flow")

// bernPoly is the one-dimensional map of a Bernstein flow of degree M ≥ 1 and its derivatives,
// in plain float64 code: the kernel that the tape nodes and the inverses share.
//
// Parameters of one coordinate: raw coefficients r_0..r_M and the affine pair (a′, β):
//
//	ϑ_0 = r_0,  δ_k = softplus(r_k),  ϑ_k = ϑ_{k−1} + δ_k  (k = 1..M)      strictly increasing
//	α = softplus(a′),  v = α·u + β
//	h(x) = Σ_{i=0..M} ϑ_i b_{i,M}(x),   b_{i,n}(x) = C(n,i) xⁱ (1−x)ⁿ⁻ⁱ
//	h′(x) = M Σ_{k=1..M} δ_k b_{k−1,M−1}(x) > 0
//	h″(x) = M(M−1) Σ_{i=0..M−2} (δ_{i+2} − δ_{i+1}) b_{i,M−2}(x)
//
// (the Bernstein-polynomial derivative identities, e.g. Farouki 2012, "The Bernstein polynomial
// basis: a centennial retrospective", CAGD 29(6), §3). The basis is evaluated in O(M) by
// starting at the binomial mode k ≈ (n+1)x, where b_{k,n} ≥ 1/(n+1) is computed once from a
// precomputed log C(n,k) and one exponential, and running the ratio recurrences
// b_{i+1} = b_i·(n−i)/(i+1)·x/(1−x) upwards and its mirror downwards: every step multiplies
// nonnegative numbers, terms only shrink away from the mode, and underflow to zero is harmless,
// so the relative error of every b_i is O(n·ε) for all n ≤ 100s and all x ∈ [0, 1] — the
// Beta-density form of the paper (eq. 1) overflows C(n,i) and xⁱ separately long before that.
// The tape nodes' evaluation of many coordinates (evalAll) starts instead at the end of the
// larger of x and 1−x, b_{n,n} = xⁿ or b_{0,n} = (1−x)ⁿ ≥ 2⁻ⁿ, and runs the same ratios across
// the whole range (kernel.BernsteinBasis4: every lane the same n steps, four lanes per
// vector), with the same O(n·ε) bound. The degree M−1 and M bases then follow by degree elevation
// b_{i,n+1} = (1−x)·b_{i,n} + x·b_{i−1,n} (convex combinations, no cancellation).
// x and 1−x are carried separately (for the sigmoid, σ(v) and σ(−v)) so that points near 1
// keep their relative precision.
type bernPoly struct {
	m     int
	tails Tails
	// Tables of the base degree n0 = M−2 (M ≥ 2): log C(n0, k), (n0−i)/(i+1), i/(n0−i+1).
	logC, up, down []float64
}

func newBernPoly(m int, tails Tails) bernPoly {
	if m < 1 {
		panic(fmt.Sprintf("flow: Bernstein: degree %d, want ≥ 1", m))
	}
	if tails != BoundedTails && tails != LinearTails {
		panic(fmt.Sprintf("flow: Bernstein: unknown tails %d", tails))
	}
	p := bernPoly{m: m, tails: tails}
	if n := m - 2; n >= 0 {
		p.logC = make([]float64, n+1)
		p.up = make([]float64, n+1)
		p.down = make([]float64, n+1)
		for k := 0; k <= n; k++ {
			p.logC[k] = mathx.LogBinomial(float64(n), float64(k))
			p.up[k] = float64(n-k) / float64(k+1)
			p.down[k] = float64(k) / float64(n-k+1)
		}
	}
	return p
}

// work returns the length of the scratch slice prep and at need.
func (p *bernPoly) work() int { return 6 * (p.m + 1) }

// softplusSig returns softplus(r) = log(1+eʳ) and its derivative σ(r), sharing one
// exponential.
func softplusSig(r float64) (sp, sg float64) {
	e := math.Exp(-math.Abs(r))
	sg = 1 / (1 + e)
	sp = math.Log1p(e)
	if r < 0 {
		sg *= e
	} else {
		sp += r
	}
	return sp, sg
}

// softplusInv returns r with softplus(r) = y > 0.
func softplusInv(y float64) float64 {
	if y > 30 {
		return y + math.Log(-math.Expm1(-y))
	}
	return math.Log(math.Expm1(y))
}

// prep writes the cumulative coefficients ϑ, the increments δ and σ(r) (∂δ/∂r) for the raw
// coefficients r into the scratch ws. Cost M softplus evaluations with their sigmoids
// (kernel.Softplus) and a cumulative sum.
func (p *bernPoly) prep(ws, r []float64) {
	P := p.m + 1
	theta, delta, sig := ws[:P], ws[P:2*P], ws[2*P:3*P]
	kernel.Softplus(delta[1:], sig[1:], r[1:P])
	acc := r[0]
	theta[0] = acc
	for k := 1; k < P; k++ {
		acc += delta[k]
		theta[k] = acc
	}
}

// basis writes b_{i,n}(x), i = 0..n, into b[i·s] (s ≥ 1), for x ∈ [0, 1] given y = 1 − x
// and lx = log x, ly = log y. The entries b[i·s] must be zero on entry (only the terms above
// the tiny cutoff are written). It uses the tables of degree n = M−2 (or n = 0).
func (p *bernPoly) basis(b []float64, s, n int, x, y, lx, ly float64) {
	k, bk := p.basisMode(n, x, y, lx, ly)
	p.basisRun(b, s, n, k, bk, x, y)
}

// basisMode returns where the recurrences of basis start, k ≈ (n+1)x, and b_{k,n}(x) =
// exp(log C(n, k) + k·lx + (n−k)·ly) (from the table of log C(n, k); 1 for the point masses
// at n = 0, x = 0 or y = 0). b_{k,n} ≥ 1/(n+1) up to rounding.
func (p *bernPoly) basisMode(n int, x, y, lx, ly float64) (k int, bk float64) {
	switch {
	case n == 0 || x <= 0:
		return 0, 1
	case y <= 0:
		return n, 1
	}
	k = min(int(float64(n+1)*x), n)
	return k, math.Exp(p.logC[k] + float64(k)*lx + float64(n-k)*ly)
}

// powi4 returns max(x_l, y_l)ᵏ for the four lanes of xy (x_0..x_3, y_0..y_3), k ≥ 0, by
// repeated squaring (⌊log₂ k⌋ squarings and a product per set bit; the same bits for every
// lane, so the four chains run side by side). Each squaring doubles the relative error it
// receives, so the result is within ≈ k·ε/2 of the exact power, as k − 1 sequential products
// would be.
func powi4(xy []float64, k int) [4]float64 {
	xy = xy[:8]
	b0, b1, b2, b3 := max(xy[0], xy[4]), max(xy[1], xy[5]), max(xy[2], xy[6]), max(xy[3], xy[7])
	r0, r1, r2, r3 := 1.0, 1.0, 1.0, 1.0
	for ; k > 0; k >>= 1 {
		if k&1 != 0 {
			r0, r1, r2, r3 = r0*b0, r1*b1, r2*b2, r3*b3
		}
		b0, b1, b2, b3 = b0*b0, b1*b1, b2*b2, b3*b3
	}
	return [4]float64{r0, r1, r2, r3}
}

// basisRun is basis from the start basisMode returns (k, bk = b_{k,n}): it writes b[k·s] =
// bk and runs the ratio recurrences up and down from k.
func (p *bernPoly) basisRun(b []float64, s, n, k int, bk, x, y float64) {
	b = b[:n*s+1]
	b[k*s] = bk
	if n == 0 || x <= 0 || y <= 0 {
		return
	}
	const tiny = 1e-300 // below this a term cannot matter; stopping avoids slow subnormals
	// The running term stays in a register: one multiplication on each dependency chain (not
	// a store and a reload as well), and the two chains are independent.
	qu, qd := x/y, y/x
	up, down := p.up[:n], p.down[:n+1]
	v := bk
	for i := k; i < n && v > tiny; i++ {
		v *= up[i] * qu
		b[(i+1)*s] = v
	}
	v = bk
	for i := k; i > 0 && v > tiny; i-- {
		v *= down[i] * qd
		b[(i-1)*s] = v
	}
}

// at evaluates the map of one coordinate at v = α·u + β after prep: z, the log-derivative
// ld = log ∂z/∂v, and their derivatives in v (dzdv, dldv). When dz (dl) is not nil it receives
// ∂z/∂r (∂ld/∂r), len M+1. Cost O(M), two exponentials and two logarithms (BoundedTails).
func (p *bernPoly) at(ws []float64, v float64, dz, dl []float64) (z, ld, dzdv, dldv float64) {
	P := p.m + 1
	return p.atSplit(ws[:3*P], ws[3*P:6*P], v, dz, dl)
}

// atSplit is at with the prepared coefficients (ϑ, δ, σ(r), 3(M+1) values as prep writes
// them) and the basis scratch (3(M+1) values) in separate slices, so that the prepared
// coefficients of many coordinates can share one basis scratch.
func (p *bernPoly) atSplit(tds, bs []float64, v float64, dz, dl []float64) (z, ld, dzdv, dldv float64) {
	M := p.m
	P := M + 1
	theta, delta, sig := tds[:P], tds[P:2*P], tds[2*P:3*P]
	b0, b1, b2 := bs[:P], bs[P:P+M], bs[2*P:2*P+M-1]

	if math.IsNaN(v) {
		nan := math.NaN()
		for _, g := range [][]float64{dz, dl} {
			for i := range g {
				g[i] = nan
			}
		}
		return nan, nan, nan, nan
	}
	var x, y, lx, ly float64
	if p.tails == BoundedTails {
		// x = σ(v), y = σ(−v) and their logarithms from one exponential and one log1p:
		// with e = exp(−|v|), σ(|v|) = 1/(1+e), σ(−|v|) = e/(1+e), log σ(|v|) = −log1p(e),
		// log σ(−|v|) = −|v| − log1p(e).
		e := math.Exp(-math.Abs(v))
		l, q := math.Log1p(e), 1/(1+e)
		if v >= 0 {
			x, y, lx, ly = q, e*q, -l, -v-l
		} else {
			x, y, lx, ly = e*q, q, v-l, -l
		}
	} else {
		if v < 0 || v > 1 {
			return p.tail(tds, v, dz, dl)
		}
		x, y = v, 1-v
		lx, ly = math.Log(x), math.Log1p(-v)
	}

	// Bases of degree M−2 (if M ≥ 2), M−1 and M by elevation, with h″ = M(M−1)·Σ Δ²ϑ·b_{·,M−2},
	// h′ = M·Σ δ·b_{·,M−1} and z = Σ ϑ·b_{·,M} accumulated in the same passes.
	var hp, hpp float64
	if M >= 2 {
		n := M - 2
		clear(b2)
		p.basis(b2, 1, n, x, y, lx, ly)
		// Two terms per iteration into two pairs of accumulators: the additions of
		// consecutive terms do not wait on each other.
		var hpp1, hp1 float64
		prev := 0.0 // b2[i−1]
		i := 0
		for ; i < n; i += 2 {
			c0, c1 := b2[i], b2[i+1]
			d1, d2, d3 := delta[i+1], delta[i+2], delta[i+3]
			hpp += (d2 - d1) * c0
			hpp1 += (d3 - d2) * c1
			e0 := y*c0 + x*prev
			e1 := y*c1 + x*c0
			b1[i], b1[i+1] = e0, e1
			hp += d1 * e0
			hp1 += d2 * e1
			prev = c1
		}
		if i == n {
			bi := b2[n]
			hpp += (delta[n+2] - delta[n+1]) * bi
			b1[n] = y*bi + x*prev
			hp += delta[n+1] * b1[n]
			prev = bi
		}
		b1[n+1] = x * prev
		hp += hp1 + delta[M]*b1[n+1]
		hpp = (hpp + hpp1) * float64(M*(M-1))
	} else {
		b1[0] = 1
		hp = delta[1]
	}
	hp *= float64(M)
	if dz != nil && dl != nil {
		// The forward pass of a tape node wants everything: one downward pass makes b_{k,M}
		// by elevation, z = Σ ϑ_k b_{k,M}, the tail sums T_k = Σ_{i≥k} b_{i,M} with
		// ∂z/∂r_k = σ(r_k)·T_k, and ∂log h′/∂r_k = M·b_{k−1,M−1}·σ(r_k)/h′; z and T are two
		// independent chains of additions.
		c := float64(M) / hp
		tail := 0.0
		next := 0.0 // b1[k] (b1[M] = 0)
		for k := M; k >= 1; k-- {
			bp := b1[k-1]
			bk := y*next + x*bp
			z += theta[k] * bk
			tail += bk
			dz[k] = sig[k] * tail
			dl[k] = c * bp * sig[k]
			next = bp
		}
		z += theta[0] * (y * next)
		dz[0], dl[0] = 1, 0
	} else {
		prev := 0.0 // b1[i−1]
		for i := 0; i < M; i++ {
			bi := b1[i]
			b0[i] = y*bi + x*prev
			z += theta[i] * b0[i]
			prev = bi
		}
		b0[M] = x * prev
		z += theta[M] * b0[M]
		if dz != nil { // ∂z/∂r_0 = Σ b_i = 1; ∂z/∂r_k = σ(r_k)·Σ_{i≥k} b_i
			tail := 0.0
			for k := M; k >= 1; k-- {
				tail += b0[k]
				dz[k] = sig[k] * tail
			}
			dz[0] = 1
		}
		if dl != nil { // ∂log h′/∂r_k = M·b_{k−1,M−1}·σ(r_k)/h′
			c := float64(M) / hp
			dl[0] = 0
			for k := 1; k <= M; k++ {
				dl[k] = c * b1[k-1] * sig[k]
			}
		}
	}
	ld = math.Log(hp)
	if p.tails == BoundedTails { // chain through x = σ(v): dx/dv = x·y
		xy := x * y
		return z, ld + lx + ly, hp * xy, hpp/hp*xy + (y - x)
	}
	return z, ld, hp, hpp / hp
}

// tail evaluates the linear continuation for v outside [0, 1] (LinearTails).
func (p *bernPoly) tail(ws []float64, v float64, dz, dl []float64) (z, ld, dzdv, dldv float64) {
	M := p.m
	P := M + 1
	theta, delta, sig := ws[:P], ws[P:2*P], ws[2*P:3*P]
	fm := float64(M)
	if dz != nil {
		clear(dz)
		dz[0] = 1
	}
	if dl != nil {
		clear(dl)
	}
	if v < 0 { // z = ϑ_0 + M·δ_1·v
		if dz != nil {
			dz[1] = fm * sig[1] * v
		}
		if dl != nil {
			dl[1] = sig[1] / delta[1]
		}
		s := fm * delta[1]
		return theta[0] + s*v, math.Log(s), s, 0
	}
	// z = ϑ_M + M·δ_M·(v − 1)
	if dz != nil {
		for k := 1; k <= M; k++ {
			dz[k] = sig[k]
		}
		dz[M] += fm * sig[M] * (v - 1)
	}
	if dl != nil {
		dl[M] = sig[M] / delta[M]
	}
	s := fm * delta[M]
	return theta[M] + s*(v-1), math.Log(s), s, 0
}

// solve returns v with z(v) = target after prep, by Newton steps safeguarded with bisection
// (Press et al., Numerical Recipes, 3rd ed., §9.4 "rtsafe") on a bracket where z(v) − target
// changes sign. z is strictly increasing, so the root is unique. For BoundedTails it fails
// with ErrOutsideSupport unless ϑ_0 < target < ϑ_M; LinearTails inverts the tails in closed
// form and brackets the rest in [0, 1].
func (p *bernPoly) solve(ws []float64, target float64) (float64, error) {
	M := p.m
	P := M + 1
	theta, delta := ws[:P], ws[P:2*P]
	if math.IsNaN(target) {
		return math.NaN(), fmt.Errorf("flow: Bernstein inverse: z is NaN")
	}
	if p.tails == LinearTails {
		switch {
		case target <= theta[0]:
			return (target - theta[0]) / (float64(M) * delta[1]), nil
		case target >= theta[M]:
			return 1 + (target-theta[M])/(float64(M)*delta[M]), nil
		}
	} else if !(target > theta[0] && target < theta[M]) {
		return math.NaN(), ErrOutsideSupport
	}
	// Start from the control polygon through (i/M, ϑ_i), which the polynomial follows to
	// O(1/M): x0 with ϑ_i ≤ target < ϑ_{i+1} interpolated linearly.
	i := 0
	for i < M-1 && theta[i+1] <= target {
		i++
	}
	x0 := (float64(i) + (target-theta[i])/(theta[i+1]-theta[i])) / float64(M)
	x0 = min(max(x0, 1e-12), 1-1e-12)
	v, lo, hi := x0, 0.0, 1.0
	if p.tails == BoundedTails {
		// Bracket around logit(x0) by doubling steps; at |v| ≥ 746 the sigmoid is exactly 0
		// or 1, where z = ϑ_0 or ϑ_M, so both loops end.
		v = math.Log(x0 / (1 - x0))
		lo, hi = v-0.5, v+0.5
		for step := 0.5; ; step *= 2 {
			if z, _, _, _ := p.at(ws, lo, nil, nil); z <= target {
				break
			}
			hi, lo = lo, lo-step
		}
		for step := 0.5; ; step *= 2 {
			if z, _, _, _ := p.at(ws, hi, nil, nil); z >= target {
				break
			}
			lo, hi = hi, hi+step
		}
		if !(v > lo && v < hi) {
			v = 0.5 * (lo + hi)
		}
	}
	for range 200 {
		z, _, dzdv, _ := p.at(ws, v, nil, nil)
		g := z - target
		if g == 0 {
			return v, nil
		}
		if g < 0 {
			lo = v
		} else {
			hi = v
		}
		next := v - g/dzdv
		if !(next > lo && next < hi) { // Newton left the bracket (or dzdv underflowed): bisect
			next = 0.5 * (lo + hi)
		}
		if math.Abs(next-v) <= 1e-15*(1+math.Abs(v)) || hi-lo <= 1e-15*(1+math.Abs(v)) {
			return next, nil
		}
		v = next
	}
	return v, nil
}

// identity writes raw parameters [r_0..r_M, a′, β] of one coordinate for which the map is the
// identity (LinearTails: exactly, with α = 1/6, β = 1/2 so the polynomial covers |u| ≤ 3) or
// close to it (BoundedTails: α = 1/3, β = 0, see coefIdentity).
func (p *bernPoly) identity(row []float64) {
	alpha, beta := 1.0/6, 0.5
	if p.tails == BoundedTails {
		alpha, beta = 1.0/3, 0
	}
	p.coefIdentity(row, alpha, beta)
	row[p.m+1], row[p.m+2] = softplusInv(alpha), beta
}

// coefIdentity writes raw coefficients r_0..r_M that make the map with affine parameters
// (α, β) the identity or close to it. LinearTails: ϑ_i = (i/M − β)/α, so h(v) = (v − β)/α = u
// exactly (Bernstein polynomials reproduce linear functions, and the tails continue the same
// line). BoundedTails (β = 0 assumed): ϑ_i = w·(i/M − 1/2), so z = w·(σ(αu) − 1/2), with
// w = E[(σ(αu) − 1/2)²]^(−1/2) under u ~ N(0, 1) so that z has mean 0 and variance 1 exactly
// (α = 1/3: w = 12.32, slope 1.027 at 0, |z − u| < 0.14 for |u| ≤ 2.5, support ±6.2).
func (p *bernPoly) coefIdentity(row []float64, alpha, beta float64) {
	M := p.m
	var lo, width float64
	if p.tails == LinearTails {
		lo, width = -beta/alpha, 1/alpha
	} else {
		width = 1 / math.Sqrt(sigmoidVar(alpha))
		lo = -width / 2
	}
	row[0] = lo
	inc := softplusInv(width / float64(M))
	for k := 1; k <= M; k++ {
		row[k] = inc
	}
}

// sigmoidVar returns E[(σ(αu) − 1/2)²] for u ~ N(0, 1), by the trapezoid rule on [−12, 12]
// with 2400 intervals (a smooth, rapidly decaying integrand: the rule converges geometrically,
// error far below 1e-15).
func sigmoidVar(alpha float64) float64 {
	const n = 2400
	h := 24.0 / n
	s := 0.0
	for i := 0; i <= n; i++ {
		u := -12 + h*float64(i)
		d := mathx.Logistic(alpha*u) - 0.5
		w := math.Exp(-0.5 * u * u)
		if i == 0 || i == n {
			w /= 2
		}
		s += w * d * d
	}
	return s * h / math.Sqrt(2*math.Pi)
}
