package zoo

import (
	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// kidiqEntry is the zoo entry of this file's model.
func kidiqEntry() entry {
	return entry{
		Info: Info{
			Name:      "kidiq",
			Posterior: "kidiq-kidscore_momhsiq",
			Data:      "kidiq",
			Description: "Child test scores on mother's high-school completion and IQ (Gelman & Hill " +
				"2007, ch. 3), N = 434: kid_score ~ N(beta1 + beta2·mom_hs + beta3·mom_iq, sigma), flat " +
				"beta, sigma ~ half-Cauchy(0, 2.5). 4 parameters; mom_iq is not centred, so " +
				"corr(beta1, beta3) ≈ −0.95 and the scales differ by about 100×.",
		},
		build: newKidIQ,
	}
}

// newKidIQ builds kidscore_momhsiq: z = (beta[1..3], log sigma). mom_hs_new and mom_iq_new
// in the data file are unused.
func newKidIQ(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	v, err := vectors(d, n, "kid_score", "mom_hs", "mom_iq")
	if err != nil {
		return nil, err
	}
	m := coefSigma(3, false, featureMajor(v[1], v[2]), v[0])
	m.prior = func(t *ad.Tape, _, _, sigma ad.Var) ad.Var {
		return density.Cauchy(t, sigma, t.Const(0), t.Const(2.5))
	}
	return m, nil
}
