package ad

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// gemmChunk is the largest edge of a C tile handed to gonum's Dgemm: gonum goes parallel (and
// allocates goroutines and channels) once C spans 4 or more 64×64 blocks, and parallelism inside
// one op gains nothing here (DESIGN.md §3: parallelise over samples instead). Tiles of at most
// 64×192 or 192×64 stay on its serial, allocation-free path.
const gemmTile = 64

// gemm computes C = alpha·op(A)·op(B) + beta·C serially, tiling C so that each gonum call stays
// below its parallel threshold. Shapes follow blas64.Gemm.
func gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	m, n := c.Rows, c.Cols
	rowStep, colStep := 3*gemmTile, gemmTile
	if n <= gemmTile {
		rowStep = 3 * gemmTile
		colStep = n
	} else if m <= gemmTile {
		rowStep, colStep = m, 3*gemmTile
	}
	for i := 0; i < m; i += rowStep {
		mi := min(rowStep, m-i)
		ai := sub(a, tA, i, mi, true)
		for j := 0; j < n; j += colStep {
			nj := min(colStep, n-j)
			bj := sub(b, tB, j, nj, false)
			cij := blas64.General{Rows: mi, Cols: nj, Stride: c.Stride, Data: c.Data[i*c.Stride+j:]}
			blas64.Gemm(tA, tB, alpha, ai, bj, beta, cij)
		}
	}
}

// sub restricts op(A) to rows [i, i+k) when left (A is the left factor) or op(B) to columns
// [i, i+k) otherwise, returning the matching view of the stored matrix.
func sub(x blas64.General, t blas.Transpose, i, k int, left bool) blas64.General {
	// For the left factor, the rows of op(A) are rows of A (NoTrans) or columns of A (Trans).
	// For the right factor, the columns of op(B) are columns of B (NoTrans) or rows of B (Trans).
	rowsOfStored := (left && t == blas.NoTrans) || (!left && t == blas.Trans)
	if rowsOfStored {
		if k == x.Rows {
			return x
		}
		return blas64.General{Rows: k, Cols: x.Cols, Stride: x.Stride, Data: x.Data[i*x.Stride:]}
	}
	if k == x.Cols {
		return x
	}
	return blas64.General{Rows: x.Rows, Cols: k, Stride: x.Stride, Data: x.Data[i:]}
}
