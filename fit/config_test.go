package fit

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/objective"
)

// TestConfigRejectsNonFiniteFloats: NaN fails every comparison, so a `x < 0` check let NaN
// and +Inf through — Tol NaN "converged", LR or InitScale NaN made every step non-finite and
// the fit blamed the target. Every float field must be rejected up front, by name.
func TestConfigRejectsNonFiniteFloats(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{Tol: nan}, "Tol"},
		{Config{Tol: inf}, "Tol"},
		{Config{Tol: -inf}, "Tol"},
		{Config{LR: nan}, "LR"},
		{Config{LR: inf}, "LR"},
		{Config{InitScale: nan, Init: InitZero}, "InitScale"},
		{Config{InitScale: inf, Init: InitZero}, "InitScale"},
		{Config{TrendZ: nan, Stop: StopTrend}, "TrendZ"},
		{Config{TrendZ: inf}, "TrendZ"},
	} {
		c.cfg.Seed, c.cfg.MaxIter = 1, 50
		res, err := Fit(context.Background(), target(), family.NewFullRank(2), objective.Options{}, c.cfg)
		if err == nil {
			t.Errorf("%s: no error (status %v: %s)", c.field, res.Status, res.Reason)
			continue
		}
		if res != nil || !strings.Contains(err.Error(), "fit: Config: "+c.field+" must be finite") {
			t.Errorf("%s: error %q (result %v), want one naming %s", c.field, err, res != nil, c.field)
		}
	}
}
