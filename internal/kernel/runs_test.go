package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// kernelLengths are the vector lengths the run kernels are tested at: every length up to 18
// (all tails of the 4-, 8- and 16-lane loops), then around the MADE's K = 51 and beyond.
var kernelLengths = func() []int {
	var ls []int
	for n := range 19 {
		ls = append(ls, n)
	}
	return append(ls, 31, 32, 33, 47, 48, 49, 50, 51, 52, 63, 64, 65, 100, 127, 128, 129, 130)
}()

// guarded returns a slice of length n at offset off (0–3, so that vector loads start
// unaligned) inside a buffer whose other elements hold the sentinel 777, and a check that
// they still do.
func guarded(rng *rand.Rand, n, off int) (v []float64, intact func() bool) {
	buf := make([]float64, off+n+5)
	for i := range buf {
		buf[i] = 777
	}
	v = buf[off : off+n : off+n]
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v, func() bool {
		for i, b := range buf {
			if (i < off || i >= off+n) && b != 777 {
				return false
			}
		}
		return true
	}
}

// runImpls are the implementations of the run kernels tested alike: the exported ones
// (whichever the build selected) and the pure-Go ones; asm_amd64_test.go adds the assembly.
type runImpl struct {
	name   string
	axpy   func(a float64, x, y []float64)
	dot    func(x, y []float64) float64
	axpy4  func(a0, a1, a2, a3 float64, x, y []float64)
	axpy2  func(a0, a1 float64, x, y []float64)
	sadDot func(a float64, g, dst []float64, s int, q []float64) float64
	sad4   func(a float64, g, dst []float64, s int, q []float64, o [4]int) float64
}

var runImpls = []runImpl{
	{"exported", Axpy, Dot, Axpy4, Axpy2, ScatterAxpyDot, ScatterAxpyDot4},
	{"go", axpyGo, dotGo, axpy4Go, axpy2Go, scatterAxpyDotGo, scatterAxpyDot4Go},
}

// The run kernels against plain loops at every tail length, unaligned starts, and with the
// memory around the output checked for stray writes (the assembly's masked tails). The
// tolerance is closeTo's: FMA and the order of summation move results by a few ulp of the
// largest partial sum.
func TestRunKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, im := range runImpls {
		for _, n := range kernelLengths {
			for off := range 4 {
				what := fmt.Sprintf("%s n=%d off=%d", im.name, n, off)
				x, _ := guarded(rng, 4*n, (off+1)%4)
				y, intact := guarded(rng, n, off)
				a := [4]float64{0.7, -1.3, 2.1, 0.4}
				want := append([]float64(nil), y...)
				for p := range want {
					want[p] += (a[0]*x[p] + a[1]*x[n+p]) + (a[2]*x[2*n+p] + a[3]*x[3*n+p])
				}
				im.axpy4(a[0], a[1], a[2], a[3], x, y)
				checkSlice(t, what+" Axpy4", y, want, 4)
				copy(want, y)
				for p := range want {
					want[p] += a[0]*x[p] + a[1]*x[n+p]
				}
				im.axpy2(a[0], a[1], x[:2*n], y)
				checkSlice(t, what+" Axpy2", y, want, 4)
				copy(want, y)
				for p := range want {
					want[p] += a[2] * x[p]
				}
				im.axpy(a[2], x[:n], y)
				checkSlice(t, what+" Axpy", y, want, 4)
				wd := 0.0
				for p := range n {
					wd += x[p] * y[p]
				}
				if d := im.dot(x[:n], y); !closeTo(d, wd, float64(n)) {
					t.Errorf("%s Dot = %v, want %v", what, d, wd)
				}
				if !intact() {
					t.Errorf("%s: a kernel wrote outside y", what)
				}
				// Strided scatter with a dot, strides 1, 3 and 10 (the MADE's d).
				for _, s := range []int{1, 3, 10} {
					g, q := x[:n], x[n:2*n]
					m := 0
					if n > 0 {
						m = (n-1)*s + 1
					}
					dst, intact := guarded(rng, m, off)
					wdst := append([]float64(nil), dst...)
					wd := 0.0
					for p, v := range g {
						wdst[p*s] += a[1] * v
						wd += q[p] * v
					}
					d := im.sadDot(a[1], g, dst, s, q)
					for i := range dst { // the product is rounded, then added: exact agreement
						if dst[i] != wdst[i] {
							t.Errorf("%s s=%d ScatterAxpyDot: dst[%d] = %v, want %v", what, s, i, dst[i], wdst[i])
							break
						}
					}
					if !closeTo(d, wd, float64(n)) {
						t.Errorf("%s s=%d ScatterAxpyDot = %v, want %v", what, s, d, wd)
					}
					if !intact() {
						t.Errorf("%s s=%d: ScatterAxpyDot wrote outside dst", what, s)
					}
				}
			}
		}
	}
}

// ScatterAxpyDot4 against plain loops: four runs into four adjacent strided columns (strides
// 4, 5 and 10), the weight runs at scattered offsets of q; dst exactly (each entry receives
// one rounded product), the dot to closeTo's tolerance.
func TestScatterAxpyDot4(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, im := range runImpls {
		for _, n := range kernelLengths {
			for _, s := range []int{4, 5, 10} {
				off := (n + s) % 4
				what := fmt.Sprintf("%s n=%d s=%d off=%d", im.name, n, s, off)
				g, _ := guarded(rng, 4*n, off)
				q, _ := guarded(rng, 7*n+3, (off+1)%4)
				o := [4]int{3 * n, 0, 6*n + 3, n + 1}
				m := 0
				if n > 0 {
					m = (n-1)*s + 4
				}
				dst, intact := guarded(rng, m, (off+2)%4)
				want := append([]float64(nil), dst...)
				wd := 0.0
				for i := range 4 {
					for p := range n {
						v := g[i*n+p]
						want[p*s+i] += 1.7 * v
						wd += q[o[i]+p] * v
					}
				}
				d := im.sad4(1.7, g, dst, s, q, o)
				for i := range dst {
					if dst[i] != want[i] {
						t.Errorf("%s: dst[%d] = %v, want %v", what, i, dst[i], want[i])
						break
					}
				}
				if !closeTo(d, wd, float64(4*n)) {
					t.Errorf("%s: dot = %v, want %v", what, d, wd)
				}
				if !intact() {
					t.Errorf("%s: wrote outside dst", what)
				}
			}
		}
	}
}

// Non-finite values pass through the run kernels as through the plain loops.
func TestRunKernelsSpecial(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, im := range runImpls {
		for _, n := range []int{3, 4, 7} {
			x := make([]float64, 4*n)
			for i := range x {
				x[i] = 1
			}
			x[n-1] = inf
			y := make([]float64, n)
			im.axpy4(1, 1, 1, 1, x, y)
			if !math.IsInf(y[n-1], 1) || y[0] != 4 {
				t.Errorf("%s n=%d: Axpy4 with +Inf gave %v", im.name, n, y)
			}
			x[0] = nan
			if d := im.dot(x[:n], x[:n]); !math.IsNaN(d) {
				t.Errorf("%s n=%d: Dot with NaN = %v", im.name, n, d)
			}
		}
	}
}

func TestRunPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Axpy4":          func() { Axpy4(1, 1, 1, 1, make([]float64, 7), make([]float64, 2)) },
		"Axpy2":          func() { Axpy2(1, 1, make([]float64, 3), make([]float64, 2)) },
		"ScatterAxpyDot": func() { ScatterAxpyDot(1, make([]float64, 3), make([]float64, 6), 3, make([]float64, 3)) },
		"ScatterAxpyDot q": func() {
			ScatterAxpyDot(1, make([]float64, 3), make([]float64, 9), 3, make([]float64, 2))
		},
		"ScatterAxpyDot4 g": func() {
			ScatterAxpyDot4(1, make([]float64, 7), make([]float64, 40), 10, make([]float64, 8), [4]int{})
		},
		"ScatterAxpyDot4 dst": func() {
			ScatterAxpyDot4(1, make([]float64, 8), make([]float64, 13), 10, make([]float64, 8), [4]int{})
		},
		"ScatterAxpyDot4 o": func() {
			ScatterAxpyDot4(1, make([]float64, 8), make([]float64, 14), 10, make([]float64, 8), [4]int{0, 7, 0, 0})
		},
		"ScatterAxpyDot4 s": func() {
			ScatterAxpyDot4(1, make([]float64, 8), make([]float64, 14), 3, make([]float64, 8), [4]int{})
		},
		"ScatterAxpyDot s": func() { ScatterAxpyDot(1, make([]float64, 3), make([]float64, 9), 0, make([]float64, 3)) },
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
	// Empty runs are fine.
	Axpy4(1, 1, 1, 1, nil, nil)
	Axpy2(1, 1, nil, nil)
	if d := ScatterAxpyDot(1, nil, nil, 5, nil); d != 0 {
		t.Errorf("ScatterAxpyDot on empty runs = %v", d)
	}
}

func TestRunNoAllocs(t *testing.T) {
	x, y := make([]float64, 4*51), make([]float64, 51)
	dst := make([]float64, 510)
	sp, sg := make([]float64, 50), make([]float64, 50)
	for name, f := range map[string]func(){
		"Axpy4":           func() { Axpy4(1, 2, 3, 4, x, y) },
		"Axpy2":           func() { Axpy2(1, 2, x[:102], y) },
		"ScatterAxpyDot":  func() { ScatterAxpyDot(2, y, dst, 10, x[:51]) },
		"ScatterAxpyDot4": func() { ScatterAxpyDot4(2, x, dst, 10, y, [4]int{}) },
		"Softplus":        func() { Softplus(sp, sg, x[:50]) },
	} {
		if a := testing.AllocsPerRun(10, f); a != 0 {
			t.Errorf("%s: %v allocations per call", name, a)
		}
	}
}

// The MADE output layer's shapes: K = 51, four runs per pass; a strided scatter at d = 10.
func BenchmarkAxpy4K51(b *testing.B) {
	x, y := make([]float64, 4*51), make([]float64, 51)
	benchCPU(b, func() { Axpy4(1e-3, 2e-3, 3e-3, 4e-3, x, y) })
}

func BenchmarkScatterAxpyDot4K51(b *testing.B) {
	g, q, dst := make([]float64, 4*51), make([]float64, 4*51), make([]float64, 510)
	benchCPU(b, func() { ScatterAxpyDot4(1e-3, g, dst, 10, q, [4]int{0, 51, 102, 153}) })
}

func BenchmarkScatterAxpyDotK51(b *testing.B) {
	g, q, dst := make([]float64, 51), make([]float64, 51), make([]float64, 510)
	benchCPU(b, func() { ScatterAxpyDot(1e-3, g, dst, 10, q) })
}
