package density

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	kern "github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// glmChunk returns the number of observations processed per block: the D×chunk slice of the
// design is read once for η = α + Xβ and again for Xᵀ·(∂lp/∂η) while it is still in cache
// (≈ 256 KiB per block), so the design streams from memory once per gradient.
func glmChunk(d, n int) int {
	c := 32768 / max(d, 1)
	c = min(max(c, 256), 8192)
	return min(c, max(n, 1))
}

// checkGLM validates the sizes of a GLM call and returns N and D.
func checkGLM(t *ad.Tape, fn string, ny int, xt ad.Mat, alpha, beta ad.Var) (n, d int) {
	n, d = ny, xt.Rows
	if xt.Cols != n || len(xt.Data) != d*n {
		panic(fmt.Sprintf("density: %s: XT is %d×%d with len(Data)=%d, want D×N with N=len(y)=%d", fn, xt.Rows, xt.Cols, len(xt.Data), n))
	}
	if s := t.Size(alpha); s != 1 {
		panic(fmt.Sprintf("density: %s: len(alpha)=%d, want 1", fn, s))
	}
	if s := t.Size(beta); s != d {
		panic(fmt.Sprintf("density: %s: len(beta)=%d, want XT.Rows=%d", fn, s, d))
	}
	return n, d
}

// linearPredictor writes η = α + Σ_j β_j·XT[j, c0:c0+len(eta)] into eta: one GEMV over the
// contiguous rows of the feature-major design (kernel.GemvT, four rows per sweep of eta).
func linearPredictor(eta []float64, xt ad.Mat, c0 int, a float64, beta []float64) {
	for i := range eta {
		eta[i] = a
	}
	kern.GemvT(xt.Data[c0:], xt.Cols, beta, eta)
}

// backBeta adds XT[:, c0:c0+len(g)]·g to db (D dot products of length len(g), kernel.GemvN).
func backBeta(db []float64, xt ad.Mat, c0 int, g []float64) {
	kern.GemvN(xt.Data[c0:], xt.Cols, g, db)
}

// NormalIDGLM records Σᵢ log N(yᵢ | α + xᵢᵀβ, σ), Stan's normal_id_glm, as one node. The design
// is data, stored feature-major: XT is D×N row-major (XT.Data[j*N+i] = x_ij), so η = α + Xβ is
// D axpys of length N and ∂lp/∂β = Xᵀ·r (r = (y − η)/σ²) is D dot products, blockwise so the
// design is read from memory once. alpha is a scalar, beta has length D, sigma length 1 or N.
// Cost: 2·N·D multiply-adds (+ N logs for vector σ). Scratch comes from the tape
// (t.Scratch), so a reused tape allocates nothing.
func NormalIDGLM(t *ad.Tape, y []float64, XT ad.Mat, alpha, beta, sigma ad.Var) ad.Var {
	const fn = "NormalIDGLM"
	n, _ := checkGLM(t, fn, len(y), XT, alpha, beta)
	sv := t.Value(sigma)
	if len(sv) != 1 && len(sv) != n {
		panic(fmt.Sprintf("density: %s: len(sigma)=%d, want 1 or N=%d", fn, len(sv), n))
	}
	a, bv := t.Float(alpha), t.Value(beta)
	fb := t.Fused()
	da, db, ds := fb.Partial(alpha), fb.Partial(beta), fb.Partial(sigma)
	chunk := glmChunk(len(bv), n)
	buf := t.Scratch(chunk)
	ssq, sg, lsig := 0.0, 0.0, 0.0
	scalar := len(sv) == 1
	s := 1 / sv[0]
	for c0 := 0; c0 < n; c0 += chunk {
		c1 := min(c0+chunk, n)
		e := buf[:c1-c0]
		linearPredictor(e, XT, c0, a, bv)
		yc := y[c0:c1]
		if scalar {
			for i, v := range yc {
				z := (v - e[i]) * s
				ssq += z * z
				g := z * s
				sg += g
				e[i] = g
			}
		} else {
			for i, v := range yc {
				sig := sv[c0+i]
				si := 1 / sig
				z := (v - e[i]) * si
				ssq += z * z
				lsig += math.Log(sig)
				g := z * si
				sg += g
				e[i] = g
				if ds != nil {
					ds[c0+i] = (z*z - 1) * si
				}
			}
		}
		if db != nil {
			backBeta(db, XT, c0, e)
		}
	}
	if da != nil {
		da[0] = sg
	}
	nf := float64(n)
	if scalar {
		lsig = nf * math.Log(sv[0])
		if ds != nil {
			ds[0] = (ssq - nf) * s
		}
	}
	return fb.Done(-0.5*ssq - lsig - nf*mathx.LogSqrt2Pi)
}

// BernoulliLogitGLM records Σᵢ log Bernoulli(yᵢ | logistic(α + xᵢᵀβ)), Stan's
// bernoulli_logit_glm, as one node, with the feature-major design XT (D×N) as in NormalIDGLM.
// Per observation, kernel.BernoulliLogit turns one exp and one log1p (vectorised, within 1 ulp)
// into log p = yᵢηᵢ − softplus(ηᵢ) and ∂/∂ηᵢ = yᵢ − logistic(ηᵢ), without branches.
// y ∉ {0, 1} gives −Inf. Cost: 2·N·D multiply-adds + N exp/log1p.
func BernoulliLogitGLM(t *ad.Tape, y []int, XT ad.Mat, alpha, beta ad.Var) ad.Var {
	const fn = "BernoulliLogitGLM"
	n, _ := checkGLM(t, fn, len(y), XT, alpha, beta)
	a, bv := t.Float(alpha), t.Value(beta)
	fb := t.Fused()
	da, db := fb.Partial(alpha), fb.Partial(beta)
	chunk := glmChunk(len(bv), n)
	buf := t.Scratch(chunk)
	lp, sg := 0.0, 0.0
	bad := false
	for c0 := 0; c0 < n; c0 += chunk {
		c1 := min(c0+chunk, n)
		e := buf[:c1-c0]
		linearPredictor(e, XT, c0, a, bv)
		l, s, ok := kern.BernoulliLogit(e, y[c0:c1]) // e now holds ∂/∂η
		lp += l
		sg += s
		bad = bad || !ok
		if db != nil {
			backBeta(db, XT, c0, e)
		}
	}
	if da != nil {
		da[0] = sg
	}
	if bad {
		return fb.Done(math.Inf(-1))
	}
	return fb.Done(lp)
}
