package density

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/vigo-bayes/vigo/ad"
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

// linearPredictor writes η = α + Σ_j β_j·XT[j, c0:c0+len(eta)] into eta (D axpys over
// contiguous rows of the feature-major design).
func linearPredictor(eta []float64, xt ad.Mat, c0 int, a float64, beta []float64) {
	for i := range eta {
		eta[i] = a
	}
	m := len(eta)
	ev := blas64.Vector{N: m, Inc: 1, Data: eta}
	for j, b := range beta {
		if b == 0 {
			continue
		}
		off := j*xt.Cols + c0
		blas64.Axpy(b, blas64.Vector{N: m, Inc: 1, Data: xt.Data[off : off+m]}, ev)
	}
}

// backBeta adds XT[:, c0:c0+len(g)]·g to db (D dot products of length len(g)).
func backBeta(db []float64, xt ad.Mat, c0 int, g []float64) {
	m := len(g)
	gv := blas64.Vector{N: m, Inc: 1, Data: g}
	for j := range db {
		off := j*xt.Cols + c0
		db[j] += blas64.Dot(blas64.Vector{N: m, Inc: 1, Data: xt.Data[off : off+m]}, gv)
	}
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
// Per observation: one exp and one log1p give both log p = −log(1 + e^{−mᵢ}) (mᵢ = ±ηᵢ) and
// ∂/∂ηᵢ = yᵢ − logistic(ηᵢ). y ∉ {0, 1} gives −Inf. Cost: 2·N·D multiply-adds + N exp/log1p.
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
		for i, yi := range y[c0:c1] {
			eta := e[i]
			if uint(yi) > 1 {
				bad = true
			}
			// Branch-free in y (random labels would mispredict half the time):
			// log p = y·η − softplus(η), softplus(η) = max(η, 0) + log1p(e^{−|η|}),
			// ∂/∂η = y − σ(η), σ(η) = 1/(1 + e^{−|η|}) for η ≥ 0 and e^{−|η|}/(1 + e^{−|η|})
			// otherwise.
			u := math.Exp(-math.Abs(eta))
			inv := 1 / (1 + u)
			s := inv
			if eta < 0 {
				s = u * inv
			}
			yf := float64(yi)
			lp += yf*eta - max(eta, 0) - math.Log1p(u)
			g := yf - s
			sg += g
			e[i] = g
		}
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
