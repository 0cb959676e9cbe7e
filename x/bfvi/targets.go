package bfvi

import (
	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// EightSchoolsCP is E5's centred eight schools (shared/docs/papers.md §1.2): μ ~ N(0, 5²),
// τ ~ half-Cauchy(0, 5), θ_j ~ N(μ, τ²), y_j ~ N(θ_j, σ_j²), on z = (μ, log τ, θ_1..θ_8) with
// the log-Jacobian of τ = e^s included (the paper's code omits it; this is the proper
// posterior), constants dropped. Cost O(J) per evaluation. With NoJacobian set it is the
// target of the paper's code: the same density without the term s, improper as s → −∞ (after
// integrating out θ it tends to a positive constant there).
type EightSchoolsCP struct{ NoJacobian bool }

var (
	esY     = []float64{28, 8, -3, 7, -1, 1, 18, 12}
	esSigma = []float64{15, 10, 16, 11, 9, 11, 10, 18}
)

// Dim is 10.
func (EightSchoolsCP) Dim() int { return 10 }

// LogDensity is the log posterior density of z up to a constant.
func (m EightSchoolsCP) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	mu, s, th := t.Index(z, 0), t.Index(z, 1), t.Slice(z, 2, 10)
	lp := t.MulC(t.Square(mu), -1.0/50)
	lp = t.Sub(lp, t.Log1p(t.Square(t.MulC(t.Exp(s), 0.2)))) // half-Cauchy(0, 5)
	if !m.NoJacobian {
		lp = t.Add(lp, s) // Jacobian of τ = e^s
	}
	ss := t.Sum(t.Square(t.Sub(th, mu)))
	lp = t.Sub(lp, t.Add(t.MulC(t.Mul(ss, t.Exp(t.MulC(s, -2))), 0.5), t.MulC(s, 8)))
	r := t.Div(t.Sub(t.ConstRef(esY), th), t.ConstRef(esSigma))
	return t.Sub(lp, t.MulC(t.Sum(t.Square(r)), 0.5))
}

// EightSchoolsNCP is E5's non-centred eight schools: μ ~ N(0, 5²), τ ~ half-Cauchy(0, 5),
// θ̃_j ~ N(0, 1), y_j ~ N(μ + τ·θ̃_j, σ_j²), on z = (μ, log τ, θ̃_1..θ̃_8), constants dropped,
// with the log-Jacobian of τ = e^s unless NoJacobian (the paper's code: improper as s → −∞).
// With the Jacobian it equals zoo.EightSchools up to a constant. Cost O(J) per evaluation.
type EightSchoolsNCP struct{ NoJacobian bool }

// Dim is 10.
func (EightSchoolsNCP) Dim() int { return 10 }

// LogDensity is the log posterior density of z up to a constant.
func (m EightSchoolsNCP) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	mu, s, th := t.Index(z, 0), t.Index(z, 1), t.Slice(z, 2, 10)
	lp := t.MulC(t.Square(mu), -1.0/50)
	lp = t.Sub(lp, t.Log1p(t.Square(t.MulC(t.Exp(s), 0.2)))) // half-Cauchy(0, 5)
	if !m.NoJacobian {
		lp = t.Add(lp, s) // Jacobian of τ = e^s
	}
	lp = t.Sub(lp, t.MulC(t.Sum(t.Square(th)), 0.5))
	r := t.Div(t.Sub(t.ConstRef(esY), t.Add(mu, t.Mul(t.Exp(s), th))), t.ConstRef(esSigma))
	return t.Sub(lp, t.MulC(t.Sum(t.Square(r)), 0.5))
}

// ToyRegression is E3's regression with two nearly collinear predictors (papers.md §1.2,
// data decoded from the authors' data/2D.rdata): y ~ N(b + w₁z + w₂x, σ²), b, w ~ N(0, 10²),
// σ ~ LogNormal(0.5, 1), on (b, w₁, w₂, log σ) with the Jacobian, constants dropped.
type ToyRegression struct{}

var (
	trZ = []float64{1.3709584, -0.5646982, 0.3631284, 0.6328626, 0.4042683, -0.1061245}
	trX = []float64{1.4847516, -1.4244989, 0.1043231, 0.2792319, 0.0913864, -0.5351939}
	trY = []float64{-1.4677801, -0.0942128, -0.4116205, -0.3117723, -0.5256991, -1.2237558}
)

// Dim is 4.
func (ToyRegression) Dim() int { return 4 }

// LogDensity is the log posterior density of z up to a constant.
func (ToyRegression) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	b, w1, w2, s := t.Index(z, 0), t.Index(z, 1), t.Index(z, 2), t.Index(z, 3)
	eta := t.Add(b, t.Add(t.Mul(w1, t.ConstRef(trZ)), t.Mul(w2, t.ConstRef(trX))))
	r := t.Sub(t.ConstRef(trY), eta)
	n := float64(len(trY))
	// −N log σ − Σr²/(2σ²), priors −(b² + w₁² + w₂²)/200, LogNormal(σ) + Jacobian −(s − 0.5)²/2.
	lp := t.Neg(t.Add(t.MulC(s, n), t.MulC(t.Mul(t.Sum(t.Square(r)), t.Exp(t.MulC(s, -2))), 0.5)))
	lp = t.Sub(lp, t.MulC(t.Add(t.Square(b), t.Add(t.Square(w1), t.Square(w2))), 1.0/200))
	return t.Sub(lp, t.MulC(t.Square(t.AddC(s, -0.5)), 0.5))
}

// NNRegression is E4's Bayesian neural network (papers.md §1.2): y = b₂ + Σ_k v_k·σ(w_k x + b_k)
// with 3 sigmoid hidden units, known noise σ = 0.2, N(0, 1) priors on all 10 weights, on
// z = (w₁..w₃, b₁..b₃, v₁..v₃, b₂); the first 9 points of the authors' data (a hole in
// [−2, 2]). Constants dropped; cost O(9·3) per evaluation.
type NNRegression struct{}

var (
	nnX = []float64{-5.41239, -4.142973, -5.100401, -4.588446, -2.0570369, -2.0035906, -3.7404475, -5.344997, 4.506781}
	nnY = []float64{0.973122, 0.96644104, 1.2311585, 0.5193988, -1.2059958, -0.9434611, 0.8041748, 0.82996416, -1.3704962}
)

// Dim is 10.
func (NNRegression) Dim() int { return 10 }

// LogDensity is the log posterior density of z up to a constant.
func (NNRegression) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	f := t.Index(z, 9)
	x := t.ConstRef(nnX)
	for k := range 3 {
		h := t.Sigmoid(t.Add(t.Mul(t.Index(z, k), x), t.Index(z, 3+k)))
		f = t.Add(f, t.Mul(t.Index(z, 6+k), h))
	}
	r := t.Sub(t.ConstRef(nnY), f)
	// −Σr²/(2·0.2²) − |z|²/2.
	return t.Neg(t.Add(t.MulC(t.Sum(t.Square(r)), 12.5), t.MulC(t.Sum(t.Square(z)), 0.5)))
}

// Permuted is Target with its coordinates reordered: coordinate i of Target is coordinate
// Pos[i] of the permuted vector. The density is the same up to relabelling (PSIS k̂ and the
// ELBO are unchanged), but an autoregressive flow, and the Cholesky whitening of its warm
// start, see the coordinates in the new order.
type Permuted struct {
	Target model.Target
	Pos    []int
}

// Dim is the target's dimension.
func (p Permuted) Dim() int { return p.Target.Dim() }

// LogDensity evaluates the target at the coordinates gathered back into its own order.
func (p Permuted) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	return p.Target.LogDensity(t, t.Gather(z, p.Pos))
}
