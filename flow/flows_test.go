package flow_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/flow/flowtest"
	"github.com/vigo-bayes/vigo/internal/race"
	"github.com/vigo-bayes/vigo/nn"
)

type flowCase struct {
	name string
	f    flow.Flow
	cfg  flowtest.Config
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 11)) }

// affineFlows covers the affine flows (Affine, Permutation, MAF in both directions, coupling
// layers, their stacks and a composition of all) in several shapes.
func affineFlows() []flowCase {
	made := func(d int, hidden []int, act ad.Activation, o ...nn.MADEOption) *nn.MADE {
		return nn.NewMADE(d, hidden, 2, append([]nn.MADEOption{nn.WithActivation(act)}, o...)...)
	}
	rev := func(d int) []int { return flow.Reverse(d).Perm() }
	return []flowCase{
		{"affine_d3", flow.NewAffine(3), flowtest.Config{}},
		{"permute_d4", flow.Permute([]int{2, 0, 3, 1}), flowtest.Config{InitPerm: []int{2, 0, 3, 1}}},
		{"reverse_d5", flow.Reverse(5), flowtest.Config{InitPerm: rev(5)}},
		{"iaf_d1", flow.NewMAF(made(1, []int{4}, ad.Tanh)), flowtest.Config{}},
		{"iaf_d2_nohidden", flow.NewMAF(made(2, nil, ad.Tanh)), flowtest.Config{}},
		{"iaf_d4", flow.NewMAF(made(4, []int{8, 8}, ad.Tanh)), flowtest.Config{}},
		{"iaf_d5_linear_order", flow.NewMAF(made(5, []int{10, 10}, ad.Linear, nn.WithOrder([]int{5, 3, 1, 2, 4}))), flowtest.Config{}},
		{"iaf_d3_noclamp", flow.NewMAF(made(3, []int{6}, ad.Sigmoid), flow.WithScaleClamp(0)), flowtest.Config{}},
		{"maf_d4", flow.NewMAF(made(4, []int{8, 8}, ad.Tanh), flow.ConditionOnOutput()), flowtest.Config{}},
		{"maf_d1", flow.NewMAF(made(1, nil, ad.Tanh), flow.ConditionOnOutput()), flowtest.Config{}},
		{"coupling_d5", flow.NewCoupling(5, []int{4, 1}, []int{7}, ad.Tanh, 5), flowtest.Config{}},
		{"coupling_empty_keep", flow.NewCoupling(3, nil, nil, ad.Tanh, 5), flowtest.Config{}},
		{"realnvp_d1", flow.NewRealNVP(1, 2, []int{4}), flowtest.Config{}},
		{"realnvp_d4", flow.NewRealNVP(4, 4, []int{8, 8}), flowtest.Config{}},
		{"realnvp_d3_relu", flow.NewRealNVP(3, 2, []int{6}, flow.RealNVPActivation(ad.ReLU), flow.RealNVPScaleClamp(0)), flowtest.Config{}},
		{"mafstack_d4", flow.NewMAFStack(4, 3, []int{8}, nil), flowtest.Config{}},
		{"mafstack_d4_direct_linear", flow.NewMAFStack(4, 2, []int{8}, []nn.MADEOption{nn.WithDirect(), nn.WithActivation(ad.Linear)}), flowtest.Config{}},
		{"iaf_d3_direct", flow.NewMAF(nn.NewMADE(3, []int{5}, 2, nn.WithDirect())), flowtest.Config{}},
		{"compose_mixed_d4", flow.Compose(
			flow.NewAffine(4),
			flow.NewMAF(made(4, []int{8}, ad.Tanh)),
			flow.Reverse(4),
			flow.NewCoupling(4, []int{0, 1}, []int{6}, ad.Tanh, 5),
			flow.NewMAF(made(4, []int{8}, ad.Tanh), flow.ConditionOnOutput()),
		), flowtest.Config{InitPerm: rev(4)}},
	}
}

// bernsteinFlows covers the Bernstein flows in several shapes: degrees from 1 to 100, both
// tails, conditioners with and without a nonlinearity, without hidden layers, a non-default
// ordering, a frozen affine map and d = 1; each is also checked at a point far in the tails
// of the polynomial's interval.
func bernsteinFlows() []flowCase {
	made := func(d int, hidden []int, M int, act ad.Activation, o ...nn.MADEOption) *nn.MADE {
		return nn.NewMADE(d, hidden, M+1, append([]nn.MADEOption{nn.WithActivation(act)}, o...)...)
	}
	lin := flow.BernsteinTails(flow.LinearTails)
	// LinearTails: Init is the identity up to the rounding of the softplus round trip of the
	// increments. BoundedTails: z = 12(σ(u/3) − 1/2), |z − u| ≤ 0.23 and |log ∂z/∂u| ≤ 0.24
	// for |u| ≤ 3.
	linear, bounded := flowtest.Config{InitTol: 1e-12, InitLogDetTol: 1e-12}, flowtest.Config{InitTol: 0.1, InitLogDetTol: 0.3}
	cases := []flowCase{
		{"bern_d1_M1", flow.NewBernstein(1, 1), bounded},
		{"bern_d1_M2_linear", flow.NewBernstein(1, 2, lin), linear},
		{"bern_d3_M5", flow.NewBernstein(3, 5), bounded},
		{"bern_d3_M30_linear", flow.NewBernstein(3, 30, lin), linear},
		{"bern_d2_M100", flow.NewBernstein(2, 100), bounded},
		{"bern_d2_M100_linear", flow.NewBernstein(2, 100, lin), linear},
		{"bernar_d1_M4", flow.NewBernsteinAR(made(1, []int{4}, 4, ad.Tanh)), bounded},
		{"bernar_d4_M6_paper", flow.NewBernsteinAR(made(4, []int{10, 10}, 6, ad.Linear)), bounded},
		{"bernar_d3_M10_tanh_linear", flow.NewBernsteinAR(made(3, []int{8, 8}, 10, ad.Tanh), lin), linear},
		{"bernar_d3_M3_nohidden", flow.NewBernsteinAR(made(3, nil, 3, ad.Tanh)), bounded},
		{"bernar_d5_M8_order", flow.NewBernsteinAR(made(5, []int{10}, 8, ad.Tanh, nn.WithOrder([]int{3, 5, 1, 2, 4}))), bounded},
		{"bernar_d4_M20_linear", flow.NewBernsteinAR(made(4, []int{10, 10}, 20, ad.Linear), lin), linear},
		{"bernar_d4_M5_direct", flow.NewBernsteinAR(made(4, []int{6}, 5, ad.Tanh, nn.WithDirect())), bounded},
		// Frozen α = log 2 instead of Init's α: further from the identity (|z − u| ≈ 0.4 at
		// u ≈ 2.8).
		{"bernar_d3_M7_frozen", flow.NewBernsteinAR(made(3, []int{6}, 7, ad.Linear), flow.BernsteinFrozenAffine()),
			flowtest.Config{InitTol: 0.2, InitLogDetTol: 0.6}},
		{"bernar_d2_M9_frozen_linear", flow.NewBernsteinAR(made(2, []int{6}, 9, ad.Tanh), lin, flow.BernsteinFrozenAffine()), linear},
	}
	for i := range cases {
		u := make([]float64, cases[i].f.Dim())
		for j := range u {
			u[j] = []float64{-7, 6.5, 0.3, -4.2, 9}[j%5]
		}
		cases[i].cfg.Inputs = [][]float64{u}
	}
	return cases
}

// TestFlowContract: every flow type, in every shape above, passes the shared checker.
func TestFlowContract(t *testing.T) {
	all := append(affineFlows(), bernsteinFlows()...)
	// Every type in one composition (spec_test.go): its Init is the permutation followed by
	// the frozen bounded Bernstein layer's near-identity; eight layers of noise 0.4 would
	// flatten the map to a log-det of −50.
	all = append(all, flowCase{"every_part_d3", everyPart(), flowtest.Config{InitPerm: []int{2, 0, 1}, InitTol: 0.2, InitLogDetTol: 0.6, ParamScale: 0.1}})
	for i, c := range all {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Seed = uint64(i + 1)
			flowtest.Check(t, c.f, c.cfg)
		})
	}
}

// TestAutoregressiveTriangular: in the MADE's order the Jacobians of MAF and BernsteinAR are
// lower triangular (an output does not depend on inputs later in the order: the
// finite-difference entries are exact zeros); BernsteinAR's FrozenAffine matches its
// parameter count.
func TestAutoregressiveTriangular(t *testing.T) {
	r := newRand(4)
	order := []int{2, 4, 1, 3}
	for _, c := range append(bernsteinFlows(), flowCase{name: "iaf_d4_order",
		f: flow.NewMAF(nn.NewMADE(4, []int{8, 8}, 2, nn.WithOrder(order)))}) {
		var made *nn.MADE
		switch f := c.f.(type) {
		case *flow.MAF:
			made = f.Conditioner()
		case *flow.BernsteinAR:
			made = f.Conditioner()
			if f.FrozenAffine() != (f.NumParams() == made.NumParams()) {
				t.Errorf("%s: FrozenAffine %v with %d parameters", c.name, f.FrozenAffine(), f.NumParams())
			}
		default:
			continue
		}
		d := c.f.Dim()
		p := flowtest.RandomParams(c.f, r, 0.5)
		J := flowtest.Jacobian(c.f, p, flowtest.RandVec(r, d, 1))
		deg := made.Degrees()
		for j := range d {
			for i := range d {
				if deg[i] > deg[j] && J[j*d+i] != 0 {
					t.Errorf("%s: ∂z_%d/∂u_%d = %g, want 0 (later in the order)", c.name, j, i, J[j*d+i])
				}
			}
		}
	}
}

// TestBernsteinForwardBackwardAllocs: Forward + Backward of a Bernstein flow allocate nothing
// in steady state (the fused nodes keep their scratch on the tape).
func TestBernsteinForwardBackwardAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	r := newRand(16)
	for _, c := range bernsteinFlows() {
		p := flowtest.RandomParams(c.f, r, 0.3)
		u := flowtest.RandVec(r, c.f.Dim(), 1)
		var tp ad.Tape
		step := func() {
			tp.Reset()
			P := tp.Input(p)
			z, ld := c.f.Forward(&tp, P, tp.Const(u...))
			tp.Backward(tp.Add(ld, tp.Sum(z)))
		}
		step()
		if a := testing.AllocsPerRun(10, step); a != 0 {
			t.Errorf("%s: %v allocations per Forward+Backward, want 0", c.name, a)
		}
	}
}

// FuzzRoundTrip builds a flow from the fuzzed seed (structure and parameters) and checks that
// Inverse(Forward(u)) = u with matching log-determinants.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 3, 42, 1 << 40} {
		f.Add(s, 0.5, 1.0)
	}
	flows := affineFlows()
	f.Fuzz(func(t *testing.T, seed uint64, ps, us float64) {
		c, p, u, z, ld := fuzzPoint(t, flows, seed, ps, 1, us, 5)
		// Random parameters of scale 1 can make a flow so badly conditioned that no inverse
		// recovers u: that is a property of the map, not a bug. Skip when the condition number
		// of the Jacobian exceeds 1e6 (then only ~10 digits survive a round trip).
		J := flowtest.Jacobian(c.f, p, u)
		if !flowtest.Finite(J...) { // unclamped ReLU layers can reach 1e306 with a finite forward
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
			z2, _ := flowtest.Forward(c.f, p, back)
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

// FuzzBernsteinInverse builds a Bernstein flow from the fuzzed seed (which flow, parameters of
// scale ps, input of scale us) and checks that Inverse recovers u from z = T(u), or at least a
// u′ with T(u′) = z where T is flat to rounding (the bounded map far in its tails).
func FuzzBernsteinInverse(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 3, 5, 8, 42, 1 << 40} {
		f.Add(s, 0.5, 1.0)
	}
	f.Add(uint64(7), 3.0, 30.0)
	flows := bernsteinFlows()
	f.Fuzz(func(t *testing.T, seed uint64, ps, us float64) {
		c, p, u, z, _ := fuzzPoint(t, flows, seed, ps, 5, us, 50)
		back := make([]float64, len(u))
		ldi, err := c.f.Inverse(p, z, back)
		if errors.Is(err, flow.ErrOutsideSupport) {
			// The bounded map rounds to its end coefficient far out: z = ϑ_0 or ϑ_M exactly.
			return
		}
		if err != nil {
			t.Fatalf("%s: Inverse: %v", c.name, err)
		}
		z2, ld2 := flowtest.Forward(c.f, p, back)
		order := make([]int, len(u)) // coordinates in the autoregressive order
		for i := range order {
			order[i] = i
		}
		if ar, ok := c.f.(*flow.BernsteinAR); ok {
			for i, m := range ar.Conditioner().Degrees() {
				order[m-1] = i
			}
		}
		recovered := true
		for _, i := range order {
			if !recovered {
				// An earlier coordinate of an autoregressive flow was lost in a flat region
				// of its map: later coordinates see other coefficients, nothing to compare.
				break
			}
			// Either u is recovered, or z is: the map is then flat at u to rounding.
			du := math.Abs(back[i] - u[i])
			dz := math.Abs(z2[i] - z[i])
			if du > 1e-7*(1+math.Abs(u[i])) {
				recovered = false
				if dz > 1e-12*(1+math.Abs(z[i])) {
					t.Fatalf("%s: u[%d]=%.15g back %.15g; z=%.15g, T(back)=%.15g", c.name, i, u[i], back[i], z[i], z2[i])
				}
			}
		}
		// Inverse returns the forward log-determinant at the u it returns (compared with the
		// one at the original u it can differ legitimately where the map is flat to rounding).
		if recovered && math.Abs(ld2-ldi) > 1e-9*(1+math.Abs(ld2)) {
			t.Fatalf("%s: log-det at the returned u %.15g, Inverse says %.15g", c.name, ld2, ldi)
		}
	})
}

// TestBernsteinForwardReuse: several draws on one tape, each recorded after a mark, run
// backward and rewound as the ELBO estimator does, give the values and gradients of separate
// fresh tapes: the coefficients the flows prepare once per parameter value (ad.Tape.Memo) are
// reused correctly across draws and dropped when the parameters change.
func TestBernsteinForwardReuse(t *testing.T) {
	r := newRand(21)
	for _, c := range bernsteinFlows() {
		t.Run(c.name, func(t *testing.T) {
			d := c.f.Dim()
			var tp, fresh ad.Tape
			for step := range 2 { // a second step with new parameters must not see the old ones
				p := flowtest.RandomParams(c.f, r, 0.4)
				tp.Reset()
				P := tp.Input(p)
				m := tp.Mark()
				for draw := range 3 {
					u := flowtest.RandVec(r, d, 1.2)
					z, ld := c.f.Forward(&tp, tp.Slice(P, 0, len(p)), tp.ConstRef(u))
					tp.BackwardSince(m, tp.Add(ld, tp.Sum(z)))
					got, gotG := tp.Float(ld), append([]float64(nil), tp.Grad(P)...)
					tp.ZeroGrad(P)
					tp.Rewind(m)

					fresh.Reset()
					F := fresh.Input(p)
					z, ld = c.f.Forward(&fresh, F, fresh.Const(u...))
					fresh.Backward(fresh.Add(ld, fresh.Sum(z)))
					// The same operations on the same numbers: identical results.
					if want := fresh.Float(ld); got != want {
						t.Fatalf("step %d draw %d: log-det %v, fresh tape %v", step, draw, got, want)
					}
					for i, g := range fresh.Grad(F) {
						if gotG[i] != g {
							t.Fatalf("step %d draw %d: ∂/∂params[%d] = %v, fresh tape %v", step, draw, i, gotG[i], g)
						}
					}
				}
			}
		})
	}
}

// fuzzPoint picks the flow of a fuzz seed and draws its parameters (noise of scale ps ≤ psMax)
// and input (scale us ≤ usMax), skipping scales out of range and forward maps that overflow.
func fuzzPoint(t *testing.T, flows []flowCase, seed uint64, ps, psMax, us, usMax float64) (c flowCase, p, u, z []float64, ld float64) {
	if !(ps >= 0 && ps <= psMax) || !(us >= 0 && us <= usMax) {
		t.Skip("scales outside the tested range")
	}
	r := newRand(seed)
	c = flows[seed%uint64(len(flows))]
	p = flowtest.RandomParams(c.f, r, ps)
	u = flowtest.RandVec(r, c.f.Dim(), us)
	z, ld = flowtest.Forward(c.f, p, u)
	if !flowtest.Finite(append(z, ld)...) {
		t.Skip("forward overflowed")
	}
	return c, p, u, z, ld
}
