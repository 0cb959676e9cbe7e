package apovi

import (
	"math"

	"github.com/vigo-bayes/vigo/internal/kernel"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Dense linear algebra of the layer nodes, on gonum's row-major BLAS and LAPACK; general
// products are kernel.Gemm (tiled to stay on gonum's serial, allocation-free path).

// shortLen is the length below which dot and axpy run as plain Go loops: the kernel calls
// (length checks, dispatch, clearing the upper YMM halves) cost more than the arithmetic there.
const shortLen = 16

// dot is kernel.Dot with a plain loop for short vectors.
func dot(x, y []float64) float64 {
	if len(x) >= shortLen {
		return kernel.Dot(x, y)
	}
	y = y[:len(x)]
	s0, s1 := 0.0, 0.0
	i := 0
	for ; i+2 <= len(x); i += 2 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
	}
	if i < len(x) {
		s0 += x[i] * y[i]
	}
	return s0 + s1
}

// axpy is kernel.Axpy with a plain loop for short vectors.
func axpy(a float64, x, y []float64) {
	if len(y) >= shortLen {
		kernel.Axpy(a, x, y)
		return
	}
	x = x[:len(y)]
	for i, v := range x {
		y[i] += a * v
	}
}

// gramDot sets the lower triangle of C (k×k) to Y Yᵀ for Y k×n (rows of length n, i.e. the
// transpose of the n×k matrix whose Gram matrix is wanted): k(k+1)/2 dot products of length n
// on kernel.Dot (AVX2+FMA where available), faster than a rank-n gonum Dsyrk on these sizes.
func gramDot(n, k int, yt, cm []float64) {
	for i := range k {
		yi := yt[i*n : (i+1)*n]
		row := cm[i*k : i*k+i+1]
		for j := range row {
			row[j] = dot(yi, yt[j*n:(j+1)*n])
		}
	}
}

// triGram sets the lower triangle of C (k×k) to L Lᵀ for lower-triangular L:
// C_ij = L_{i,:j+1}·L_{j,:j+1} for j ≤ i.
func triGram(k int, l, cm []float64) {
	for i := range k {
		li := l[i*k:]
		for j := 0; j <= i; j++ {
			cm[i*k+j] = dot(li[:j+1], l[j*k:j*k+j+1])
		}
	}
}

// mulNN sets C = A·B for A r×k, B k×c (row-major, tight), accumulating each row of C four rows
// of B at a time with kernel.Axpy4.
func mulNN(r, c, k int, a, b, cm []float64) {
	for i := range r {
		crow := cm[i*c : (i+1)*c]
		for j := range crow {
			crow[j] = 0
		}
		ar := a[i*k : (i+1)*k]
		kk := 0
		for ; kk+4 <= k; kk += 4 {
			kernel.Axpy4(ar[kk], ar[kk+1], ar[kk+2], ar[kk+3], b[kk*c:(kk+4)*c], crow)
		}
		for ; kk < k; kk++ {
			axpy(ar[kk], b[kk*c:(kk+1)*c], crow)
		}
	}
}

// sandwich overwrites M (k×k) with Lᵀ M L for lower-triangular L, using X (k×k) as scratch:
// X = M L row by row (row i of X gathers M_ik·L_{k,:k+1}), then row i of Lᵀ X gathers
// L_ki·X_{k,:} for k ≥ i, four rows at a time. About k³ multiply-adds.
func sandwich(k int, l, m, x []float64) {
	for i := range k {
		xr := x[i*k : (i+1)*k]
		for j := range xr {
			xr[j] = 0
		}
		mr := m[i*k : (i+1)*k]
		for c, a := range mr {
			if a != 0 {
				axpy(a, l[c*k:c*k+c+1], xr[:c+1])
			}
		}
	}
	for i := range k {
		zr := m[i*k : (i+1)*k]
		for j := range zr {
			zr[j] = 0
		}
		c := i
		for ; c+4 <= k; c += 4 {
			kernel.Axpy4(l[c*k+i], l[(c+1)*k+i], l[(c+2)*k+i], l[(c+3)*k+i], x[c*k:(c+4)*k], zr)
		}
		for ; c < k; c++ {
			axpy(l[c*k+i], x[c*k:(c+1)*k], zr)
		}
	}
}

// gramT sets the lower triangle of C (k×k) to AᵀA for A n×k.
func gramT(n, k int, a, cm []float64) {
	// gonum's Dsyrk (v0.17, lower, transposed) scales C by beta = 0 instead of zeroing it, so
	// NaN left in reused tape memory would survive: clear C first.
	clear(cm[:k*k])
	blas64.Syrk(blas.Trans, 1, blas64.General{Rows: n, Cols: k, Stride: k, Data: a}, 0,
		blas64.Symmetric{Uplo: blas.Lower, N: k, Stride: k, Data: cm})
}

// symmetrize copies the lower triangle of the k×k matrix c onto its upper triangle.
func symmetrize(k int, c []float64) {
	for i := range k {
		for j := 0; j < i; j++ {
			c[j*k+i] = c[i*k+j]
		}
	}
}

// cholInv overwrites the lower triangle of the SPD matrix p (k×k, lower triangle read) with
// R⁻¹, where P = R Rᵀ, zeroes the strict upper triangle, and returns Σ_i ln R_ii. ok is false
// if p is not numerically positive definite (a pivot ≤ 0 or not finite). tmp (k) is scratch.
//
// Both steps go row by row over contiguous memory (kernel.Dot, kernel.Axpy): the Cholesky
// factor as R_ij = (P_ij − R_{i,:j}·R_{j,:j})/R_jj, R_ii = √(P_ii − ‖R_{i,:i}‖²) (Golub & Van
// Loan 2013, §4.2.5), then the inverse X = R⁻¹ from R X = I, row i being
// X_i = (e_i − Σ_{c<i} R_ic X_c)/R_ii. k³/3 multiply-adds in all.
func cholInv(k int, p, tmp []float64) (logDiag float64, ok bool) {
	for i := range k {
		ri := p[i*k : (i+1)*k]
		for j := range i {
			ri[j] = (ri[j] - dot(ri[:j], p[j*k:j*k+j])) / p[j*k+j]
		}
		s := ri[i] - dot(ri[:i], ri[:i])
		if !(s > 0) || math.IsInf(s, 1) {
			return 0, false
		}
		ri[i] = math.Sqrt(s)
		logDiag += math.Log(ri[i])
		clear(ri[i+1:])
	}
	for i := range k {
		ri := p[i*k : (i+1)*k]
		copy(tmp[:i+1], ri[:i+1])
		clear(ri[:i+1])
		for c := range i {
			if a := tmp[c]; a != 0 {
				axpy(-a, p[c*k:c*k+c+1], ri[:c+1])
			}
		}
		inv := 1 / tmp[i]
		ri[i] = 1
		for j := range ri[:i+1] {
			ri[j] *= inv
		}
	}
	return logDiag, true
}

// trmvT sets y = Lᵀx for lower-triangular L (k×k).
func trmvT(k int, l, x, y []float64) {
	for i := range y[:k] {
		y[i] = 0
	}
	for r := range k {
		xr := x[r]
		row := l[r*k : r*k+r+1]
		for c, v := range row {
			y[c] += v * xr
		}
	}
}

// trmv sets y = L x for lower-triangular L (k×k).
func trmv(k int, l, x, y []float64) {
	for r := range k {
		s := 0.0
		row := l[r*k : r*k+r+1]
		for c, v := range row {
			s += v * x[c]
		}
		y[r] = s
	}
}
