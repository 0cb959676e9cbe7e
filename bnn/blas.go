package bnn

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Matrix products of the layers. gonum's Dgemm spawns goroutines (and allocates) once C spans
// four 64×64 blocks; parallelism inside one product gains nothing on this workload (DESIGN.md
// §3), so C is tiled into pieces of at most 64×192 that stay on the serial, allocation-free
// path. Products with a single output column use GEMV instead of a GEMM with n = 1.

const tile = 64

// gemm computes C = op(A)·op(B) + beta·C with C r×c (row-major, tight strides) and inner size
// k. a is stored r×k (or k×r when tA), b is k×c (or c×k when tB).
func gemm(tA, tB bool, r, c, k int, a, b []float64, beta float64, cm []float64) {
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac := r, k
	if tA {
		ta, ar, ac = blas.Trans, k, r
	}
	bc := c
	if tB {
		tb, bc = blas.Trans, k
	}
	A := blas64.General{Rows: ar, Cols: ac, Stride: ac, Data: a}
	if k == 1 { // outer product: C = beta·C + a·bᵀ
		for i := range r {
			ai, row := a[i], cm[i*c:(i+1)*c]
			if beta == 0 {
				for j := range row {
					row[j] = ai * b[j]
				}
			} else {
				for j := range row {
					row[j] = beta*row[j] + ai*b[j]
				}
			}
		}
		return
	}
	if c == 1 { // C is a column: C = op(A)·v
		blas64.Gemv(ta, 1, A, blas64.Vector{N: k, Inc: 1, Data: b}, beta, blas64.Vector{N: r, Inc: 1, Data: cm})
		return
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
