package apovi

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Dense linear algebra of the layer nodes, on gonum's row-major BLAS and LAPACK. gonum's Dgemm
// spawns goroutines once its output spans more than a few 64×64 blocks; a product here is tiled
// into pieces of at most 64×192 so that it stays on the serial, allocation-free path (the
// machine is shared, and a layer's D units are independent work anyway).

const tile = 64

// gemm computes C = op(A)·op(B) + beta·C, C r×c (row-major, tight), inner size k; a is r×k
// (k×r when tA), b is k×c (c×k when tB).
func gemm(tA, tB bool, r, c, k int, a, b []float64, beta float64, cm []float64) {
	ta, tb := blas.NoTrans, blas.NoTrans
	ac := k
	if tA {
		ta, ac = blas.Trans, r
	}
	bc := c
	if tB {
		tb, bc = blas.Trans, k
	}
	rs, cs := 3*tile, tile
	if c > tile {
		rs, cs = tile, 3*tile
	}
	for i := 0; i < r; i += rs {
		ri := min(rs, r-i)
		var Ai blas64.General
		if tA {
			Ai = blas64.General{Rows: k, Cols: ri, Stride: ac, Data: a[i:]}
		} else {
			Ai = blas64.General{Rows: ri, Cols: k, Stride: ac, Data: a[i*ac:]}
		}
		for j := 0; j < c; j += cs {
			cj := min(cs, c-j)
			var Bj blas64.General
			if tB {
				Bj = blas64.General{Rows: cj, Cols: k, Stride: bc, Data: b[j*bc:]}
			} else {
				Bj = blas64.General{Rows: k, Cols: cj, Stride: bc, Data: b[j:]}
			}
			C := blas64.General{Rows: ri, Cols: cj, Stride: c, Data: cm[i*c+j:]}
			blas64.Gemm(ta, tb, 1, Ai, Bj, beta, C)
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
// if p is not numerically positive definite.
func cholInv(k int, p []float64) (logDiag float64, ok bool) {
	t, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: k, Stride: k, Data: p})
	if !ok {
		return 0, false
	}
	for i := range k {
		logDiag += math.Log(p[i*k+i])
		for j := i + 1; j < k; j++ {
			p[i*k+j] = 0
		}
	}
	if !lapack64.Trtri(t) {
		return 0, false
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
