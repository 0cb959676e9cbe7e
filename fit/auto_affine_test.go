package fit

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
)

// TestNewFlowFamilyAffineLayerPlacement: Affine "last" appends one IAF layer (K = 2 MADE with
// direct connections, native order) after the Bernstein layers, "first" puts it before them,
// and the default builds exactly the flow it built before (no affine layer).
func TestNewFlowFamilyAffineLayerPlacement(t *testing.T) {
	d := 4
	plain, err := NewFlowFamily(KindBernstein, d, FlowOptions{Hidden: []int{6}, Degree: 4})
	if err != nil {
		t.Fatal(err)
	}
	if c := plain.Flow().(*flow.Composed); len(c.Parts()) != 1 {
		t.Fatalf("default bernstein has %d parts, want 1", len(c.Parts()))
	}
	for _, c := range []struct {
		affine string
		idx    int // index of the MAF among the parts
	}{{AffineLast, 2}, {AffineFirst, 0}} {
		q, err := NewFlowFamily(KindBernstein, d, FlowOptions{Hidden: []int{6}, Degree: 4, Layers: 2, Affine: c.affine, AffineHidden: []int{5, 5}})
		if err != nil {
			t.Fatal(err)
		}
		parts := q.Flow().(*flow.Composed).Parts()
		if len(parts) != 3 {
			t.Fatalf("%s: %d parts, want 3", c.affine, len(parts))
		}
		m, ok := parts[c.idx].(*flow.MAF)
		if !ok {
			t.Fatalf("%s: part %d is %T, want *flow.MAF", c.affine, c.idx, parts[c.idx])
		}
		made := m.Conditioner()
		if !made.HasDirect() || m.ConditionsOnOutput() || m.ScaleClamp() != 5 {
			t.Errorf("%s: MAF direct %v, on output %v, clamp %g", c.affine, made.HasDirect(), m.ConditionsOnOutput(), m.ScaleClamp())
		}
		for i, deg := range made.Degrees() {
			if deg != i+1 {
				t.Errorf("%s: affine layer's order %v, want the native 1..%d", c.affine, made.Degrees(), d)
				break
			}
		}
		if h := made.Hidden(); len(h) != 2 || h[0] != 5 || h[1] != 5 {
			t.Errorf("%s: affine hidden %v, want [5 5]", c.affine, h)
		}
		if want := plain.NumParams() + parts[1].NumParams() + m.NumParams(); q.NumParams() != want {
			t.Errorf("%s: %d parameters, want %d", c.affine, q.NumParams(), want)
		}
	}
	q, err := NewFlowFamily(KindBernstein, d, FlowOptions{Affine: AffineLast})
	if err != nil {
		t.Fatal(err)
	}
	if h := q.Flow().(*flow.Composed).Parts()[1].(*flow.MAF).Conditioner().Hidden(); len(h) != 2 || h[0] != 32 || h[1] != 32 {
		t.Errorf("default affine hidden %v, want [32 32]", h)
	}
}

// TestNewFlowFamilyAffineOptionErrors: bad Affine values, an affine layer on another kind and
// affine hidden sizes without an affine layer are refused, the option named.
func TestNewFlowFamilyAffineOptionErrors(t *testing.T) {
	for _, c := range []struct {
		kind string
		o    FlowOptions
		want string
	}{
		{KindBernstein, FlowOptions{Affine: "middle"}, `affine "middle", want none, last or first`},
		{KindMAF, FlowOptions{Affine: AffineLast}, "affine layer (affine=last) is for bernstein only (kind=maf)"},
		{KindRealNVP, FlowOptions{Affine: AffineFirst}, "affine layer (affine=first) is for bernstein only (kind=realnvp)"},
		{KindBernstein, FlowOptions{AffineHidden: []int{8}}, "affine hidden sizes [8] without an affine layer"},
		{KindBernstein, FlowOptions{Affine: AffineLast, AffineHidden: []int{0}}, "affine hidden size 0"},
		{KindBernstein, FlowOptions{Affine: AffineLast, AffineHidden: make([]int, flow.MaxHiddenLayers+1)}, "affine hidden layers"},
	} {
		_, err := NewFlowFamily(c.kind, 3, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: error %v, want it to contain %q", c.kind, c.o, err, c.want)
		}
	}
	if _, err := NewFlowFamily(KindBernstein, 3, FlowOptions{Affine: AffineNone}); err != nil {
		t.Errorf("affine none: %v", err)
	}
}

// TestAffineBernsteinLogDensity: for both placements, away from the identity, the log q a draw
// carries equals log N(ε; 0, I) − log|det ∂z/∂ε| with the Jacobian by central differences (so
// the composed log-determinant is right), and equals LogProb(z) through the float64 inverse
// (the sequential IAF inverse and the Bernstein root finding recover ε).
func TestAffineBernsteinLogDensity(t *testing.T) {
	d := 4
	for _, aff := range []string{AffineLast, AffineFirst} {
		q, err := NewFlowFamily(KindBernstein, d, FlowOptions{Hidden: []int{6}, Degree: 5, Affine: aff, AffineHidden: []int{6}, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		params := make([]float64, q.NumParams())
		q.Init(params, nil, 1)
		r := rand.New(rand.NewPCG(7, 8))
		for i := range params {
			params[i] += 0.15 * r.NormFloat64() // leave the identity so every part matters
		}
		for range 3 {
			eps, z := make([]float64, d), make([]float64, d)
			for i := range eps {
				eps[i] = r.NormFloat64()
			}
			lq := q.Sample(params, eps, z)
			jac := mat.NewDense(d, d, nil)
			const h = 1e-5
			ep, zp, zm := make([]float64, d), make([]float64, d), make([]float64, d)
			for j := range d {
				copy(ep, eps)
				ep[j] += h
				q.Sample(params, ep, zp)
				ep[j] -= 2 * h
				q.Sample(params, ep, zm)
				for i := range d {
					jac.Set(i, j, (zp[i]-zm[i])/(2*h))
				}
			}
			var lu mat.LU
			lu.Factorize(jac)
			logdet, _ := lu.LogDet()
			want := -0.5*dot(eps, eps) - 0.5*float64(d)*math.Log(2*math.Pi) - logdet
			// central differences with h = 1e-5 on an O(1) smooth map: error O(h²) ≈ 1e-10 per
			// entry, plus rounding ≈ 1e-16/h ≈ 1e-11; 1e-6 leaves a wide margin.
			if math.Abs(lq-want) > 1e-6 {
				t.Errorf("%s: log q %v, from the numerical Jacobian %v", aff, lq, want)
			}
			// The inverse is iterative (Bernstein root finding to ≈1e-12 in u); 1e-8 in log q.
			if lp := q.LogProb(params, z); math.Abs(lp-lq) > 1e-8 {
				t.Errorf("%s: LogProb(z) %v, the draw's log q %v", aff, lp, lq)
			}
		}
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestSavedAffineBernsteinRoundTrip: a Bernstein flow with an affine layer last saves to
// fit.json and reads back to the same flow (generic compose/maf/bernstein_ar spec): the saved
// fit repeats the fit's draws and log densities bit for bit. It is saved under the name
// "bernstein" (family.Flow.Kind: Bernstein layers with an affine autoregressive layer).
func TestSavedAffineBernsteinRoundTrip(t *testing.T) {
	q, err := NewFlowFamily(KindBernstein, 5, FlowOptions{Hidden: []int{6}, Degree: 4, Affine: AffineLast, AffineHidden: []int{6}})
	if err != nil {
		t.Fatal(err)
	}
	res, s, _ := savedFit(t, q)
	if s.Family.Kind != KindFlow || s.Family.Name != KindBernstein {
		t.Errorf("saved as kind %q name %q", s.Family.Kind, s.Family.Name)
	}
	back := writeRead(t, s)
	aff, _ := back.Approximation()
	parts := aff.Base.(*family.Flow).Flow().(*flow.Composed).Parts()
	if _, ok := parts[len(parts)-1].(*flow.MAF); !ok || len(parts) != 2 {
		t.Fatalf("read back %d parts, the last %T", len(parts), parts[len(parts)-1])
	}
	n, d := 40, back.Dim()
	z, lq := back.Sample(11, n)
	for i := range n * d {
		if math.Float64bits(z[i]) != math.Float64bits(res.Draws[i]) {
			t.Fatalf("draw value %d: %v, fit drew %v", i, z[i], res.Draws[i])
		}
	}
	for i := range n {
		if math.Float64bits(lq[i]) != math.Float64bits(res.LogQ[i]) {
			t.Fatalf("log q %d: %v, fit had %v", i, lq[i], res.LogQ[i])
		}
	}
}
