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
	floorParsed  = 110
	floorChecked = 110
	floorLoaded  = 109
	floorPass    = 109
)

// slowPosteriors took more than 0.7 s each (wall, on the shared machine) in the run of
// bench/results/stan_corpus.md; TestCorpus leaves them to the benchmark so that it takes
// seconds.
var slowPosteriors = map[string]bool{
	"ecdc0401-covid19imperial_v2":                          true,
	"ecdc0401-covid19imperial_v3":                          true,
	"ecdc0501-covid19imperial_v2":                          true,
	"ecdc0501-covid19imperial_v3":                          true,
	"election88-election88_full":                           true,
	"fims_Aus_Jpn_irt-2pl_latent_reg_irt":                  true,
	"hmm_gaussian_simulated-hmm_gaussian":                  true,
	"hudson_lynx_hare-lotka_volterra":                      true,
	"iohmm_reg_simulated-iohmm_reg":                        true,
	"mnist_100-nn_rbm1bJ10":                                true,
	"normal_5-normal_mixture_k":                            true,
	"one_comp_mm_elim_abs-one_comp_mm_elim_abs":            true,
	"ovarian-logistic_regression_rhs":                      true,
	"prideprejudice_chapter-ldaK5":                         true,
	"prideprejudice_paragraph-ldaK5":                       true,
	"prostate-logistic_regression_rhs":                     true,
	"radon_all-radon_county_intercept":                     true,
	"radon_all-radon_hierarchical_intercept_centered":      true,
	"radon_all-radon_hierarchical_intercept_noncentered":   true,
	"radon_all-radon_partially_pooled_centered":            true,
	"radon_all-radon_partially_pooled_noncentered":         true,
	"radon_all-radon_pooled":                               true,
	"radon_all-radon_variable_intercept_centered":          true,
	"radon_all-radon_variable_intercept_noncentered":       true,
	"radon_all-radon_variable_intercept_slope_centered":    true,
	"radon_all-radon_variable_intercept_slope_noncentered": true,
	"radon_all-radon_variable_slope_centered":              true,
	"radon_all-radon_variable_slope_noncentered":           true,
	"science_irt-grsm_latent_reg_irt":                      true,
	"sir-sir":                                              true,
	"soil_carbon-soil_incubation":                          true,
	"synthetic_grid_RBF_kernels-kronecker_gp":              true,
	"three_men1-ldaK2":                                     true,
	"three_men2-ldaK2":                                     true,
	"three_men3-ldaK2":                                     true,
	"timssAusTwn_irt-gpcm_latent_reg_irt":                  true,
	"traffic_accident_nyc-bym2_offset_only":                true,
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
