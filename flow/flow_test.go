package flow

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 11)) }

func randVec(r *rand.Rand, n int, s float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = s * r.NormFloat64()
	}
	return x
}

type flowCase struct {
	name string
	f    Flow
}

// randomParams returns Init's parameters plus N(0, s²) noise, so the flow is far from the
// identity and every part of it is exercised.
func randomParams(f Flow, r *rand.Rand, s float64) []float64 {
	p := make([]float64, f.NumParams())
	f.Init(p, r)
	for i := range p {
		p[i] += s * r.NormFloat64()
	}
	return p
}

func forward(f Flow, p, u []float64) (z []float64, ld float64) {
	var t ad.Tape
	zv, l := f.Forward(&t, t.Const(p...), t.Const(u...))
	return append([]float64(nil), t.Value(zv)...), t.Float(l)
}

func TestComposeOrder(t *testing.T) {
	// Affine then Reverse: z = reverse(μ + σ⊙u).
	c := Compose(NewAffine(2), Reverse(2))
	p := []float64{1, 2, math.Log(3), math.Log(5)}
	z, ld := forward(c, p, []float64{1, 1})
	// exp(log 5) is 5 up to an ulp.
	if math.Abs(z[0]-7) > 1e-14 || math.Abs(z[1]-4) > 1e-14 || math.Abs(ld-math.Log(15)) > 1e-14 {
		t.Errorf("Compose(Affine, Reverse) = %v, %g; want [7 4], log 15", z, ld)
	}
}

// TestPanics: the constructors and the tape methods panic on programming errors (a spec read
// from a file is checked by FromSpec first, with an error).
func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"perm":      func() { Permute([]int{0, 0}) },
		"dims":      func() { Compose(NewAffine(2), NewAffine(3)) },
		"madeK":     func() { NewMAF(nn.NewMADE(3, nil, 3)) },
		"keepAll":   func() { NewCoupling(2, []int{0, 1}, nil, ad.Tanh, 5) },
		"paramsLen": func() { var tp ad.Tape; NewAffine(2).Forward(&tp, tp.Const(1), tp.Const(1, 2)) },
		"degree0":   func() { NewBernstein(1, 0) },
		"d0":        func() { NewBernstein(0, 3) },
		"tails":     func() { NewBernstein(1, 3, BernsteinTails(7)) },
		"bernK":     func() { NewBernsteinAR(nn.NewMADE(3, nil, 1)) },
		"frozen":    func() { NewBernstein(2, 3, BernsteinFrozenAffine()) },
		"bernLen":   func() { var tp ad.Tape; NewBernstein(2, 3).Forward(&tp, tp.Const(1), tp.Const(1, 2)) },
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

// BenchmarkForwardBackward times one draw (Forward and Backward on a reset tape) of each flow
// type at d = 10, in CPU time of the benchmark's thread (cpu-ns/op) as well as wall time.
func BenchmarkForwardBackward(b *testing.B) {
	made := func(act ad.Activation) *nn.MADE { return nn.NewMADE(10, []int{10, 10}, 51, nn.WithActivation(act)) }
	for _, c := range []flowCase{
		{"iaf_d10_h10x10", NewMAF(nn.NewMADE(10, []int{10, 10}, 2))},
		{"realnvp_d10_4x10x10", NewRealNVP(10, 4, []int{10, 10})},
		{"maf_d10_h10x10_sequential", NewMAF(nn.NewMADE(10, []int{10, 10}, 2), ConditionOnOutput())},
		{"bernstein_d10_M50", NewBernstein(10, 50)},
		{"bernar_d10_M50_linear", NewBernsteinAR(made(ad.Linear))},
		{"bernar_d10_M50_tanh", NewBernsteinAR(made(ad.Tanh))},
		{"bernar_d10_M50_lineartails", NewBernsteinAR(made(ad.Linear), BernsteinTails(LinearTails))},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newRand(9)
			p := randomParams(c.f, r, 0.1)
			u := randVec(r, 10, 1)
			var tp ad.Tape
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0, n := threadCPU(), 0
			for b.Loop() {
				tp.Reset()
				P := tp.Input(p)
				z, ld := c.f.Forward(&tp, P, tp.Const(u...))
				tp.Backward(tp.Add(ld, tp.Sum(z)))
				n++
			}
			b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
		})
	}
}

// TestMAFPasses pins the cost of each direction: the cheap direction records one MADE pass,
// the sequential one d passes (node counts on the tape).
func TestMAFPasses(t *testing.T) {
	const d = 6
	count := func(f func(tp *ad.Tape, p, x ad.Var) (ad.Var, ad.Var), np int) int {
		var tp ad.Tape
		P, X := tp.Const(make([]float64, np)...), tp.Const(make([]float64, d)...)
		n := tp.Len()
		f(&tp, P, X)
		return tp.Len() - n
	}
	for _, onOut := range []bool{false, true} {
		var opts []MAFOption
		if onOut {
			opts = append(opts, ConditionOnOutput())
		}
		m := NewMAF(nn.NewMADE(d, []int{8}, 2), opts...)
		fwd, inv := count(m.Forward, m.NumParams()), count(m.InverseTape, m.NumParams())
		cheap, seq := fwd, inv
		if onOut {
			cheap, seq = inv, fwd
		}
		// A pass records the same nodes in both directions up to one (the inverse's Neg).
		if seq < d*(cheap-1) || seq > d*(cheap+1) {
			t.Errorf("ConditionOnOutput=%v: cheap direction %d nodes, sequential %d, want ≈ %d×", onOut, cheap, seq, d)
		}
	}
}
