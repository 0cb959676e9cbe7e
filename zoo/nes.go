package zoo

import (
	"fmt"

	"github.com/vigo-bayes/vigo/model"
)

// nesEntry is the zoo entry of this file's model.
func nesEntry() entry {
	return entry{
		Info: Info{
			Name:      "nes",
			Posterior: "nes2000-nes",
			Data:      "nes2000",
			Description: "Party identification in the 2000 National Election Study (Gelman & Hill " +
				"2007, ch. 4), N = 476: partyid7 ~ N(beta1 + beta2 real_ideo + beta3 race_adj + " +
				"beta4..6 age dummies + beta7 educ1 + beta8 gender + beta9 income, sigma), flat priors. " +
				"10 parameters; uncentred predictors and correlated age dummies.",
		},
		build: newNES,
	}
}

// newNES builds nes: z = (beta[1..9], log sigma). The age dummies age30_44, age45_64,
// age65up (age_discrete = 2, 3, 4; category 1 is the baseline) are built once here. The
// file's values are used as they are (gender 1/2, race_adj 1/1.5/2); year is unused.
func newNES(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	v, err := vectors(d, n, "partyid7", "real_ideo", "race_adj", "educ1", "gender", "income")
	if err != nil {
		return nil, err
	}
	age, err := d.IntVector("age_discrete", n)
	if err != nil {
		return nil, err
	}
	dummy := [3][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
	for i, a := range age {
		if a < 1 || a > 4 {
			return nil, fmt.Errorf("data %s: field \"age_discrete[%d]\": %d, want 1…4", d.Name, i+1, a)
		}
		if a > 1 {
			dummy[a-2][i] = 1
		}
	}
	xt := featureMajor(v[1], v[2], dummy[0], dummy[1], dummy[2], v[3], v[4], v[5])
	return coefSigma(9, false, xt, v[0]), nil
}
