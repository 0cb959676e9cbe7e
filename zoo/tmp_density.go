package zoo

// Temporary stand-ins for package density (not landed yet), written with elementary tape ops.
// They are replaced by density's fused nodes as soon as it lands.

import (
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// tmpNormal records Σ log N(x_i | mu_i, sigma_i) (length-1 operands broadcast).
func tmpNormal(t *ad.Tape, x, mu, sigma ad.Var) ad.Var {
	z := t.Div(t.Sub(x, mu), sigma)
	n := max(t.Size(x), t.Size(mu), t.Size(sigma))
	lp := t.AddC(t.MulC(t.Sum(t.Square(z)), -0.5), -float64(n)*mathx.LogSqrt2Pi)
	ls := t.Sum(t.Log(sigma))
	if k := t.Size(sigma); k == 1 && n > 1 {
		ls = t.MulC(ls, float64(n))
	}
	return t.Sub(lp, ls)
}

// tmpCauchy records Σ log Cauchy(x_i | mu, sigma).
func tmpCauchy(t *ad.Tape, x, mu, sigma ad.Var) ad.Var {
	z := t.Div(t.Sub(x, mu), sigma)
	n := max(t.Size(x), t.Size(mu), t.Size(sigma))
	lp := t.AddC(t.Neg(t.Sum(t.Log1p(t.Square(z)))), -float64(n)*math.Log(math.Pi))
	ls := t.Sum(t.Log(sigma))
	if k := t.Size(sigma); k == 1 && n > 1 {
		ls = t.MulC(ls, float64(n))
	}
	return t.Sub(lp, ls)
}

// tmpStudentT records Σ log t_ν(x_i | mu, sigma) for a constant ν.
func tmpStudentT(t *ad.Tape, x ad.Var, nu float64, mu, sigma ad.Var) ad.Var {
	z := t.Div(t.Sub(x, mu), sigma)
	n := max(t.Size(x), t.Size(mu), t.Size(sigma))
	c := mathx.Lgamma((nu+1)/2) - mathx.Lgamma(nu/2) - 0.5*math.Log(nu*math.Pi)
	lp := t.AddC(t.MulC(t.Sum(t.Log1p(t.MulC(t.Square(z), 1/nu))), -(nu+1)/2), float64(n)*c)
	ls := t.Sum(t.Log(sigma))
	if k := t.Size(sigma); k == 1 && n > 1 {
		ls = t.MulC(ls, float64(n))
	}
	return t.Sub(lp, ls)
}

// tmpGamma records log Gamma(x | a, b) (shape a, rate b constants) for a scalar x.
func tmpGamma(t *ad.Tape, x ad.Var, a, b float64) ad.Var {
	lp := t.Sub(t.MulC(t.Log(x), a-1), t.MulC(x, b))
	return t.Sum(t.AddC(lp, a*math.Log(b)-mathx.Lgamma(a)))
}

// tmpBeta records log Beta(x | a, b) for a scalar x and constants a, b.
func tmpBeta(t *ad.Tape, x ad.Var, a, b float64) ad.Var {
	lp := t.Add(t.MulC(t.Log(x), a-1), t.MulC(t.Log1p(t.Neg(x)), b-1))
	return t.Sum(t.AddC(lp, -mathx.LogBeta(a, b)))
}

// tmpPoissonLog records Σ log Poisson(k_i | exp(f_i)) = Σ k f − eᶠ − lnΓ(k+1).
func tmpPoissonLog(t *ad.Tape, k []float64, f ad.Var) ad.Var {
	c := 0.0
	for _, ki := range k {
		c -= mathx.Lgamma(ki + 1)
	}
	return t.AddC(t.Sub(t.Dot(t.ConstRef(k), f), t.Sum(t.Exp(f))), c)
}

// tmpNormalGLM records Σ_i log N(y_i | alpha + Σ_j X_ij beta_j, sigma) with the design given
// feature-major (xt is D×N: row j holds feature j of every observation). alpha may be a
// constant 0 for a model without intercept.
func tmpNormalGLM(t *ad.Tape, y []float64, xt ad.Mat, alpha, beta, sigma ad.Var) ad.Var {
	n, d := xt.Cols, xt.Rows
	a, b, s := t.Float(alpha), t.Value(beta), t.Float(sigma)
	r := t.Scratch(n)
	for i := range r {
		r[i] = y[i] - a
	}
	for j := range d {
		row, bj := xt.Data[j*n:(j+1)*n], b[j]
		for i := range r {
			r[i] -= row[i] * bj
		}
	}
	ss, sr := 0.0, 0.0
	for _, ri := range r {
		ss += ri * ri
		sr += ri
	}
	is2 := 1 / (s * s)
	lp := -float64(n)*(mathx.LogSqrt2Pi+math.Log(s)) - 0.5*ss*is2
	fb := t.Fused()
	if p := fb.Partial(alpha); p != nil {
		p[0] = sr * is2
	}
	if p := fb.Partial(beta); p != nil {
		for j := range d {
			row, g := xt.Data[j*n:(j+1)*n], 0.0
			for i, ri := range r {
				g += row[i] * ri
			}
			p[j] = g * is2
		}
	}
	if p := fb.Partial(sigma); p != nil {
		p[0] = -float64(n)/s + ss*is2/s
	}
	return fb.Done(lp)
}
