package bnn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// TestCategoricalGradientFD checks CategoricalLogLik's gradient against central finite
// differences for every method (sampling methods with the same noise in every evaluation).
func TestCategoricalGradientFD(t *testing.T) {
	for _, meth := range methods {
		t.Run(meth.String(), func(t *testing.T) {
			n := &Net{Sizes: []int{3, 5, 4}, Method: meth, C: 5}
			p := randomParams(n, 8)
			X, _ := randomData(3, 3, 1, 9)
			y := []int{2, 0, 3}
			var ws Workspace
			f := func(p []float64) float64 {
				return n.CategoricalLogLik(&ws, p, X, y, 3, 1.5, rand.New(rand.NewPCG(4, 4)), nil)
			}
			g := make([]float64, len(p))
			n.CategoricalLogLik(&ws, p, X, y, 3, 1.5, rand.New(rand.NewPCG(4, 4)), g)
			const h = 1e-6
			for i := range p {
				old := p[i]
				p[i] = old + h
				fp := f(p)
				p[i] = old - h
				fm := f(p)
				p[i] = old
				fd := (fp - fm) / (2 * h)
				// As in TestGradientFD: truncation and rounding of central differences ≪ 1e-6.
				if math.Abs(fd-g[i]) > 1e-6*(1+math.Abs(fd)) {
					t.Errorf("param %d: analytic %.10g, finite difference %.10g", i, g[i], fd)
				}
			}
		})
	}
}

// TestCategoricalTaylorVsMonteCarlo checks the likelihood step alone (a network's output is
// Gaussian only approximately): with f ~ N(m, diag v) for small v (0.05), the delta-method value differs from E[log softmax(f)_y] by O(v²) ≈ 1e-4,
// far inside 5 Monte Carlo standard errors (≈ 3e-3 with 200,000 draws), while the plug-in
// log softmax(m)_y misses by the correction itself (≈ 0.02), which the test must resolve.
func TestCategoricalTaylorVsMonteCarlo(t *testing.T) {
	m := []float64{0.3, -0.5, 1.1, 0.0}
	v := []float64{0.05, 0.04, 0.06, 0.05}
	const y = 2
	// A linear net with the single input x = 1, weight moments (m, v) and no bias variance has
	// output moments exactly (m, v).
	n := &Net{Sizes: []int{1, 4}, Method: VBP}
	p := make([]float64, n.NumParams())
	L := n.Layers()[0]
	for j := range 4 {
		p[L.Mu+j], p[L.Rho+j] = m[j], math.Log(v[j])
		p[L.RhoB+j] = -200 // bias variance e⁻²⁰⁰: none
	}
	var ws Workspace
	got := n.CategoricalLogLik(&ws, p, []float64{1}, []int{y}, 1, 1, nil, nil)
	plug := m[y] - mathx.LogSumExp(m)
	r := rand.New(rand.NewPCG(7, 8))
	var st mcStats
	f := make([]float64, 4)
	for range 200000 {
		for j := range f {
			f[j] = m[j] + math.Sqrt(v[j])*r.NormFloat64()
		}
		st.add(f[y] - mathx.LogSumExp(f))
	}
	if d := math.Abs(got - st.mean()); d > 5*st.seMean() {
		t.Errorf("Taylor %.6g, Monte Carlo %.6g ± %.2g", got, st.mean(), st.seMean())
	}
	if d := math.Abs(plug - st.mean()); d < 5*st.seMean() {
		t.Errorf("plug-in %.6g is within 5 SE of Monte Carlo %.6g: the test cannot see the correction", plug, st.mean())
	}
}
