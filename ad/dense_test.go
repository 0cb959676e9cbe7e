package ad

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDenseLarge checks Dense and DenseC against loops written from the definition, for
// shapes that cross the backward pass's row blocks (denseBlock) and the kernels' vector
// widths: value of L = Σᵢⱼ Cᵢⱼ·act(X·W + b)ᵢⱼ and its gradient in X, W and b.
func TestDenseLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randv := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	acts := []Activation{Linear, ReLU, Tanh, Sigmoid}
	for _, sh := range [][3]int{{1, 1, 1}, {7, 3, 1}, {150, 8, 1}, {150, 8, 50}, {129, 9, 5}, {64, 2, 4}, {3, 1, 12}} {
		n, k, m := sh[0], sh[1], sh[2]
		X, W, b, C := randv(n*k), randv(k*m), randv(m), randv(n*m)
		for _, act := range acts {
			// Reference: Z = XW + b, Y = act(Z), Ḡ = C ⊙ act'(Z).
			f := func(z float64) (y, dy float64) {
				switch act {
				case ReLU:
					if z > 0 {
						return z, 1
					}
					return 0, 0
				case Tanh:
					y = math.Tanh(z)
					return y, 1 - y*y
				case Sigmoid:
					y = 1 / (1 + math.Exp(-z))
					return y, y * (1 - y)
				}
				return z, 1
			}
			var want float64
			gX, gW, gb := make([]float64, n*k), make([]float64, k*m), make([]float64, m)
			for i := range n {
				for c := range m {
					z := b[c]
					for j := range k {
						z += X[i*k+j] * W[j*m+c]
					}
					y, dy := f(z)
					want += C[i*m+c] * y
					g := C[i*m+c] * dy
					gb[c] += g
					for j := range k {
						gW[j*m+c] += X[i*k+j] * g
						gX[i*k+j] += g * W[j*m+c]
					}
				}
			}
			name := fmt.Sprintf("%v n=%d k=%d m=%d", act, n, k, m)
			for _, constX := range []bool{false, true} {
				var tp Tape
				in := append(append(append([]float64(nil), X...), W...), b...)
				xv := tp.Input(in)
				Wv := tp.AsMatrix(tp.Slice(xv, n*k, n*k+k*m), k, m)
				bv := tp.Slice(xv, n*k+k*m, n*k+k*m+m)
				var y Var
				if constX {
					y = tp.DenseC(Mat{Rows: n, Cols: k, Data: X}, Wv, bv, act)
				} else {
					y = tp.Dense(tp.AsMatrix(tp.Slice(xv, 0, n*k), n, k), Wv, bv, act)
				}
				out := tp.Dot(y, tp.ConstRef(C))
				tp.Backward(out)
				g := tp.Grad(xv)
				// 1e-12 relative to Σ|terms|: the same sums in another order, with FMA.
				scale := float64(n * k * m)
				if math.Abs(tp.Float(out)-want) > 1e-12*scale {
					t.Errorf("%s constX=%v: value %v, want %v", name, constX, tp.Float(out), want)
				}
				check := func(part string, got, want []float64) {
					for i := range want {
						if math.Abs(got[i]-want[i]) > 1e-12*scale {
							t.Errorf("%s constX=%v: ∂%s[%d] = %v, want %v", name, constX, part, i, got[i], want[i])
							return
						}
					}
				}
				if !constX {
					check("X", g[:n*k], gX)
				} else {
					check("X (constant)", g[:n*k], make([]float64, n*k))
				}
				check("W", g[n*k:n*k+k*m], gW)
				check("b", g[n*k+k*m:], gb)
			}
		}
	}
}
