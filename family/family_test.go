package family

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/race"
	"github.com/vigo-bayes/vigo/rng"
)

// gaussian is what the Gaussian families implement: the Family contract and every optional
// capability (family.go checks it at compile time for each).
type gaussian interface {
	EntropyFamily
	LogProber
	MomentSetter
}

type namedFamily struct {
	name string
	f    gaussian
}

func testFamilies() []namedFamily {
	var out []namedFamily
	for _, p := range []Positivity{Exp, Softplus} {
		opt := WithPositivity(p)
		out = append(out,
			namedFamily{"meanfield(3)/" + p.String(), NewMeanField(3, opt)},
			namedFamily{"fullrank(1)/" + p.String(), NewFullRank(1, opt)},
			namedFamily{"fullrank(4)/" + p.String(), NewFullRank(4, opt)},
			namedFamily{"lowrank(1,1)/" + p.String(), NewLowRank(1, 1, opt)},
			namedFamily{"lowrank(5,2)/" + p.String(), NewLowRank(5, 2, opt)},
			namedFamily{"lowrank(4,4)/" + p.String(), NewLowRank(4, 4, opt)},
		)
	}
	return out
}

// randParams draws parameters of moderate size: means N(0,1), scale parameters U(−0.6, 0.6)
// (σ between 0.55 and 1.8 under exp), off-diagonal and factor entries N(0, 0.5²).
func randParams(f Family, r *rng.Stream) []float64 {
	p := make([]float64, f.NumParams())
	for i := range p {
		p[i] = 0.5 * r.NormFloat64()
	}
	d := f.Dim()
	for i := range d {
		p[i] = r.NormFloat64()
	}
	var lo, hi int
	switch g := f.(type) {
	case *MeanField, *FullRank:
		lo, hi = d, 2*d
	case *LowRank:
		lo, hi = d+d*g.r, 2*d+d*g.r
	}
	for i := lo; i < hi; i++ {
		p[i] = 1.2*r.Float64() - 0.6
	}
	return p
}

func randNormal(r *rng.Stream, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// gonumNormal builds gonum's reference N(mean, cov) from the family's moments.
func gonumNormal(t *testing.T, f Family, p []float64) *distmv.Normal {
	t.Helper()
	d := f.Dim()
	mean, cov := make([]float64, d), make([]float64, d*d)
	f.Moments(p, mean, cov)
	n, ok := distmv.NewNormal(mean, mat.NewSymDense(d, cov), nil)
	if !ok {
		t.Fatalf("distmv.NewNormal: covariance not positive definite: %v", cov)
	}
	return n
}

// relClose compares with a tolerance relative to max(1, |want|).
func relClose(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestLogProbMatchesGonum(t *testing.T) {
	r := rng.New(1, 0)
	for _, nf := range testFamilies() {
		f := nf.f
		for trial := 0; trial < 5; trial++ {
			p := randParams(f, r)
			ref := gonumNormal(t, f, p)
			for k := 0; k < 4; k++ {
				z := randNormal(r, f.Dim())
				for i := range z {
					z[i] *= 2
				}
				got, want := f.LogProb(p, z), ref.LogProb(z)
				// Both sides are O(10) sums of O(d²) rounded terms through different
				// factorisations (gonum: Cholesky of Σ); 1e-11 leaves a factor ≳100 of margin
				// over the condition numbers (< 100) of these covariances.
				if !relClose(got, want, 1e-11) {
					t.Errorf("%s: LogProb = %.15g, gonum %.15g", nf.name, got, want)
				}
			}
		}
	}
}

// TestFullRankLayout pins the documented parameter layout on a hand-worked 3-D case.
func TestFullRankLayout(t *testing.T) {
	f := NewFullRank(3)
	// [μ | log L_00, log L_11, log L_22 | L_10, L_20, L_21]
	p := []float64{1, 2, 3, math.Log(2), 0, math.Log(0.5), 0.3, -0.4, 0.7}
	L := []float64{2, 0, 0, 0.3, 1, 0, -0.4, 0.7, 0.5}
	mean, cov := make([]float64, 3), make([]float64, 9)
	f.Moments(p, mean, cov)
	for i := range 3 {
		for j := range 3 {
			s := 0.0
			for k := range 3 {
				s += L[i*3+k] * L[j*3+k]
			}
			if math.Abs(cov[i*3+j]-s) > 1e-15 { // a few exact-ish products of short decimals
				t.Errorf("cov[%d,%d] = %g, want %g", i, j, cov[i*3+j], s)
			}
		}
	}
	z := make([]float64, 3)
	f.Sample(p, []float64{1, 1, 1}, z)
	want := []float64{1 + 2, 2 + 0.3 + 1, 3 - 0.4 + 0.7 + 0.5}
	for i := range z {
		if math.Abs(z[i]-want[i]) > 1e-15 {
			t.Errorf("z[%d] = %g, want %g", i, z[i], want[i])
		}
	}
}

// TestDrawConsistency: Draw's z and logq equal Sample's, and logq equals LogProb(z) and the
// tape LogDensity at z.
func TestDrawConsistency(t *testing.T) {
	r := rng.New(2, 0)
	var tp ad.Tape
	for _, nf := range testFamilies() {
		f := nf.f
		for trial := 0; trial < 5; trial++ {
			p := randParams(f, r)
			eps := randNormal(r, f.NoiseDim())
			zs := make([]float64, f.Dim())
			lqs := f.Sample(p, eps, zs)
			tp.Reset()
			pv := tp.Input(p)
			z, lq := f.Draw(&tp, pv, eps)
			lqd := f.LogDensity(&tp, pv, z)
			// Same formulas with sums in a different order: agreement to a few ulps of O(10)
			// values; 1e-12 relative is far from any real discrepancy.
			for i, zi := range tp.Value(z) {
				if !relClose(zi, zs[i], 1e-12) {
					t.Errorf("%s: Draw z[%d] = %.15g, Sample %.15g", nf.name, i, zi, zs[i])
				}
			}
			lp := f.LogProb(p, zs)
			for _, c := range []struct {
				what string
				v    float64
			}{{"Draw logq", tp.Float(lq)}, {"Sample logq", lqs}, {"LogDensity", tp.Float(lqd)}} {
				if !relClose(c.v, lp, 1e-12) {
					t.Errorf("%s: %s = %.15g, LogProb(z) %.15g", nf.name, c.what, c.v, lp)
				}
			}
		}
	}
}

// Finite differences: step h = 1e-5·max(1,|x|) gives truncation error O(h²·f”') ≈ 1e-10 and
// rounding error O(ε|f|/h) ≈ 1e-10 for these O(10) smooth functions; a wrong partial is off
// by O(1). 1e-6 relative-or-absolute separates the two with margin.
const fdTol = 1e-6

func fdGrad(f func([]float64) float64, x []float64) []float64 {
	g := make([]float64, len(x))
	xp := append([]float64(nil), x...)
	for i := range x {
		h := 1e-5 * math.Max(1, math.Abs(x[i]))
		xp[i] = x[i] + h
		fp := f(xp)
		xp[i] = x[i] - h
		fm := f(xp)
		xp[i] = x[i]
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

func checkGrad(t *testing.T, name string, got, want []float64) {
	t.Helper()
	for i := range got {
		if !relClose(got[i], want[i], fdTol) || math.IsNaN(got[i]) {
			t.Errorf("%s: ∂/∂x[%d] = %.10g, finite differences %.10g", name, i, got[i], want[i])
		}
	}
}

func TestLogDensityGradient(t *testing.T) {
	r := rng.New(3, 0)
	var tp ad.Tape
	for _, nf := range testFamilies() {
		f := nf.f
		p := randParams(f, r)
		z := randNormal(r, f.Dim())
		tp.Reset()
		pv, zv := tp.Input(p), tp.Input(z)
		out := f.LogDensity(&tp, pv, zv)
		tp.Backward(out)
		checkGrad(t, nf.name+" ∂logq/∂φ", tp.Grad(pv), fdGrad(func(x []float64) float64 { return f.LogProb(x, z) }, p))
		checkGrad(t, nf.name+" ∂logq/∂z", tp.Grad(zv), fdGrad(func(x []float64) float64 { return f.LogProb(p, x) }, z))

		// With constant parameters (sticking the landing) only z gets a gradient, and it is the
		// same gradient.
		gz := append([]float64(nil), tp.Grad(zv)...)
		tp.Reset()
		cv, zv2 := tp.Const(p...), tp.Input(z)
		tp.Backward(f.LogDensity(&tp, cv, zv2))
		for i, g := range tp.Grad(zv2) {
			if g != gz[i] {
				t.Errorf("%s: ∂logq/∂z with constant params %.17g, with live params %.17g", nf.name, g, gz[i])
			}
		}
	}
}

func TestDrawGradient(t *testing.T) {
	r := rng.New(4, 0)
	var tp ad.Tape
	for _, nf := range testFamilies() {
		f := nf.f
		p := randParams(f, r)
		eps := randNormal(r, f.NoiseDim())
		w := randNormal(r, f.Dim())
		zbuf := make([]float64, f.Dim())
		sampleZ := func(x []float64) float64 {
			f.Sample(x, eps, zbuf)
			s := 0.0
			for i, zi := range zbuf {
				s += w[i] * zi
			}
			return s
		}
		sampleLogq := func(x []float64) float64 { return f.Sample(x, eps, zbuf) }

		tp.Reset()
		pv := tp.Input(p)
		z, lq := f.Draw(&tp, pv, eps)
		wz := tp.Dot(z, tp.Const(w...))
		tp.Backward(wz)
		checkGrad(t, nf.name+" ∂(w·z)/∂φ", tp.Grad(pv), fdGrad(sampleZ, p))
		tp.Backward(lq)
		checkGrad(t, nf.name+" ∂logq/∂φ (total)", tp.Grad(pv), fdGrad(sampleLogq, p))
	}
}

func TestEntropy(t *testing.T) {
	r := rng.New(5, 0)
	var tp ad.Tape
	const n = 20000
	for _, nf := range testFamilies() {
		f := nf.f
		p := randParams(f, r)
		tp.Reset()
		pv := tp.Input(p)
		h := f.(EntropyFamily).Entropy(&tp, pv)
		hv := tp.Float(h)
		if want := gonumNormal(t, f, p).Entropy(); !relClose(hv, want, 1e-12) { // two exact formulas
			t.Errorf("%s: Entropy = %.15g, gonum %.15g", nf.name, hv, want)
		}
		// Monte Carlo: H = −E log q. Fixed seed; |est − H| ≤ 5·MCSE fails with probability
		// < 1e-6 for a correct formula (−log q is a shifted χ²_d/2, so the CLT holds well at n).
		zbuf := make([]float64, f.Dim())
		var s, s2 float64
		for range n {
			v := -f.Sample(p, randNormal(r, f.NoiseDim()), zbuf)
			s += v
			s2 += v * v
		}
		mean := s / n
		mcse := math.Sqrt((s2/n - mean*mean) / n)
		if math.Abs(mean-hv) > 5*mcse {
			t.Errorf("%s: Entropy %.6g, Monte Carlo %.6g ± %.2g", nf.name, hv, mean, mcse)
		}
		tp.Backward(h)
		g := append([]float64(nil), tp.Grad(pv)...)
		checkGrad(t, nf.name+" ∂H/∂φ", g, fdGrad(func(x []float64) float64 {
			var t2 ad.Tape
			return t2.Float(f.(EntropyFamily).Entropy(&t2, t2.Input(x)))
		}, p))
	}
}

// TestLowRankMatchesFullRank builds Σ = BBᵀ + D² explicitly, sets a full-rank family to it
// and compares log densities, their z-gradients and entropies.
func TestLowRankMatchesFullRank(t *testing.T) {
	r := rng.New(6, 0)
	var tp ad.Tape
	for _, dr := range [][2]int{{1, 1}, {3, 1}, {6, 2}, {5, 5}} {
		d, k := dr[0], dr[1]
		lr, fr := NewLowRank(d, k), NewFullRank(d)
		p := randParams(lr, r)
		mean, cov := make([]float64, d), make([]float64, d*d)
		B := p[d : d+d*k]
		for i := range d {
			mean[i] = p[i]
			for j := range d {
				s := 0.0
				for c := range k {
					s += B[i*k+c] * B[j*k+c]
				}
				if i == j {
					s += math.Exp(2 * p[d+d*k+i])
				}
				cov[i*d+j] = s
			}
		}
		pf := make([]float64, fr.NumParams())
		if err := fr.SetMoments(pf, mean, cov); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("d=%d r=%d", d, k)
		for trial := 0; trial < 4; trial++ {
			z := randNormal(r, d)
			// Woodbury versus Cholesky of the explicit Σ: different roundings of O(10) values.
			if a, b := lr.LogProb(p, z), fr.LogProb(pf, z); !relClose(a, b, 1e-11) {
				t.Errorf("%s: low-rank log q %.15g, full-rank %.15g", name, a, b)
			}
			var gz [2][]float64
			for c, fam := range []struct {
				f Family
				p []float64
			}{{lr, p}, {fr, pf}} {
				tp.Reset()
				zv := tp.Input(z)
				tp.Backward(fam.f.LogDensity(&tp, tp.Const(fam.p...), zv))
				gz[c] = append([]float64(nil), tp.Grad(zv)...)
			}
			for i := range gz[0] {
				if !relClose(gz[0][i], gz[1][i], 1e-11) {
					t.Errorf("%s: ∂log q/∂z[%d] low-rank %.15g, full-rank %.15g", name, i, gz[0][i], gz[1][i])
				}
			}
		}
		tp.Reset()
		hl := tp.Float(lr.Entropy(&tp, tp.Const(p...)))
		hf := tp.Float(fr.Entropy(&tp, tp.Const(pf...)))
		if !relClose(hl, hf, 1e-12) {
			t.Errorf("%s: entropy low-rank %.15g, full-rank %.15g", name, hl, hf)
		}
	}
}

func TestInitAndMoments(t *testing.T) {
	loc := []float64{0.5, -1, 2, 0, 3}
	for _, nf := range testFamilies() {
		f := nf.f
		d := f.Dim()
		p := make([]float64, f.NumParams())
		f.Init(p, loc[:d], 0.3)
		mean, cov := make([]float64, d), make([]float64, d*d)
		f.Moments(p, mean, cov)
		for i := range d {
			// exp∘log and softplus∘inverse round trips: a few ulps.
			if mean[i] != loc[i] || !relClose(cov[i*d+i], 0.09, 1e-14) {
				t.Errorf("%s: Init gives mean %g var %g, want %g and 0.09", nf.name, mean[i], cov[i*d+i], loc[i])
			}
		}
		f.Init(p, nil, 1)
		f.Moments(p, mean, nil)
		for i := range d {
			if mean[i] != 0 {
				t.Errorf("%s: Init(nil loc) mean[%d] = %g", nf.name, i, mean[i])
			}
		}
	}
}

func TestSetMoments(t *testing.T) {
	r := rng.New(7, 0)
	for _, nf := range testFamilies() {
		f := nf.f
		d := f.Dim()
		// A covariance the family represents exactly: the family's own moments.
		p := randParams(f, r)
		mean, cov := make([]float64, d), make([]float64, d*d)
		f.Moments(p, mean, cov)
		if lr, ok := f.(*LowRank); ok && lr.r < d {
			// PPCA recovers BBᵀ + σ²I exactly, not BBᵀ + D²: use an isotropic D.
			f.Moments(p, mean, cov)
			B := p[d : d+d*lr.r]
			for i := range d {
				for j := range d {
					s := 0.0
					for c := range lr.r {
						s += B[i*lr.r+c] * B[j*lr.r+c]
					}
					if i == j {
						s += 0.4
					}
					cov[i*d+j] = s
				}
			}
		}
		q := make([]float64, f.NumParams())
		if err := f.SetMoments(q, mean, cov); err != nil {
			t.Fatalf("%s: %v", nf.name, err)
		}
		m2, c2 := make([]float64, d), make([]float64, d*d)
		f.Moments(q, m2, c2)
		for i := range cov {
			// Eigen/Cholesky round trips of well-conditioned O(1) matrices.
			if math.Abs(c2[i]-cov[i]) > 1e-10 {
				t.Errorf("%s: SetMoments∘Moments cov[%d] = %.12g, want %.12g", nf.name, i, c2[i], cov[i])
			}
		}
		for i := range mean {
			if m2[i] != mean[i] {
				t.Errorf("%s: mean[%d] = %g, want %g", nf.name, i, m2[i], mean[i])
			}
		}
		bad := make([]float64, d*d)
		if err := f.SetMoments(q, mean, bad); err == nil {
			t.Errorf("%s: SetMoments accepted a zero covariance", nf.name)
		}
	}
	// A generic covariance projected to low rank keeps the marginal variances.
	lr := NewLowRank(4, 1)
	cov := []float64{2, 0.5, 0.1, 0, 0.5, 1, 0.3, 0.2, 0.1, 0.3, 1.5, -0.4, 0, 0.2, -0.4, 0.8}
	q := make([]float64, lr.NumParams())
	if err := lr.SetMoments(q, make([]float64, 4), cov); err != nil {
		t.Fatal(err)
	}
	c2 := make([]float64, 16)
	lr.Moments(q, make([]float64, 4), c2)
	for i := range 4 {
		if math.Abs(c2[i*4+i]-cov[i*4+i]) > 1e-12 {
			t.Errorf("low-rank projection: var[%d] = %g, want %g", i, c2[i*4+i], cov[i*4+i])
		}
	}
}

func TestPositivityInverse(t *testing.T) {
	for _, p := range []Positivity{Exp, Softplus} {
		for _, s := range []float64{1e-8, 1e-3, 0.5, 1, 20, 35, 1e3} {
			if got := p.scale(p.inverse(s)); !relClose(got, s, 1e-13) && math.Abs(got-s) > 1e-13*s {
				t.Errorf("%v: scale(inverse(%g)) = %.17g", p, s, got)
			}
		}
	}
}

func TestNoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	r := rng.New(8, 0)
	for _, nf := range testFamilies() {
		f := nf.f
		p := randParams(f, r)
		eps := randNormal(r, f.NoiseDim())
		z := make([]float64, f.Dim())
		var tp ad.Tape
		run := func() {
			tp.Reset()
			pv := tp.Input(p)
			zv, lq := f.Draw(&tp, pv, eps)
			s := tp.Add(lq, tp.Add(f.LogDensity(&tp, tp.Const(p...), zv), f.(EntropyFamily).Entropy(&tp, pv)))
			tp.Backward(s)
			f.Sample(p, eps, z)
			f.LogProb(p, z)
		}
		run()
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("%s: %v allocations per draw+log density+entropy+backward", nf.name, a)
		}
	}
}

func TestPanicsOnWrongLength(t *testing.T) {
	f := NewFullRank(3)
	defer func() {
		if recover() == nil {
			t.Error("LogProb with a short z did not panic")
		}
	}()
	f.LogProb(make([]float64, f.NumParams()), make([]float64, 2))
}
