package stan

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
)

// The committed floors of the posteriordb corpus check (raise them as support grows): of the
// posteriors TestCorpus checks (all but slowPosteriors), the number that parse, type-check,
// load their data, and match rstan's log density (with and without Jacobian), gradient and
// constrained values (CheckPosterior). The full corpus, slow ones included, is
// vigo bench posteriordb-stan (bench/results/stan_corpus.md).
const (
	floorParsed  = 112
	floorChecked = 112
	floorLoaded  = 111
	floorPass    = 107
)

// slowPosteriors took more than 0.7 s each (wall, on the shared machine) in the run of
// bench/results/stan_corpus.md; TestCorpus leaves them to the benchmark so that it takes
// seconds.
var slowPosteriors = map[string]bool{
	"GLMM_data-GLMM1_model":                                true,
	"Survey_data-Survey_model":                             true,
	"bones_data-bones_model":                               true,
	"diamonds-diamonds":                                    true,
	"dogs-dogs":                                            true,
	"dogs-dogs_hierarchical":                               true,
	"dogs-dogs_log":                                        true,
	"dogs-dogs_nonhierarchical":                            true,
	"ecdc0401-covid19imperial_v2":                          true,
	"ecdc0401-covid19imperial_v3":                          true,
	"ecdc0501-covid19imperial_v2":                          true,
	"ecdc0501-covid19imperial_v3":                          true,
	"election88-election88_full":                           true,
	"hmm_gaussian_simulated-hmm_gaussian":                  true,
	"iohmm_reg_simulated-iohmm_reg":                        true,
	"mnist_100-nn_rbm1bJ10":                                true,
	"normal_5-normal_mixture_k":                            true,
	"prideprejudice_chapter-ldaK5":                         true,
	"prideprejudice_paragraph-ldaK5":                       true,
	"prostate-logistic_regression_rhs":                     true,
	"radon_all-radon_county_intercept":                     true,
	"radon_all-radon_hierarchical_intercept_centered":      true,
	"radon_all-radon_hierarchical_intercept_noncentered":   true,
	"radon_all-radon_variable_intercept_centered":          true,
	"radon_all-radon_variable_intercept_noncentered":       true,
	"radon_all-radon_variable_intercept_slope_centered":    true,
	"radon_all-radon_variable_intercept_slope_noncentered": true,
	"radon_all-radon_variable_slope_centered":              true,
	"radon_all-radon_variable_slope_noncentered":           true,
	"science_irt-grsm_latent_reg_irt":                      true,
	"sir-sir":                                              true,
	"three_men1-ldaK2":                                     true,
	"three_men2-ldaK2":                                     true,
	"three_men3-ldaK2":                                     true,
	"timssAusTwn_irt-gpcm_latent_reg_irt":                  true,
}

func TestCorpus(t *testing.T) {
	shared := datadir.SharedOrSkip(t)
	root := filepath.Join(shared, "data", "posteriordb-full")
	names, err := Posteriors(root)
	if err != nil || len(names) == 0 {
		t.Skipf("no posteriordb-full snapshot at %s (%v)", root, err)
	}
	var parsed, checked, loaded, pass int
	var b strings.Builder
	checkedN := 0
	for _, n := range names {
		if slowPosteriors[n] {
			continue
		}
		checkedN++
		r := CheckPosterior(root, n)
		if r.Parsed {
			parsed++
		}
		if r.Checked {
			checked++
		}
		if r.Loaded {
			loaded++
		}
		if r.Pass() {
			pass++
		}
		fmt.Fprintf(&b, "%-60s parse=%v check=%v data=%v lp=%v grad=%v values=%v %s%s\n", n, r.Parsed, r.Checked, r.Loaded, r.LP, r.Grad, r.Values, r.Skip, r.Err)
	}
	t.Logf("posteriordb corpus (%d of %d posteriors; the rest are slow):\n%s", checkedN, len(names), b.String())
	t.Logf("parsed %d, checked %d, loaded %d, lp+grad+values %d", parsed, checked, loaded, pass)
	for _, c := range []struct {
		what      string
		got, want int
	}{{"parsed", parsed, floorParsed}, {"checked", checked, floorChecked}, {"loaded", loaded, floorLoaded}, {"passed", pass, floorPass}} {
		if c.got < c.want {
			t.Errorf("%s %d posteriors, below the committed floor %d", c.what, c.got, c.want)
		}
	}
}
