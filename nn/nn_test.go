package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/race"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

func randVec(r *rand.Rand, n int, s float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = s * r.NormFloat64()
	}
	return x
}

// jacobian returns ∂f_o/∂x_i (row-major, len(f) × len(x)) by one backward pass per output.
func jacobian(f func(t *ad.Tape, x ad.Var) ad.Var, x []float64) (val, J []float64) {
	var t ad.Tape
	in := t.Input(x)
	out := f(&t, in)
	val = append([]float64(nil), t.Value(out)...)
	n := len(val)
	J = make([]float64, n*len(x))
	for o := 0; o < n; o++ {
		t.Backward(t.Index(out, o))
		copy(J[o*len(x):], t.Grad(in))
	}
	return val, J
}

// fdGrad returns the central finite-difference gradient of f at x with step h.
func fdGrad(f func([]float64) float64, x []float64, h float64) []float64 {
	g := make([]float64, len(x))
	y := append([]float64(nil), x...)
	for i := range x {
		y[i] = x[i] + h
		fp := f(y)
		y[i] = x[i] - h
		fm := f(y)
		y[i] = x[i]
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

type madeCase struct {
	d, k   int
	hidden []int
	act    ad.Activation
	order  []int
	direct bool
}

var madeCases = []madeCase{
	{d: 1, k: 2, hidden: []int{4}, act: ad.Tanh},
	{d: 2, k: 2, hidden: nil, act: ad.Tanh},
	{d: 3, k: 1, hidden: []int{5}, act: ad.Tanh},
	{d: 5, k: 2, hidden: []int{10, 10}, act: ad.Tanh},
	{d: 5, k: 3, hidden: []int{10, 10}, act: ad.Linear},
	{d: 4, k: 2, hidden: []int{7, 9}, act: ad.ReLU},
	{d: 6, k: 2, hidden: []int{12}, act: ad.Sigmoid, order: []int{3, 1, 6, 2, 5, 4}},
	{d: 4, k: 2, hidden: []int{8}, act: ad.Tanh, direct: true},
	{d: 5, k: 2, hidden: []int{3}, act: ad.Tanh, order: []int{2, 5, 1, 4, 3}, direct: true},
}

func (c madeCase) String() string {
	return fmt.Sprintf("d%d_k%d_h%v_%v_o%v_direct%v", c.d, c.k, c.hidden, c.act, c.order, c.direct)
}

func (c madeCase) build() *MADE {
	opts := []MADEOption{WithActivation(c.act)}
	if c.order != nil {
		opts = append(opts, WithOrder(c.order))
	}
	if c.direct {
		opts = append(opts, WithDirect())
	}
	return NewMADE(c.d, c.hidden, c.k, opts...)
}

// randomParams initialises m and adds noise to the biases so that no output is trivially 0.
func randomParams(m *MADE, r *rand.Rand) []float64 {
	p := make([]float64, m.NumParams())
	m.Init(p, r)
	for l := 0; l < m.Layers(); l++ {
		_, b := m.Layer(p, l)
		for i := range b {
			b[i] = 0.3 * r.NormFloat64()
		}
	}
	for i := range m.Direct(p) {
		m.Direct(p)[i] = r.NormFloat64()
	}
	return p
}

// TestMADEAutoregressive checks Germain et al.'s property on the AD Jacobian: output p of
// dimension j does not depend on x_i unless m(i) < m(j), and does depend on every such x_i
// when the hidden layers have at least d−1 units (so every degree 1..d−1 is present).
func TestMADEAutoregressive(t *testing.T) {
	r := newRand(1)
	for _, c := range madeCases {
		t.Run(c.String(), func(t *testing.T) {
			m := c.build()
			p := randomParams(m, r)
			x := randVec(r, c.d, 1)
			val, J := jacobian(func(tp *ad.Tape, xv ad.Var) ad.Var { return m.Forward(tp, tp.Const(p...), xv) }, x)
			if len(val) != c.k*c.d {
				t.Fatalf("output size %d, want %d", len(val), c.k*c.d)
			}
			full := c.act != ad.ReLU // ReLU units may be off at x; then a dependence can vanish
			for _, h := range c.hidden {
				full = full && h >= c.d-1
			}
			full = full || c.direct // the direct connections reach every allowed input
			deg := m.Degrees()
			for pi := 0; pi < c.k; pi++ {
				for j := 0; j < c.d; j++ {
					o := pi*c.d + j
					for i := 0; i < c.d; i++ {
						g := J[o*c.d+i]
						if deg[i] >= deg[j] && g != 0 { // exact zero: masked paths carry no adjoint at all
							t.Errorf("∂out[%d,%d]/∂x[%d] = %g, want 0 (m(i)=%d ≥ m(j)=%d)", pi, j, i, g, deg[i], deg[j])
						}
						if full && deg[i] < deg[j] && g == 0 {
							t.Errorf("∂out[%d,%d]/∂x[%d] = 0, want a dependence (m(i)=%d < m(j)=%d)", pi, j, i, deg[i], deg[j])
						}
					}
				}
			}
		})
	}
}

// TestMADELinearIsAffine: without a nonlinearity the MADE is an affine map (the BF-VI
// reference conditioner), so its Jacobian does not depend on x.
func TestMADELinearIsAffine(t *testing.T) {
	r := newRand(2)
	m := NewMADE(4, []int{10, 10}, 2, WithActivation(ad.Linear))
	p := randomParams(m, r)
	f := func(tp *ad.Tape, xv ad.Var) ad.Var { return m.Forward(tp, tp.Const(p...), xv) }
	_, J1 := jacobian(f, randVec(r, 4, 1))
	_, J2 := jacobian(f, randVec(r, 4, 3))
	for i := range J1 {
		if math.Abs(J1[i]-J2[i]) > 1e-12 { // rounding of two different sums of ~100 products
			t.Fatalf("Jacobian entry %d differs between points: %g vs %g", i, J1[i], J2[i])
		}
	}
}

// TestGradientsFD compares the tape gradient with respect to the parameters and the input
// with central finite differences of a random linear functional of the output.
func TestGradientsFD(t *testing.T) {
	r := newRand(3)
	type net struct {
		name string
		np   int
		fwd  func(tp *ad.Tape, p, x ad.Var) ad.Var
		in   int
		out  int
	}
	var nets []net
	for _, c := range madeCases {
		m := c.build()
		nets = append(nets, net{"made_" + c.String(), m.NumParams(), m.Forward, c.d, c.k * c.d})
	}
	for _, act := range []ad.Activation{ad.Tanh, ad.Sigmoid, ad.Linear} {
		m := NewMLP([]int{3, 6, 5, 2}, act)
		nets = append(nets, net{"mlp_" + act.String(), m.NumParams(), m.Forward, 3, 2})
	}
	for _, nt := range nets {
		t.Run(nt.name, func(t *testing.T) {
			p := randVec(r, nt.np, 0.7)
			x := randVec(r, nt.in, 1)
			w := randVec(r, nt.out, 1)
			var tp ad.Tape
			eval := func(p, x []float64) float64 {
				tp.Reset()
				return tp.Float(tp.Dot(nt.fwd(&tp, tp.Const(p...), tp.Const(x...)), tp.Const(w...)))
			}
			tp.Reset()
			P, X := tp.Input(p), tp.Input(x)
			out := tp.Dot(nt.fwd(&tp, P, X), tp.Const(w...))
			tp.Backward(out)
			gp := append([]float64(nil), tp.Grad(P)...)
			gx := append([]float64(nil), tp.Grad(X)...)
			fp := fdGrad(func(q []float64) float64 { return eval(q, x) }, p, 1e-6)
			fx := fdGrad(func(q []float64) float64 { return eval(p, q) }, x, 1e-6)
			// Central differences with h = 1e-6 on O(1) smooth functions: truncation error
			// ~h²·f''' ≈ 1e-12, rounding ~ε/h ≈ 1e-10; 1e-7 leaves a wide margin.
			for i := range gp {
				if math.Abs(gp[i]-fp[i]) > 1e-7*(1+math.Abs(fp[i])) {
					t.Errorf("∂/∂params[%d]: tape %g, FD %g", i, gp[i], fp[i])
				}
			}
			for i := range gx {
				if math.Abs(gx[i]-fx[i]) > 1e-7*(1+math.Abs(fx[i])) {
					t.Errorf("∂/∂x[%d]: tape %g, FD %g", i, gx[i], fx[i])
				}
			}
		})
	}
}

// TestMLPValue checks Forward against a direct float64 evaluation, batch rows against single
// rows, and ForwardC against Forward.
func TestMLPValue(t *testing.T) {
	r := newRand(4)
	m := NewMLP([]int{3, 4, 2}, ad.Tanh)
	p := make([]float64, m.NumParams())
	m.Init(p, r)
	for l := 0; l < m.Layers(); l++ {
		_, b := m.Layer(p, l)
		for i := range b {
			b[i] = r.NormFloat64()
		}
	}
	const n = 5
	X := randVec(r, n*3, 1)
	want := make([]float64, n*2)
	W1, b1 := m.Layer(p, 0)
	W2, b2 := m.Layer(p, 1)
	for i := range n {
		h := make([]float64, 4)
		for j := range h {
			s := b1[j]
			for k := range 3 {
				s += X[i*3+k] * W1[k*4+j]
			}
			h[j] = math.Tanh(s)
		}
		for j := range 2 {
			s := b2[j]
			for k := range 4 {
				s += h[k] * W2[k*2+j]
			}
			want[i*2+j] = s
		}
	}
	var tp ad.Tape
	P := tp.Input(p)
	got := tp.Value(m.Forward(&tp, P, tp.AsMatrix(tp.Const(X...), n, 3)))
	gotC := tp.Value(m.ForwardC(&tp, P, ad.Mat{Rows: n, Cols: 3, Data: X}))
	for i := range want {
		// BLAS and the loop above sum 3–4 products in different orders: a few ulps.
		if math.Abs(got[i]-want[i]) > 1e-13 || math.Abs(gotC[i]-want[i]) > 1e-13 {
			t.Errorf("output %d: Forward %g, ForwardC %g, want %g", i, got[i], gotC[i], want[i])
		}
	}
	for i := range n {
		row := tp.Value(m.Forward(&tp, P, tp.Const(X[i*3:(i+1)*3]...)))
		for j := range 2 {
			if math.Abs(row[j]-want[i*2+j]) > 1e-13 {
				t.Errorf("row %d output %d: %g, want %g", i, j, row[j], want[i*2+j])
			}
		}
	}
}

// TestMADEInit: masked weights start at zero, biases at zero, and the Glorot bound holds.
func TestMADEInit(t *testing.T) {
	m := NewMADE(5, []int{10, 10}, 2)
	p := make([]float64, m.NumParams())
	m.Init(p, newRand(5))
	sizes := []int{5, 10, 10, 10}
	for l := 0; l < m.Layers(); l++ {
		W, b := m.Layer(p, l)
		a := math.Sqrt(6 / float64(sizes[l]+sizes[l+1]))
		for i, v := range m.Mask(l) {
			if v == 0 && W[i] != 0 {
				t.Errorf("layer %d weight %d masked but %g", l, i, W[i])
			}
			if math.Abs(W[i]) > a {
				t.Errorf("layer %d weight %d = %g outside ±%g", l, i, W[i], a)
			}
		}
		for _, v := range b {
			if v != 0 {
				t.Errorf("layer %d bias %g, want 0", l, v)
			}
		}
	}
}

func TestMADEPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"order":  func() { NewMADE(3, nil, 1, WithOrder([]int{1, 1, 2})) },
		"d":      func() { NewMADE(0, nil, 1) },
		"sizes":  func() { NewMLP([]int{3}, ad.Tanh) },
		"params": func() { var tp ad.Tape; NewMLP([]int{2, 1}, ad.Tanh).Forward(&tp, tp.Const(1), tp.Const(1, 2)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestMADEForwardAllocs: a steady-state forward and backward pass allocates nothing.
func TestMADEForwardAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	m := NewMADE(10, []int{10, 10}, 2)
	p := make([]float64, m.NumParams())
	m.Init(p, newRand(6))
	x := randVec(newRand(7), 10, 1)
	var tp ad.Tape
	run := func() {
		tp.Reset()
		P := tp.Input(p)
		out := m.Forward(&tp, P, tp.Input(x))
		tp.Backward(tp.Sum(out))
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Errorf("%v allocations per forward/backward, want 0", a)
	}
}

func BenchmarkMADEForwardBackward(b *testing.B) {
	m := NewMADE(10, []int{10, 10}, 2)
	p := make([]float64, m.NumParams())
	m.Init(p, newRand(6))
	x := randVec(newRand(7), 10, 1)
	var tp ad.Tape
	b.ReportAllocs()
	for b.Loop() {
		tp.Reset()
		P := tp.Input(p)
		out := m.Forward(&tp, P, tp.Input(x))
		tp.Backward(tp.Sum(out))
	}
}

// madeOut is an ad.Custom rule for the whole MADE in plain float64 (HiddenForward,
// OutputsByDim and their pullbacks), checked against Forward on the tape. Its aux holds the
// hidden activations.
type madeOut struct {
	m      *MADE
	packed []float64
}

func (o madeOut) Backward(c ad.Custom) {
	t := c.Tape()
	p, x := c.Arg(0), c.Arg(1)
	m := o.m
	hs := c.Aux()
	hl := m.HiddenForward(t.Value(p), t.Value(x), make([]float64, m.HiddenLen()))
	gh := t.Grad(x) // without hidden layers the output layer reads x
	if m.HiddenLen() > 0 {
		gh = make([]float64, len(hl))
	}
	m.OutputsByDimBack(o.packed, hl, t.Value(x), c.Grad(), t.Grad(p), gh, t.Grad(x))
	m.HiddenBack(t.Value(p), t.Value(x), hs, gh, t.Grad(p), t.Grad(x), make([]float64, m.HiddenLen()))
}

// TestMADEOutputsByDim: the network in plain float64 (HiddenForward, then the packed output
// layer by dimension) gives Forward's outputs transposed, and its pullback (OutputsByDimBack,
// HiddenBack) gives the AD gradient of Forward, for every MADE case, with all masked weights
// set to nonzero values (they must be ignored).
func TestMADEOutputsByDim(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	// Beyond madeCases: the BernsteinAR shape (K = 51 runs: the vector loops and tails of the
	// kernels, four dimensions per pass), and an order and direct connections with d ≥ 4.
	cases := append(append([]madeCase(nil), madeCases...),
		madeCase{d: 10, k: 51, hidden: []int{10, 10}, act: ad.Linear},
		madeCase{d: 7, k: 9, hidden: []int{11}, act: ad.Tanh, order: []int{4, 1, 7, 2, 6, 3, 5}, direct: true})
	for _, c := range cases {
		m := c.build()
		d, k := c.d, c.k
		p := make([]float64, m.NumParams())
		for i := range p {
			p[i] = r.NormFloat64()
		}
		x := make([]float64, d)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		G := make([]float64, d*k) // weights of the scalar Σ G ⊙ C, by dimension
		for i := range G {
			G[i] = r.NormFloat64()
		}
		var tp ad.Tape
		// Reference: Forward on the tape and its AD gradient.
		P, X := tp.Input(p), tp.Input(x)
		out := tp.Value(m.Forward(&tp, P, X))
		Gpm := make([]float64, d*k) // G in Forward's parameter-major layout
		for j := range d {
			for q := range k {
				Gpm[q*d+j] = G[j*k+q]
			}
		}
		want := make([]float64, d*k)
		for j := range d {
			for q := range k {
				want[j*k+q] = out[q*d+j]
			}
		}
		tp.Backward(tp.Dot(m.Forward(&tp, P, X), tp.ConstRef(Gpm)))
		wantP := append([]float64(nil), tp.Grad(P)...)
		wantX := append([]float64(nil), tp.Grad(X)...)

		tp.Reset()
		P, X = tp.Input(p), tp.Input(x)
		packed := make([]float64, m.PackedLen())
		m.PackOutput(p, packed)
		cu := tp.Custom(madeOut{m, packed}, d*k, m.HiddenLen(), P, X)
		hl := m.HiddenForward(p, x, cu.Aux())
		m.OutputsByDim(packed, hl, x, cu.Value())
		tp.Backward(tp.Dot(cu.Var(), tp.ConstRef(G)))
		// Same sums in a different order: agreement to a few ulps of the O(10) values.
		const tol = 1e-12
		for i, v := range cu.Value() {
			if math.Abs(v-want[i]) > tol*(1+math.Abs(want[i])) {
				t.Fatalf("%v: C[%d] = %v, want %v", c, i, v, want[i])
			}
		}
		for i, v := range tp.Grad(P) {
			if math.Abs(v-wantP[i]) > tol*(1+math.Abs(wantP[i])) {
				t.Fatalf("%v: ∂/∂params[%d] = %v, want %v", c, i, v, wantP[i])
			}
		}
		for i, v := range tp.Grad(X) {
			if math.Abs(v-wantX[i]) > tol*(1+math.Abs(wantX[i])) {
				t.Fatalf("%v: ∂/∂x[%d] = %v, want %v", c, i, v, wantX[i])
			}
		}
		// The pullback's parts one at a time (the other adjoints nil) agree with all at once:
		// the parameter adjoint exactly (each entry receives the same rounded products), the
		// hidden and input adjoints to a few ulps (the dot products are grouped differently).
		gp, gh, gx := make([]float64, len(p)), make([]float64, len(hl)), make([]float64, d)
		m.OutputsByDimBack(packed, hl, x, G, gp, gh, gx)
		gp1, gh1, gx1 := make([]float64, len(p)), make([]float64, len(hl)), make([]float64, d)
		m.OutputsByDimBack(packed, hl, x, G, gp1, nil, nil)
		m.OutputsByDimBack(packed, hl, x, G, nil, gh1, gx1)
		for i := range gp {
			if gp1[i] != gp[i] {
				t.Fatalf("%v: ∂/∂params[%d] alone = %v, with the rest %v", c, i, gp1[i], gp[i])
			}
		}
		for i := range gh {
			if math.Abs(gh1[i]-gh[i]) > tol*(1+math.Abs(gh[i])) {
				t.Fatalf("%v: ∂/∂h[%d] alone = %v, with the rest %v", c, i, gh1[i], gh[i])
			}
		}
		for i := range gx {
			if math.Abs(gx1[i]-gx[i]) > tol*(1+math.Abs(gx[i])) {
				t.Fatalf("%v: ∂/∂x[%d] alone = %v, with the rest %v", c, i, gx1[i], gx[i])
			}
		}
	}
}

// BenchmarkMADEByDim times the plain-float64 network of a BernsteinAR flow (d = 10, 2 × 10
// tanh hidden units, K = 51 outputs per dimension) part by part, as one draw runs it.
func BenchmarkMADEByDim(b *testing.B) {
	const d, K = 10, 51
	m := NewMADE(d, []int{10, 10}, K, WithActivation(ad.Tanh))
	p := make([]float64, m.NumParams())
	m.Init(p, newRand(8))
	packed := make([]float64, m.PackedLen())
	m.PackOutput(p, packed)
	x := randVec(newRand(9), d, 1)
	hs := make([]float64, m.HiddenLen())
	ws := make([]float64, m.HiddenLen())
	C := make([]float64, d*K)
	G := randVec(newRand(10), d*K, 1)
	gp, gh := make([]float64, len(p)), make([]float64, 10)
	hl := m.HiddenForward(p, x, hs)
	b.Run("hidden_forward", func(b *testing.B) {
		for b.Loop() {
			m.HiddenForward(p, x, hs)
		}
	})
	b.Run("outputs", func(b *testing.B) {
		for b.Loop() {
			m.OutputsByDim(packed, hl, x, C)
		}
	})
	b.Run("outputs_back", func(b *testing.B) {
		for b.Loop() {
			m.OutputsByDimBack(packed, hl, x, G, gp, gh, nil)
		}
	})
	b.Run("hidden_back", func(b *testing.B) {
		for b.Loop() {
			m.HiddenBack(p, x, hs, gh, gp, nil, ws)
		}
	})
}

// BenchmarkMADEPackOutput is the once-per-step copy of the output layer into the packed
// layout (d = 10, 2 × 10 hidden units, K = 51).
func BenchmarkMADEPackOutput(b *testing.B) {
	m := NewMADE(10, []int{10, 10}, 51)
	p := make([]float64, m.NumParams())
	m.Init(p, newRand(11))
	packed := make([]float64, m.PackedLen())
	for b.Loop() {
		m.PackOutput(p, packed)
	}
}
