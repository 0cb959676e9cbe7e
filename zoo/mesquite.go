package zoo

import "github.com/vigo-bayes/vigo/model"

// mesquiteEntry is the zoo entry of this file's model.
func mesquiteEntry() entry {
	return entry{
		Info: Info{
			Name:      "mesquite",
			Posterior: "mesquite-logmesquite",
			Data:      "mesquite",
			Description: "Log weight of mesquite bushes on log dimensions and group (Gelman & Hill " +
				"2007, ch. 4), N = 46: log weight ~ N(beta1 + beta2 log diam1 + beta3 log diam2 + " +
				"beta4 log canopy_height + beta5 log total_height + beta6 log density + beta7 group, " +
				"sigma), flat priors. 8 parameters with few observations and correlated predictors.",
		},
		build: newMesquite,
	}
}

// newMesquite builds logmesquite: z = (beta[1..7], log sigma). The logs of the six positive
// measurements are taken once here (the model's transformed data).
func newMesquite(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	names := []string{"weight", "diam1", "diam2", "canopy_height", "total_height", "density"}
	v, err := vectors(d, n, append(names, "group")...)
	if err != nil {
		return nil, err
	}
	logs := make([][]float64, len(names))
	for i, name := range names {
		if logs[i], err = logOf(d, name, v[i]); err != nil {
			return nil, err
		}
	}
	xt := featureMajor(logs[1], logs[2], logs[3], logs[4], logs[5], v[6])
	return coefSigma(7, false, xt, logs[0]), nil
}
