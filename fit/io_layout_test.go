package fit

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vigo-bayes/vigo/model"
)

// TestLoadsVersion1Fits loads fit.json files written by the release before layouts described
// themselves (testdata/fit_v1, written by vigo fit at 89c745b: eight_schools, garch with its
// dependent bound, hmm_example with simplices and a positive-ordered vector, low_dim_gauss_mix
// with an ordered vector, gp_pois_regr) and checks that the saved layout is read back as
// written and constrains the first draws of the fit's seed bit for bit as that release's
// vigo draw did (the *-draw5.csv files).
func TestLoadsVersion1Fits(t *testing.T) {
	for _, name := range []string{"eight_schools", "garch", "hmm_example", "low_dim_gauss_mix", "gp_pois_regr"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "fit_v1", name+".json")
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var file struct {
				Layout []model.ParamSpec `json:"layout"`
			}
			if err := json.Unmarshal(raw, &file); err != nil {
				t.Fatal(err)
			}
			specs, err := s.ParamLayout().Spec()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(specs, file.Layout) {
				t.Errorf("layout read back as %+v, file has %+v", specs, file.Layout)
			}
			old, err := model.LoadStanCSV(filepath.Join("testdata", "fit_v1", name+"-draw5.csv"))
			if err != nil {
				t.Fatal(err)
			}
			k := len(old.Names)
			if len(old.Draws) != 5*k || k < 2+len(s.Names) {
				t.Fatalf("fixture has %d values in %d columns", len(old.Draws), k)
			}
			for j, nm := range s.Names {
				if old.Names[2+j] != nm {
					t.Fatalf("column %d is %s in the fixture, %s in the fit", 2+j, old.Names[2+j], nm)
				}
			}
			d := s.Dim()
			z, logq := s.Sample(s.Config.Seed, 5)
			x := make([]float64, len(s.Names))
			for i := range 5 {
				row := old.Draws[i*k : (i+1)*k]
				if math.Float64bits(logq[i]) != math.Float64bits(row[1]) {
					t.Errorf("draw %d: log q %v, old %v", i, logq[i], row[1])
				}
				s.Constrain(x, z[i*d:(i+1)*d])
				for j, v := range x {
					if math.Float64bits(v) != math.Float64bits(row[2+j]) {
						t.Errorf("draw %d: %s = %v, old %v", i, s.Names[j], v, row[2+j])
					}
				}
			}
		})
	}
}
