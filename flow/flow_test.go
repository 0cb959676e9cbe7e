package flow

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/race"
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

// testFlows covers every flow type of this file's package (except Bernstein flows, tested in
// their own file) in several shapes.
func testFlows() []flowCase {
	mafOpt := func(d int, hidden []int, act ad.Activation, o ...nn.MADEOption) *nn.MADE {
		return nn.NewMADE(d, hidden, 2, append([]nn.MADEOption{nn.WithActivation(act)}, o...)...)
	}
	return []flowCase{
		{"affine_d3", NewAffine(3)},
		{"permute_d4", Permute([]int{2, 0, 3, 1})},
		{"reverse_d5", Reverse(5)},
		{"iaf_d1", NewMAF(mafOpt(1, []int{4}, ad.Tanh))},
		{"iaf_d2_nohidden", NewMAF(mafOpt(2, nil, ad.Tanh))},
		{"iaf_d4", NewMAF(mafOpt(4, []int{8, 8}, ad.Tanh))},
		{"iaf_d5_linear_order", NewMAF(mafOpt(5, []int{10, 10}, ad.Linear, nn.WithOrder([]int{5, 3, 1, 2, 4})))},
		{"iaf_d3_noclamp", NewMAF(mafOpt(3, []int{6}, ad.Sigmoid), WithScaleClamp(0))},
		{"maf_d4", NewMAF(mafOpt(4, []int{8, 8}, ad.Tanh), ConditionOnOutput())},
		{"maf_d1", NewMAF(mafOpt(1, nil, ad.Tanh), ConditionOnOutput())},
		{"coupling_d5", NewCoupling(5, []int{4, 1}, []int{7}, ad.Tanh, 5)},
		{"coupling_empty_keep", NewCoupling(3, nil, nil, ad.Tanh, 5)},
		{"realnvp_d1", NewRealNVP(1, 2, []int{4})},
		{"realnvp_d4", NewRealNVP(4, 4, []int{8, 8})},
		{"realnvp_d3_relu", NewRealNVP(3, 2, []int{6}, RealNVPActivation(ad.ReLU), RealNVPScaleClamp(0))},
		{"mafstack_d4", NewMAFStack(4, 3, []int{8}, nil)},
		{"mafstack_d4_direct_linear", NewMAFStack(4, 2, []int{8}, []nn.MADEOption{nn.WithDirect(), nn.WithActivation(ad.Linear)})},
		{"iaf_d3_direct", NewMAF(nn.NewMADE(3, []int{5}, 2, nn.WithDirect()))},
		{"compose_mixed_d4", Compose(
			NewAffine(4),
			NewMAF(mafOpt(4, []int{8}, ad.Tanh)),
			Reverse(4),
			NewCoupling(4, []int{0, 1}, []int{6}, ad.Tanh, 5),
			NewMAF(mafOpt(4, []int{8}, ad.Tanh), ConditionOnOutput()),
		)},
	}
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

// logAbsDet returns log|det A| of the d×d row-major matrix A (gonum LU).
func logAbsDet(A []float64, d int) float64 {
	var lu mat.LU
	lu.Factorize(mat.NewDense(d, d, append([]float64(nil), A...)))
	ld, _ := lu.LogDet()
	return ld
}

// jacobian returns the d×d Jacobian of x ↦ g(x) (row-major) from one backward pass per output.
func jacobian(g func(t *ad.Tape, x ad.Var) ad.Var, x []float64) []float64 {
	var t ad.Tape
	in := t.Input(x)
	out := g(&t, in)
	d := len(x)
	J := make([]float64, d*d)
	for o := range d {
		t.Backward(t.Index(out, o))
		copy(J[o*d:], t.Grad(in))
	}
	return J
}

// TestLogDetEqualsJacobian: the flow's log-determinant equals log|det J| of the AD Jacobian
// of z(u), in both directions (Forward at u; InverseTape at z, whose Jacobian is the inverse).
func TestLogDetEqualsJacobian(t *testing.T) {
	r := newRand(1)
	for _, c := range testFlows() {
		t.Run(c.name, func(t *testing.T) {
			d := c.f.Dim()
			for trial := range 3 {
				p := randomParams(c.f, r, 0.4)
				u := randVec(r, d, 1.5)
				_, ld := forward(c.f, p, u)
				J := jacobian(func(tp *ad.Tape, x ad.Var) ad.Var {
					z, _ := c.f.Forward(tp, tp.Const(p...), x)
					return z
				}, u)
				// log|det J| from an LU of an O(1)-conditioned d ≤ 5 matrix: rounding ~1e-15;
				// 1e-8 is the bar.
				if want := logAbsDet(J, d); math.Abs(ld-want) > 1e-8 {
					t.Errorf("trial %d: Forward log-det %.15g, log|det J| %.15g", trial, ld, want)
				}
				ti, ok := c.f.(TapeInverter)
				if !ok || !CanInverseTape(c.f) {
					continue
				}
				z, _ := forward(c.f, p, u)
				Ji := jacobian(func(tp *ad.Tape, x ad.Var) ad.Var {
					uu, _ := ti.InverseTape(tp, tp.Const(p...), x)
					return uu
				}, z)
				var tp ad.Tape
				_, ldi := ti.InverseTape(&tp, tp.Const(p...), tp.Const(z...))
				if want := -logAbsDet(Ji, d); math.Abs(tp.Float(ldi)-want) > 1e-8 {
					t.Errorf("trial %d: InverseTape log-det %.15g, −log|det J⁻¹| %.15g", trial, tp.Float(ldi), want)
				}
			}
		})
	}
}

// TestRoundTrip: Inverse(Forward(u)) = u, the log-determinants of both directions agree, and
// InverseTape gives the same as Inverse; the initial parameters give the identity.
func TestRoundTrip(t *testing.T) {
	r := newRand(2)
	for _, c := range testFlows() {
		t.Run(c.name, func(t *testing.T) {
			d := c.f.Dim()
			for range 5 {
				p := randomParams(c.f, r, 0.4)
				u := randVec(r, d, 2)
				z, ld := forward(c.f, p, u)
				back := make([]float64, d)
				ldi, err := c.f.Inverse(p, z, back)
				if err != nil {
					t.Fatalf("Inverse: %v", err)
				}
				checkRoundTrip(t, u, back, ld, ldi)
				if ti, ok := c.f.(TapeInverter); ok && CanInverseTape(c.f) {
					var tp ad.Tape
					uv, lv := ti.InverseTape(&tp, tp.Const(p...), tp.Const(z...))
					checkRoundTrip(t, u, tp.Value(uv), ld, tp.Float(lv))
				}
				// In place: u aliases z.
				zz := append([]float64(nil), z...)
				if _, err := c.f.Inverse(p, zz, zz); err != nil {
					t.Fatal(err)
				}
				checkRoundTrip(t, u, zz, ld, ldi)
			}
			p := make([]float64, c.f.NumParams())
			c.f.Init(p, nil)
			u := randVec(r, d, 1)
			z, ld := forward(c.f, p, u)
			perm, isPerm := c.f.(*Permutation)
			if c.name == "compose_mixed_d4" { // contains a Reverse: a permutation, not the identity
				perm, isPerm = Reverse(4), true
			}
			for i := range u {
				want := u[i]
				if isPerm {
					want = u[perm.perm[i]]
				}
				if z[i] != want {
					t.Errorf("Init is not the identity: z[%d]=%g, want %g", i, z[i], want)
				}
			}
			if ld != 0 {
				t.Errorf("Init log-det %g, want 0", ld)
			}
		})
	}
}

func checkRoundTrip(t *testing.T, u, back []float64, ld, ldi float64) {
	t.Helper()
	// Each layer's inverse recomputes the same conditioner outputs from the same (exactly
	// recovered up to rounding) inputs: errors are a few ulps amplified by the scales e^|s|
	// ≲ e^3 here, so 1e-10 is generous.
	for i := range u {
		if math.Abs(back[i]-u[i]) > 1e-10*(1+math.Abs(u[i])) {
			t.Errorf("round trip u[%d]: %.15g, got back %.15g", i, u[i], back[i])
		}
	}
	if math.Abs(ld-ldi) > 1e-10*(1+math.Abs(ld)) {
		t.Errorf("forward log-det %.15g, inverse %.15g", ld, ldi)
	}
}

// TestGradientFD compares tape gradients of Σ w⊙z + log-det (Forward, with respect to params
// and u) and of Σ w⊙u + log-det (InverseTape, w.r.t. params and z) with central differences.
func TestGradientFD(t *testing.T) {
	r := newRand(3)
	for _, c := range testFlows() {
		if c.f.NumParams() == 0 && c.f.Dim() > 4 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			d := c.f.Dim()
			p := randomParams(c.f, r, 0.4)
			x := randVec(r, d, 1.2)
			w := randVec(r, d, 1)
			dirs := []func(tp *ad.Tape, p, x ad.Var) (ad.Var, ad.Var){c.f.Forward}
			if ti, ok := c.f.(TapeInverter); ok && CanInverseTape(c.f) {
				dirs = append(dirs, ti.InverseTape)
			}
			for k, dir := range dirs {
				var tp ad.Tape
				eval := func(p, x []float64) float64 {
					tp.Reset()
					y, ld := dir(&tp, tp.Const(p...), tp.Const(x...))
					return tp.Float(ld) + tp.Float(tp.Dot(y, tp.Const(w...)))
				}
				tp.Reset()
				P, X := tp.Input(p), tp.Input(x)
				y, ld := dir(&tp, P, X)
				tp.Backward(tp.Add(ld, tp.Dot(y, tp.Const(w...))))
				gp := append([]float64(nil), tp.Grad(P)...)
				gx := append([]float64(nil), tp.Grad(X)...)
				// Five-point differences (fd5): truncation ~h⁴·f⁽⁵⁾ ≈ 1e-16·f⁽⁵⁾ and rounding
				// ~ε·|f|/h ≈ 2e-12·|f|. The inverses of the random linear stacks reach
				// |f| ~ 1e5, so the bound is 1e-7 relative plus 1e-10·|f| (50× the rounding).
				tol := 1e-7
				fabs := 1e-10 * math.Abs(eval(p, x))
				for i := range p {
					fd := fd5(func(v float64) float64 {
						pp := append([]float64(nil), p...)
						pp[i] = v
						return eval(pp, x)
					}, p[i])
					if math.Abs(gp[i]-fd) > tol*(1+math.Abs(fd))+fabs {
						t.Errorf("direction %d ∂/∂params[%d]: tape %.10g, FD %.10g", k, i, gp[i], fd)
					}
				}
				for i := range x {
					fd := fd5(func(v float64) float64 {
						xx := append([]float64(nil), x...)
						xx[i] = v
						return eval(p, xx)
					}, x[i])
					if math.Abs(gx[i]-fd) > tol*(1+math.Abs(fd))+fabs {
						t.Errorf("direction %d ∂/∂x[%d]: tape %.10g, FD %.10g", k, i, gx[i], fd)
					}
				}
			}
		})
	}
}

// fd5 is the five-point central difference of g at x with step 1e-4.
func fd5(g func(float64) float64, x float64) float64 {
	const h = 1e-4
	return (8*(g(x+h)-g(x-h)) - (g(x+2*h) - g(x-2*h))) / (12 * h)
}

// TestMAFTriangular: in the MADE's order the IAF Jacobian is lower triangular with diagonal
// exp(s_j).
func TestMAFTriangular(t *testing.T) {
	r := newRand(4)
	order := []int{2, 4, 1, 3}
	f := NewMAF(nn.NewMADE(4, []int{8, 8}, 2, nn.WithOrder(order)))
	p := randomParams(f, r, 0.5)
	u := randVec(r, 4, 1)
	J := jacobian(func(tp *ad.Tape, x ad.Var) ad.Var { z, _ := f.Forward(tp, tp.Const(p...), x); return z }, u)
	for j := range 4 {
		for i := range 4 {
			if order[i] > order[j] && J[j*4+i] != 0 {
				t.Errorf("∂z_%d/∂u_%d = %g, want 0 (later in the order)", j, i, J[j*4+i])
			}
		}
	}
}

// TestInverseAllocs: float64 inverses allocate nothing in steady state.
func TestInverseAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	r := newRand(5)
	for _, c := range testFlows() {
		p := randomParams(c.f, r, 0.3)
		z := randVec(r, c.f.Dim(), 1)
		u := make([]float64, len(z))
		c.f.Inverse(p, z, u)
		if a := testing.AllocsPerRun(10, func() { c.f.Inverse(p, z, u) }); a != 0 {
			t.Errorf("%s: %v allocations per Inverse, want 0", c.name, a)
		}
	}
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

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"perm":      func() { Permute([]int{0, 0}) },
		"dims":      func() { Compose(NewAffine(2), NewAffine(3)) },
		"madeK":     func() { NewMAF(nn.NewMADE(3, nil, 3)) },
		"keepAll":   func() { NewCoupling(2, []int{0, 1}, nil, ad.Tanh, 5) },
		"paramsLen": func() { var tp ad.Tape; NewAffine(2).Forward(&tp, tp.Const(1), tp.Const(1, 2)) },
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

// FuzzRoundTrip builds a flow from the fuzzed seed (structure and parameters) and checks that
// Inverse(Forward(u)) = u with matching log-determinants.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 3, 42, 1 << 40} {
		f.Add(s, 0.5, 1.0)
	}
	flows := testFlows()
	f.Fuzz(func(t *testing.T, seed uint64, ps, us float64) {
		if !(ps >= 0 && ps <= 1) || !(us >= 0 && us <= 5) {
			t.Skip("scales outside the tested range")
		}
		r := newRand(seed)
		c := flows[seed%uint64(len(flows))]
		p := randomParams(c.f, r, ps)
		u := randVec(r, c.f.Dim(), us)
		z, ld := forward(c.f, p, u)
		if !finite(ld, z) {
			t.Skip("forward overflowed")
		}
		// Random parameters of scale 1 can make a flow so badly conditioned that no inverse
		// recovers u: that is a property of the map, not a bug. Skip when the condition number
		// of the AD Jacobian exceeds 1e6 (then only ~10 digits survive a round trip).
		J := jacobian(func(tp *ad.Tape, x ad.Var) ad.Var {
			zz, _ := c.f.Forward(tp, tp.Const(p...), x)
			return zz
		}, u)
		if !finite(0, J) { // unclamped ReLU layers can reach 1e306 with a finite forward
			t.Skip("Jacobian overflowed")
		}
		var svd mat.SVD
		if !svd.Factorize(mat.NewDense(len(u), len(u), J), mat.SVDNone) || svd.Cond() > 1e6 {
			t.Skip("ill-conditioned flow")
		}
		back := make([]float64, len(u))
		ldi, err := c.f.Inverse(p, z, back)
		if err != nil {
			t.Fatalf("%s: Inverse: %v", c.name, err)
		}
		// Fuzzed parameters can make a flow badly conditioned (random linear stacks with
		// weights ~N(0, 1) and scales up to e^±5 per layer), and then no inverse recovers u to
		// many digits. The criterion is backward stability: either u comes back to 1e-7, or
		// the recovered point maps forward to z within 1e-9 of the largest |z|.
		uerr := 0.0
		for i := range u {
			uerr = max(uerr, math.Abs(back[i]-u[i])/(1+math.Abs(u[i])))
		}
		if uerr > 1e-7 {
			z2, _ := forward(c.f, p, back)
			zmax, zerr := 1.0, 0.0
			for i := range z {
				zmax = max(zmax, math.Abs(z[i]))
				zerr = max(zerr, math.Abs(z2[i]-z[i]))
			}
			if zerr > 1e-9*zmax {
				t.Fatalf("%s: u %v, back %v (relative error %.3g); T(back) − z up to %.3g (|z| ≤ %.3g)", c.name, u, back, uerr, zerr, zmax)
			}
		}
		// The inverse's log-det is evaluated at its own recovered intermediates; a volume
		// change e^|ld| amplifies their rounding by up to that factor.
		if math.Abs(ld-ldi) > 1e-7*(1+math.Abs(ld))+1e-15*math.Exp(min(math.Abs(ld), 700)) {
			t.Fatalf("%s: log-det %.15g vs %.15g", c.name, ld, ldi)
		}
	})
}

func BenchmarkForwardBackward(b *testing.B) {
	for _, c := range []flowCase{
		{"iaf_d10_h10x10", NewMAF(nn.NewMADE(10, []int{10, 10}, 2))},
		{"realnvp_d10_4x10x10", NewRealNVP(10, 4, []int{10, 10})},
		{"maf_d10_h10x10_sequential", NewMAF(nn.NewMADE(10, []int{10, 10}, 2), ConditionOnOutput())},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newRand(9)
			p := randomParams(c.f, r, 0.1)
			u := randVec(r, 10, 1)
			var tp ad.Tape
			b.ReportAllocs()
			for b.Loop() {
				tp.Reset()
				P := tp.Input(p)
				z, ld := c.f.Forward(&tp, P, tp.Const(u...))
				tp.Backward(tp.Add(ld, tp.Sum(z)))
			}
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
