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
