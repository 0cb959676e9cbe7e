package fit

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestFlowFitFilesOfTheLastReleaseLoad: fit.json files of flow fits written by the release
// before flow.Spec (testdata/fitv2: the CLI's bernstein, maf and realnvp fits of
// eight_schools, 300 iterations, and three variants: bernstein with an affine layer last and
// bounded tails, with an affine layer first and two layers, maf with a t base and ReLU) load,
// draw and evaluate log q bit for bit as that release did (golden_draws.json: Sample(7, 16)
// and LogProb at those draws, written by that release), keep their kind, and describe their
// family in the same JSON bytes.
func TestFlowFitFilesOfTheLastReleaseLoad(t *testing.T) {
	raw, err := os.ReadFile("testdata/fitv2/golden_draws.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]map[string][]float64
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{"bernstein": KindBernstein, "maf": KindMAF, "realnvp": KindRealNVP,
		"bern_affine_bounded": KindBernstein, "bern_affine_first": KindBernstein, "maf_t": KindMAF}
	if len(golden) != len(kinds) {
		t.Fatalf("golden draws for %d files, want %d", len(golden), len(kinds))
	}
	for name, want := range golden {
		path := filepath.Join("testdata", "fitv2", name+".json")
		s, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Family.Kind != KindFlow || s.Family.Name != kinds[name] {
			t.Errorf("%s: family %q name %q, want %q %q", name, s.Family.Kind, s.Family.Name, KindFlow, kinds[name])
		}
		z, lq := s.Sample(7, 16)
		aff, p := s.Approximation()
		d := s.Dim()
		same := func(what string, got, want []float64) {
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d values, golden %d", name, what, len(got), len(want))
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s %s[%d]: %v, the last release %v", name, what, i, got[i], want[i])
				}
			}
		}
		same("z", z, want["z"])
		same("logq", lq, want["logq"])
		lp := make([]float64, 16)
		for i := range lp {
			lp[i] = aff.LogProb(p, z[i*d:(i+1)*d])
		}
		same("logprob", lp, want["logprob"])

		// The family part (kind, name, flow spec, base_df) encodes to the file's bytes.
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var parts map[string]json.RawMessage
		if err := json.Unmarshal(file, &parts); err != nil {
			t.Fatal(err)
		}
		var old bytes.Buffer
		if err := json.Compact(&old, parts["family"]); err != nil {
			t.Fatal(err)
		}
		now, err := json.Marshal(s.Family)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(now, old.Bytes()) {
			t.Errorf("%s: family re-encodes to %d bytes that differ from the file's %d", name, len(now), old.Len())
		}
	}
}
