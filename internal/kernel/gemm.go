package kernel

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Gemm computes C = op(A)·op(B) + beta·C with C r×c (row-major, tight strides) and inner size
// k; a is stored r×k (k×r when tA), b is k×c (c×k when tB). A single output column is a GEMV,
// an inner size of 1 an outer product, anything else gemmSerial's tiles (gonum's serial,
// allocation-free path). Used by bnn's layers and apovi's layer nodes. Cost: r·c·k
// multiply-adds.
func Gemm(tA, tB bool, r, c, k int, a, b []float64, beta float64, cm []float64) {
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac := r, k
	if tA {
		ta, ar, ac = blas.Trans, k, r
	}
	br, bc := k, c
	if tB {
		tb, br, bc = blas.Trans, c, k
	}
	A := blas64.General{Rows: ar, Cols: ac, Stride: ac, Data: a}
	if c == 1 { // C is a column: C = op(A)·v + beta·C
		blas64.Gemv(ta, 1, A, blas64.Vector{N: k, Inc: 1, Data: b}, beta, blas64.Vector{N: r, Inc: 1, Data: cm})
		return
	}
	cm = cm[:r*c]
	switch beta {
	case 0:
		clear(cm) // not a scaling: NaN left in reused memory must not survive
	case 1:
	default:
		for i := range cm {
			cm[i] *= beta
		}
	}
	if k == 1 { // outer product: C += a·bᵀ
		for i := range r {
			ai, row := a[i], cm[i*c:(i+1)*c]
			for j := range row {
				row[j] += ai * b[j]
			}
		}
		return
	}
	gemmSerial(ta, tb, A, blas64.General{Rows: br, Cols: bc, Stride: bc, Data: b}, blas64.General{Rows: r, Cols: c, Stride: c, Data: cm})
}
