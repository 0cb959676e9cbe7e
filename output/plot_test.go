package output

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/rng"
)

func TestPlotsWritePNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	trace := []fit.TracePoint{{Iter: 0, ELBO: -50, LR: 0.02}, {Iter: 100, ELBO: -40, LR: 0.02}, {Iter: 200, ELBO: -39.5, LR: 0.004}, {Iter: 300, ELBO: -39.4, LR: 0.004}}
	s := rng.New(1, 0)
	x, ref := make([]float64, 500), make([]float64, 2000)
	for i := range x {
		x[i] = s.NormFloat64()
	}
	for i := range ref {
		ref[i] = 1.1 * s.NormFloat64()
	}
	vars := []Marginal{{Name: "mu", Draws: x, Ref: ref}, {Name: "theta[1]", Draws: x}, {Name: "const", Draws: []float64{2, 2, 2}}}
	for _, ext := range []string{".png", ".svg"} {
		elbo, marg := filepath.Join(dir, "elbo"+ext), filepath.Join(dir, "marginals"+ext)
		if err := PlotELBO(elbo, "ELBO", trace, -39.3); err != nil {
			t.Fatal(err)
		}
		if err := PlotMarginals(marg, "marginals", vars, 2); err != nil {
			t.Fatal(err)
		}
		if err := PlotMarginals(marg, "", vars, 0); err != nil {
			t.Fatal(err)
		}
		magic := map[string][]byte{".png": []byte("\x89PNG"), ".svg": []byte("<?xml")}[ext]
		for _, p := range []string{elbo, marg} {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, magic) {
				t.Errorf("%s starts with %q", p, b[:min(8, len(b))])
			}
		}
	}
	if err := PlotELBO(filepath.Join(dir, "x.png"), "", nil, 0); err == nil {
		t.Error("empty trace: no error")
	}
}
