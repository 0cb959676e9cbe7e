package zoo

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/model"
)

// fixture is a loaded model with its reference draws and float64 reference density.
type fixture struct {
	m     *Model
	draws *diag.Draws
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
		x = append(x, f.draws.Row(c, i)[p])
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
				// The Jacobian the tape adds is the layout's float64 log J at z.
				lj := f.m.Layout().ConstrainValues(z, make([]float64, f.m.Layout().Len()))
				if got := tapeAt(f.m, z) - tapeAt(f.m.WithJacobian(false), z); !(math.Abs(got-lj) <= tapeRefTol*(1+math.Abs(tapeAt(f.m, z)))) {
					t.Errorf("draw %v: tape log J %.15g, Layout.ConstrainValues log J %.15g", cd, got, lj)
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
			// Same names in the same order (posteriordb's dimensions order, which is also the
			// key order of the draw files).
			if !slices.Equal(f.draws.Names, f.m.Names()) {
				t.Fatalf("draw names %v, model names %v", f.draws.Names, f.m.Names())
			}
			if _, ok := f.m.impl.(referencer); !ok && !slices.Equal(f.m.Names(), f.m.Layout().Names()) {
				t.Errorf("Names %v, Layout().Names %v: a model without transformed reported quantities reports its layout", f.m.Names(), f.m.Layout().Names())
			}
			if len(f.draws.Chains) != 10 || f.draws.ChainLen() != 1000 {
				t.Errorf("draws: %d chains × %d, want 10 × 1000", len(f.draws.Chains), f.draws.ChainLen())
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
	t.Run("posteriordb file", func(t *testing.T) {
		l, err := Load("eight_schools", posteriordbDir(t))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := tapeAt(m, z), tapeAt(l, z); a != b {
			t.Errorf("embedded %v, posteriordb file %v", a, b)
		}
	})
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

func TestLoadErrors(t *testing.T) {
	if _, err := Load("nope", t.TempDir()); err == nil || !strings.Contains(err.Error(), "unknown model") {
		t.Errorf("Load(nope): %v", err)
	}
	if _, err := Load("kidiq", ""); err == nil || !strings.Contains(err.Error(), "dir is empty") {
		t.Errorf("Load(kidiq, \"\"): %v, want an error naming dir", err)
	}
	dir := t.TempDir()
	if _, err := Load("kidiq", dir); err == nil || !strings.Contains(err.Error(), "kidiq.json.zip") {
		t.Errorf("Load(kidiq) from an empty directory: %v, want an error naming the file", err)
	}
	bad := []struct{ name, json, want string }{
		{"eight_schools", `{"J": 8, "y": [1,2,3,4,5,6,7,8], "sigma": [1,2,3,4,5,6,7,-8]}`, `sigma[8]`},
		{"eight_schools", `{"J": 7, "y": [1,2,3,4,5,6,7], "sigma": [1,2,3,4,5,6,7]}`, `"J"`},
		{"kidiq", `{"N": 2, "kid_score": [1, 2], "mom_hs": [0, 1]}`, `mom_iq`},
		{"earnings", `{"N": 1, "earn": [0], "height": [60], "male": [1]}`, `earn[1]`},
		{"nes", `{"N": 1, "partyid7": [1], "real_ideo": [1], "race_adj": [1], "educ1": [1], "gender": [1], "income": [1], "age_discrete": [5]}`, `age_discrete[1]`},
		{"hmm_example", `{"N": 1, "K": 3, "y": [1]}`, `"K"`},
		{"arK", `{"K": 5, "T": 5, "y": [1, 2, 3, 4, 5]}`, `"T"`},
		{"gp_pois_regr", `{"N": 1, "x": [0], "k": [-1]}`, `k[1]`},
		{"garch", `{"T": 1, "y": [0], "sigma1": 0}`, `sigma1`},
		{"diamonds", `{"N": 1, "K": 2, "X": [[1, 2]], "Y": [1], "prior_only": 1}`, `prior_only`},
	}
	for _, b := range bad {
		d, err := model.ParseData("bad.json", strings.NewReader(b.json))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(b.name, d); err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("New(%s, %s): %v, want an error naming bad.json and %s", b.name, b.json, err, b.want)
		}
	}
}

func TestUnconstrainOutsideSupport(t *testing.T) {
	m := EightSchools()
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 0, -1} // tau < 0
	if _, err := m.Unconstrain(nil, x); err == nil || !strings.Contains(err.Error(), "tau") {
		t.Errorf("Unconstrain with tau = −1: %v, want an error naming tau", err)
	}
	for name, x := range map[string][]float64{
		"garch":             {0, 1, 0.5, 0.6},                                 // beta1 ≥ 1 − alpha1
		"low_dim_gauss_mix": {1, 0, 1, 1, 0.5},                                // mu not ordered
		"hmm_example":       {0.5, 0.5, 0.5, 0.5, 2, 1},                       // mu not ordered
		"sblrc":             {1, 1, 1, 1, 1, 0},                               // sigma = 0
		"kidiq":             {math.NaN(), 1, 1, 1},                            // beta[1] not finite
		"gp_pois_regr":      append([]float64{-1, 1}, make([]float64, 11)...), // rho < 0
	} {
		mm, err := Load(name, posteriordbDir(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mm.Unconstrain(nil, x); err == nil {
			t.Errorf("%s: Unconstrain(%v): no error", name, x)
		}
	}
}

// TestConcurrent evaluates gradients of one model from several goroutines, each with its own
// tape, and checks they equal the serial result bit for bit (models are immutable; run with
// -race to check for data races).
func TestConcurrent(t *testing.T) {
	f := load(t, "garch")
	z, err := f.m.Unconstrain(nil, f.draw(t, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var tp ad.Tape
	want := make([]float64, len(z))
	wantLP := model.Gradient(&tp, f.m, z, want)
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tp ad.Tape
			g := make([]float64, len(z))
			for range 200 {
				if lp := model.Gradient(&tp, f.m, z, g); lp != wantLP || !slices.Equal(g, want) {
					errs <- fmt.Sprintf("concurrent gradient %v %v, serial %v %v", lp, g, wantLP, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
