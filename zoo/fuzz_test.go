package zoo

import (
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// fuzzSeeds are small valid data sets, one per zoo model (the fuzzer mutates them).
var fuzzSeeds = map[string]string{
	"arK":               `{"K": 2, "T": 5, "y": [0.1, 0.2, -0.3, 0.5, 0.1]}`,
	"diamonds":          `{"N": 3, "K": 2, "X": [[1, 2], [3, 4], [5, 7]], "Y": [1, 2, 3], "prior_only": 0}`,
	"earnings":          `{"N": 3, "earn": [1000, 2000, 3000], "height": [60, 65, 70], "male": [0, 1, 1]}`,
	"eight_schools":     `{"J": 8, "y": [28, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]}`,
	"garch":             `{"T": 4, "sigma1": 1, "y": [0.1, -0.2, 0.3, 0.1]}`,
	"gp_pois_regr":      `{"N": 3, "x": [-1, 0, 1], "k": [1, 2, 3], "y": [1, 2, 3]}`,
	"hmm_example":       `{"K": 2, "N": 4, "y": [0.1, 1, 2, 0.5]}`,
	"kidiq":             `{"N": 3, "kid_score": [80, 90, 100], "mom_hs": [0, 1, 1], "mom_iq": [90, 100, 110], "mom_hs_new": 1, "mom_iq_new": 100}`,
	"low_dim_gauss_mix": `{"N": 3, "y": [0.1, 1, -1]}`,
	"mesquite":          `{"N": 3, "weight": [1, 2, 3], "diam1": [1, 2, 3], "diam2": [1, 2, 3], "canopy_height": [1, 2, 3], "total_height": [1, 2, 3], "density": [1, 2, 3], "group": [0, 1, 0]}`,
	"nes":               `{"N": 3, "age_discrete": [1, 2, 3], "educ1": [1, 2, 3], "gender": [1, 2, 1], "income": [1, 2, 3], "partyid7": [1, 4, 7], "race_adj": [1, 1, 2], "real_ideo": [1, 4, 7], "year": [2000, 2000, 2000]}`,
	"sblrc":             `{"N": 3, "D": 2, "X": [[1, 2], [3, 4], [5, 7]], "y": [0, 1, 0]}`,
}

// FuzzNew builds every zoo model from arbitrary parsed data: New must return a model or an
// error, never panic; a model it returns must have at least one parameter and evaluate its log
// density, gradient and constrained quantities at the origin without panicking (the values
// may be non-finite: that is the data's business).
//
// Run: go test -fuzz FuzzNew ./zoo
func FuzzNew(f *testing.F) {
	names := Names()
	for i, n := range names {
		if s, ok := fuzzSeeds[n]; ok {
			f.Add(uint8(i), s)
		}
		f.Add(uint8(i), `{"N": 0}`)
		f.Add(uint8(i), `{}`)
	}
	f.Fuzz(func(t *testing.T, kind uint8, js string) {
		name := names[int(kind)%len(names)]
		d, err := model.ParseData("fuzz", strings.NewReader(js))
		if err != nil {
			return
		}
		m, err := New(name, d)
		if err != nil {
			return
		}
		dim := m.Dim()
		if dim < 1 {
			t.Fatalf("%s: Dim = %d from data %s", name, dim, js)
		}
		if dim > 1<<16 {
			return // a huge model from a tiny file is the data's choice; do not evaluate it
		}
		z := make([]float64, dim)
		grad := make([]float64, dim)
		var tp ad.Tape
		model.Gradient(&tp, m, z, grad)
		m.Constrain(nil, z)
	})
}

// TestFuzzSeedsBuild: every FuzzNew seed is a valid data set of its model, so that the fuzzer
// starts inside each builder rather than at its first missing field.
func TestFuzzSeedsBuild(t *testing.T) {
	for _, n := range Names() {
		s, ok := fuzzSeeds[n]
		if !ok {
			t.Errorf("%s: no fuzz seed", n)
			continue
		}
		d, err := model.ParseData(n, strings.NewReader(s))
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if _, err := New(n, d); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}
