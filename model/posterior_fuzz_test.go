package model

import (
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/diag"
)

// FuzzParsePosteriorInfo reads arbitrary posteriordb posterior descriptions
// (posteriors/NAME.json) and checks a set of draws names (a comma-separated fuzzed list)
// against each one it accepts: neither may panic; an accepted description has its three
// names and positive sizes.
//
// Run: go test -fuzz FuzzParsePosteriorInfo ./model
func FuzzParsePosteriorInfo(f *testing.F) {
	ok := `{"name": "eight_schools-eight_schools_noncentered", "model_name": "eight_schools_noncentered", "data_name": "eight_schools",
 "dimensions": {"mu": 1, "tau": 1, "theta": 8, "theta_trans": 8}, "reference_posterior_name": "eight_schools-eight_schools_noncentered"}`
	f.Add(ok, "mu,tau,theta[1],theta[2]")
	f.Add(`{"name": "a", "model_name": "b", "data_name": "c", "dimensions": {"L": 4}}`, "L[1,1],L[1,2],L[2,1],L[2,2]")
	f.Add(`{"name": "a", "model_name": "b", "data_name": "c", "dimensions": {"x": 1e400}}`, "x")
	f.Add(`{"name": "a", "model_name": "b", "data_name": "c", "dimensions": {"x": 9223372036854775807}}`, "x[9223372036854775807]")
	f.Add(`{"name": "a", "model_name": "b", "data_name": "c", "dimensions": {"x": 2}}`, "x[0],x[1],x[-1],x[,],x[")
	f.Add(`[1]`, "")
	f.Fuzz(func(t *testing.T, js, names string) {
		info, err := ParsePosteriorInfo("fuzz", strings.NewReader(js))
		if err != nil {
			return
		}
		if info.Name == "" || info.ModelName == "" || info.DataName == "" || len(info.Dimensions) == 0 {
			t.Fatalf("accepted %+v", info)
		}
		for k, n := range info.Dimensions {
			if n < 1 {
				t.Fatalf("dimension %q = %d accepted", k, n)
			}
		}
		var list []string
		if names != "" {
			list = strings.Split(names, ",")
		}
		info.CheckDraws(&diag.Draws{Names: list}) // must not panic
	})
}
