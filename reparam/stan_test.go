package reparam

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/stan"
)

// TestEightSchoolsStanCentred: at λ = 1 the built model is posteriordb's
// eight_schools_centered program compiled by package stan. Package stan keeps the normalising
// constants of `~` statements, so the two log densities agree at every point, to 1e-12
// relative (the same terms summed in another order, totals ≈ 10²); the test still allows a
// constant offset, measured at the first point, in case a front end drops constants.
func TestEightSchoolsStanCentred(t *testing.T) {
	full := filepath.Join(datadir.SharedOrSkip(t), "data", "posteriordb-full")
	prog := filepath.Join(full, "models", "eight_schools_centered.stan")
	src, err := os.ReadFile(prog)
	if err != nil {
		t.Skipf("no %s: %v", prog, err)
	}
	data, err := model.LoadData(filepath.Join(full, "data", "eight_schools.json.zip"))
	if err != nil {
		t.Skipf("no eight schools data: %v", err)
	}
	sm, err := stan.Compile(prog, src, data)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := eightSchools(t, Normal).Model([]float64{CP})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	var off float64
	for k := range 20 {
		z := make([]float64, 10)
		for i := range z {
			z[i] = 2 * r.NormFloat64()
		}
		a, _ := logDensity(cp, z)
		b, _ := logDensity(sm, z)
		if k == 0 {
			off = a - b
		} else if math.Abs(a-b-off) > 1e-12*math.Abs(b) {
			t.Errorf("at %v: reparam CP − Stan = %.15g, first point %.15g", z, a-b, off)
		}
	}
}
