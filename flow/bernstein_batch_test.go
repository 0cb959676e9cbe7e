package flow_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/flow/flowtest"
	"github.com/vigo-bayes/vigo/internal/race"
	"github.com/vigo-bayes/vigo/nn"
)

// batchARFlows are the BernsteinAR shapes of the batch-node tests: every activation, no
// hidden layers, three hidden layers, direct connections, a non-default ordering, frozen
// affine pairs, both tails, d not a multiple of four and d = 1, the paper's D = 10, M = 49.
func batchARFlows() []flowCase {
	made := func(d int, hidden []int, M int, act ad.Activation, o ...nn.MADEOption) *nn.MADE {
		return nn.NewMADE(d, hidden, M+1, append([]nn.MADEOption{nn.WithActivation(act)}, o...)...)
	}
	lin := flow.BernsteinTails(flow.LinearTails)
	return []flowCase{
		{name: "d1_M4_tanh", f: flow.NewBernsteinAR(made(1, []int{4}, 4, ad.Tanh))},
		{name: "d4_M6_linear", f: flow.NewBernsteinAR(made(4, []int{10, 10}, 6, ad.Linear))},
		{name: "d3_M10_tanh_lineartails", f: flow.NewBernsteinAR(made(3, []int{8, 8}, 10, ad.Tanh), lin)},
		{name: "d3_M3_nohidden", f: flow.NewBernsteinAR(made(3, nil, 3, ad.Tanh))},
		{name: "d5_M8_order_relu", f: flow.NewBernsteinAR(made(5, []int{10}, 8, ad.ReLU, nn.WithOrder([]int{3, 5, 1, 2, 4})))},
		{name: "d6_M5_direct_sigmoid", f: flow.NewBernsteinAR(made(6, []int{7, 5, 6}, 5, ad.Sigmoid, nn.WithDirect()))},
		{name: "d7_M7_frozen", f: flow.NewBernsteinAR(made(7, []int{6}, 7, ad.Linear), flow.BernsteinFrozenAffine())},
		{name: "d2_M9_frozen_lineartails", f: flow.NewBernsteinAR(made(2, []int{6}, 9, ad.Tanh), lin, flow.BernsteinFrozenAffine())},
		{name: "d10_M49_paper", f: flow.NewBernsteinAR(made(10, []int{10, 10}, 49, ad.Linear))},
		{name: "d10_M20_fitdefault", f: flow.NewBernsteinAR(made(10, []int{10, 10}, 20, ad.Tanh), lin)},
	}
}

// batchObjective records ForwardBatch of the S rows of U and the scalar
// Σ_s Σ_j w_sj·z_sj + Σ_s v_s·ld_s with fixed weights w, v (so that every output's adjoint is
// different), and returns its value.
func batchObjective(tp *ad.Tape, f flow.Flow, P, U ad.Var, w, v []float64) ad.Var {
	Z, LD := flow.ForwardBatch(tp, f, P, U)
	return tp.Add(tp.Dot(Z, tp.ConstRef(w)), tp.Dot(LD, tp.ConstRef(v)))
}

// TestBernsteinARBatchMatchesForward: the batch node gives, for every row, the values and the
// parameter and input gradients of Forward on that row, to 1e-10 relative (the matrix
// products sum in another order than the per-draw MADE; everything else is the same code).
func TestBernsteinARBatchMatchesForward(t *testing.T) {
	r := newRand(31)
	for _, c := range batchARFlows() {
		t.Run(c.name, func(t *testing.T) {
			d := c.f.Dim()
			for _, S := range []int{1, 2, 5, 10} {
				p := flowtest.RandomParams(c.f, r, 0.4)
				u := flowtest.RandVec(r, S*d, 1.5)
				w := flowtest.RandVec(r, S*d, 1)
				v := flowtest.RandVec(r, S, 1)

				var tb ad.Tape
				P, U := tb.Input(p), tb.Input(u)
				Z, LD := flow.ForwardBatch(&tb, c.f, P, U)
				zb, ldb := append([]float64(nil), tb.Value(Z)...), append([]float64(nil), tb.Value(LD)...)
				tb.Backward(tb.Add(tb.Dot(Z, tb.ConstRef(w)), tb.Dot(LD, tb.ConstRef(v))))
				gpb, gub := tb.Grad(P), tb.Grad(U)

				gp := make([]float64, len(p))
				for s := range S {
					var tr ad.Tape
					P, Us := tr.Input(p), tr.Input(u[s*d:(s+1)*d])
					z, ld := c.f.Forward(&tr, P, Us)
					for j, zj := range tr.Value(z) {
						checkClose(t, fmt.Sprintf("S=%d z[%d,%d]", S, s, j), zb[s*d+j], zj, 1e-10)
					}
					checkClose(t, fmt.Sprintf("S=%d logdet[%d]", S, s), ldb[s], tr.Float(ld), 1e-10)
					tr.Backward(tr.Add(tr.Dot(z, tr.ConstRef(w[s*d:(s+1)*d])), tr.MulC(ld, v[s])))
					for i, g := range tr.Grad(P) {
						gp[i] += g
					}
					for j, g := range tr.Grad(Us) {
						checkClose(t, fmt.Sprintf("S=%d ∂/∂u[%d,%d]", S, s, j), gub[s*d+j], g, 1e-10)
					}
				}
				scale := 0.0
				for _, g := range gp {
					scale = max(scale, math.Abs(g))
				}
				for i, g := range gp {
					if math.Abs(gpb[i]-g) > 1e-10*scale {
						t.Fatalf("S=%d ∂/∂params[%d] = %.17g batched, %.17g by rows (scale %.3g)", S, i, gpb[i], g, scale)
					}
				}
			}
		})
	}
}

// checkClose fails unless |got − want| ≤ tol·(1 + |want|).
func checkClose(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol*(1+math.Abs(want))) {
		t.Fatalf("%s: %.17g batched, %.17g by rows", what, got, want)
	}
}

// TestBernsteinARBatchGradient checks the batch node's gradient with respect to the
// parameters and the inputs against central differences of its own value (step 1e-6:
// truncation O(h²·f‴) ≈ 1e-12 and rounding O(ε·|f|/h) ≈ 1e-10 for these O(1)–O(10²) values,
// so 2e-6 relative to the largest partial leaves room for both).
func TestBernsteinARBatchGradient(t *testing.T) {
	r := newRand(32)
	for _, c := range batchARFlows() {
		t.Run(c.name, func(t *testing.T) {
			d, S := c.f.Dim(), 3
			p := flowtest.RandomParams(c.f, r, 0.4)
			u := flowtest.RandVec(r, S*d, 1.5)
			w := flowtest.RandVec(r, S*d, 1)
			v := flowtest.RandVec(r, S, 1)
			value := func(p, u []float64) float64 {
				var tp ad.Tape
				return tp.Float(batchObjective(&tp, c.f, tp.Const(p...), tp.Const(u...), w, v))
			}
			var tp ad.Tape
			P, U := tp.Input(p), tp.Input(u)
			tp.Backward(batchObjective(&tp, c.f, P, U, w, v))
			check := func(name string, x, g []float64, eval func() float64) {
				scale := 1.0
				for _, v := range g {
					scale = max(scale, math.Abs(v))
				}
				// Every input, and a spread of the parameters (all of a small flow's).
				step := max(1, len(x)/150)
				for i := 0; i < len(x); i += step {
					const h = 1e-6
					x0 := x[i]
					x[i] = x0 + h
					fp := eval()
					x[i] = x0 - h
					fm := eval()
					x[i] = x0
					fd := (fp - fm) / (2 * h)
					if math.Abs(fd-g[i]) > 2e-6*scale {
						t.Fatalf("∂/∂%s[%d]: %.12g, central difference %.12g", name, i, g[i], fd)
					}
				}
			}
			check("params", p, tp.Grad(P), func() float64 { return value(p, u) })
			check("u", u, tp.Grad(U), func() float64 { return value(p, u) })
		})
	}
}

// TestBernsteinARBatchAllocs: ForwardBatch and its backward pass allocate nothing in steady
// state, and a second step gives bit-identical results (the scratch kept by the tape holds
// nothing between calls).
func TestBernsteinARBatchAllocs(t *testing.T) {
	r := newRand(33)
	for _, c := range batchARFlows() {
		d, S := c.f.Dim(), 10
		p := flowtest.RandomParams(c.f, r, 0.3)
		u := flowtest.RandVec(r, S*d, 1)
		w := flowtest.RandVec(r, S*d, 1)
		v := flowtest.RandVec(r, S, 1)
		var tp ad.Tape
		var val float64
		var grad []float64
		step := func() {
			tp.Reset()
			P := tp.Input(p)
			o := batchObjective(&tp, c.f, P, tp.ConstRef(u), w, v)
			tp.Backward(o)
			val, grad = tp.Float(o), tp.Grad(P)
		}
		step()
		v0, g0 := val, append([]float64(nil), grad...)
		step()
		if val != v0 {
			t.Errorf("%s: second step %v, first %v", c.name, val, v0)
		}
		for i := range g0 {
			if grad[i] != g0[i] {
				t.Errorf("%s: second step ∂/∂params[%d] = %v, first %v", c.name, i, grad[i], g0[i])
				break
			}
		}
		if race.Enabled {
			continue
		}
		if a := testing.AllocsPerRun(10, step); a != 0 {
			t.Errorf("%s: %v allocations per ForwardBatch+Backward, want 0", c.name, a)
		}
	}
}
