package apovi

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/kernel"
)

// The forward-only path of APOVI.Predict. A prediction needs neither the KL nor the adjoint
// caches of the layer node, so the S weight samples are drawn without the tape:
//
//   - the inference networks run once (their outputs, hence every layer's precisions λ and
//     pseudo-outputs v, do not depend on the sample);
//   - layer 0 sees the data inputs X for every sample, so its conditional q(W⁰ | X, λ, v) is
//     factorised once and only the S draws differ;
//   - layers ℓ ≥ 1 see the sample's own inputs, so they are factorised per sample; in the
//     N-space (Woodbury) form the n×n matrix UUᵀ is shared by the D units of the layer (one
//     GEMM instead of D Gram products) and the draw takes two triangular solves with the
//     Cholesky factor of G = σ_p⁻²I + diag(√λ)UUᵀdiag(√λ) instead of forming G⁻¹.
//
// The random draws are taken in the order of gip.record, so the K-space form gives the tape
// path's weights exactly and the N-space form gives them up to rounding (predict_fast_test.go).

// layerFactor is one layer's conditional, ready for draws: per unit d either the K-space
// inverse Cholesky factor R⁻¹ and mean μ (rinv, mu), or the N-space Cholesky factor L of G
// with √λ and the inputs U (wood).
type layerFactor struct {
	g      *gip
	n      int
	wood   bool
	rinv   []float64 // D·K·K (K-space)
	mu     []float64 // D·K   (K-space)
	chol   []float64 // D·n·n (N-space): L with G = L Lᵀ, lower triangle
	sl, sv []float64 // D·n   (N-space): √λ and √λ·v per unit
	u      []float64 // n·K   (N-space): [H, 1]
	// scratch: M = UUᵀ (N-space); Y, b and tmp of gip.post (K-space)
	m, y, bv, tmp []float64
}

// grow returns s with length n, reusing its memory when it is large enough.
func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// factor builds the conditional of layer g for the n rows of hv (n×din) with precisions lam
// and pseudo-outputs v (D·n each, unit-major) into f, reusing f's memory; ok is false when a
// factorisation fails even with jitter (as gip.record's NaN output).
func (g *gip) factor(f *layerFactor, n int, hv, lam, v []float64) bool {
	K, D, din := g.din+1, g.dout, g.din
	f.g, f.n, f.wood = g, n, useWood(n, K, lam)
	if !f.wood {
		f.rinv, f.mu = grow(f.rinv, D*K*K), grow(f.mu, D*K)
		f.y, f.bv, f.tmp = grow(f.y, n*K), grow(f.bv, K), grow(f.tmp, K)
		Y, bv, tmp := f.y, f.bv, f.tmp
		for d := range D {
			if _, ok := g.post(n, hv, lam[d*n:(d+1)*n], v[d*n:(d+1)*n], Y, bv, tmp, f.rinv[d*K*K:(d+1)*K*K], f.mu[d*K:(d+1)*K], nil); !ok {
				return false
			}
		}
		return true
	}
	f.u = grow(f.u, n*K)
	for i := range n {
		copy(f.u[i*K:i*K+din], hv[i*din:(i+1)*din])
		f.u[i*K+din] = 1
	}
	f.m = grow(f.m, n*n) // UUᵀ, shared by the D units
	M := f.m
	kernel.Gemm(false, true, n, n, K, f.u, f.u, 0, M)
	f.chol, f.sl, f.sv = grow(f.chol, D*n*n), grow(f.sl, D*n), grow(f.sv, D*n)
	for d := range D {
		sl, sv := f.sl[d*n:(d+1)*n], f.sv[d*n:(d+1)*n]
		for i := range n {
			sl[i] = math.Sqrt(lam[d*n+i])
			sv[i] = sl[i] * v[d*n+i]
		}
		T := f.chol[d*n*n : (d+1)*n*n]
		fill := func(jit float64) (top float64) {
			for i := range n {
				for j := 0; j <= i; j++ {
					T[i*n+j] = sl[i] * sl[j] * M[i*n+j]
				}
				T[i*n+i] += g.alpha + jit
				top = max(top, T[i*n+i])
			}
			return top
		}
		top := fill(0)
		for try := 0; !cholLower(n, T); try++ { // jitter as in gip.post
			if try == jitterTries || math.IsNaN(top) || math.IsInf(top, 0) {
				return false
			}
			fill(1e-12 * top * math.Pow(100, float64(try)))
		}
	}
	return true
}

// draw writes one weight sample of every unit into out (K×D row-major: rows 0…din−1 the
// weights, row din the bias), taking the normals from r in gip.record's order. sc holds at
// least 3n + K floats.
func (f *layerFactor) draw(out []float64, r *rand.Rand, sc []float64) {
	g, n := f.g, f.n
	K, D := g.din+1, g.dout
	if !f.wood {
		ed, z := sc[:K], sc[K:2*K]
		for d := range D {
			for k := range ed {
				ed[k] = r.NormFloat64()
			}
			trmvT(K, f.rinv[d*K*K:(d+1)*K*K], ed, z)
			md := f.mu[d*K : (d+1)*K]
			for k := range K {
				out[k*D+d] = md[k] + z[k]
			}
		}
		return
	}
	w0, rv := sc[:K], sc[K:K+n]
	sa := 1 / math.Sqrt(g.alpha)
	for d := range D {
		sl, sv, L := f.sl[d*n:(d+1)*n], f.sv[d*n:(d+1)*n], f.chol[d*n*n:(d+1)*n*n]
		for k := range K {
			w0[k] = sa * r.NormFloat64()
		}
		// r = ṽ − A w₀ − ε₁ with A = diag(√λ)U, then β = G⁻¹r and w = w₀ + Aᵀβ.
		for i := range n {
			rv[i] = sv[i] - sl[i]*dot(f.u[i*K:(i+1)*K], w0) - r.NormFloat64()
		}
		cholSolve(n, L, rv)
		for k := range K {
			out[k*D+d] = w0[k]
		}
		for i := range n {
			a := rv[i] * sl[i]
			row := f.u[i*K : (i+1)*K]
			for k, uk := range row {
				out[k*D+d] += a * uk
			}
		}
	}
}

// cholLower overwrites the lower triangle of the SPD matrix a (k×k) with its Cholesky factor
// L (a = L Lᵀ, Golub & Van Loan 2013, §4.2.5, row by row as cholInv); false if a pivot is ≤ 0
// or not finite. k³/6 multiply-adds.
func cholLower(k int, a []float64) bool {
	for i := range k {
		ri := a[i*k : (i+1)*k]
		for j := range i {
			ri[j] = (ri[j] - dot(ri[:j], a[j*k:j*k+j])) / a[j*k+j]
		}
		s := ri[i] - dot(ri[:i], ri[:i])
		if !(s > 0) || math.IsInf(s, 1) {
			return false
		}
		ri[i] = math.Sqrt(s)
	}
	return true
}

// cholSolve overwrites x with (L Lᵀ)⁻¹x for the lower Cholesky factor L (k×k): forward then
// back substitution, k² multiply-adds.
func cholSolve(k int, l, x []float64) {
	for i := range k {
		x[i] = (x[i] - dot(l[i*k:i*k+i], x[:i])) / l[i*k+i]
	}
	for i := k - 1; i >= 0; i-- {
		xi := x[i] / l[i*k+i]
		x[i] = xi
		for j := range i {
			x[j] -= l[i*k+j] * xi
		}
	}
}

// denseFwd sets Y = act(X·W + 1·bᵀ) (X n×k, W k×m, Y n×m) with a ReLU when relu.
func denseFwd(y, x []float64, n, k int, w []float64, m int, b []float64, relu bool) {
	kernel.Gemm(false, false, n, m, k, x, w, 0, y)
	for i := range n {
		row := y[i*m : (i+1)*m]
		for j, bj := range b {
			v := row[j] + bj
			if relu && v < 0 {
				v = 0
			}
			row[j] = v
		}
	}
}

// predictFast draws S function samples at the nt test inputs xt given the data q, whose
// inference-network outputs are rawOut[l] (n×2D per amortised layer) and whose exact last layer
// (if any) has the noise scale log σ = logSig. It returns nil if a factorisation fails.
func (m *APOVI) predictFast(q Dataset, rawOut [][]float64, logSig float64, xt []float64, nt, S int, r *rand.Rand) [][]float64 {
	L := m.layers()
	n := q.N
	lams, vs := make([][]float64, L), make([][]float64, L)
	for l := range L {
		g := m.gip(l)
		D := g.dout
		lams[l], vs[l] = make([]float64, n*D), make([]float64, n*D)
		raw := []float64{logSig}
		if g.mode == amortised {
			raw = rawOut[l]
		}
		pseudo(g.mode, n, D, raw, q.Y, lams[l], vs[l], make([]float64, n*D))
	}
	maxK, maxD := 0, 0
	for l := range L {
		maxK, maxD = max(maxK, m.dims[l]+1), max(maxD, m.dims[l], m.dims[l+1])
	}
	sc := make([]float64, 3*n+maxK)
	facs := make([]layerFactor, L)
	if !m.gip(0).factor(&facs[0], n, q.X, lams[0], vs[0]) {
		return nil
	}
	out := make([][]float64, S)
	H, Hn := make([]float64, n*maxD), make([]float64, n*maxD)
	Ht, Htn := make([]float64, nt*maxD), make([]float64, nt*maxD)
	W := make([]float64, maxK*maxD)
	for s := range S {
		copy(H, q.X)
		copy(Ht, xt)
		for l := range L {
			g := m.gip(l)
			K, D, din := g.din+1, g.dout, g.din
			if l > 0 && !g.factor(&facs[l], n, H[:n*din], lams[l], vs[l]) {
				return nil
			}
			facs[l].draw(W[:K*D], r, sc)
			relu := l < L-1
			denseFwd(Hn[:n*D], H[:n*din], n, din, W[:din*D], D, W[din*D:K*D], relu)
			denseFwd(Htn[:nt*D], Ht[:nt*din], nt, din, W[:din*D], D, W[din*D:K*D], relu)
			H, Hn, Ht, Htn = Hn, H, Htn, Ht
		}
		DL := m.dims[L]
		out[s] = append([]float64(nil), Ht[:nt*DL]...)
	}
	return out
}
