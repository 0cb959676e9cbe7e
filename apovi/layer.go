package apovi

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The NormalActivation of the thesis's inference networks (apovi.md §1.3, D2): σ =
// exp((b − logVarShift)/2) + sigmaFloor.
const (
	logVarShift = 4
	sigmaFloor  = 1e-8
)

// pseudo fills the per-unit precisions λ[d·n+i], pseudo-outputs v[d·n+i] and dλ/d(raw) for the
// n rows of a layer with D units, from the layer's raw input rv (see pseudoMode); y is the
// exact layer's target (n×D, row-major).
func pseudo(mode pseudoMode, n, D int, rv, y, lam, v, dlam []float64) {
	switch mode {
	case amortised, free:
		for i := range n {
			row := rv[i*2*D : (i+1)*2*D]
			for d := range D {
				a, b := row[d], row[D+d]
				j := d*n + i
				v[j] = a
				if mode == free {
					l := math.Exp(b)
					lam[j], dlam[j] = l, l
					continue
				}
				lam[j], dlam[j] = normalPrec(b)
			}
		}
	case exact:
		l := math.Exp(-2 * rv[0])
		for i := range n {
			for d := range D {
				j := d*n + i
				lam[j], dlam[j], v[j] = l, -2*l, y[i*D+d]
			}
		}
	}
}

// normalPrec returns the NormalActivation's precision λ = σ⁻², σ = e + 1e-8, e = exp((b−4)/2),
// and dλ/db = −2σ⁻³·e/2, written as −(e/σ)/σ² so that it stays finite when e overflows (λ → 0,
// dλ/db → 0) or underflows (λ → 1e16, dλ/db → 0).
func normalPrec(b float64) (lam, dlam float64) {
	e := math.Exp((b - logVarShift) / 2)
	s := e + sigmaFloor
	r := 1 / (1 + sigmaFloor/e)
	return 1 / (s * s), -r / (s * s)
}

// gip is the Backwarder of one global-inducing-point layer of one Monte Carlo sample: from the
// layer input H (n×din, the ones column implicit) and the pseudo-likelihood (raw, see
// pseudoMode) it builds q(w_d) = N(μ_d, P_d⁻¹) for every unit d (package comment), draws w_d and
// sums KL(q(w_d) ‖ N(0, σ_p² I)) over d. Output (size K·D + 1, K = din+1): the weights in
// nn.MLP layout (W: din×D row-major, W[k·D+d] = w_d[k], then the biases w_d[din]), then the KL.
//
// Aux per unit d: R_d⁻¹ (K×K, lower), μ_d, R_dᵀμ_d = R_d⁻¹b_d, ε_d; then λ, v and dλ/draw
// (n per unit). Memory D(K² + 3K) + 3nD floats per layer and sample.
//
// Backward, per unit, with w̄ the weight adjoint, κ̄ the KL adjoint, Σ = P⁻¹ = R⁻ᵀR⁻¹,
// μ̄ = w̄ + κ̄σ_p⁻²μ, b̄ = Σμ̄, a = R⁻¹w̄ and Q = tril(ε aᵀ) with its diagonal halved:
//
//	P̄ = sym(½κ̄(Σ − σ_p⁻²Σ²) − b̄μᵀ − R⁻ᵀQR⁻¹)
//
// (the last term is the Cholesky path of R⁻ᵀε, Murray 2016, arXiv:1602.07527), and through
// P = σ_p⁻²I + Σ_n λ_n u_n u_nᵀ, b = Σ_n λ_n v_n u_n:
//
//	ū_n = λ_n(2P̄u_n + v_n b̄),  λ̄_n = u_nᵀP̄u_n + v_n u_nᵀb̄,  v̄_n = λ_n u_nᵀb̄.
type gip struct {
	din, dout int
	mode      pseudoMode
	alpha     float64 // σ_p⁻²
}

func (g *gip) sizes(n int) (K, D, naux int) {
	K, D = g.din+1, g.dout
	return K, D, D*(K*K+3*K) + 3*n*D + 1
}

// auxViews splits the aux cache.
func (g *gip) auxViews(aux []float64, n int) (rinv, mu, rb, eps, lam, v, dlam []float64) {
	K, D := g.din+1, g.dout
	o := 0
	next := func(m int) []float64 { s := aux[o : o+m]; o += m; return s }
	return next(D * K * K), next(D * K), next(D * K), next(D * K), next(n * D), next(n * D), next(n * D)
}

// record adds the layer node for input H (n×din matrix node) and raw pseudo-likelihood input
// (n×2D for amortised and free, the scalar log σ for exact; y then holds the n×D targets),
// drawing ε from r. It returns the weight matrix (din×D), the bias (D) and the KL (scalar).
func (g *gip) record(t *ad.Tape, H, raw ad.Var, y []float64, r *rand.Rand) (W, b, kl ad.Var) {
	n, _ := t.Shape(H)
	K, D, naux := g.sizes(n)
	c := t.CustomUninit(g, K*D+1, naux, H, raw)
	out, aux := c.Value(), c.Aux()
	rinv, mu, rb, eps, lam, v, dlam := g.auxViews(aux, n)
	pseudo(g.mode, n, D, t.Value(raw), y, lam, v, dlam)
	hv := t.Value(H)
	klSum := 0.0
	if useWood(n, K, lam) {
		aux[len(aux)-1] = 1
		sc := t.Scratch(n*K + n*n + 3*n + K)
		A, T := sc[:n*K], sc[n*K:n*K+n*n]
		vt, rv, tmp, w := sc[n*K+n*n:n*K+n*n+n], sc[n*K+n*n+n:n*K+n*n+2*n], sc[n*K+n*n+2*n:n*K+n*n+3*n], sc[n*K+n*n+3*n:]
		for d := range D {
			st := rinv[d*K*K : (d+1)*K*K]
			md, w0 := mu[d*K:(d+1)*K], eps[d*K:(d+1)*K]
			kl, ok := g.woodFwd(n, hv, lam[d*n:(d+1)*n], v[d*n:(d+1)*n], A, vt, T, rv, tmp, st, md, w0, w, r)
			if !ok {
				for i := range out {
					out[i] = math.NaN()
				}
				return g.views(t, c.Var())
			}
			for k := range K {
				out[k*D+d] = w[k]
			}
			klSum += kl
		}
		out[K*D] = klSum
		return g.views(t, c.Var())
	}
	aux[len(aux)-1] = 0
	sc := t.Scratch(n*K + 2*K)
	Y, bv, z := sc[:n*K], sc[n*K:n*K+K], sc[n*K+K:]
	lnAlpha := math.Log(g.alpha)
	for d := range D {
		R := rinv[d*K*K : (d+1)*K*K]
		md, ed := mu[d*K:(d+1)*K], eps[d*K:(d+1)*K]
		logDiag, ok := g.post(n, hv, lam[d*n:(d+1)*n], v[d*n:(d+1)*n], Y, bv, rb[d*K:(d+1)*K], R, md, nil)
		if !ok {
			for i := range out {
				out[i] = math.NaN()
			}
			return g.views(t, c.Var())
		}
		for k := range ed {
			ed[k] = r.NormFloat64()
		}
		trmvT(K, R, ed, z)
		fro, mm := 0.0, 0.0
		for _, x := range R {
			fro += x * x
		}
		for k := range K {
			out[k*D+d] = md[k] + z[k]
			mm += md[k] * md[k]
		}
		klSum += 0.5 * (g.alpha*(fro+mm) - float64(K) - float64(K)*lnAlpha + 2*logDiag)
	}
	out[K*D] = klSum
	return g.views(t, c.Var())
}

// post builds one unit's posterior from the n rows of H (hv, n×din) with precisions ld and
// pseudo-outputs vd: R ← R⁻¹ (lower, K×K) with P = R Rᵀ, tmp ← R⁻¹b = Rᵀμ, md ← μ = P⁻¹b; if pc
// is not nil it receives P. Y (n×K) and bv (K) are scratch. It returns Σ ln R_ii and whether P was
// numerically positive definite.
func (g *gip) post(n int, hv, ld, vd, Y, bv, tmp, R, md, pc []float64) (float64, bool) {
	K, din := g.din+1, g.din
	for k := range bv {
		bv[k] = 0
	}
	// Y holds (Λ^{1/2} U)ᵀ, K×n, so that the Gram matrix is k(k+1)/2 contiguous dot products.
	last := Y[din*n : (din+1)*n]
	for i := range n {
		s := math.Sqrt(ld[i])
		hr := hv[i*din : (i+1)*din]
		lv := ld[i] * vd[i]
		for k, h := range hr {
			Y[k*n+i] = s * h
			bv[k] += lv * h
		}
		last[i] = s
		bv[din] += lv
	}
	gramDot(n, K, Y, R)
	top := 0.0
	for k := range K {
		R[k*K+k] += g.alpha
		top = max(top, R[k*K+k])
	}
	for try := 0; ; try++ {
		if pc != nil {
			copy(pc, R)
			symmetrize(K, pc)
		}
		if logDiag, ok := cholInv(K, R, tmp); ok {
			trmv(K, R, bv, tmp)
			trmvT(K, R, tmp, md)
			return logDiag, true
		}
		if try == jitterTries || math.IsNaN(top) || math.IsInf(top, 0) {
			return 0, false
		}
		// P is positive definite in exact arithmetic (eigenvalues ≥ σ_p⁻²), so a failed
		// factorisation is rounding at precisions near the NormalActivation's 1e16 ceiling:
		// refactorise P + δI, δ = 1e-12·max_k P_kk·100^try.
		gramDot(n, K, Y, R)
		jit := 1e-12 * top * math.Pow(100, float64(try))
		for k := range K {
			R[k*K+k] += g.alpha + jit
		}
	}
}

// jitterTries is how many times post retries a failed Cholesky factorisation with more jitter
// (1e-12 up to 1e-4 of the largest diagonal entry).
const jitterTries = 4

func (g *gip) views(t *ad.Tape, out ad.Var) (W, b, kl ad.Var) {
	K, D := g.din+1, g.dout
	return t.AsMatrix(t.Slice(out, 0, g.din*D), g.din, D), t.Slice(out, g.din*D, K*D), t.Index(out, K*D)
}

// Backward implements ad.Backwarder. Per unit, with c = R⁻¹μ̄ (so b̄ = Σμ̄ = R⁻ᵀc) and
// b̄μᵀ = R⁻ᵀ c (Rᵀμ)ᵀ R⁻¹, the adjoint of the package comment is gathered inside one sandwich,
//
//	P̄ = sym(R⁻ᵀ [½κ̄(I − σ_p⁻² R⁻¹R⁻ᵀ) − c (Rᵀμ)ᵀ − Q] R⁻¹),
//
// two triangular products and one symmetric rank-K product: about 3K³ flops per unit instead of
// the 7K³ of forming Σ, Σ² and R⁻ᵀQR⁻¹ separately.
func (g *gip) Backward(c ad.Custom) {
	t := c.Tape()
	H, raw := c.Arg(0), c.Arg(1)
	hgrad, rgrad := t.Grad(H), t.Grad(raw)
	if hgrad == nil && rgrad == nil {
		return
	}
	n, _ := t.Shape(H)
	K, D, _ := g.sizes(n)
	rinv, mu, rb, eps, lam, v, dlam := g.auxViews(c.Aux(), n)
	gout := c.Grad()
	gkl := gout[K*D]
	hv := t.Value(H)
	if c.Aux()[len(c.Aux())-1] == 1 {
		sc := t.Scratch(2*n*K + 2*n*n + 5*n + 2*K)
		wbar := sc[len(sc)-K:]
		for d := range D {
			zero := gkl == 0
			for k := range K {
				wbar[k] = gout[k*D+d]
				if wbar[k] != 0 {
					zero = false
				}
			}
			if zero {
				continue
			}
			g.woodBack(n, hv, lam[d*n:(d+1)*n], v[d*n:(d+1)*n], dlam[d*n:(d+1)*n], rinv[d*K*K:(d+1)*K*K],
				mu[d*K:(d+1)*K], eps[d*K:(d+1)*K], wbar, gkl, sc[:len(sc)-K], hgrad, rgrad, d)
		}
		return
	}
	sc := t.Scratch(2*n*K + 2*K*K + 5*K + n)
	o := 0
	next := func(m int) []float64 { s := sc[o : o+m]; o += m; return s }
	U, T := next(n*K), next(n*K)
	M, X := next(K*K), next(K*K)
	wbar, mubar, cv, bbar, a := next(K), next(K), next(K), next(K), next(K)
	ub := next(n)
	g.fillU(n, hv, U)
	for d := range D {
		zero := gkl == 0
		for k := range K {
			wbar[k] = gout[k*D+d]
			if wbar[k] != 0 {
				zero = false
			}
		}
		if zero {
			continue
		}
		R := rinv[d*K*K : (d+1)*K*K]
		md, ed, rd := mu[d*K:(d+1)*K], eps[d*K:(d+1)*K], rb[d*K:(d+1)*K]
		for k := range K {
			mubar[k] = wbar[k] + gkl*g.alpha*md[k]
		}
		trmv(K, R, mubar, cv)
		trmvT(K, R, cv, bbar)
		trmv(K, R, wbar, a)
		if gkl != 0 { // M = ½κ̄(I − α R⁻¹R⁻ᵀ)
			triGram(K, R, M)
			symmetrize(K, M)
			h := -0.5 * gkl * g.alpha
			for i := range M {
				M[i] *= h
			}
			for k := range K {
				M[k*K+k] += 0.5 * gkl
			}
		} else {
			for i := range M {
				M[i] = 0
			}
		}
		for i := range K { // M −= c (Rᵀμ)ᵀ + Q
			row := M[i*K : (i+1)*K]
			ci, ei := cv[i], ed[i]
			for j := range row {
				row[j] -= ci * rd[j]
			}
			for j := 0; j < i; j++ {
				row[j] -= ei * a[j]
			}
			row[i] -= 0.5 * ei * a[i]
		}
		sandwich(K, R, M, X) // R⁻ᵀ M R⁻¹
		for i := range K {   // P̄ = sym(M)
			for j := 0; j < i; j++ {
				s := 0.5 * (M[i*K+j] + M[j*K+i])
				M[i*K+j], M[j*K+i] = s, s
			}
		}
		g.gramBack(n, U, T, M, bbar, ub, lam[d*n:(d+1)*n], v[d*n:(d+1)*n], dlam[d*n:(d+1)*n], hgrad, rgrad, d)
	}
}

// gramBack propagates one unit's adjoints P̄ (sp, symmetric K×K; overwritten) and b̄ (bbar)
// through P = σ_p⁻²I + Σ_i λ_i u_i u_iᵀ and b = Σ_i λ_i v_i u_i to the layer input (hgrad, n×din,
// may be nil) and the raw pseudo-likelihood input (rgrad, may be nil) of unit d. U (n×K) holds
// [H, 1]; T (n×K) and ub (n) are scratch.
func (g *gip) gramBack(n int, U, T, sp, bbar, ub, ld, vd, dd, hgrad, rgrad []float64, d int) {
	K, D, din := g.din+1, g.dout, g.din
	mulNN(n, K, K, U, sp, T)
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: n, Cols: K, Stride: K, Data: U},
		blas64.Vector{N: K, Inc: 1, Data: bbar}, 0, blas64.Vector{N: n, Inc: 1, Data: ub})
	for i := range n {
		ui, ti := U[i*K:(i+1)*K], T[i*K:(i+1)*K]
		li, vi := ld[i], vd[i]
		if hgrad != nil {
			hg := hgrad[i*din : (i+1)*din]
			for k := range hg {
				hg[k] += li * (2*ti[k] + vi*bbar[k])
			}
		}
		if rgrad == nil {
			continue
		}
		ut := 0.0
		for k, x := range ui {
			ut += x * ti[k]
		}
		lbar := ut + vi*ub[i]
		vbar := li * ub[i]
		switch g.mode {
		case amortised, free:
			rgrad[i*2*D+d] += vbar
			rgrad[i*2*D+D+d] += lbar * dd[i]
		case exact:
			rgrad[0] += lbar * dd[i]
		}
	}
}

// fillU writes [H, 1] (n×K) into U.
func (g *gip) fillU(n int, hv, U []float64) {
	K, din := g.din+1, g.din
	for i := range n {
		copy(U[i*K:i*K+din], hv[i*din:(i+1)*din])
		U[i*K+din] = 1
	}
}
