package density

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/dist"
)

// Dirichlet records log Dirichlet(θ | α) for a K-simplex θ and K concentrations α
// (dist.Dirichlet; the simplex constraint is the bijector's job).
func Dirichlet(t *ad.Tape, theta, alpha ad.Var) ad.Var {
	tv, av := t.Value(theta), t.Value(alpha)
	if len(tv) != len(av) {
		panic(fmt.Sprintf("density: Dirichlet: len(theta)=%d, want len(alpha)=%d", len(tv), len(av)))
	}
	fb := t.Fused()
	dt, da := fb.Partial(theta), fb.Partial(alpha)
	return fb.Done(dist.Dirichlet{Alpha: av}.LogProbGrad(dt, da, tv))
}

// squareDim returns K for a K×K matrix Var (by shape, or a vector of length K²).
func squareDim(t *ad.Tape, fn, name string, v ad.Var) int {
	r, c := t.Shape(v)
	if r == c {
		return r
	}
	n := r * c
	k := 0
	for k*k < n {
		k++
	}
	if k*k != n {
		panic(fmt.Sprintf("density: %s: %s is %d×%d, want a square K×K matrix", fn, name, r, c))
	}
	return k
}

// MultiNormalCholesky records Σᵢ log N(yᵢ | μᵢ, L·Lᵀ) for K-vectors yᵢ (dist.MultiNormalCholesky).
// L is a K×K lower-triangular Var (row-major; its strict upper part is ignored and gets zero
// partials). y has K·N elements (N rows of K); mu has K (shared) or K·N. Cost: N triangular
// solves, O(N·K²).
func MultiNormalCholesky(t *ad.Tape, y, mu, L ad.Var) ad.Var {
	const fn = "MultiNormalCholesky"
	k := squareDim(t, fn, "L", L)
	yv, mv, lv := t.Value(y), t.Value(mu), t.Value(L)
	if k == 0 || len(yv)%k != 0 {
		panic(fmt.Sprintf("density: %s: len(y)=%d, want a multiple of K=%d", fn, len(yv), k))
	}
	n := len(yv) / k
	if len(mv) != k && len(mv) != len(yv) {
		panic(fmt.Sprintf("density: %s: len(mu)=%d, want K=%d or len(y)=%d", fn, len(mv), k, len(yv)))
	}
	sm := 0
	if len(mv) == len(yv) {
		sm = k
	}
	fb := t.Fused()
	dy, dm, dL := fb.Partial(y), fb.Partial(mu), fb.Partial(L)
	var sL, sMu []float64
	if dL != nil && n > 1 {
		sL = t.Scratch(k * k)
	}
	if dm != nil && sm == 0 && n > 1 {
		sMu = t.Scratch(k)
	}
	lp := 0.0
	for i := range n {
		d := dist.MultiNormalCholesky{Mu: mv[i*sm : i*sm+k], L: lv}
		var gy, gm, gL []float64
		if dy != nil {
			gy = dy[i*k : (i+1)*k]
		}
		switch {
		case dm == nil:
		case sm == k || n == 1:
			gm = dm[i*sm : i*sm+k]
		default:
			gm = sMu
		}
		switch {
		case dL == nil:
		case n == 1:
			gL = dL
		default:
			gL = sL
		}
		lp += d.LogProbGrad(gy, gm, gL, yv[i*k:(i+1)*k])
		if gm != nil && sm == 0 && n > 1 {
			for j, v := range gm {
				dm[j] += v
			}
		}
		if gL != nil && n > 1 {
			for j, v := range gL {
				dL[j] += v
			}
		}
	}
	return fb.Done(lp)
}

// LKJCorrCholesky records log LKJ(L | η) for the Cholesky factor L (K×K) of a correlation
// matrix, Stan's lkj_corr_cholesky_lpdf with its normalising constant (dist.LKJCholesky).
// Only the diagonal of L enters; eta is a scalar.
func LKJCorrCholesky(t *ad.Tape, L, eta ad.Var) ad.Var {
	const fn = "LKJCorrCholesky"
	squareDim(t, fn, "L", L)
	if s := t.Size(eta); s != 1 {
		panic(fmt.Sprintf("density: %s: len(eta)=%d, want 1", fn, s))
	}
	fb := t.Fused()
	dL, de := fb.Partial(L), fb.Partial(eta)
	lp, d := dist.LKJCholesky{Eta: t.Float(eta)}.LogProbGrad(dL, t.Value(L))
	if de != nil {
		de[0] = d
	}
	return fb.Done(lp)
}
