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

// BenchmarkSmallOps measures per-node overhead: a 10-parameter hierarchical model (eight
// schools, non-centred) written with generic ops only — no fused densities — about 20 nodes.
func BenchmarkSmallOps(b *testing.B) {
	y := []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sigma := []float64{15, 10, 16, 11, 9, 11, 10, 18}
	x := []float64{0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 1.5, 0.9}
	grad := make([]float64, len(x))
	var t Tape
	f := func(t *Tape, z Var) Var {
		tt, mu, ltau := t.Slice(z, 0, 8), t.Index(z, 8), t.Index(z, 9)
		tau := t.Exp(ltau)
		theta := t.Add(mu, t.Mul(tau, tt))
		r := t.Div(t.Sub(t.ConstRef(y), theta), t.ConstRef(sigma))
		lp := t.MulC(t.Add(t.Dot(r, r), t.Dot(tt, tt)), -0.5)
		lp = t.Sub(lp, t.MulC(t.Square(mu), 1.0/50))
		lp = t.Sub(lp, t.Log1p(t.Square(t.MulC(tau, 0.2))))
		return t.Add(lp, ltau)
	}
	b.ReportAllocs()
	for b.Loop() {
		Gradient(&t, f, x, grad)
	}
}

// BenchmarkCholeskyForward times the forward value of the Cholesky node (no backward pass) on
// an 11×11 squared-exponential kernel matrix, the size of gp_pois_regr's.
func BenchmarkCholeskyForward(b *testing.B) {
	const n = 11
	a := make([]float64, n*n)
	for i := range n {
		for j := range n {
			a[i*n+j] = math.Exp(-float64((i-j)*(i-j)) / 8)
		}
		a[i*n+i] += 1e-6
	}
	var t Tape
	b.ReportAllocs()
	for b.Loop() {
		t.Reset()
		t.Cholesky(t.AsMatrix(t.ConstRef(a), n, n))
	}
}
