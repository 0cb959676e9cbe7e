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
// eight_schools_centered program compiled by package stan, up to the constants the program's
// `~` statements drop: the difference of the two log densities is the same at every point
// (to 1e-10 absolute on totals of size ≈ 10²; any missing θ-, μ- or τ-dependent term would
// make it vary by O(1) across these points).
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
		} else if math.Abs(a-b-off) > 1e-10 {
			t.Errorf("at %v: reparam CP − Stan = %.15g, first point %.15g", z, a-b, off)
		}
	}
}
