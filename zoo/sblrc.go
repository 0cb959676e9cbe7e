package zoo

import (
	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// sblrcEntry is the zoo entry of this file's model.
func sblrcEntry() entry {
	return entry{
		Info: Info{
			Name:      "sblrc",
			Posterior: "sblrc-blr",
			Data:      "sblrc",
			Description: "Simulated Bayesian linear regression without intercept, N = 100, D = 5: " +
				"y ~ N(X·beta, sigma), beta ~ N(0, 10), sigma ~ half-N(0, 10). 6 parameters; the " +
				"design correlates the betas (≈ 0.8) and sd(beta) ≈ 0.001 against sd(sigma) ≈ 0.08.",
		},
		build: newSBLRC,
	}
}

// newSBLRC builds blr: z = (beta[1..D], log sigma). X (row-major in the file) is stored
// feature-major.
func newSBLRC(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	dd, err := positiveCount(d, "D", 1)
	if err != nil {
		return nil, err
	}
	x, err := d.Matrix("X", n, dd)
	if err != nil {
		return nil, err
	}
	y, err := d.Vector("y", n)
	if err != nil {
		return nil, err
	}
	m := coefSigma(dd, true, transpose(x, n, dd), y)
	m.prior = func(t *ad.Tape, _, beta, sigma ad.Var) ad.Var {
		zero, ten := t.Const(0), t.Const(10)
		return t.Add(density.Normal(t, beta, zero, ten), density.Normal(t, sigma, zero, ten))
	}
	return m, nil
}

// transpose returns the row-major r×c matrix x as a c×r feature-major ad.Mat.
func transpose(x []float64, r, c int) ad.Mat {
	out := make([]float64, r*c)
	for i := range r {
		for j := range c {
			out[j*r+i] = x[i*c+j]
		}
	}
	return ad.Mat{Rows: c, Cols: r, Data: out}
}
