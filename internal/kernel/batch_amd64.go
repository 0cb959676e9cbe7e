//go:build amd64 && !goexperiment.simd && !purego

package kernel

// gemmNN runs GemmNN's assembly (gemm4Asm) on panels of four rows of A and C when useAsm,
// else the pure-Go loop. A last panel of r < 4 rows passes its last row's pointers for the
// missing rows: the kernel loads every row of a block of C before it stores any, so the
// repeated rows compute and store the same values.
func gemmNN(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int) {
	if !useAsm {
		gemmNNGo(add, n, k, m, A, lda, B, ldb, C, ldc)
		return
	}
	fl := 0
	if add {
		fl = 1
	}
	for i := 0; i < n; i += 4 {
		l := min(4, n-i) - 1
		i1, i2, i3 := i+min(1, l), i+min(2, l), i+min(3, l)
		gemm4Asm(k, m, fl, &A[i*lda], &A[i1*lda], &A[i2*lda], &A[i3*lda], &B[0], ldb,
			&C[i*ldc], &C[i1*ldc], &C[i2*ldc], &C[i3*ldc])
	}
}

// gemm4Asm (gemm_amd64.s) sets rows c0..c3 of C (m columns) to (add ≠ 0: adds to them) the
// products of rows a0..a3 of A (k ≥ 1 entries) with B (k×m, row stride ldb). m ≥ 1.
//
//go:noescape
func gemm4Asm(k, m, add int, a0, a1, a2, a3, b *float64, ldb int, c0, c1, c2, c3 *float64)

// gemmNT runs GemmNT's assembly (gemmNT43Asm) on blocks of four rows of A and three rows of
// B when useAsm, else the pure-Go loop. A block that is not full (the last rows of A or B)
// repeats its last row's pointers and stores only its real rows and columns.
func gemmNT(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int) {
	if !useAsm {
		gemmNTGo(add, n, k, m, A, lda, B, ldb, C, ldc)
		return
	}
	fl := 0
	if add {
		fl = 1
	}
	for i := 0; i < n; i += 4 {
		ni := min(4, n-i)
		i1, i2, i3 := i+min(1, ni-1), i+min(2, ni-1), i+min(3, ni-1)
		a0, a1, a2, a3 := &A[i*lda], &A[i1*lda], &A[i2*lda], &A[i3*lda]
		for j := 0; j < m; j += 3 {
			nj := min(3, m-j)
			b0, b1, b2 := &B[j*ldb], &B[(j+min(1, nj-1))*ldb], &B[(j+min(2, nj-1))*ldb]
			gemmNT43Asm(k, fl, ni, nj, a0, a1, a2, a3, b0, b1, b2, &C[i*ldc+j], &C[i1*ldc+j], &C[i2*ldc+j], &C[i3*ldc+j])
		}
	}
}

// gemmNT43Asm (batch_amd64.s) sets (add ≠ 0: adds to) c_i[j] for i < ni ≤ 4 and j < nj ≤ 3
// the dot products of rows a_i and b_j, each of k ≥ 1 entries.
//
//go:noescape
func gemmNT43Asm(k, add, ni, nj int, a0, a1, a2, a3, b0, b1, b2, c0, c1, c2, c3 *float64)

func comb4(dst, a []float64, b float64, x, y []float64) {
	if useAsm {
		comb4Asm(dst, a, b, x, y)
		return
	}
	comb4Go(dst, a, b, x, y)
}

// comb4Asm (batch_amd64.s) is Comb4 for len(dst) a multiple of 4 (checked by Comb4).
//
//go:noescape
func comb4Asm(dst, a []float64, b float64, x, y []float64)

func bernBasis4(n int, up, xy, start, tmp, b []float64) {
	if useAsm {
		bernBasis4Asm(n, up, xy, start, tmp, b, basisTiny)
		return
	}
	bernBasis4Go(n, up, xy, start, tmp, b)
}

// bernBasis4Asm (batch_amd64.s) is BernsteinBasis4 on the lengths it checks.
//
//go:noescape
func bernBasis4Asm(n int, up, xy, start, tmp, b []float64, tiny float64)

func logv(dst, x []float64) {
	if useAsm {
		logAsm(dst, x)
		return
	}
	logGo(dst, x)
}

// logAsm (batch_amd64.s) is Log's core for positive normal finite x (len(dst) = len(x)).
//
//go:noescape
func logAsm(dst, x []float64)

func gather4(dst, src []float64, s int, lane []float64) {
	if useAsm {
		gather4Asm(dst, src, s, lane)
		return
	}
	gather4Go(dst, src, s, lane)
}

func scatter4Add(dst []float64, s int, src, lane []float64) {
	if useAsm {
		scatter4AddAsm(dst, s, src, lane)
		return
	}
	scatter4AddGo(dst, s, src, lane)
}

// gather4Asm and scatter4AddAsm (batch_amd64.s) are Gather4 and Scatter4Add on the lengths
// they check.
//
//go:noescape
func gather4Asm(dst, src []float64, s int, lane []float64)

//go:noescape
func scatter4AddAsm(dst []float64, s int, src, lane []float64)

// expv runs the assembly (expAsm) when every x is ≤ 0 (a NaN or a positive x sends the whole
// call to the pure-Go loop, whose special cases the assembly lacks); checked before any
// output is written, so dst may alias x.
func expv(dst, x []float64) {
	if useAsm {
		neg := true
		for _, v := range x {
			neg = neg && v <= 0
		}
		if neg {
			expAsm(dst, x)
			return
		}
	}
	expGo(dst, x)
}

// expAsm (asm_amd64.s) is Exp for x ≤ 0 (len(dst) = len(x)).
//
//go:noescape
func expAsm(dst, x []float64)

func spread(dst, src []float64, nl int) {
	if useAsm && nl == 2 {
		spread2Asm(dst, src)
		return
	}
	spreadGo(dst, src, nl)
}

func combCompact(dst []float64, nl int, a []float64, b float64, x, y []float64) {
	if useAsm && nl == 2 {
		comb2Asm(dst, a, b, x, y)
		return
	}
	combCompactGo(dst, nl, a, b, x, y)
}

// spread2Asm and comb2Asm (batch_amd64.s) are Spread and CombCompact for nl = 2 on the
// lengths they check (SSE-width vectors: no upper halves are touched).
//
//go:noescape
func spread2Asm(dst, src []float64)

//go:noescape
func comb2Asm(dst, a []float64, b float64, x, y []float64)

func tanhv(dst, x []float64) {
	if useAsm {
		tanhAsm(dst, x, -40)
		return
	}
	tanhGo(dst, x)
}

// tanhAsm (asm_amd64.s) is Tanh (len(dst) = len(x)); lo = −40 clamps −2|x| (tanh(20) rounds
// to 1).
//
//go:noescape
func tanhAsm(dst, x []float64, lo float64)
