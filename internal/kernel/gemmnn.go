package kernel

import "fmt"

// GemmNN sets C = A·B (add false) or C += A·B (add true) for A n×k, B k×m and C n×m, all
// row-major with row strides lda ≥ k, ldb ≥ m and ldc ≥ m:
//
//	C[i·ldc + j] (+)= Σ_{p<k} A[i·lda + p]·B[p·ldb + j].
//
// It is written for the small products of a neural network over a batch of draws (n and k
// up to a few tens, m up to a few hundreds; nn.MADE's layers in flow's batched Bernstein
// node): the assembly of the default amd64 build keeps a block of four rows and eight
// columns of C in registers over the whole inner dimension (eight fused multiply-adds per
// two loads of B and four broadcasts of A), then blocks of four and a masked tail of one to
// three columns; rows beyond the last multiple of four are done by a block that repeats its
// last row. Each entry sums its k products in the order p = 0, 1, … onto C's old value (or
// 0), fused in the assembly, so results differ from the pure-Go loop in the last bits. C
// must not overlap A or B. Nothing allocates. Cost: n·k·m multiply-adds.
func GemmNN(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int) {
	if n < 0 || k < 0 || m < 0 {
		panic(fmt.Sprintf("kernel: GemmNN: n=%d, k=%d, m=%d", n, k, m))
	}
	if n == 0 || m == 0 {
		return
	}
	checkMat("GemmNN", "C", C, ldc, n, m)
	if k == 0 {
		if !add {
			for i := range n {
				clear(C[i*ldc : i*ldc+m])
			}
		}
		return
	}
	checkMat("GemmNN", "A", A, lda, n, k)
	checkMat("GemmNN", "B", B, ldb, k, m)
	gemmNN(add, n, k, m, A, lda, B, ldb, C, ldc)
	clearUpper()
}

// gemmNNGo is GemmNN in pure Go (n, k, m ≥ 1 and the shapes checked), one row of C at a
// time, the products added in the order of p.
func gemmNNGo(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int) {
	for i := range n {
		c := C[i*ldc : i*ldc+m]
		if !add {
			clear(c)
		}
		for p, ap := range A[i*lda : i*lda+k] {
			b := B[p*ldb : p*ldb+m]
			for j, bj := range b {
				c[j] += ap * bj
			}
		}
	}
}

// GemmNT sets C = A·Bᵀ (add false) or C += A·Bᵀ (add true) for A n×k, B m×k and C n×m, all
// row-major with row strides lda ≥ k, ldb ≥ k and ldc ≥ m:
//
//	C[i·ldc + j] (+)= Σ_{p<k} A[i·lda + p]·B[j·ldb + p],
//
// n·m dot products of length k (a layer's input adjoint Ḡ·Wᵀ over a batch, without the
// transposed weights). The assembly of the default amd64 build computes blocks of four rows
// of A by three rows of B in twelve vector accumulators, four entries of p per step (the
// last k mod 4 first, by masked loads), then sums each accumulator's lanes; the summation
// order therefore differs from the pure-Go loop's (p in order). C must not overlap A or B.
// Nothing allocates. Cost: n·k·m multiply-adds.
func GemmNT(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int) {
	if n < 0 || k < 0 || m < 0 {
		panic(fmt.Sprintf("kernel: GemmNT: n=%d, k=%d, m=%d", n, k, m))
	}
	if n == 0 || m == 0 {
		return
	}
	checkMat("GemmNT", "C", C, ldc, n, m)
	if k == 0 {
		if !add {
			for i := range n {
				clear(C[i*ldc : i*ldc+m])
			}
		}
		return
	}
	checkMat("GemmNT", "A", A, lda, n, k)
	checkMat("GemmNT", "B", B, ldb, m, k)
	gemmNT(add, n, k, m, A, lda, B, ldb, C, ldc)
	clearUpper()
}

// gemmNTGo is GemmNT in pure Go (n, k, m ≥ 1 and the shapes checked).
func gemmNTGo(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int) {
	for i := range n {
		a := A[i*lda : i*lda+k]
		c := C[i*ldc : i*ldc+m]
		for j := range c {
			b := B[j*ldb : j*ldb+k]
			s := 0.0
			for p, ap := range a {
				s += ap * b[p]
			}
			if add {
				c[j] += s
			} else {
				c[j] = s
			}
		}
	}
}
