package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// GemmNN (whichever implementation the build and the CPU select: the assembly on an AVX2
// machine) and gemmNNGo against a plain triple loop, on every row count up to 9 (full panels
// of four and the repeated-row tails), column counts covering the 8-, 4- and masked 1–3
// column blocks, inner sizes from 1, row strides wider than the matrices, starts at every
// offset mod 4 (unaligned vectors), with and without accumulation; the padding between and
// around the rows of C must keep its sentinel (no stray or tail write beyond m). Tolerance:
// closeTo with the sum of |a·b| as scale (fused multiply-adds round differently).
func TestGemmNN(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	impls := []struct {
		name string
		f    func(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int)
	}{{"exported", GemmNN}, {"go", gemmNNGo}}
	for _, im := range impls {
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9} {
			for _, m := range []int{1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 16, 17, 21, 42, 84} {
				for _, k := range []int{1, 2, 3, 5, 10, 11} {
					for _, add := range []bool{false, true} {
						off := rng.IntN(4)
						lda, ldb, ldc := k+rng.IntN(3), m+rng.IntN(3), m+1+rng.IntN(3)
						A := randVec(rng, off+n*lda)[off:]
						B := randVec(rng, off+k*ldb)[off:]
						buf := make([]float64, off+n*ldc+3)
						for i := range buf {
							buf[i] = 777
						}
						C := buf[off : off+n*ldc]
						for i := range n {
							for j := range m {
								C[i*ldc+j] = rng.NormFloat64()
							}
						}
						want := append([]float64(nil), buf...)
						scale := make([]float64, len(buf))
						for i := range n {
							for j := range m {
								s, sc := 0.0, 0.0
								if add {
									s, sc = want[off+i*ldc+j], math.Abs(want[off+i*ldc+j])
								}
								for p := range k {
									s += A[i*lda+p] * B[p*ldb+j]
									sc += math.Abs(A[i*lda+p] * B[p*ldb+j])
								}
								want[off+i*ldc+j], scale[off+i*ldc+j] = s, sc
							}
						}
						im.f(add, n, k, m, A, lda, B, ldb, C, ldc)
						what := fmt.Sprintf("%s n=%d k=%d m=%d add=%v off=%d", im.name, n, k, m, add, off)
						for i, v := range buf {
							row, col := (i-off)/ldc, (i-off)%ldc
							if i < off || i >= off+n*ldc || col >= m {
								if v != 777 {
									t.Fatalf("%s: padding at %d (row %d col %d) = %v", what, i, row, col, v)
								}
								continue
							}
							if !closeTo(v, want[i], 4*scale[i]) {
								t.Fatalf("%s: C[%d,%d] = %v, want %v", what, row, col, v, want[i])
							}
						}
					}
				}
			}
		}
	}
}

// GemmNN with k = 0 clears C (add false) or leaves it (add true); n = 0 or m = 0 touch
// nothing.
func TestGemmNNEmpty(t *testing.T) {
	C := []float64{1, 2, 3, 4}
	GemmNN(true, 2, 0, 2, nil, 0, nil, 0, C, 2)
	if C[0] != 1 || C[3] != 4 {
		t.Errorf("add with k=0 changed C: %v", C)
	}
	GemmNN(false, 2, 0, 2, nil, 0, nil, 0, C, 2)
	for _, v := range C {
		if v != 0 {
			t.Fatalf("k=0 without add: C = %v, want zeros", C)
		}
	}
	GemmNN(false, 0, 3, 2, nil, 3, nil, 2, nil, 2)
}

// BenchmarkGemmNN times the output layer's forward product of a batched Bernstein draw
// block (S = 10 draws, 11 rows, a group of four coordinates at M = 20 and M = 49).
func BenchmarkGemmNN(b *testing.B) {
	rng := rand.New(rand.NewPCG(63, 64))
	for _, q := range []int{84, 200} {
		b.Run(fmt.Sprint("m=", q), func(b *testing.B) {
			const n, k = 10, 11
			A, B, C := randVec(rng, n*k), randVec(rng, k*q), make([]float64, n*q)
			for b.Loop() {
				GemmNN(false, n, k, q, A, k, B, q, C, q)
			}
		})
	}
}

// GemmNT (the assembly on an AVX2 machine) and gemmNTGo against plain dot products, on row
// counts of A up to 9 and of B up to 10 (full 4 × 3 blocks and every partial one), inner
// sizes covering k mod 4 = 0..3 (the masked first step) from 1 to 86, wider row strides,
// every start offset mod 4, with and without accumulation; the padding of C keeps its
// sentinel. Tolerance as TestGemmNN.
func TestGemmNT(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	impls := []struct {
		name string
		f    func(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int)
	}{{"exported", GemmNT}, {"go", gemmNTGo}}
	for _, im := range impls {
		for n := 1; n <= 9; n++ {
			for m := 1; m <= 10; m++ {
				for _, k := range []int{1, 2, 3, 4, 5, 6, 7, 8, 10, 21, 42, 84, 86} {
					for _, add := range []bool{false, true} {
						off := rng.IntN(4)
						lda, ldb, ldc := k+rng.IntN(3), k+rng.IntN(3), m+1+rng.IntN(3)
						A := randVec(rng, off+n*lda)[off:]
						B := randVec(rng, off+m*ldb)[off:]
						buf := make([]float64, off+n*ldc+3)
						for i := range buf {
							buf[i] = 777
						}
						C := buf[off : off+n*ldc]
						for i := range n {
							for j := range m {
								C[i*ldc+j] = rng.NormFloat64()
							}
						}
						want := append([]float64(nil), buf...)
						scale := make([]float64, len(buf))
						for i := range n {
							for j := range m {
								s, sc := 0.0, 0.0
								if add {
									s, sc = want[off+i*ldc+j], math.Abs(want[off+i*ldc+j])
								}
								for p := range k {
									s += A[i*lda+p] * B[j*ldb+p]
									sc += math.Abs(A[i*lda+p] * B[j*ldb+p])
								}
								want[off+i*ldc+j], scale[off+i*ldc+j] = s, sc
							}
						}
						im.f(add, n, k, m, A, lda, B, ldb, C, ldc)
						what := fmt.Sprintf("%s n=%d k=%d m=%d add=%v off=%d", im.name, n, k, m, add, off)
						for i, v := range buf {
							row, col := (i-off)/ldc, (i-off)%ldc
							if i < off || i >= off+n*ldc || col >= m {
								if v != 777 {
									t.Fatalf("%s: padding at %d (row %d col %d) = %v", what, i, row, col, v)
								}
								continue
							}
							if !closeTo(v, want[i], 4*scale[i]) {
								t.Fatalf("%s: C[%d,%d] = %v, want %v", what, row, col, v, want[i])
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkGemmNT times the output layer's input adjoint of a batched Bernstein block
// (S = 10 draws against 10 rows of 84 or 200 packed weights), as GemmNT and as GemmNN
// against the transposed weights.
func BenchmarkGemmNT(b *testing.B) {
	rng := rand.New(rand.NewPCG(67, 68))
	for _, q := range []int{84, 200} {
		const n, m = 10, 10
		A, B, C := randVec(rng, n*q), randVec(rng, m*q), make([]float64, n*m)
		b.Run(fmt.Sprint("nt/k=", q), func(b *testing.B) {
			for b.Loop() {
				GemmNT(false, n, q, m, A, q, B, q, C, m)
			}
		})
		b.Run(fmt.Sprint("nn/k=", q), func(b *testing.B) {
			for b.Loop() {
				GemmNN(false, n, q, m, A, q, B, m, C, m)
			}
		})
	}
}

// Comb4 (the assembly on an AVX2 machine) and comb4Go against the plain formula on every
// length up to 4·33 in steps of four (the two-vector loop and its one-vector tail) at
// unaligned starts, with the memory after dst untouched, and aliased (dst = x).
func TestComb4(t *testing.T) {
	rng := rand.New(rand.NewPCG(69, 70))
	a := []float64{0.7, -1.3, 2.1, 0.4}
	for _, f := range []func(dst, a []float64, b float64, x, y []float64){Comb4, comb4Go} {
		for n := 0; n <= 132; n += 4 {
			for off := range 4 {
				x, _ := guarded(rng, n, (off+1)%4)
				y, _ := guarded(rng, n, (off+2)%4)
				dst, intact := guarded(rng, n, off)
				f(dst, a, -0.6, x, y)
				for i := range n {
					if want := a[i%4]*x[i] - 0.6*y[i]; !closeTo(dst[i], want, 4) {
						t.Fatalf("n=%d off=%d: dst[%d] = %v, want %v", n, off, i, dst[i], want)
					}
				}
				if !intact() {
					t.Fatalf("n=%d off=%d: write outside dst", n, off)
				}
				want := make([]float64, n)
				for i := range n {
					want[i] = a[i%4]*x[i] + 2*y[i]
				}
				f(x, a, 2, x, y)
				checkSlice(t, "aliased", x, want, 4)
			}
		}
	}
}

// BernsteinBasis4 (the assembly on an AVX2 machine) against bernBasis4Go bit for bit, for
// degrees 0 to 98 and 998, points across [0, 1] (both directions, the ends, an unused lane
// with x = y = 0 and start 0), unaligned slices; and against the defining sum Σ_i b_i = 1 to
// (2n+4)·ε (the relative error bound of the recurrence and the start).
func TestBernsteinBasis4(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	xs := []float64{0.5, 0.3, 1e-3, 1e-9, 0.999999, 1 - 1e-9, 0, 1, 0.02, 0.97}
	for _, n := range []int{0, 1, 2, 3, 5, 18, 47, 98, 998} {
		up := make([]float64, n+1)
		for i := range up {
			up[i] = float64(n-i) / float64(i+1)
		}
		for trial := range 40 {
			xy, start := make([]float64, 8), make([]float64, 4)
			for l := range 4 {
				x := xs[rng.IntN(len(xs))]
				if trial%3 == 0 {
					x = rng.Float64()
				}
				if rng.IntN(7) == 0 {
					continue // unused lane: x = y = 0, start 0
				}
				xy[l], xy[4+l] = x, 1-x
				start[l] = math.Pow(max(x, 1-x), float64(n))
			}
			off := rng.IntN(4)
			got := randVec(rng, off+4*(n+1))[off:]
			tmp := randVec(rng, off+4*(n+2))[off:]
			want := make([]float64, 4*(n+1))
			BernsteinBasis4(n, up, xy, start, tmp, got)
			bernBasis4Go(n, up, xy, start, nil, want)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d lane %d (x=%g): b[%d] = %v, Go %v", n, i%4, xy[i%4], i/4, got[i], want[i])
				}
			}
			for l := range 4 {
				sum := 0.0
				for i := 0; i <= n; i++ {
					sum += got[4*i+l]
				}
				if xy[l] == 0 && xy[4+l] == 0 {
					if sum != 0 {
						t.Fatalf("n=%d: unused lane %d sums to %v", n, l, sum)
					}
					continue
				}
				if math.Abs(sum-1) > float64(2*n+4)*0x1p-52 {
					t.Fatalf("n=%d x=%g: Σ b_i = %.17g", n, xy[l], sum)
				}
			}
		}
	}
}

// Gather4 and Scatter4Add (the assembly on an AVX2 machine) against the plain loops bit for
// bit (products by a 0/1 or general lane weight, then one addition), at every run count up
// to 30, strides from 4 to 13, unaligned starts, with the memory around the outputs checked
// (the scatter must leave the entries between the runs alone).
func TestGather4Scatter4Add(t *testing.T) {
	rng := rand.New(rand.NewPCG(77, 78))
	lane := []float64{1, 0, -0.75, 1}
	for _, im := range []struct {
		gather  func(dst, src []float64, s int, lane []float64)
		scatter func(dst []float64, s int, src, lane []float64)
	}{{Gather4, Scatter4Add}, {gather4Go, scatter4AddGo}} {
		for n := 0; n <= 30; n++ {
			for s := 4; s <= 13; s++ {
				off := rng.IntN(4)
				src, _ := guarded(rng, max(0, (n-1)*s+4), (off+1)%4)
				if n == 0 {
					src = src[:0]
				}
				dst, intact := guarded(rng, 4*n, off)
				im.gather(dst, src, s, lane)
				for k := range n {
					for l := range 4 {
						if want := src[k*s+l] * lane[l]; dst[4*k+l] != want {
							t.Fatalf("Gather4 n=%d s=%d: dst[%d] = %v, want %v", n, s, 4*k+l, dst[4*k+l], want)
						}
					}
				}
				if !intact() {
					t.Fatalf("Gather4 n=%d s=%d: write outside dst", n, s)
				}
				acc, intact2 := guarded(rng, max(0, (n-1)*s+4), off)
				if n == 0 {
					acc = acc[:0]
				}
				want := append([]float64(nil), acc...)
				for k := range n {
					for l := range 4 {
						want[k*s+l] += dst[4*k+l] * lane[l]
					}
				}
				im.scatter(acc, s, dst, lane)
				for i := range want {
					if acc[i] != want[i] {
						t.Fatalf("Scatter4Add n=%d s=%d: dst[%d] = %v, want %v", n, s, i, acc[i], want[i])
					}
				}
				if !intact2() {
					t.Fatalf("Scatter4Add n=%d s=%d: write outside dst", n, s)
				}
			}
		}
	}
}

// Spread and CombCompact (the assembly for nl = 2 on an AVX2 machine) and their Go loops
// against the plain formulas for nl = 1, 2, 3, every run count up to 25, unaligned starts,
// with the lanes of dst beyond nl and the memory around the outputs untouched.
func TestSpreadCombCompact(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	a := []float64{0.7, -1.3, 2.1}
	for _, im := range []struct {
		spread func(dst, src []float64, nl int)
		comb   func(dst []float64, nl int, a []float64, b float64, x, y []float64)
	}{{Spread, CombCompact}, {spreadGo, combCompactGo}} {
		for nl := 1; nl <= 3; nl++ {
			for n := 0; n <= 25; n++ {
				off := rng.IntN(4)
				src, _ := guarded(rng, nl*n, (off+1)%4)
				m := max(0, 4*n-(4-nl))
				dst, intact := guarded(rng, m, off)
				old := append([]float64(nil), dst...)
				im.spread(dst, src, nl)
				for i := range m {
					k, l := i/4, i%4
					want := old[i]
					if l < nl {
						want = src[nl*k+l]
					}
					if dst[i] != want {
						t.Fatalf("Spread nl=%d n=%d: dst[%d] = %v, want %v", nl, n, i, dst[i], want)
					}
				}
				if !intact() {
					t.Fatalf("Spread nl=%d n=%d: write outside dst", nl, n)
				}
				x, _ := guarded(rng, m, (off+2)%4)
				y, _ := guarded(rng, m, (off+3)%4)
				out, intact2 := guarded(rng, nl*n, off)
				im.comb(out, nl, a[:nl], 0.4, x, y)
				for k := range n {
					for l := range nl {
						if want := a[l]*x[4*k+l] + 0.4*y[4*k+l]; !closeTo(out[nl*k+l], want, 4) {
							t.Fatalf("CombCompact nl=%d n=%d: [%d] = %v, want %v", nl, n, nl*k+l, out[nl*k+l], want)
						}
					}
				}
				if !intact2() {
					t.Fatalf("CombCompact nl=%d n=%d: write outside dst", nl, n)
				}
			}
		}
	}
}
