package zoo

import (
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// fixture is a loaded model with its reference draws and float64 reference density.
type fixture struct {
	m     *Model
	draws *model.Draws
	ref   refLogDensity
	err   error
}

var (
	fixtureMu sync.Mutex
	fixtures  = map[string]*fixture{}
)

// load returns the named model, its reference draws and reference density, loading each once
// per test binary. It skips when ../shared is absent.
func load(t testing.TB, name string) *fixture {
	t.Helper()
	dir := posteriordbDir(t)
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	f, ok := fixtures[name]
	if !ok {
		f = &fixture{}
		fixtures[name] = f
		f.m, f.err = Load(name, dir)
		if f.err == nil {
			f.draws, f.err = model.LoadDraws(f.m.DrawsPath(dir))
		}
		if f.err == nil {
			d, err := model.LoadData(f.m.DataPath(dir))
			if err != nil {
				f.err = err
			} else {
				f.ref = refModels[name](t, d)
			}
		}
	}
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f
}

// draw returns draw i of chain c in the model's Names order.
func (f *fixture) draw(t testing.TB, c, i int) []float64 {
	t.Helper()
	x := make([]float64, 0, len(f.draws.Names))
	for _, n := range f.m.Names() {
		p := f.draws.Index(n)
		if p < 0 {
			t.Fatalf("reference draws have no %q", n)
		}
		x = append(x, f.draws.Chains[c][p][i])
	}
	return x
}

// refAt evaluates the float64 reference at reported values x (Names order).
func (f *fixture) refAt(x []float64, jacobian bool) float64 {
	names := f.m.Names()
	l, j := f.ref(func(n string) float64 { return x[slices.Index(names, n)] })
	if jacobian {
		return l + j
	}
	return l
}

// tapeAt evaluates the model's log density on a fresh tape at z.
func tapeAt(m *Model, z []float64) float64 {
	var tp ad.Tape
	return tp.Float(m.LogDensity(&tp, tp.Input(z)))
}

// checkDraws are (chain, draw) positions for the gradient and reference checks: the two draws
// MODELS.md's Δ uses and a few spread over the chains.
var checkDraws = [][2]int{{0, 0}, {0, 1}, {3, 500}, {9, 999}}

func TestRegistry(t *testing.T) {
	names := Names()
	if len(names) != len(checkValues) {
		t.Errorf("Names() has %d models, want the %d posteriordb posteriors: %v", len(names), len(checkValues), names)
	}
	for _, n := range names {
		info, err := Get(n)
		if err != nil {
			t.Fatal(err)
		}
		cv, ok := checkValues[n]
		if !ok {
			t.Errorf("model %s has no check values", n)
			continue
		}
		if info.Posterior != cv.posterior || info.Data != cv.data || info.Description == "" {
			t.Errorf("Get(%q) = %+v, want posterior %s, data %s and a description", n, info, cv.posterior, cv.data)
		}
		if byPost, err := Get(info.Posterior); err != nil || byPost.Name != n {
			t.Errorf("Get(%q) = %v, %v; want the model %s", info.Posterior, byPost.Name, err, n)
		}
	}
	if _, err := Get("nope"); err == nil {
		t.Error("Get(\"nope\"): no error")
	}
}

// TestDelta checks Δ = ℓ(A) − ℓ(B) (no Jacobian) and Δᵤ (with Jacobian) on the tape against
// MODELS.md, with A, B the first two draws of chain 1 mapped to z by Unconstrain.
func TestDelta(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			f := load(t, name)
			cv := checkValues[name]
			za, err := f.m.Unconstrain(nil, f.draw(t, 0, 0))
			if err != nil {
				t.Fatal(err)
			}
			zb, err := f.m.Unconstrain(nil, f.draw(t, 0, 1))
			if err != nil {
				t.Fatal(err)
			}
			noJ := f.m.WithJacobian(false)
			if got := tapeAt(noJ, za) - tapeAt(noJ, zb); !(math.Abs(got-cv.delta) <= deltaTol(cv.delta)) {
				t.Errorf("Δ = %.10g, MODELS.md %.7g (tol %.1g)", got, cv.delta, deltaTol(cv.delta))
			}
			if got := tapeAt(f.m, za) - tapeAt(f.m, zb); !(math.Abs(got-cv.deltaU) <= deltaTol(cv.deltaU)) {
				t.Errorf("Δᵤ = %.10g, MODELS.md %.7g (tol %.1g)", got, cv.deltaU, deltaTol(cv.deltaU))
			}
		})
	}
}

// tapeRefTol is the agreement of the tape log density with the float64 reference: the same
// terms summed in a different order and form (fused kernels, GLM over a centred
// feature-major design, log-space transforms) differ by a few ε per term, ≤ 5000·ε ≈ 1e-12
// relative to Σ|terms|; 1e-10·(1 + |ℓ|) leaves a margin for cancellation between terms.
const tapeRefTol = 1e-10

// TestTapeMatchesReference compares the tape log density with the plain-float64 reference
// implementation at several reference draws, with and without Jacobian.
func TestTapeMatchesReference(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			f := load(t, name)
			for _, cd := range checkDraws {
				x := f.draw(t, cd[0], cd[1])
				z, err := f.m.Unconstrain(nil, x)
				if err != nil {
					t.Fatal(err)
				}
				for _, jac := range []bool{false, true} {
					got, want := tapeAt(f.m.WithJacobian(jac), z), f.refAt(x, jac)
					if !(math.Abs(got-want) <= tapeRefTol*(1+math.Abs(want))) {
						t.Errorf("draw %v, jacobian %v: tape %.15g, reference %.15g", cd, jac, got, want)
					}
				}
			}
		})
	}
}

// TestGradient checks the tape gradient against finite differences at several reference
// draws in unconstrained space, with and without Jacobian.
func TestGradient(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			f := load(t, name)
			for _, cd := range checkDraws {
				z, err := f.m.Unconstrain(nil, f.draw(t, cd[0], cd[1]))
				if err != nil {
					t.Fatal(err)
				}
				for _, jac := range []bool{true, false} {
					m := f.m.WithJacobian(jac)
					checkGrad(t, name, func(tp *ad.Tape, x ad.Var) ad.Var { return m.LogDensity(tp, x) }, z)
				}
			}
		})
	}
}

// roundTripTol bounds |Constrain(Unconstrain(x)) − x|: a few floating-point operations per
// value (log/exp, logistic/logit, a triangular solve and product of size 11 for gp_pois_regr),
// each within a few ε; 1e-9 relative to max(1, |x|) leaves room for the conditioning of the
// GP's Cholesky factor (condition number ≈ 1e3 on the reference draws).
const roundTripTol = 1e-9

// TestDraws checks that the reference draws load, that their names are exactly the model's
// reported Names, and that every checked draw survives Unconstrain then Constrain.
func TestDraws(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			f := load(t, name)
			got, want := slices.Sorted(slices.Values(f.draws.Names)), slices.Sorted(slices.Values(f.m.Names()))
			if !slices.Equal(got, want) {
				t.Fatalf("draw names %v, model names %v", f.draws.Names, f.m.Names())
			}
			if f.draws.NumChains() != 10 || f.draws.NumDraws() != 1000 {
				t.Errorf("draws: %d chains × %d, want 10 × 1000", f.draws.NumChains(), f.draws.NumDraws())
			}
			for _, cd := range checkDraws {
				x := f.draw(t, cd[0], cd[1])
				z, err := f.m.Unconstrain(nil, x)
				if err != nil {
					t.Fatal(err)
				}
				y := f.m.Constrain(nil, z)
				for i := range x {
					if !(math.Abs(y[i]-x[i]) <= roundTripTol*math.Max(1, math.Abs(x[i]))) {
						t.Errorf("draw %v: %s = %.15g, after Unconstrain/Constrain %.15g", cd, f.m.Names()[i], x[i], y[i])
					}
				}
			}
		})
	}
}

// TestEightSchoolsEmbedded checks that the embedded eight-schools model needs no files and
// equals the one loaded from posteriordb.
func TestEightSchoolsEmbedded(t *testing.T) {
	m := EightSchools()
	if m.Dim() != 10 || m.Name != "eight_schools" {
		t.Fatalf("EightSchools: dim %d, name %s", m.Dim(), m.Name)
	}
	z := []float64{0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 4, 1.2}
	// Known value at z (no files needed): computed with MODELS.md §1's formula, all constants
	// kept, plus log tau = 1.2:
	//   /usr/bin/python3 -c "import numpy as np; from scipy import stats;
	//   tt=np.array([.1,-.2,.3,-.4,.5,-.6,.7,-.8]); mu=4.; tau=np.exp(1.2);
	//   y=np.array([28,8,-3,7,-1,1,18,12.]); s=np.array([15,10,16,11,9,11,10,18.]);
	//   print(repr(stats.norm.logpdf(tt).sum()+stats.norm.logpdf(y,mu+tau*tt,s).sum()
	//   +stats.norm.logpdf(mu,0,5)+stats.cauchy.logpdf(tau,0,5)+1.2))"
	const want = -43.150793683274564
	if got := tapeAt(m, z); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("EightSchools log density at z = %.17g, scipy %.17g", got, want)
	}
	if dir, ok := DefaultDir(); ok {
		l, err := Load("eight_schools", dir)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := tapeAt(m, z), tapeAt(l, z); a != b {
			t.Errorf("embedded %v, posteriordb file %v", a, b)
		}
	}
}

// BenchmarkGradient times one gradient of every zoo model at the first reference draw, reusing
// one tape (Reset per iteration): the steady state should allocate nothing.
func BenchmarkGradient(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			f := load(b, name)
			z, err := f.m.Unconstrain(nil, f.draw(b, 0, 0))
			if err != nil {
				b.Fatal(err)
			}
			g := make([]float64, len(z))
			var tp ad.Tape
			fn := func(t *ad.Tape, x ad.Var) ad.Var { return f.m.LogDensity(t, x) }
			ad.Gradient(&tp, fn, z, g) // warm the tape's buffers
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ad.Gradient(&tp, fn, z, g)
			}
		})
	}
}
