package kernel

import "fmt"

// Impl returns the implementation in use: "avx2+fma asm" (the default amd64 build on a CPU
// with AVX2 and FMA: Go assembly for Softplus, Exp at x ≤ 0, Log, Axpy, Dot, the run kernels,
// GemmNN, GemmNT and the Bernstein kernels, pure Go for the rest), "avx2+fma asm, avx-512 softplus" (the same, with Softplus
// on eight lanes where AVX-512F/DQ are usable), "avx2+fma" (GOEXPERIMENT=simd build on such a CPU) or "go" (pure Go with
// gonum's assembly BLAS-1 loops: other CPUs and architectures, or -tags purego).
func Impl() string { return impl() }

// Axpy sets y[i] += a·x[i]. len(x) must equal len(y). Cost: len(x) multiply-adds.
func Axpy(a float64, x, y []float64) {
	if len(x) != len(y) {
		panic(fmt.Sprintf("kernel: Axpy: len(x)=%d, len(y)=%d", len(x), len(y)))
	}
	axpy(a, x, y)
	clearUpper()
}

// Dot returns Σᵢ x[i]·y[i]. len(x) must equal len(y). Cost: len(x) multiply-adds.
func Dot(x, y []float64) float64 {
	if len(x) != len(y) {
		panic(fmt.Sprintf("kernel: Dot: len(x)=%d, len(y)=%d", len(x), len(y)))
	}
	r := dot(x, y)
	clearUpper()
	return r
}

// checkMat panics unless a holds a rows×cols row-major matrix with row stride lda.
func checkMat(fn, name string, a []float64, lda, rows, cols int) {
	if lda < cols || (rows > 0 && len(a) < (rows-1)*lda+cols) {
		panic(fmt.Sprintf("kernel: %s: %s has len %d, stride %d; want %d×%d", fn, name, len(a), lda, rows, cols))
	}
}

// GemvN sets y += A·x, where A is len(y)×len(x), row-major with row stride lda:
// y[i] += Σⱼ A[i·lda+j]·x[j]. Cost: len(y)·len(x) multiply-adds.
func GemvN(A []float64, lda int, x, y []float64) {
	checkMat("GemvN", "A", A, lda, len(y), len(x))
	if len(x) == 0 || len(y) == 0 {
		return
	}
	gemvN(A, lda, x, y)
	clearUpper()
}

// GemvT sets y += Aᵀ·x, where A is len(x)×len(y), row-major with row stride lda:
// y[j] += Σᵢ A[i·lda+j]·x[i]. Cost: len(y)·len(x) multiply-adds.
func GemvT(A []float64, lda int, x, y []float64) {
	checkMat("GemvT", "A", A, lda, len(x), len(y))
	if len(x) == 0 || len(y) == 0 {
		return
	}
	gemvT(A, lda, x, y)
	clearUpper()
}

// Ger sets A += x·yᵀ, where A is len(x)×len(y), row-major with row stride lda:
// A[i·lda+j] += x[i]·y[j]. Cost: len(x)·len(y) multiply-adds.
func Ger(x, y, A []float64, lda int) {
	checkMat("Ger", "A", A, lda, len(x), len(y))
	if len(x) == 0 || len(y) == 0 {
		return
	}
	ger(x, y, A, lda)
	clearUpper()
}

// GemvTGer sets y += Aᵀ·x and B += x·wᵀ in one pass over the rows of A and B, which are both
// len(x)×len(w), row-major with row stride lda; y has length len(w). It is the backward pass of
// a layer with a single output (η = A·w): ∂w += Aᵀ·ḡ and ∂A += ḡ·wᵀ, reading A and B once.
// Either of y and B may be nil. Cost: 2·len(x)·len(w) multiply-adds.
func GemvTGer(A []float64, lda int, x, w, y, B []float64) {
	checkMat("GemvTGer", "A", A, lda, len(x), len(w))
	if B != nil {
		checkMat("GemvTGer", "B", B, lda, len(x), len(w))
	}
	if y != nil && len(y) != len(w) {
		panic(fmt.Sprintf("kernel: GemvTGer: len(y)=%d, len(w)=%d", len(y), len(w)))
	}
	if len(x) == 0 || len(w) == 0 {
		return
	}
	switch {
	case y == nil && B == nil:
	case y == nil:
		ger(x, w, B, lda)
	case B == nil:
		gemvT(A, lda, x, y)
	default:
		gemvTGer(A, lda, x, w, y, B)
	}
	clearUpper()
}

// Exp sets dst[i] = eˣ for x = x[i]; dst may alias x. Accuracy: below 1 ulp of the exact value
// for all finite x, subnormal results included (0.74 ulp the largest error seen against
// 240-bit mpmath values; within 2 ulp of math.Exp over 2·10⁶ points); +Inf for x > 709.78, 0
// for x < −745.13, NaN for NaN. Cost ≈ 30 flops per element, no table, no branch. The
// default amd64 build runs four lanes per vector in assembly when every x ≤ 0 (checked by one
// comparison per element first; otherwise the pure-Go loop runs).
func Exp(dst, x []float64) {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("kernel: Exp: len(dst)=%d, len(x)=%d", len(dst), len(x)))
	}
	expv(dst, x)
	clearUpper()
}

// Log1p sets dst[i] = log(1 + x) for x = x[i]; dst may alias x. Accuracy: below 1 ulp of the
// exact value for x > −1 (0.63 ulp the largest error seen against 240-bit mpmath values;
// within 1 ulp of math.Log1p over 2·10⁶ points); −Inf at −1, NaN below −1 and for NaN, +Inf
// at +Inf, ±0 at ±0. Cost ≈ 35 flops and two divisions per element.
func Log1p(dst, x []float64) {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("kernel: Log1p: len(dst)=%d, len(x)=%d", len(dst), len(x)))
	}
	log1pv(dst, x)
	clearUpper()
}

// BernoulliLogit is the per-observation pass of the Bernoulli-logit likelihood. For each
// η = eta[i] and label y = y[i] it computes
//
//	log p = y·η − softplus(η),  softplus(η) = max(η, 0) + log1p(e^{−|η|}),
//	∂log p/∂η = y − σ(η),       σ(η) = 1/(1 + e^{−|η|}) for η ≥ 0, e^{−|η|}/(1 + e^{−|η|}) else,
//
// overwrites eta[i] with ∂log p/∂η and returns Σ log p and Σ ∂log p/∂η. One exp and one
// log1p per observation (Exp and Log1p accuracy), no branches on y or the sign of η. ok is
// false if some label is not 0 or 1 (the sums are then meaningless). len(y) must equal
// len(eta).
func BernoulliLogit(eta []float64, y []int) (lp, sum float64, ok bool) {
	if len(eta) != len(y) {
		panic(fmt.Sprintf("kernel: BernoulliLogit: len(eta)=%d, len(y)=%d", len(eta), len(y)))
	}
	lp, sum, ok = bernoulliLogit(eta, y)
	clearUpper()
	return lp, sum, ok
}

// checkDense validates the operands of the Dense kernels.
func checkDense(fn string, n, k, m int, X, W, Y []float64) {
	if n < 0 || k < 0 || m < 0 || len(X) < n*k || len(W) < k*m || len(Y) < n*m {
		panic(fmt.Sprintf("kernel: %s: n=%d k=%d m=%d with len(X)=%d, len(W)=%d, len(Y)=%d", fn, n, k, m, len(X), len(W), len(Y)))
	}
}

// Dense sets Y = X·W + 1·bᵀ, then Y = max(Y, 0) if relu: X is n×k, W is k×m, b has length m,
// Y is n×m, all row-major and contiguous. This is the forward pass of a network layer with
// bias and ReLU fused, written for a small inner dimension k (an MLP's input layer): the
// output block is accumulated in registers over k and stored once. Cost: n·k·m
// multiply-adds.
func Dense(Y, X []float64, n, k int, W []float64, m int, b []float64, relu bool) {
	checkDense("Dense", n, k, m, X, W, Y)
	if len(b) != m {
		panic(fmt.Sprintf("kernel: Dense: len(b)=%d, want m=%d", len(b), m))
	}
	if n == 0 || m == 0 {
		return
	}
	dense(Y[:n*m], X[:n*k], n, k, W[:k*m], m, b, relu)
	clearUpper()
}

// ReLUBack sets g[i] = adj[i] where y[i] > 0 and 0 elsewhere (NaN y gives 0): the adjoint of a
// ReLU output y = max(z, 0) with respect to z. g may alias adj. One branch-free pass.
func ReLUBack(g, adj, y []float64) {
	if len(g) != len(adj) || len(y) != len(adj) {
		panic(fmt.Sprintf("kernel: ReLUBack: len(g)=%d, len(adj)=%d, len(y)=%d", len(g), len(adj), len(y)))
	}
	reluBack(g, adj, y)
	clearUpper()
}

// PositiveBits sets bit i of bits (bit i%64 of word i/64) to y[i] > 0 (false for NaN) and
// clears the bits beyond len(y) in the last word: a ReLU layer's activity pattern in 1/64 of
// the memory of its output, for a backward pass that then need not read the output again.
// len(bits) must be at least ⌈len(y)/64⌉.
func PositiveBits(bits []uint64, y []float64) {
	if len(bits) < (len(y)+63)/64 {
		panic(fmt.Sprintf("kernel: PositiveBits: len(bits)=%d, want ⌈%d/64⌉", len(bits), len(y)))
	}
	positiveBits(bits, y)
	clearUpper()
}

// ReLUBackBits sets g[i] = adj[i] where bit i of bits is set and 0 elsewhere: ReLUBack with the
// pattern recorded by PositiveBits. g may alias adj; len(bits) must be at least ⌈len(g)/64⌉.
func ReLUBackBits(g, adj []float64, bits []uint64) {
	if len(g) != len(adj) || len(bits) < (len(g)+63)/64 {
		panic(fmt.Sprintf("kernel: ReLUBackBits: len(g)=%d, len(adj)=%d, len(bits)=%d", len(g), len(adj), len(bits)))
	}
	reluBackBits(g, adj, bits)
	clearUpper()
}

// DenseBackW accumulates the weight and bias adjoints of Y = X·W + 1·bᵀ:
// Wadj += Xᵀ·G (k×m) and badj += 1ᵀ·G (column sums, length m), with X n×k and G n×m
// row-major. Either of Wadj and badj may be nil. Cost: n·k·m multiply-adds.
func DenseBackW(Wadj, badj, X []float64, n, k int, G []float64, m int) {
	if Wadj != nil {
		checkDense("DenseBackW", n, k, m, X, Wadj, G)
	}
	if badj != nil && len(badj) != m {
		panic(fmt.Sprintf("kernel: DenseBackW: len(badj)=%d, want m=%d", len(badj), m))
	}
	if len(G) < n*m {
		panic(fmt.Sprintf("kernel: DenseBackW: len(G)=%d, want n·m=%d", len(G), n*m))
	}
	if n == 0 || m == 0 {
		return
	}
	if Wadj != nil && k > 0 {
		denseBackW(Wadj[:k*m], X[:n*k], n, k, G[:n*m], m)
	}
	if badj != nil {
		colSums(badj, G[:n*m], n, m)
	}
	clearUpper()
}

// DenseBackX accumulates the input adjoint of Y = X·W + 1·bᵀ: Xadj += G·Wᵀ, with Xadj n×k,
// G n×m and W k×m row-major. Cost: n·k·m multiply-adds.
func DenseBackX(Xadj []float64, n, k int, G []float64, m int, W []float64) {
	checkDense("DenseBackX", n, k, m, Xadj, W, G)
	if n == 0 || k == 0 || m == 0 {
		return
	}
	denseBackX(Xadj[:n*k], n, k, G[:n*m], m, W[:k*m])
	clearUpper()
}
