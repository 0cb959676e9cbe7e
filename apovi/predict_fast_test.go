package apovi

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/rng"
)

// TestPredictFastMatchesTape: the forward-only prediction path draws the same weights as the
// tape path (the training forward), sample by sample, in both forms of the layer conditional
// (N-space: fewer points than weights per unit; K-space: more) and for both likelihoods. The
// draws come from the same normals in the same order; the K-space arithmetic is the tape
// path's, the N-space form solves with the Cholesky factor of G instead of forming G⁻¹ and
// the test-input products go through a GEMM, so the samples agree to rounding: 1e-9·(1 + |f|)
// is far above the ≈ 1e-13 seen and far below the O(0.1) of a wrong draw or a different normal.
func TestPredictFastMatchesTape(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    Config
		n      int
		bern   bool
		wantNs bool // some layer takes the N-space form
	}{
		{"gaussian N-space", Config{DX: 1, DY: 1, Hidden: []int{32, 32}, InferenceHidden: []int{20}, Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 0.05}}, 24, false, true},
		{"gaussian trained noise K-space", Config{DX: 1, DY: 1, Hidden: []int{6, 6}, InferenceHidden: []int{10}, Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 0.1, TrainNoise: true}}, 30, false, false},
		{"bernoulli 2-D both forms", Config{DX: 2, DY: 1, Hidden: []int{8, 40}, InferenceHidden: []int{12}, Likelihood: Likelihood{Kind: Bernoulli}}, 25, true, true},
	} {
		m, err := NewAPOVI(c.cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		d := toyData(c.n, c.cfg.DX, 1, c.bern, 4)
		xt := toyData(37, c.cfg.DX, 1, false, 5).X
		fast, err := m.Predict(d, xt, 4, rng.New(7, 0).Rand)
		if err != nil {
			t.Fatal(err)
		}
		slow := m.predictTape(d, xt, 4, rng.New(7, 0).Rand)
		for s := range fast.F {
			for i, f := range fast.F[s] {
				if g := slow.F[s][i]; math.IsNaN(f) || math.Abs(f-g) > 1e-9*(1+math.Abs(g)) {
					t.Fatalf("%s: sample %d, test input %d: fast %v, tape %v", c.name, s, i, f, g)
				}
			}
		}
		for i := range fast.Mean {
			if math.Abs(fast.Mean[i]-slow.Mean[i]) > 1e-9 || math.Abs(fast.Std[i]-slow.Std[i]) > 1e-9 {
				t.Fatalf("%s: summary %d differs: mean %v vs %v, sd %v vs %v", c.name, i, fast.Mean[i], slow.Mean[i], fast.Std[i], slow.Std[i])
			}
		}
		// The case covers the form it says it does.
		ns := false
		for l := range m.layers() {
			ns = ns || (c.n < m.dims[l]+1)
		}
		if ns != c.wantNs {
			t.Fatalf("%s: N-space form used %v, want %v", c.name, ns, c.wantNs)
		}
	}
}
