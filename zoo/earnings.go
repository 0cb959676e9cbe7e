package zoo

import "github.com/vigo-bayes/vigo/model"

// earningsEntry is the zoo entry of this file's model.
func earningsEntry() entry {
	return entry{
		Info: Info{
			Name:      "earnings",
			Posterior: "earnings-logearn_interaction",
			Data:      "earnings",
			Description: "Log earnings on height, sex and their interaction (Gelman & Hill 2007, " +
				"ch. 4), N = 1192: log earn ~ N(beta1 + beta2 height + beta3 male + beta4 height·male, " +
				"sigma), flat priors. 5 parameters; height is not centred, so corr(beta1, beta2) ≈ " +
				"−0.999 (condition number ≈ 5e3): hard for mean-field VI.",
		},
		build: newEarnings,
	}
}

// newEarnings builds logearn_interaction: z = (beta[1..4], log sigma). log(earn) and the
// interaction height·male are computed once here.
func newEarnings(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	v, err := vectors(d, n, "earn", "height", "male")
	if err != nil {
		return nil, err
	}
	logEarn, err := logOf(d, "earn", v[0])
	if err != nil {
		return nil, err
	}
	inter := make([]float64, n)
	for i := range inter {
		inter[i] = v[1][i] * v[2][i]
	}
	xt := featureMajor(v[1], v[2], inter)
	return coefSigma(4, false, xt, logEarn), nil
}
