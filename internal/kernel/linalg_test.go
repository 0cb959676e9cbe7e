package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// closeTo reports whether got and want agree to 1e-13 relative to scale: the kernels and the
// naive loops below sum the same products in different orders and with or without FMA, which
// moves results by a few ulp of the largest partial sum (≤ 100 terms of size O(1) here).
func closeTo(got, want, scale float64) bool {
	return math.Abs(got-want) <= 1e-13*max(scale, 1)
}

func checkSlice(t *testing.T, what string, got, want []float64, scale float64) {
	t.Helper()
	for i := range want {
		if !closeTo(got[i], want[i], scale) {
			t.Errorf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
			return
		}
	}
}

func TestImpl(t *testing.T) {
	t.Logf("kernel implementation: %s", Impl())
	if s := Impl(); s != "go" && s != "avx2+fma" && s != "avx2+fma asm" && s != "avx2+fma asm, avx-512 softplus" {
		t.Errorf("Impl() = %q", s)
	}
}

var lengths = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 50, 67}

func TestAxpyDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range lengths {
		x, y := randVec(rng, n), randVec(rng, n)
		want := append([]float64(nil), y...)
		wantDot := 0.0
		for i := range x {
			want[i] += 0.7 * x[i]
			wantDot += x[i] * y[i]
		}
		got := append([]float64(nil), y...)
		Axpy(0.7, x, got)
		checkSlice(t, fmt.Sprintf("Axpy n=%d", n), got, want, 1)
		if d := Dot(x, y); !closeTo(d, wantDot, float64(n)) {
			t.Errorf("Dot n=%d = %v, want %v", n, d, wantDot)
		}
	}
}

func TestGemvGer(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, r := range lengths {
		for _, c := range lengths {
			lda := c + 3 // a stride larger than the row length
			A := randVec(rng, max(r*lda, 1))
			x, y := randVec(rng, c), randVec(rng, r)
			// GemvN: y += A·x.
			want := append([]float64(nil), y...)
			for i := range r {
				for j := range c {
					want[i] += A[i*lda+j] * x[j]
				}
			}
			got := append([]float64(nil), y...)
			GemvN(A, lda, x, got)
			checkSlice(t, fmt.Sprintf("GemvN %d×%d", r, c), got, want, float64(c))
			// GemvT: x' += Aᵀ·y' with A r×c, y' of length r, x' of length c.
			xt, yt := randVec(rng, c), randVec(rng, r)
			want = append([]float64(nil), xt...)
			for i := range r {
				for j := range c {
					want[j] += A[i*lda+j] * yt[i]
				}
			}
			got = append([]float64(nil), xt...)
			GemvT(A, lda, yt, got)
			checkSlice(t, fmt.Sprintf("GemvT %d×%d", r, c), got, want, float64(r))
			// Ger: A += y·xᵀ, leaving the gaps between rows alone.
			wantA := append([]float64(nil), A...)
			for i := range r {
				for j := range c {
					wantA[i*lda+j] += y[i] * x[j]
				}
			}
			gotA := append([]float64(nil), A...)
			Ger(y, x, gotA, lda)
			checkSlice(t, fmt.Sprintf("Ger %d×%d", r, c), gotA, wantA, 1)
			// GemvTGer: xt += Aᵀ·yt and B += yt·xᵀ together, and each alone.
			B := randVec(rng, max(r*lda, 1))
			wantX := append([]float64(nil), xt...)
			GemvT(A, lda, yt, wantX)
			wantB := append([]float64(nil), B...)
			Ger(yt, x, wantB, lda)
			gotX, gotB := append([]float64(nil), xt...), append([]float64(nil), B...)
			GemvTGer(A, lda, yt, x, gotX, gotB)
			checkSlice(t, fmt.Sprintf("GemvTGer y %d×%d", r, c), gotX, wantX, float64(r))
			checkSlice(t, fmt.Sprintf("GemvTGer B %d×%d", r, c), gotB, wantB, 1)
			gotX, gotB = append([]float64(nil), xt...), append([]float64(nil), B...)
			GemvTGer(A, lda, yt, x, gotX, nil)
			GemvTGer(A, lda, yt, x, nil, gotB)
			checkSlice(t, fmt.Sprintf("GemvTGer y alone %d×%d", r, c), gotX, wantX, float64(r))
			checkSlice(t, fmt.Sprintf("GemvTGer B alone %d×%d", r, c), gotB, wantB, 1)
		}
	}
}

// denseRef is Y = X·W + b (and ReLU) by the definition.
func denseRef(X []float64, n, k int, W []float64, m int, b []float64, relu bool) []float64 {
	Y := make([]float64, n*m)
	for i := range n {
		for c := range m {
			s := b[c]
			for j := range k {
				s += X[i*k+j] * W[j*m+c]
			}
			if relu {
				s = max(s, 0)
			}
			Y[i*m+c] = s
		}
	}
	return Y
}

type denseImpl struct {
	name  string
	dense func(Y, X []float64, n, k int, W []float64, m int, b []float64, relu bool)
	backW func(Wadj, badj, X []float64, n, k int, G []float64, m int)
	backX func(Xadj []float64, n, k int, G []float64, m int, W []float64)
}

func denseImpls() []denseImpl {
	return []denseImpl{
		{name: "exported", dense: Dense, backW: DenseBackW, backX: DenseBackX},
		{name: "go", dense: func(Y, X []float64, n, k int, W []float64, m int, b []float64, relu bool) {
			if n > 0 && m > 0 {
				denseGo(Y, X, n, k, W, m, b, relu)
			}
		}, backW: func(Wadj, badj, X []float64, n, k int, G []float64, m int) {
			if n > 0 && m > 0 && k > 0 {
				denseBackWGo(Wadj, X, n, k, G, m)
			}
			colSumsGo(badj, G, n, m)
		}, backX: func(Xadj []float64, n, k int, G []float64, m int, W []float64) {
			if n > 0 && m > 0 && k > 0 {
				denseBackXGo(Xadj, n, k, G, m, W)
			}
		}},
	}
}

func TestDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, im := range denseImpls() {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 9, 40} {
			for _, k := range []int{0, 1, 2, 3, 4, 5, 8, 9} {
				for _, m := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 50} {
					X, W, b := randVec(rng, n*k), randVec(rng, k*m), randVec(rng, m)
					for _, relu := range []bool{false, true} {
						name := fmt.Sprintf("%s n=%d k=%d m=%d relu=%v", im.name, n, k, m, relu)
						Y := randVec(rng, n*m)
						im.dense(Y, X, n, k, W, m, b, relu)
						want := denseRef(X, n, k, W, m, b, relu)
						checkSlice(t, "Dense "+name, Y, want, float64(k))
						if relu {
							for i, v := range Y {
								if v < 0 || (v == 0 && math.Signbit(v)) {
									t.Errorf("Dense %s: Y[%d] = %v after ReLU", name, i, v)
									break
								}
							}
						}
					}
					// Backward: Wadj += XᵀG, badj += 1ᵀG, Xadj += GWᵀ on top of old values.
					G := randVec(rng, n*m)
					Wadj, badj, Xadj := randVec(rng, k*m), randVec(rng, m), randVec(rng, n*k)
					wantW, wantB, wantX := append([]float64(nil), Wadj...), append([]float64(nil), badj...), append([]float64(nil), Xadj...)
					for i := range n {
						for c := range m {
							wantB[c] += G[i*m+c]
							for j := range k {
								wantW[j*m+c] += X[i*k+j] * G[i*m+c]
								wantX[i*k+j] += G[i*m+c] * W[j*m+c]
							}
						}
					}
					im.backW(Wadj, badj, X, n, k, G, m)
					im.backX(Xadj, n, k, G, m, W)
					name := fmt.Sprintf("%s n=%d k=%d m=%d", im.name, n, k, m)
					checkSlice(t, "DenseBackW W "+name, Wadj, wantW, float64(n))
					checkSlice(t, "DenseBackW b "+name, badj, wantB, float64(n))
					checkSlice(t, "DenseBackX "+name, Xadj, wantX, float64(m))
				}
			}
		}
	}
	// ReLU as Go's max(v, 0): NaN stays NaN, and zeros come out as +0.
	negZero := math.Copysign(0, -1)
	for _, im := range denseImpls() {
		for _, m := range []int{3, 4, 9} {
			const n, k = 5, 2
			X, W, b := make([]float64, n*k), make([]float64, k*m), make([]float64, m)
			for i := range b {
				b[i] = negZero
			}
			X[2*k] = math.NaN() // row 2 is NaN throughout
			for _, relu := range []bool{false, true} {
				Y := make([]float64, n*m)
				im.dense(Y, X, n, k, W, m, b, relu)
				for i, v := range Y {
					switch {
					case i/m == 2:
						if !math.IsNaN(v) {
							t.Errorf("Dense %s m=%d relu=%v: Y[%d] = %v, want NaN", im.name, m, relu, i, v)
						}
					case v != 0 || (relu && math.Signbit(v)):
						t.Errorf("Dense %s m=%d relu=%v: Y[%d] = %v, want 0 (+0 after ReLU)", im.name, m, relu, i, v)
					}
				}
			}
		}
	}
	// nil adjoints are skipped.
	DenseBackW(nil, make([]float64, 3), make([]float64, 4), 2, 2, make([]float64, 6), 3)
	DenseBackW(make([]float64, 6), nil, make([]float64, 4), 2, 2, make([]float64, 6), 3)
}

func TestReLUBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range lengths {
		adj, y := randVec(rng, n), randVec(rng, n)
		for i := range y {
			switch i % 5 {
			case 0:
				y[i] = 0
			case 1:
				y[i] = max(y[i], 0)
			case 2:
				y[i] = math.NaN()
			}
		}
		want := make([]float64, n)
		for i := range y {
			if y[i] > 0 {
				want[i] = adj[i]
			}
		}
		for _, f := range []func(g, adj, y []float64){ReLUBack, reluBackGo} {
			g := randVec(rng, n)
			f(g, adj, y)
			for i := range want {
				if g[i] != want[i] {
					t.Errorf("ReLUBack n=%d: g[%d] = %v, want %v (y=%v)", n, i, g[i], want[i], y[i])
				}
			}
			g = append([]float64(nil), adj...)
			f(g, g, y) // in place
			for i := range want {
				if g[i] != want[i] {
					t.Errorf("ReLUBack in place n=%d: g[%d] = %v, want %v", n, i, g[i], want[i])
				}
			}
		}
	}
}

func TestReLUBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, n := range []int{0, 1, 5, 63, 64, 65, 128, 200, 3200} {
		y, adj := randVec(rng, n), randVec(rng, n)
		for i := range y {
			switch i % 7 {
			case 0:
				y[i] = 0
			case 1:
				y[i] = math.NaN()
			case 2:
				y[i] = math.Copysign(0, -1)
			}
		}
		type impl struct {
			name string
			pos  func([]uint64, []float64)
			back func(g, adj []float64, bits []uint64)
		}
		for _, im := range []impl{{"exported", PositiveBits, ReLUBackBits}, {"go", positiveBitsGo, reluBackBitsGo}} {
			bits := make([]uint64, (n+63)/64+1)
			for i := range bits {
				bits[i] = ^uint64(0) // stale bits must be overwritten
			}
			im.pos(bits, y)
			for i := 0; i < len(bits)*64 && i < ((n+63)/64)*64; i++ {
				want := i < n && y[i] > 0
				if got := bits[i/64]>>(i%64)&1 == 1; got != want {
					t.Fatalf("%s PositiveBits n=%d: bit %d = %v, want %v (y=%v)", im.name, n, i, got, want, y[min(i, n-1)])
				}
			}
			g := randVec(rng, n)
			im.back(g, adj, bits)
			want := make([]float64, n)
			ReLUBack(want, adj, y)
			for i := range want {
				if math.Float64bits(g[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s ReLUBackBits n=%d: g[%d] = %v, want %v", im.name, n, i, g[i], want[i])
				}
			}
		}
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Axpy":         func() { Axpy(1, make([]float64, 3), make([]float64, 4)) },
		"Dot":          func() { Dot(make([]float64, 3), make([]float64, 4)) },
		"GemvN":        func() { GemvN(make([]float64, 5), 3, make([]float64, 3), make([]float64, 2)) },
		"GemvT stride": func() { GemvT(make([]float64, 8), 1, make([]float64, 2), make([]float64, 2)) },
		"Ger":          func() { Ger(make([]float64, 3), make([]float64, 3), make([]float64, 8), 3) },
		"GemvTGer B": func() {
			GemvTGer(make([]float64, 9), 3, make([]float64, 3), make([]float64, 3), nil, make([]float64, 8))
		},
		"GemvTGer y": func() {
			GemvTGer(make([]float64, 9), 3, make([]float64, 3), make([]float64, 3), make([]float64, 2), nil)
		},
		"Exp":            func() { Exp(make([]float64, 3), make([]float64, 4)) },
		"Log1p":          func() { Log1p(make([]float64, 3), make([]float64, 4)) },
		"BernoulliLogit": func() { BernoulliLogit(make([]float64, 3), make([]int, 4)) },
		"Dense X": func() {
			Dense(make([]float64, 6), make([]float64, 3), 2, 2, make([]float64, 6), 3, make([]float64, 3), false)
		},
		"Dense b": func() {
			Dense(make([]float64, 6), make([]float64, 4), 2, 2, make([]float64, 6), 3, make([]float64, 2), false)
		},
		"ReLUBack":     func() { ReLUBack(make([]float64, 3), make([]float64, 3), make([]float64, 2)) },
		"DenseBackW":   func() { DenseBackW(make([]float64, 6), nil, make([]float64, 4), 2, 2, make([]float64, 5), 3) },
		"DenseBackW b": func() { DenseBackW(nil, make([]float64, 2), make([]float64, 4), 2, 2, make([]float64, 6), 3) },
		"DenseBackX":   func() { DenseBackX(make([]float64, 3), 2, 2, make([]float64, 6), 3, make([]float64, 6)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic on wrong lengths", name)
				}
			}()
			f()
		}()
	}
}

func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const n, k, m = 37, 8, 50
	X, W, b, Y, G := randVec(rng, n*k), randVec(rng, k*m), randVec(rng, m), make([]float64, n*m), randVec(rng, n*m)
	eta, y := randVec(rng, n), make([]int, n)
	bits := make([]uint64, (n*m+63)/64)
	for name, f := range map[string]func(){
		"Axpy":           func() { Axpy(2, X, X) },
		"Dot":            func() { Dot(X, X) },
		"GemvN":          func() { GemvN(G, m, b, eta) },
		"GemvT":          func() { GemvT(G, m, eta, b) },
		"Ger":            func() { Ger(eta, b, G, m) },
		"GemvTGer":       func() { GemvTGer(G, m, eta, b, W[:m], Y) },
		"Exp":            func() { Exp(Y, G) },
		"Log1p":          func() { Log1p(Y, Y) },
		"BernoulliLogit": func() { BernoulliLogit(eta, y) },
		"Dense":          func() { Dense(Y, X, n, k, W, m, b, true) },
		"ReLUBack":       func() { ReLUBack(G, G, Y) },
		"PositiveBits":   func() { PositiveBits(bits, Y) },
		"ReLUBackBits":   func() { ReLUBackBits(G, G, bits) },
		"DenseBackW":     func() { DenseBackW(W, b, X, n, k, G, m) },
		"DenseBackX":     func() { DenseBackX(X, n, k, G, m, W) },
	} {
		if a := testing.AllocsPerRun(10, f); a != 0 {
			t.Errorf("%s: %v allocations per call", name, a)
		}
	}
}

// The MLP layer of the benchmarks: 8 inputs, 50 hidden units, blocks of 512 rows.
func BenchmarkDense8x50(b *testing.B) {
	rng := rand.New(rand.NewPCG(17, 18))
	const n, k, m = 512, 8, 50
	X, W, bias, Y := randVec(rng, n*k), randVec(rng, k*m), randVec(rng, m), make([]float64, n*m)
	benchCPU(b, func() { Dense(Y, X, n, k, W, m, bias, true) })
}

func BenchmarkDenseBackW8x50(b *testing.B) {
	rng := rand.New(rand.NewPCG(19, 20))
	const n, k, m = 512, 8, 50
	X, W, bias, G := randVec(rng, n*k), randVec(rng, k*m), randVec(rng, m), randVec(rng, n*m)
	benchCPU(b, func() { DenseBackW(W, bias, X, n, k, G, m) })
}

func BenchmarkGemvT50x512(b *testing.B) { // η += Xᵀβ over a block of a feature-major design
	rng := rand.New(rand.NewPCG(21, 22))
	const d, n = 50, 512
	A, x, y := randVec(rng, d*n), randVec(rng, d), randVec(rng, n)
	benchCPU(b, func() { GemvT(A, n, x, y) })
}

func BenchmarkGemvN50x512(b *testing.B) { // ∇β += X·g over a block of a feature-major design
	rng := rand.New(rand.NewPCG(23, 24))
	const d, n = 50, 512
	A, x, y := randVec(rng, d*n), randVec(rng, n), randVec(rng, d)
	benchCPU(b, func() { GemvN(A, n, x, y) })
}
