package apovi

import (
	"math"
	"math/rand/v2"
)

// The N-space (Woodbury) form of one unit's conditional, used when a layer has fewer points
// than weights per unit (n < K, as in the thesis's 1-D data: n = 10…19, K = 51). With
// A = Λ^{1/2}U (n×K), ṽ = Λ^{1/2}v and G = σ_p⁻²I_n + AAᵀ (n×n), the push-through and
// determinant identities give
//
//	μ = Aᵀγ, γ = G⁻¹ṽ,   α tr Σ = K − n + α tr G⁻¹,   ln det P = (K − n) ln α + ln det G
//
// (α = σ_p⁻²), so KL = ½[−n + α tr G⁻¹ + α μᵀμ − n ln α + ln det G], and a draw from N(μ, Σ) is
// the pathwise (Matheron) update of a prior draw w₀ = ε₀/√α by pseudo-noise ε₁ ~ N(0, I_n):
//
//	w = w₀ + Aᵀβ,  β = G⁻¹r,  r = ṽ − A w₀ − ε₁,
//
// which has mean μ and covariance α⁻¹I − α⁻¹AᵀG⁻¹A = Σ. It draws K + n normals instead of K,
// so the draws differ from the K-space form's; the distribution is the same. Cost per unit
// O(n²K + n³) instead of O(nK² + K³). The adjoint is reverse-mode algebra on these steps (see
// woodBack).

// useWood reports whether a layer node with n points and K weights per unit takes the N-space
// form: n < K and every precision positive (λ enters through √λ, whose derivative at 0 is
// infinite).
func useWood(n, K int, lam []float64) bool {
	if n >= K {
		return false
	}
	for _, l := range lam {
		if !(l > 0) || math.IsInf(l, 0) {
			return false
		}
	}
	return true
}

// woodFwd computes one unit's draw into w (K) and returns its KL. st (≥ n² + 2n) receives
// G⁻¹, β and γ for the backward pass, md receives μ and w0 the prior draw. A (n×K), vt, rv,
// tmp (n) and T (n×n) are scratch.
func (g *gip) woodFwd(n int, hv, ld, vd, A, vt, T, rv, tmp, st, md, w0, w []float64, rnd *rand.Rand) (float64, bool) {
	K := g.din + 1
	g.woodA(n, hv, ld, vd, A, vt)
	gram := func(jit float64) (top float64) {
		for i := range n {
			ai := A[i*K : (i+1)*K]
			for j := 0; j <= i; j++ {
				T[i*n+j] = dot(ai, A[j*K:(j+1)*K])
			}
			T[i*n+i] += g.alpha + jit
			top = max(top, T[i*n+i])
		}
		return top
	}
	top := gram(0)
	var logDiag float64
	for try := 0; ; try++ { // T = L⁻¹ with G = L Lᵀ; jitter as in gip.post
		var ok bool
		if logDiag, ok = cholInv(n, T, tmp); ok {
			break
		}
		if try == jitterTries || math.IsNaN(top) || math.IsInf(top, 0) {
			return 0, false
		}
		gram(1e-12 * top * math.Pow(100, float64(try)))
	}
	Gi, beta, gam := st[:n*n], st[n*n:n*n+n], st[n*n+n:n*n+2*n]
	tr := 0.0
	for i := range n { // (G⁻¹)_ij = Σ_{k ≥ i} L⁻¹_ki L⁻¹_kj for j ≤ i
		for j := 0; j <= i; j++ {
			s := 0.0
			for k := i; k < n; k++ {
				s += T[k*n+i] * T[k*n+j]
			}
			Gi[i*n+j], Gi[j*n+i] = s, s
		}
		tr += Gi[i*n+i]
	}
	symv(n, Gi, vt, gam)
	clear(md[:K])
	for i := range n {
		axpy(gam[i], A[i*K:(i+1)*K], md[:K])
	}
	sa := 1 / math.Sqrt(g.alpha)
	for k := range K {
		w0[k] = sa * rnd.NormFloat64()
	}
	for i := range n {
		rv[i] = vt[i] - dot(A[i*K:(i+1)*K], w0[:K]) - rnd.NormFloat64()
	}
	symv(n, Gi, rv, beta)
	copy(w[:K], w0[:K])
	for i := range n {
		axpy(beta[i], A[i*K:(i+1)*K], w[:K])
	}
	mm := dot(md[:K], md[:K])
	fn := float64(n)
	return 0.5 * (-fn + g.alpha*tr + g.alpha*mm - fn*math.Log(g.alpha) + 2*logDiag), true
}

// woodA fills A = Λ^{1/2}[H, 1] (n×K) and ṽ = Λ^{1/2}v.
func (g *gip) woodA(n int, hv, ld, vd, A, vt []float64) {
	K, din := g.din+1, g.din
	for i := range n {
		s := math.Sqrt(ld[i])
		ar := A[i*K : (i+1)*K]
		for k, h := range hv[i*din : (i+1)*din] {
			ar[k] = s * h
		}
		ar[din] = s
		vt[i] = s * vd[i]
	}
}

// symv sets y = S x for a symmetric (fully stored) n×n S.
func symv(n int, s, x, y []float64) {
	for i := range n {
		y[i] = dot(s[i*n:(i+1)*n], x[:n])
	}
}

// woodBack is the adjoint of woodFwd for unit d, given the weight adjoint wbar and the KL
// adjoint gkl, with G⁻¹ = Gi (G the n×n matrix of woodFwd):
//
//	μ̄ = κ̄αμ, β̄ = Aw̄, r̄ = G⁻¹β̄, γ̄ = Aμ̄,
//	ṽ̄ = r̄ + G⁻¹γ̄,  Ḡ = −r̄βᵀ − (G⁻¹γ̄)γᵀ + ½κ̄(G⁻¹ − αG⁻²),
//	Ā = βw̄ᵀ + γμ̄ᵀ − r̄w₀ᵀ + 2 sym(Ḡ) A,
//
// then through A = Λ^{1/2}U, ṽ = Λ^{1/2}v: ū_i = √λ_i Ā_i, λ̄_i = (Ā_i·A_i + ṽ_i ṽ̄_i)/(2λ_i),
// v̄_i = √λ_i ṽ̄_i. sc must hold 2nK + 2n² + 5n + K floats.
func (g *gip) woodBack(n int, hv, ld, vd, dd, st, md, w0, wbar []float64, gkl float64, sc, hgrad, rgrad []float64, d int) {
	K, D, din := g.din+1, g.dout, g.din
	o := 0
	next := func(m int) []float64 { s := sc[o : o+m]; o += m; return s }
	A, Ab := next(n*K), next(n*K)
	Sg, X := next(n*n), next(n*n)
	vt, bb, rb, gb, gv := next(n), next(n), next(n), next(n), next(n)
	mub := next(K)
	g.woodA(n, hv, ld, vd, A, vt)
	Gi, beta, gam := st[:n*n], st[n*n:n*n+n], st[n*n+n:n*n+2*n]
	for k := range K {
		mub[k] = gkl * g.alpha * md[k]
	}
	for i := range n {
		ai := A[i*K : (i+1)*K]
		bb[i] = dot(ai, wbar[:K])
		gb[i] = dot(ai, mub)
	}
	symv(n, Gi, bb, rb)
	symv(n, Gi, gb, gv)
	if gkl != 0 {
		mulNN(n, n, n, Gi, Gi, X)
		h := 0.5 * gkl
		for i := range Sg {
			Sg[i] = h * (Gi[i] - g.alpha*X[i])
		}
	} else {
		clear(Sg)
	}
	for i := range n {
		for j := range n {
			Sg[i*n+j] -= 0.5 * (rb[i]*beta[j] + beta[i]*rb[j] + gv[i]*gam[j] + gam[i]*gv[j])
		}
	}
	mulNN(n, K, n, Sg, A, Ab)
	for i := range n {
		ab, ai := Ab[i*K:(i+1)*K], A[i*K:(i+1)*K]
		bi, gi, ri := beta[i], gam[i], rb[i]
		for k := range ab {
			ab[k] = 2*ab[k] + bi*wbar[k] + gi*mub[k] - ri*w0[k]
		}
		sl := math.Sqrt(ld[i])
		if hgrad != nil {
			hg := hgrad[i*din : (i+1)*din]
			for k := range hg {
				hg[k] += sl * ab[k]
			}
		}
		if rgrad == nil {
			continue
		}
		vtb := rb[i] + gv[i]
		lbar := (dot(ab, ai) + vt[i]*vtb) / (2 * ld[i])
		vbar := sl * vtb
		switch g.mode {
		case amortised, free:
			rgrad[i*2*D+d] += vbar
			rgrad[i*2*D+D+d] += lbar * dd[i]
		case exact:
			rgrad[0] += lbar * dd[i]
		}
	}
}
