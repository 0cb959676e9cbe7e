package zoo

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// This file holds the fused likelihood nodes that three zoo models need and the density
// package does not provide: a GARCH(1,1) normal likelihood, a two-component normal mixture
// and a two-state Gaussian HMM (forward algorithm). Each is one tape node whose partials are
// computed analytically in the same pass (or one extra backward sweep), so a likelihood over
// T observations is one node, not T small ones (DESIGN.md §3).

// garchLogLik records Σ_{t=1}^{T} log N(y_t | mu, s_t) for the GARCH(1,1) volatility
// recursion s_1 = sigma1, s_t² = alpha0 + alpha1·(y_{t−1} − mu)² + beta1·s_{t−1}² (t ≥ 2), as
// one fused node. mu, alpha0, alpha1 and beta1 are scalar nodes.
//
// Partials are carried forward with the recursion (forward-mode tangents of v_t = s_t² with
// respect to the four parameters): v'_t = ∂_θ[alpha0 + alpha1·e²_{t−1}] + beta1·v'_{t−1} +
// [θ = beta1]·v_{t−1}, e_{t−1} = y_{t−1} − mu; and ∂ log N/∂v = (e_t²/v − 1)/(2v),
// ∂ log N/∂mu|_v = e_t/v. Cost O(T) flops and a single log (logProduct), no storage.
func garchLogLik(t *ad.Tape, y []float64, sigma1 float64, mu, alpha0, alpha1, beta1 ad.Var) ad.Var {
	m, a0, a1, b1 := t.Float(mu), t.Float(alpha0), t.Float(alpha1), t.Float(beta1)
	v := sigma1 * sigma1
	var dvMu, dvA0, dvA1, dvB1 float64 // ∂v_t/∂θ; zero at t = 1
	var lp, gMu, gA0, gA1, gB1 float64
	logV := logProduct{p: 1} // Σ log v_t
	ePrev := 0.0
	for i, yi := range y {
		if i > 0 {
			vPrev := v
			e2 := ePrev * ePrev
			v = a0 + a1*e2 + b1*vPrev
			dvMu = -2*a1*ePrev + b1*dvMu
			dvA0 = 1 + b1*dvA0
			dvA1 = e2 + b1*dvA1
			dvB1 = vPrev + b1*dvB1
		}
		e := yi - m
		iv := 1 / v
		r := e * iv
		lp -= 0.5 * e * r
		logV.mul(v)
		dv := 0.5 * iv * (e*r - 1) // ∂ log N(y | mu, √v)/∂v
		gMu += r + dv*dvMu
		gA0 += dv * dvA0
		gA1 += dv * dvA1
		gB1 += dv * dvB1
		ePrev = e
	}
	lp += -0.5*logV.log() - float64(len(y))*mathx.LogSqrt2Pi
	fb := t.Fused()
	if p := fb.Partial(mu); p != nil {
		p[0] = gMu
	}
	if p := fb.Partial(alpha0); p != nil {
		p[0] = gA0
	}
	if p := fb.Partial(alpha1); p != nil {
		p[0] = gA1
	}
	if p := fb.Partial(beta1); p != nil {
		p[0] = gB1
	}
	return fb.Done(lp)
}

// normalMix2LogLik records Σ_n log[θ·N(y_n | mu₁, σ₁) + (1−θ)·N(y_n | mu₂, σ₂)] as one fused
// node; mu and sigma are nodes of size 2, theta a scalar node in (0, 1).
//
// With a_n = log θ + log N(y_n | mu₁, σ₁), b_n = log(1−θ) + log N(y_n | mu₂, σ₂) and the
// responsibility w_n = e^{a_n}/(e^{a_n} + e^{b_n}) = logistic(a_n − b_n): ∂/∂mu₁ = Σ w_n
// z₁/σ₁, ∂/∂σ₁ = Σ w_n (z₁² − 1)/σ₁ (z₁ = (y−mu₁)/σ₁), the same for component 2 with
// 1 − w_n, and ∂/∂θ = Σ w_n/θ − (1−w_n)/(1−θ). Cost O(N): one exp per observation, and a
// log1p only where the components overlap (log1pSmall).
func normalMix2LogLik(t *ad.Tape, y []float64, mu, sigma, theta ad.Var) ad.Var {
	mv, sv := t.Value(mu), t.Value(sigma)
	if len(mv) != 2 || len(sv) != 2 || t.Size(theta) != 1 {
		panic(fmt.Sprintf("zoo: normalMix2LogLik: sizes mu=%d sigma=%d theta=%d, want 2, 2, 1", len(mv), len(sv), t.Size(theta)))
	}
	th := t.Float(theta)
	m1, m2, s1, s2 := mv[0], mv[1], sv[0], sv[1]
	i1, i2 := 1/s1, 1/s2
	c1 := math.Log(th) - math.Log(s1) - mathx.LogSqrt2Pi
	c2 := math.Log1p(-th) - math.Log(s2) - mathx.LogSqrt2Pi
	var lp, w1sum, gm1, gm2, gs1, gs2 float64
	for _, yn := range y {
		z1, z2 := (yn-m1)*i1, (yn-m2)*i2
		a := c1 - 0.5*z1*z1
		b := c2 - 0.5*z2*z2
		// log(eᵃ + eᵇ) = max + log1p(e^{−|a−b|}); w = logistic(a − b) from the same exp.
		d := a - b
		var w float64
		if d >= 0 {
			e := math.Exp(-d)
			lp += a + log1pSmall(e)
			w = 1 / (1 + e)
		} else {
			e := math.Exp(d)
			lp += b + log1pSmall(e)
			w = e / (1 + e)
		}
		u := 1 - w
		w1sum += w
		gm1 += w * z1
		gm2 += u * z2
		gs1 += w * (z1*z1 - 1)
		gs2 += u * (z2*z2 - 1)
	}
	n := float64(len(y))
	fb := t.Fused()
	if p := fb.Partial(mu); p != nil {
		p[0], p[1] = gm1*i1, gm2*i2
	}
	if p := fb.Partial(sigma); p != nil {
		p[0], p[1] = gs1*i1, gs2*i2
	}
	if p := fb.Partial(theta); p != nil {
		p[0] = w1sum/th - (n-w1sum)/(1-th)
	}
	return fb.Done(lp)
}

// hmm2LogLik records the marginal log-likelihood of a two-state Gaussian HMM with unit
// emission sd, by the forward algorithm: γ₁(k) = e₁(k), γ_t(k) = logsumexp_j[γ_{t−1}(j) +
// log A[j,k]] + e_t(k), result logsumexp_k γ_N(k), with e_t(k) = log N(y_t | mu_k, 1) and
// transition rows A[0,·] = theta1, A[1,·] = theta2 (nodes of size 2, each a simplex). There
// is no initial-state distribution (MODELS.md §12).
//
// It runs the scaled forward recursion in probability space with each step's emissions
// shifted by their maximum (so nothing underflows whatever mu is), then the scaled backward
// recursion for the partials: with α̂, β̂ and normalisers c_t, ∂/∂A[j,k] = Σ_{t≥2}
// α̂_{t−1}(j) φ_t(k) β̂_t(k)/c_t and ∂/∂mu_k = Σ_t α̂_t(k) β̂_t(k) (y_t − mu_k)
// (Rabiner 1989, "A tutorial on hidden Markov models", §V.A). Cost O(N): one exp per
// observation (Σ log c_t is one log of a product, see logProduct), 5N floats of tape scratch.
func hmm2LogLik(t *ad.Tape, y []float64, theta1, theta2, mu ad.Var) ad.Var {
	n := len(y)
	if t.Size(theta1) != 2 || t.Size(theta2) != 2 || t.Size(mu) != 2 {
		panic(fmt.Sprintf("zoo: hmm2LogLik: sizes theta1=%d theta2=%d mu=%d, want 2, 2, 2", t.Size(theta1), t.Size(theta2), t.Size(mu)))
	}
	if n == 0 {
		return t.Const(0)
	}
	buf := t.Scratch(5 * n)
	alpha, phi, invC := buf[:2*n], buf[2*n:4*n], buf[4*n:5*n] // invC[t] = 1/c_t
	th1, th2, mv := t.Value(theta1), t.Value(theta2), t.Value(mu)
	a00, a01, a10, a11 := th1[0], th1[1], th2[0], th2[1]
	m0, m1 := mv[0], mv[1]

	lp := -float64(n) * mathx.LogSqrt2Pi
	logC := logProduct{p: 1} // Σ log c_t
	for i, yi := range y {
		d0, d1 := yi-m0, yi-m1
		e0, e1 := -0.5*d0*d0, -0.5*d1*d1
		// φ = exp(e − max e): the larger is 1, the other ≤ 1.
		var p0, p1 float64
		if e0 >= e1 {
			p0, p1 = 1, math.Exp(e1-e0)
			lp += e0
		} else {
			p0, p1 = math.Exp(e0-e1), 1
			lp += e1
		}
		phi[2*i], phi[2*i+1] = p0, p1
		var f0, f1 float64
		if i == 0 {
			f0, f1 = p0, p1
		} else {
			q0, q1 := alpha[2*i-2], alpha[2*i-1]
			f0 = p0 * (q0*a00 + q1*a10)
			f1 = p1 * (q0*a01 + q1*a11)
		}
		ci := f0 + f1
		logC.mul(ci)
		ic := 1 / ci // the only division per step (it sits on the recursion's critical path)
		invC[i] = ic
		alpha[2*i], alpha[2*i+1] = f0*ic, f1*ic
	}

	lp += logC.log()
	fb := t.Fused()
	d1, d2, dm := fb.Partial(theta1), fb.Partial(theta2), fb.Partial(mu)
	if d1 == nil && d2 == nil && dm == nil {
		return fb.Done(lp)
	}
	var g00, g01, g10, g11, gm0, gm1 float64
	b0, b1 := 1.0, 1.0 // β̂_N
	for i := n - 1; i >= 0; i-- {
		gam0, gam1 := alpha[2*i]*b0, alpha[2*i+1]*b1
		gm0 += gam0 * (y[i] - m0)
		gm1 += gam1 * (y[i] - m1)
		if i == 0 {
			break
		}
		// r_k = φ_t(k) β̂_t(k)/c_t; ξ_t(j,k)/A[j,k] = α̂_{t−1}(j) r_k; β̂_{t−1}(j) = Σ_k A[j,k] r_k.
		r0, r1 := phi[2*i]*b0*invC[i], phi[2*i+1]*b1*invC[i]
		q0, q1 := alpha[2*i-2], alpha[2*i-1]
		g00 += q0 * r0
		g01 += q0 * r1
		g10 += q1 * r0
		g11 += q1 * r1
		b0, b1 = a00*r0+a01*r1, a10*r0+a11*r1
	}
	if d1 != nil {
		d1[0], d1[1] = g00, g01
	}
	if d2 != nil {
		d2[0], d2[1] = g10, g11
	}
	if dm != nil {
		dm[0], dm[1] = gm0, gm1
	}
	return fb.Done(lp)
}

// logProduct accumulates Σ log x_i for positive x_i as the log of a running product kept in
// [2^−600, 2^600) by moving its binary exponent into an integer: one math.Log at the end
// instead of one per term. The product carries a relative rounding error of about n·ε, so
// the sum is exact to about n·ε absolute (1e-13 for n = 1000), far below the terms' own
// rounding. A zero, negative or NaN term makes the sum −Inf or NaN, as Σ log x_i would.
// Start from logProduct{p: 1}.
type logProduct struct {
	p   float64 // running mantissa product
	exp int     // accumulated binary exponent
}

func (l *logProduct) mul(x float64) {
	l.p *= x
	if l.p > 0x1p600 || l.p < 0x1p-600 {
		if !(l.p > 0) || math.IsInf(l.p, 1) { // 0, negative, NaN or +Inf: leave it to Log
			return
		}
		frac, e := math.Frexp(l.p)
		l.p, l.exp = frac, l.exp+e
	}
}

func (l *logProduct) log() float64 {
	return math.Log(l.p) + float64(l.exp)*math.Ln2
}

// log1pSmall returns log(1 + e) for e ∈ [0, 1]. Below 1e-4 it uses the series
// e − e²/2 + e³/3 − e⁴/4, whose truncation error e⁵/5 < 2e-21 is far below the rounding of
// math.Log1p; in a well-separated mixture almost every observation takes this branch.
func log1pSmall(e float64) float64 {
	if e < 1e-4 {
		return e * (1 - e*(0.5-e*(1.0/3-0.25*e)))
	}
	return math.Log1p(e)
}
