package bench

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/vigo-bayes/vigo/internal/kernel"
)

// logSqrt2Pi is ½·log(2π).
const logSqrt2Pi = 0.91893853320467274178032973640562

// log1pExp returns log(1+eˣ) = max(x,0) + log1p(e^{−|x|}), stable for all x.
func log1pExp(x float64) float64 {
	return max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
}

// stdNormalPrior returns Σ_k log N(θ_k | 0, 1) = −½Σθ_k² − dim·½log(2π).
func stdNormalPrior(theta []float64) float64 {
	var ss float64
	for _, v := range theta {
		ss += v * v
	}
	return -0.5*ss - float64(len(theta))*logSqrt2Pi
}

// LogisticLogDensity returns the log density of Bayesian logistic regression at θ = (α, β):
//
//	log p(θ | X, y) = Σ_i [y_i·η_i − log(1 + e^{η_i})] + Σ_k log N(θ_k | 0, 1),
//	η_i = α + Σ_j x_ij β_j,
//
// with every normalising constant kept. It is the plain reference (strided loops, O(N·D)) that
// the gradient is checked against, not a fast path.
func LogisticLogDensity(ld *LogisticData, theta []float64) float64 {
	if len(theta) != ld.Dim() {
		panic("bench: LogisticLogDensity: len(theta) != D+1")
	}
	n, alpha, beta := ld.N, theta[0], theta[1:]
	lp := stdNormalPrior(theta)
	for i := range n {
		eta := alpha
		for j, b := range beta {
			eta += ld.XT[j*n+i] * b
		}
		lp += ld.YF[i]*eta - log1pExp(eta)
	}
	return lp
}

// LogisticChunk is the number of observations the fused logistic gradient processes per
// block, and so the scratch length it needs (fewer if N is smaller). A block of XT (D×512
// doubles, 200 KB at D = 50) stays in L2 between the forward GEMV and the backward GEMV, so
// the design matrix is streamed from memory once per gradient instead of twice.
const LogisticChunk = 512

// LogisticGrad writes ∇_θ log p(θ | X, y) of LogisticLogDensity into grad and returns the log
// density. It is the hand-written floor, on the same kernels as the AD path's GLM node
// (package internal/kernel): per block of LogisticChunk observations one GEMV
// η = α + X_bβ (kernel.GemvT over the feature-major rows), one fused elementwise pass
// (kernel.BernoulliLogit: one vectorised exp and log1p per observation give both
// log(1+e^η) and the residual r = y − σ(η)), and one GEMV ∇β += X_bᵀr (kernel.GemvN). Then
// ∂/∂α = Σr − α, ∇β = Xᵀr − β.
//
// Cost O(N·D) flops, 2N transcendental calls, one pass over XT. scratch must hold
// min(N, LogisticChunk) values; nothing is allocated.
func LogisticGrad(ld *LogisticData, theta, grad, scratch []float64) float64 {
	n, d := ld.N, ld.D
	if len(theta) != d+1 || len(grad) != d+1 {
		panic("bench: LogisticGrad: len(theta) and len(grad) must be D+1")
	}
	if len(scratch) < min(n, LogisticChunk) {
		panic("bench: LogisticGrad: scratch shorter than min(N, LogisticChunk)")
	}
	alpha, beta, gbeta := theta[0], theta[1:], grad[1:]
	for j, b := range beta {
		gbeta[j] = -b
	}
	galpha := -alpha
	lp := stdNormalPrior(theta)
	for c0 := 0; c0 < n; c0 += LogisticChunk {
		m := min(LogisticChunk, n-c0)
		eta := scratch[:m]
		for i := range eta {
			eta[i] = alpha
		}
		kernel.GemvT(ld.XT[c0:], n, beta, eta)
		l, s, _ := kernel.BernoulliLogit(eta, ld.Y[c0:c0+m]) // labels are 0/1 by construction
		lp += l
		galpha += s
		kernel.GemvN(ld.XT[c0:], n, eta, gbeta)
	}
	grad[0] = galpha
	return lp
}

// MLPLogDensity returns the log density of a Bayesian In→Hidden→1 ReLU network regression at θ
// (layout MLPLayout):
//
//	f(x) = b2 + Σ_k W2_k·relu(b1_k + Σ_j W1_kj x_j),
//	log p(θ | X, y) = Σ_i log N(y_i | f(x_i), 1) + Σ_k log N(θ_k | 0, 1),
//
// with every normalising constant kept. Plain reference loops, O(N·In·Hidden).
func MLPLogDensity(md *MLPData, hidden int, theta []float64) float64 {
	lay := MLPLayout{In: md.In, Hidden: hidden}
	w1, b1, w2, b2 := lay.Split(theta)
	in := md.In
	lp := stdNormalPrior(theta) - float64(md.N)*logSqrt2Pi
	for i := range md.N {
		x := md.X[i*in : (i+1)*in]
		f := b2
		for k := range hidden {
			a := b1[k]
			for j, xv := range x {
				a += w1[k*in+j] * xv
			}
			f += w2[k] * max(a, 0)
		}
		r := md.Y[i] - f
		lp -= 0.5 * r * r
	}
	return lp
}

// MLPChunk is the number of observations the MLP gradient processes per block. The block's
// hidden activations and their adjoints (2·Hidden·512 doubles, 400 KB for 50 units) stay in L2
// from the forward to the backward pass.
const MLPChunk = 512

// MLPScratchLen returns the scratch length MLPGrad needs for data with at most MLPIn inputs:
// (2·hidden+1)·min(n, MLPChunk) + hidden·MLPIn.
func MLPScratchLen(n, hidden int) int { return (2*hidden+1)*min(n, MLPChunk) + hidden*MLPIn }

// MLPGrad writes ∇_θ log p(θ | X, y) of MLPLogDensity into grad and returns the log density. It
// is the hand-written floor, the faster of two designs for the kernels this build has:
//
//   - with SIMD kernels (kernel.Impl() ≠ "go"), the same kernels as the AD path's Dense nodes,
//     block by block (mlpGradDense);
//   - in the pure-Go build, per-hidden-unit GEMVs over the feature-major data with fused,
//     branch-free elementwise passes (mlpGradGEMV), which beats the pure-Go Dense kernels.
//
// Either way it never holds more than one block of MLPChunk observations of the hidden layer,
// so that block stays in cache. Cost O(N·In·Hidden) flops, one pass over the data. scratch
// must hold (2·hidden+1)·min(N, MLPChunk) + hidden·In values (MLPScratchLen when
// In ≤ MLPIn); nothing is allocated.
func MLPGrad(md *MLPData, hidden int, theta, grad, scratch []float64) float64 {
	lay := MLPLayout{In: md.In, Hidden: hidden}
	if len(grad) != lay.Dim() {
		panic("bench: MLPGrad: len(grad) != len(theta)")
	}
	if len(scratch) < (2*hidden+1)*min(md.N, MLPChunk)+hidden*md.In {
		panic("bench: MLPGrad: scratch shorter than (2·hidden+1)·min(N, MLPChunk) + hidden·In")
	}
	if kernel.Impl() == "go" {
		return mlpGradGEMV(md, hidden, theta, grad, scratch)
	}
	return mlpGradDense(md, hidden, theta, grad, scratch)
}

// mlpGradDense is MLPGrad on the Dense kernels. With W1ᵀ (In×Hidden) transposed once, per block
// of m ≤ MLPChunk observations (X_b, m×In):
//
//	forward:  H = relu(X_b·W1ᵀ + 1·b1ᵀ) (kernel.Dense), f = b2 + H·W2 (kernel.GemvN), r = y − f;
//	backward: ∂W2 += Hᵀr and G = r·W2ᵀ (kernel.GemvTGer), G ⊙= 1[H > 0] (kernel.ReLUBack),
//	          ∂W1 += Gᵀ·X_b (kernel.DenseBackW), ∂b1 += 1ᵀG,
//
// with ∂b2 = Σr and −θ from the N(0,1) priors.
func mlpGradDense(md *MLPData, hidden int, theta, grad, scratch []float64) float64 {
	lay := MLPLayout{In: md.In, Hidden: hidden}
	n, in := md.N, md.In
	chunk := min(n, MLPChunk)
	w1, b1, w2, b2 := lay.Split(theta)
	gw1, gb1, gw2, _ := lay.Split(grad)
	for k, v := range theta {
		grad[k] = -v
	}
	gb2 := -b2
	lp := stdNormalPrior(theta) - float64(md.N)*logSqrt2Pi
	w1t, scratch := scratch[:in*hidden], scratch[in*hidden:]
	for k := range hidden {
		for j := range in {
			w1t[j*hidden+k] = w1[k*in+j]
		}
	}
	for c0 := 0; c0 < n; c0 += MLPChunk {
		m := min(MLPChunk, n-c0)
		h := scratch[:m*hidden]
		g := scratch[chunk*hidden : chunk*hidden+m*hidden]
		f := scratch[2*chunk*hidden : 2*chunk*hidden+m]
		xb := md.X[c0*in : (c0+m)*in]
		kernel.Dense(h, xb, m, in, w1t, hidden, b1, true)
		for i := range f {
			f[i] = b2
		}
		kernel.GemvN(h, hidden, w2, f)
		residuals(md.Y[c0:c0+m], f, &lp, &gb2)
		clear(g)
		kernel.GemvTGer(h, hidden, f, w2, gw2, g) // ∂W2 += Hᵀr, G = r·W2ᵀ
		kernel.ReLUBack(g, g, h)
		kernel.DenseBackW(gw1, nil, g, m, hidden, xb, in) // ∂W1 (Hidden×In) += Gᵀ·X_b
		kernel.DenseBackW(nil, gb1, nil, m, 0, g, hidden) // ∂b1 += column sums of G
	}
	grad[len(grad)-1] = gb2
	return lp
}

// mlpGradGEMV is MLPGrad per hidden unit: per block of m ≤ MLPChunk observations (X_b = the
// block of XT, In×m) and per hidden unit k,
//
//	forward:  a_k = X_bᵀ W1_k (GEMV), h_k = relu(a_k + b1_k), f += W2_k·h_k, then r = y − f;
//	backward: ∂W2_k += h_k·r, g_k = W2_k·r ⊙ 1[h_k > 0], ∂b1_k += Σg_k, ∂W1_k += X_b g_k (GEMV),
//
// with ∂b2 = Σr and −θ from the N(0,1) priors. The GEMVs are gonum blas64 (assembly kernels);
// the elementwise passes are fused and branch-free. It uses the first (hidden+1)·min(N,
// MLPChunk) values of scratch.
func mlpGradGEMV(md *MLPData, hidden int, theta, grad, scratch []float64) float64 {
	lay := MLPLayout{In: md.In, Hidden: hidden}
	w1, b1, w2, b2 := lay.Split(theta)
	gw1, gb1, gw2, _ := lay.Split(grad)
	n, in := md.N, md.In
	for k, v := range theta {
		grad[k] = -v
	}
	gb2 := -b2
	lp := stdNormalPrior(theta) - float64(md.N)*logSqrt2Pi
	for c0 := 0; c0 < n; c0 += MLPChunk {
		m := min(MLPChunk, n-c0)
		p := scratch[:hidden*m]
		f := scratch[hidden*m : hidden*m+m]
		xm := blas64.General{Rows: in, Cols: m, Stride: n, Data: md.XT[c0:]}
		for i := range f {
			f[i] = b2
		}
		for k := range hidden {
			row := p[k*m : (k+1)*m]
			blas64.Gemv(blas.Trans, 1, xm, blas64.Vector{N: in, Inc: 1, Data: w1[k*in : (k+1)*in]}, 0, blas64.Vector{N: m, Inc: 1, Data: row})
			wk, bk := w2[k], b1[k]
			f := f[:len(row)]
			for i, a := range row {
				h := max(a+bk, 0)
				row[i] = h
				f[i] += wk * h
			}
		}
		residuals(md.Y[c0:c0+m], f, &lp, &gb2)
		for k := range hidden {
			row := p[k*m : (k+1)*m]
			wk := w2[k]
			var s0, s1, d0, d1 float64
			f := f[:len(row)]
			i := 0
			for ; i+1 < len(row); i += 2 {
				h0, h1 := row[i], row[i+1]
				r0, r1 := f[i], f[i+1]
				d0 += h0 * r0
				d1 += h1 * r1
				g0 := activeMask(h0, wk*r0)
				g1 := activeMask(h1, wk*r1)
				row[i], row[i+1] = g0, g1
				s0 += g0
				s1 += g1
			}
			if i < len(row) {
				d0 += row[i] * f[i]
				g := activeMask(row[i], wk*f[i])
				row[i] = g
				s0 += g
			}
			gw2[k] += d0 + d1
			gb1[k] += s0 + s1
			blas64.Gemv(blas.NoTrans, 1, xm, blas64.Vector{N: m, Inc: 1, Data: row}, 1, blas64.Vector{N: in, Inc: 1, Data: gw1[k*in : (k+1)*in]})
		}
	}
	grad[len(grad)-1] = gb2
	return lp
}
func activeMask(h, v float64) float64 {
	b := math.Float64bits(h)
	mask := uint64(int64(b|-b) >> 63) // all ones iff b ≠ 0
	return math.Float64frombits(math.Float64bits(v) & mask)
}

// eightSchoolsConst is the parameter-free part of EightSchoolsLogDensity:
// −17·½log(2π) − Σ_j log σ_j − 2·log 5 − log π.
var eightSchoolsConst = func() float64 {
	c := -17*logSqrt2Pi - 2*math.Log(5) - math.Log(math.Pi)
	for _, s := range EightSchools.Sigma {
		c -= math.Log(s)
	}
	return c
}()

// EightSchoolsLogDensity returns the non-centred eight-schools log density (posteriordb
// eight_schools_noncentered, MODELS.md §1) on the unconstrained vector
// u = (θ̃_1..θ̃_8, μ, log τ), Jacobian included and every normalising constant kept:
//
//	θ_j = μ + τ·θ̃_j,
//	log p(u) = Σ_j log N(θ̃_j | 0, 1) + Σ_j log N(y_j | θ_j, σ_j) + log N(μ | 0, 5)
//	           + log Cauchy(τ | 0, 5) + log τ.
//
// The half-Cauchy is written, as Stan adds it, as the untruncated Cauchy (they differ by the
// constant log 2).
func EightSchoolsLogDensity(u []float64) float64 {
	if len(u) != 10 {
		panic("bench: EightSchoolsLogDensity: len(u) != 10")
	}
	mu, lt := u[8], u[9]
	tau := math.Exp(lt)
	lp := eightSchoolsConst + lt - 0.5*(mu/5)*(mu/5) - math.Log1p((tau/5)*(tau/5))
	for j, tt := range u[:8] {
		z := (EightSchools.Y[j] - (mu + tau*tt)) / EightSchools.Sigma[j]
		lp -= 0.5 * (tt*tt + z*z)
	}
	return lp
}

// EightSchoolsGrad writes ∇_u EightSchoolsLogDensity into grad and returns the log density.
// With r_j = (y_j − θ_j)/σ_j²:
//
//	∂/∂θ̃_j = τ·r_j − θ̃_j,   ∂/∂μ = Σ_j r_j − μ/25,
//	∂/∂log τ = τ·Σ_j r_j θ̃_j − 2τ²/(25 + τ²) + 1.
//
// Cost: one exp, one log1p, O(8) flops; nothing is allocated.
func EightSchoolsGrad(u, grad []float64) float64 {
	if len(u) != 10 || len(grad) != 10 {
		panic("bench: EightSchoolsGrad: len(u) and len(grad) must be 10")
	}
	mu, lt := u[8], u[9]
	tau := math.Exp(lt)
	t5 := tau / 5
	lp := eightSchoolsConst + lt - 0.5*(mu/5)*(mu/5) - math.Log1p(t5*t5)
	var sr, srt float64
	for j, tt := range u[:8] {
		s := EightSchools.Sigma[j]
		e := EightSchools.Y[j] - (mu + tau*tt)
		z := e / s
		lp -= 0.5 * (tt*tt + z*z)
		r := z / s
		grad[j] = tau*r - tt
		sr += r
		srt += r * tt
	}
	grad[8] = sr - mu/25
	grad[9] = tau*srt - 2*tau*tau/(25+tau*tau) + 1
	return lp
}

// residuals overwrites f with the residuals r = y − f and adds −r²/2 to *lp and r to *sum,
// in order (the MLP floors' Gaussian likelihood and its output-bias gradient).
func residuals(y, f []float64, lp, sum *float64) {
	for i, fi := range f {
		r := y[i] - fi
		*lp -= 0.5 * r * r
		*sum += r
		f[i] = r
	}
}
