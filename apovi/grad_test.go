package apovi

import (
	"fmt"
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// toyData returns n points of a smooth 1-D (or dx-D) function with noise, or Bernoulli labels.
func toyData(n, dx, dy int, bern bool, seed uint64) Dataset {
	r := rng.New(seed, 9)
	d := Dataset{N: n, DX: dx, DY: dy, X: make([]float64, n*dx), Y: make([]float64, n*dy)}
	for i := range d.X {
		d.X[i] = 4*r.Float64() - 2
	}
	for i := range n {
		s := 0.0
		for k := range dx {
			s += math.Sin(d.X[i*dx+k] * float64(k+1))
		}
		for j := range dy {
			f := s + 0.3*float64(j)
			if bern {
				if r.Float64() < 1/(1+math.Exp(-3*f)) {
					d.Y[i*dy+j] = 1
				}
			} else {
				d.Y[i*dy+j] = f + 0.1*r.NormFloat64()
			}
		}
	}
	return d
}

func lossAt(m Model, p []float64, obj Objective, ctx, tgt Dataset, S int, seed uint64) (float64, []float64, error) {
	var t ad.Tape
	pv := t.Input(p)
	l, err := m.Loss(&t, pv, obj, ctx, tgt, S, rng.New(seed, 1).Rand)
	if err != nil {
		return 0, nil, err
	}
	t.Backward(l)
	return t.Float(l), append([]float64(nil), t.Grad(pv)...), nil
}

// checkGrad compares the tape gradient of the whole loss (fixed ε: the same seed in every
// evaluation) with central finite differences at every parameter. Tolerance: the central
// difference with step h has truncation error O(h²·f”') ≈ 1e-10 and rounding error
// O(ε_mach·|f|/h) ≈ 1e-11 for these O(1) losses, so 1e-6·(1+|g|) leaves margin for curvature
// near a ReLU kink without hiding a wrong adjoint (which is off by O(|g|)).
func checkGrad(t *testing.T, m Model, obj Objective, ctx, tgt Dataset, S int) {
	t.Helper()
	p0 := append([]float64(nil), m.Params()...)
	f0, g, err := lossAt(m, p0, obj, ctx, tgt, S, 5)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(f0) || math.IsInf(f0, 0) {
		t.Fatalf("loss %v", f0)
	}
	const h = 1e-6
	p := append([]float64(nil), p0...)
	bad := 0
	nz := 0
	for i := range p {
		p[i] = p0[i] + h
		fp, _, _ := lossAt(m, p, obj, ctx, tgt, S, 5)
		p[i] = p0[i] - h
		fm, _, _ := lossAt(m, p, obj, ctx, tgt, S, 5)
		p[i] = p0[i]
		fd := (fp - fm) / (2 * h)
		if g[i] != 0 {
			nz++
		}
		if math.Abs(fd-g[i]) > 1e-6*(1+math.Abs(g[i]))+1e-6*math.Abs(fd) {
			bad++
			if bad <= 8 {
				t.Errorf("param %d: tape %.10g, finite difference %.10g", i, g[i], fd)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d partials wrong", bad, len(p))
	}
	if nz < len(p)/2 {
		t.Errorf("only %d of %d partials are nonzero: the check is too weak", nz, len(p))
	}
}

func TestGradients(t *testing.T) {
	ctx, tgt := toyData(5, 1, 1, false, 1), toyData(4, 1, 1, false, 2)
	ctxB, tgtB := toyData(6, 2, 1, true, 3), toyData(5, 2, 1, true, 4)
	gauss := Likelihood{Kind: Gaussian, NoiseStd: 0.3, TrainNoise: true}
	for _, tc := range []struct {
		name string
		mk   func() (Model, error)
		bern bool
		objs []Objective
	}{
		{"apovi-gauss", func() (Model, error) {
			return NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{3, 2}, InferenceHidden: []int{4}, Likelihood: gauss}, 1)
		}, false, []Objective{ELBO, NPML, NPVI}},
		{"apovi-bern", func() (Model, error) {
			return NewAPOVI(Config{DX: 2, DY: 1, Hidden: []int{3}, InferenceHidden: []int{4}, Likelihood: Likelihood{Kind: Bernoulli}}, 2)
		}, true, []Objective{ELBO, NPML, NPVI}},
		{"amfvi-gauss", func() (Model, error) {
			return NewAMFVI(Config{DX: 1, DY: 1, Hidden: []int{3}, InferenceHidden: []int{4}, Likelihood: gauss, PriorVar: 2}, 3)
		}, false, []Objective{ELBO, NPML, NPVI}},
		// Fewer points than weights per unit (n < K): the N-space (Woodbury) form of wood.go.
		{"apovi-gauss-wood", func() (Model, error) {
			return NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{10, 12}, InferenceHidden: []int{2}, Likelihood: gauss}, 6)
		}, false, []Objective{ELBO, NPML, NPVI}},
		{"apovi-bern-wood", func() (Model, error) {
			return NewAPOVI(Config{DX: 2, DY: 1, Hidden: []int{8}, InferenceHidden: []int{4}, Likelihood: Likelihood{Kind: Bernoulli}}, 7)
		}, true, []Objective{NPML}},
		{"povi-gauss-wood", func() (Model, error) {
			return NewPOVI(POVIConfig{DX: 1, DY: 1, Hidden: []int{6, 5}, M: 4, FinalPrec: 1, Likelihood: gauss}, 8)
		}, false, []Objective{ELBO}},
		{"povi-gauss", func() (Model, error) {
			return NewPOVI(POVIConfig{DX: 1, DY: 1, Hidden: []int{3, 2}, M: 4, FinalPrec: 1, Likelihood: gauss}, 4)
		}, false, []Objective{ELBO}},
		{"povi-bern", func() (Model, error) {
			return NewPOVI(POVIConfig{DX: 2, DY: 1, Hidden: []int{3}, M: 5, Likelihood: Likelihood{Kind: Bernoulli}, HiddenPrec: 3, FinalPrec: 2}, 5)
		}, true, []Objective{ELBO}},
	} {
		for _, obj := range tc.objs {
			t.Run(fmt.Sprintf("%s/%v", tc.name, obj), func(t *testing.T) {
				m, err := tc.mk()
				if err != nil {
					t.Fatal(err)
				}
				c, g := ctx, tgt
				if tc.bern {
					c, g = ctxB, tgtB
				}
				checkGrad(t, m, obj, c, g, 2)
			})
		}
	}
}

// TestReusedTapeMemory: the layer nodes take uninitialised tape memory (ad.Tape.CustomUninit)
// and must write everything they read. A tape whose buffers hold NaN from an earlier use gives
// the same loss and gradient, bit for bit, as a fresh tape.
func TestReusedTapeMemory(t *testing.T) {
	ctx, tgt := toyData(6, 1, 1, false, 1), toyData(4, 1, 1, false, 2)
	gauss := Likelihood{Kind: Gaussian, NoiseStd: 0.3, TrainNoise: true}
	a, _ := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{4, 3}, InferenceHidden: []int{4}, Likelihood: gauss}, 1)
	f, _ := NewAMFVI(Config{DX: 1, DY: 1, Hidden: []int{4}, InferenceHidden: []int{4}, Likelihood: gauss}, 2)
	p, _ := NewPOVI(POVIConfig{DX: 1, DY: 1, Hidden: []int{4, 3}, M: 5, Likelihood: gauss}, 3)
	aw, _ := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{12, 12}, InferenceHidden: []int{4}, Likelihood: gauss}, 4) // n < K
	nan := make([]float64, 1<<16)
	for i := range nan {
		nan[i] = math.NaN()
	}
	var dirty ad.Tape
	for _, m := range []Model{a, f, p, aw} {
		objs := []Objective{ELBO, NPML, NPVI}
		if m == Model(p) {
			objs = objs[:1]
		}
		for _, obj := range objs {
			want, gw, err := lossAt(m, m.Params(), obj, ctx, tgt, 2, 3)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 { // fill every buffer of the tape with NaN, then reuse it
				dirty.Reset()
				x := dirty.Input(nan)
				dirty.Backward(dirty.Sum(dirty.Mul(x, x)))
				dirty.Reset()
				v := dirty.Input(nan)
				c := dirty.CustomUninit(nanFill{}, len(nan), len(nan), v)
				for i := range c.Value() {
					c.Value()[i] = math.NaN()
				}
				for i := range c.Aux() {
					c.Aux()[i] = math.NaN()
				}
				dirty.Scratch(len(nan))
			}
			dirty.Reset()
			pv := dirty.Input(m.Params())
			l, err := m.Loss(&dirty, pv, obj, ctx, tgt, 2, rng.New(3, 1).Rand)
			if err != nil {
				t.Fatal(err)
			}
			dirty.Backward(l)
			if got := dirty.Float(l); math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("%T %v: loss %v on a reused tape, %v on a fresh one", m, obj, got, want)
			}
			for i, g := range dirty.Grad(pv) {
				if math.Float64bits(g) != math.Float64bits(gw[i]) {
					t.Errorf("%T %v: gradient[%d] %v on a reused tape, %v on a fresh one", m, obj, i, g, gw[i])
					break
				}
			}
		}
	}
}

type nanFill struct{}

func (nanFill) Backward(ad.Custom) {}
