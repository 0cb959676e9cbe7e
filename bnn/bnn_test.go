package bnn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

var methods = []Method{MonteCarlo, VBP, DVI, VarDrop}

// randomParams returns parameters with visible variances (log σ² ≈ −1.5) so that every term of
// the moment rules matters.
func randomParams(n *Net, seed uint64) []float64 { return randomParamsRho(n, seed, -1.5) }

// randomParamsRho centres the weight log-variances at rho.
func randomParamsRho(n *Net, seed uint64, rho float64) []float64 {
	r := rng.New(seed, 7)
	p := make([]float64, n.NumParams())
	for _, L := range n.Layers() {
		km := L.In * L.Out
		for i := range km {
			p[L.Mu+i] = r.NormFloat64() / math.Sqrt(float64(L.In))
			p[L.Rho+i] = rho + 0.3*r.NormFloat64()
		}
		for j := range L.Out {
			p[L.MuB+j] = 0.3 * r.NormFloat64()
			if L.RhoB >= 0 {
				p[L.RhoB+j] = rho - 0.5 + 0.3*r.NormFloat64()
			}
		}
	}
	return p
}

func randomData(rows, in, out int, seed uint64) (X, y []float64) {
	r := rng.New(seed, 3)
	X = make([]float64, rows*in)
	y = make([]float64, rows*out)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	for i := range y {
		y[i] = r.NormFloat64()
	}
	return X, y
}

// TestGradientFD checks GaussLogLik's and KL's analytic gradients against central finite
// differences on a two-hidden-layer network (so the input-variance path of the layers is used),
// for every method. The sampling methods reuse the same noise in every evaluation (same seed).
func TestGradientFD(t *testing.T) {
	for _, meth := range methods {
		t.Run(meth.String(), func(t *testing.T) {
			n := &Net{Sizes: []int{3, 4, 5, 2}, Method: meth, C: 5}
			p := randomParams(n, 1)
			X, y := randomData(3, 3, 2, 2)
			const beta, scale = 1.7, 2.5
			var ws Workspace
			f := func(p []float64) float64 {
				r := rand.New(rand.NewPCG(9, 9))
				return n.GaussLogLik(&ws, p, X, y, 3, beta, scale, r, nil) - n.KL(p, nil)
			}
			g := make([]float64, len(p))
			r := rand.New(rand.NewPCG(9, 9))
			n.GaussLogLik(&ws, p, X, y, 3, beta, scale, r, g)
			kg := make([]float64, len(p))
			n.KL(p, kg)
			for i := range g {
				g[i] -= kg[i]
			}
			const h = 1e-6
			for i := range p {
				old := p[i]
				p[i] = old + h
				fp := f(p)
				p[i] = old - h
				fm := f(p)
				p[i] = old
				fd := (fp - fm) / (2 * h)
				// Central differences with h = 1e-6 on O(1)–O(10) values: truncation ~h²·f''' and
				// rounding ~1e-16·|f|/h ≈ 1e-9; 1e-6 relative leaves room for both.
				if math.Abs(fd-g[i]) > 1e-6*(1+math.Abs(fd)) {
					t.Errorf("param %d: analytic %.10g, finite difference %.10g", i, g[i], fd)
				}
			}
		})
	}
}

// TestGradientFDVBPSharp repeats the finite-difference check for VBP with the paper's C = 100.
func TestGradientFDVBPSharp(t *testing.T) {
	n := &Net{Sizes: []int{3, 6, 1}, Method: VBP}
	p := randomParams(n, 4)
	X, y := randomData(5, 3, 1, 5)
	var ws Workspace
	g := make([]float64, len(p))
	n.GaussLogLik(&ws, p, X, y, 5, 2, 1, nil, g)
	const h = 1e-7
	for i := range p {
		old := p[i]
		p[i] = old + h
		fp := n.GaussLogLik(&ws, p, X, y, 5, 2, 1, nil, nil)
		p[i] = old - h
		fm := n.GaussLogLik(&ws, p, X, y, 5, 2, 1, nil, nil)
		p[i] = old
		fd := (fp - fm) / (2 * h)
		// σ(100·m) has third derivatives up to ~1e5 near m = 0: truncation ~h²·1e5·|m-scale|
		// ≈ 1e-9 plus rounding 1e-16/1e-7 ≈ 1e-9; 1e-5 relative is ample and still catches
		// any wrong term (those are O(1) relative errors).
		if math.Abs(fd-g[i]) > 1e-5*(1+math.Abs(fd)) {
			t.Errorf("param %d: analytic %.10g, finite difference %.10g", i, g[i], fd)
		}
	}
}

// Through the tape: the fused nodes' partials reach the parameter node.
func TestTapeNodes(t *testing.T) {
	n := &Net{Sizes: []int{2, 3, 1}, Method: DVI}
	p := randomParams(n, 2)
	X, y := randomData(4, 2, 1, 3)
	var ws Workspace
	want := make([]float64, len(p))
	ll := n.GaussLogLik(&ws, p, X, y, 4, 1.3, 2, nil, want)
	kg := make([]float64, len(p))
	kl := n.KL(p, kg)
	var tp ad.Tape
	pv := tp.Input(p)
	e := tp.Sub(n.GaussLogLikNode(&tp, &ws, pv, X, y, 4, 1.3, 2, nil), n.KLNode(&tp, pv))
	tp.Backward(e)
	if got := tp.Float(e); math.Abs(got-(ll-kl)) > 1e-12*math.Abs(ll-kl) {
		t.Fatalf("tape value %g, direct %g", got, ll-kl)
	}
	for i, gi := range tp.Grad(pv) {
		if w := want[i] - kg[i]; math.Abs(gi-w) > 1e-12*(1+math.Abs(w)) { // same arithmetic: rounding only
			t.Errorf("grad %d: tape %g, direct %g", i, gi, w)
		}
	}
}

// mcStats accumulates mean, variance and the standard errors of both.
type mcStats struct{ n, s1, s2, s3, s4 float64 }

func (m *mcStats) add(x float64) {
	m.n++
	m.s1 += x
	m.s2 += x * x
	m.s3 += x * x * x
	m.s4 += x * x * x * x
}

func (m *mcStats) mean() float64 { return m.s1 / m.n }

func (m *mcStats) variance() float64 { mu := m.mean(); return m.s2/m.n - mu*mu }

// seMean is sd/√n; seVar is √((μ₄ − σ⁴)/n), the large-sample standard error of the variance.
func (m *mcStats) seMean() float64 { return math.Sqrt(m.variance() / m.n) }
func (m *mcStats) seVar() float64 {
	mu := m.mean()
	e2, e3, e4 := m.s2/m.n, m.s3/m.n, m.s4/m.n
	mu4 := e4 - 4*mu*e3 + 6*mu*mu*e2 - 3*mu*mu*mu*mu
	v := m.variance()
	return math.Sqrt((mu4 - v*v) / m.n)
}

// simulate draws the output of a one-hidden-layer network for input x with weights from q. gate
// chooses the hidden nonlinearity given the pre-activation f and its mean mf.
func simulate(n *Net, p, x []float64, r *rand.Rand, gate func(f, mf float64) float64) float64 {
	ls := n.Layers()
	L1, L2 := ls[0], ls[1]
	h := make([]float64, L1.Out)
	for j := range L1.Out {
		f := p[L1.MuB+j] + math.Sqrt(math.Exp(p[L1.RhoB+j]))*r.NormFloat64()
		mf := p[L1.MuB+j]
		for i := range L1.In {
			w := p[L1.Mu+i*L1.Out+j] + math.Sqrt(math.Exp(p[L1.Rho+i*L1.Out+j]))*r.NormFloat64()
			f += x[i] * w
			mf += x[i] * p[L1.Mu+i*L1.Out+j]
		}
		h[j] = gate(f, mf)
	}
	out := p[L2.MuB] + math.Sqrt(math.Exp(p[L2.RhoB]))*r.NormFloat64()
	for j := range L2.In {
		out += h[j] * (p[L2.Mu+j] + math.Sqrt(math.Exp(p[L2.Rho+j]))*r.NormFloat64())
	}
	return out
}

// TestMomentsVsMonteCarlo: for a one-hidden-layer network the moment rules are exact under
// their own model — DVI's for a true ReLU (the pre-activation is exactly Gaussian given x), VBP's
// for the relaxed gate z ~ Bernoulli(σ(C·E[f])) drawn independently of the weights — so the
// output mean and variance and the expected log-likelihood must agree with a simulation of that
// model within 5 Monte Carlo standard errors (a false alarm has probability ≈ 6e-7 per check).
func TestMomentsVsMonteCarlo(t *testing.T) {
	const S = 200000
	// VBP at the paper's C = 100 and at C = 3, where the Bernoulli variance term p(1−p)·E[f]² is
	// large enough for a wrong factor in it to show.
	cases := []struct {
		meth Method
		C    float64
	}{{VBP, 100}, {VBP, 3}, {DVI, 0}}
	for _, tc := range cases {
		meth := tc.meth
		t.Run(fmt.Sprintf("%s/C=%g", meth, tc.C), func(t *testing.T) {
			n := &Net{Sizes: []int{3, 8, 1}, Method: meth, C: tc.C}
			// Small weight variances (log σ² ≈ −4) keep VBP's Bernoulli term p(1−p)·E[f]² a large
			// share of var[h].
			p := randomParamsRho(n, 11, -4)
			x := []float64{0.8, -0.4, 1.1}
			yv := []float64{0.7}
			const beta = 2.0
			var ws Workspace
			mu, v := n.Moments(&ws, p, x, 1, nil)
			m0, v0 := mu[0], v[0]
			ell := n.GaussLogLik(&ws, p, x, yv, 1, beta, 1, nil, nil)
			C := n.c()
			r := rand.New(rand.NewPCG(21, 22))
			gate := func(f, mf float64) float64 { return max(f, 0) }
			if meth == VBP {
				gate = func(f, mf float64) float64 {
					if r.Float64() < 1/(1+math.Exp(-C*mf)) {
						return f
					}
					return 0
				}
			}
			var fs, ls mcStats
			for range S {
				f := simulate(n, p, x, r, gate)
				fs.add(f)
				d := yv[0] - f
				ls.add(0.5*(math.Log(beta)-log2Pi) - 0.5*beta*d*d)
			}
			check := func(name string, got, est, se float64) {
				t.Helper()
				if math.Abs(got-est) > 5*se {
					t.Errorf("%s: closed form %.6g, Monte Carlo %.6g ± %.2g (%.1f SE)", name, got, est, se, math.Abs(got-est)/se)
				}
			}
			check("mean", m0, fs.mean(), fs.seMean())
			check("variance", v0, fs.variance(), fs.seVar())
			check("E log-lik", ell, ls.mean(), ls.seMean())
		})
	}
}

// TestSamplingUnbiased: the Monte Carlo methods' one-draw estimate of the expected
// log-likelihood averages, over independent draws, to the exact value — which for one hidden
// layer is DVI's closed form (with VarDrop's variances expressed as Gaussian weights and no bias
// noise). Tolerance 5 Monte Carlo standard errors.
func TestSamplingUnbiased(t *testing.T) {
	const S = 40000
	x := []float64{0.8, -0.4, 1.1, 0.3, -1.2, 0.5}
	yv := []float64{0.7, -0.2}
	const beta = 1.5
	for _, meth := range []Method{MonteCarlo, VarDrop} {
		t.Run(meth.String(), func(t *testing.T) {
			n := &Net{Sizes: []int{3, 8, 1}, Method: meth}
			p := randomParams(n, 12)
			// The exact reference: a DVI net with the same weight distributions.
			d := &Net{Sizes: n.Sizes, Method: DVI}
			q := make([]float64, d.NumParams())
			ln, ld := n.Layers(), d.Layers()
			for l := range ln {
				a, b := ln[l], ld[l]
				for i := range a.In * a.Out {
					s2 := math.Exp(p[a.Rho+i])
					if meth == VarDrop {
						s2, _, _ = varDropVar(p[a.Mu+i], p[a.Rho+i])
					}
					q[b.Mu+i], q[b.Rho+i] = p[a.Mu+i], math.Log(s2)
				}
				for j := range a.Out {
					q[b.MuB+j] = p[a.MuB+j]
					if meth == VarDrop {
						q[b.RhoB+j] = -80 // deterministic bias: variance e⁻⁸⁰
					} else {
						q[b.RhoB+j] = p[a.RhoB+j]
					}
				}
			}
			var ws Workspace
			exact := d.GaussLogLik(&ws, q, x, yv, 2, beta, 1, nil, nil)
			r := rand.New(rand.NewPCG(5, 6))
			var st mcStats
			for range S {
				st.add(n.GaussLogLik(&ws, p, x, yv, 2, beta, 1, r, nil))
			}
			if math.Abs(st.mean()-exact) > 5*st.seMean() {
				t.Errorf("Monte Carlo %.6g ± %.2g, exact %.6g", st.mean(), st.seMean(), exact)
			}
		})
	}
}

// TestFitImprovesTestLL fits every method to a small 1-D regression (y = sin 3x + noise) and
// requires the held-out log predictive density to improve on the initial network's by a wide
// margin, and to come near the noise floor.
func TestFitImprovesTestLL(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const ntr, nte, noise = 300, 200, 0.1
	mk := func(n int) (X, y []float64) {
		X, y = make([]float64, n), make([]float64, n)
		for i := range X {
			X[i] = 2*r.Float64() - 1
			y[i] = math.Sin(3*X[i]) + noise*r.NormFloat64()
		}
		return X, y
	}
	Xtr, ytr := mk(ntr)
	Xte, yte := mk(nte)
	mean := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	// Best possible mean log density: log N(ε; 0, 0.1²) averages −½ log(2π·0.01) − ½ = 0.884.
	for _, meth := range methods {
		t.Run(meth.String(), func(t *testing.T) {
			net := Net{Sizes: []int{1, 20, 1}, Method: meth}
			init := &Regression{Net: net, Params: make([]float64, net.NumParams()), Beta: 1}
			net.Init(init.Params, rng.New(3, 0).Rand)
			before := mean(init.LogPredictive(Xte, yte, nte, 10, 1))
			m, err := FitRegression(context.Background(), net, Xtr, ytr, ntr, FitConfig{Epochs: 150, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			after := mean(m.LogPredictive(Xte, yte, nte, 30, 1))
			t.Logf("%s: test LL %.3f → %.3f (β = %.1f)", meth, before, after, m.Beta)
			// A useful fit of this signal (sd 0.7) with noise sd 0.1 reaches well above 0 nats;
			// the initial network sits near −1 or below.
			if after < 0.3 || after < before+1 {
				t.Errorf("test LL %.3f → %.3f: no clear improvement", before, after)
			}
		})
	}
}

// TestDeadHiddenLayer: when every hidden unit is off, VarDrop's output variance is exactly 0
// (deterministic biases); the gradient must stay finite (it once was 0·∞ = NaN).
func TestDeadHiddenLayer(t *testing.T) {
	for _, meth := range methods {
		n := &Net{Sizes: []int{2, 3, 1}, Method: meth}
		p := randomParams(n, 3)
		L := n.Layers()[0]
		for j := range L.Out {
			p[L.MuB+j] = -50
		}
		X, y := randomData(4, 2, 1, 1)
		var ws Workspace
		g := make([]float64, len(p))
		v := n.GaussLogLik(&ws, p, X, y, 4, 1, 1, rand.New(rand.NewPCG(1, 1)), g)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s: log-likelihood %g", meth, v)
		}
		for i, gi := range g {
			if math.IsNaN(gi) || math.IsInf(gi, 0) {
				t.Errorf("%s: gradient %d is %g", meth, i, gi)
			}
		}
	}
}
