package ad

import (
	"math"
	"testing"
)

// BenchmarkMLPGradient: 1-hidden-layer ReLU MLP 8→50→1 on N=10,000 rows with a Gaussian
// likelihood (σ=1) and N(0,1) priors, built from generic ops (Dense, Sub, Square, Sum). The
// fused-likelihood version lives in package bench.
func BenchmarkMLPGradient(b *testing.B) {
	const n, in, hid = 10000, 8, 50
	X := make([]float64, n*in)
	y := make([]float64, n)
	for i := range X {
		X[i] = math.Sin(0.37*float64(i) + 0.1)
	}
	for i := range y {
		y[i] = math.Cos(0.11 * float64(i))
	}
	np := in*hid + hid + hid + 1
	w := make([]float64, np)
	for i := range w {
		w[i] = 0.1 * math.Sin(float64(i))
	}
	grad := make([]float64, np)
	var t Tape
	Xm := Mat{Rows: n, Cols: in, Data: X}
	f := func(t *Tape, p Var) Var {
		W1 := t.AsMatrix(t.Slice(p, 0, in*hid), in, hid)
		b1 := t.Slice(p, in*hid, in*hid+hid)
		W2 := t.AsMatrix(t.Slice(p, in*hid+hid, in*hid+2*hid), hid, 1)
		b2 := t.Slice(p, in*hid+2*hid, np)
		h := t.DenseC(Xm, W1, b1, ReLU)
		out := t.Dense(h, W2, b2, Linear)
		r := t.Sub(t.ConstRef(y), out)
		return t.Neg(t.MulC(t.Add(t.Sum(t.Square(r)), t.Sum(t.Square(p))), 0.5))
	}
	b.ReportAllocs()
	for b.Loop() {
		Gradient(&t, f, w, grad)
	}
}
