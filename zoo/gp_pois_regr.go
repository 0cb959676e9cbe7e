package zoo

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/model"
)

// gpPoisRegrEntry is the zoo entry of this file's model.
func gpPoisRegrEntry() entry {
	return entry{
		Info: Info{
			Name:      "gp_pois_regr",
			Posterior: "gp_pois_regr-gp_pois_regr",
			Data:      "gp_pois_regr",
			Description: "Latent Gaussian-process Poisson regression on N = 11 simulated counts, " +
				"non-centred: f = L·f_tilde with L the Cholesky factor of K_ij = alpha² exp(−(x_i − " +
				"x_j)²/(2 rho²)) + 1e-10·δ_ij, f_tilde ~ N(0, 1), k_i ~ Poisson(exp(f_i)), rho ~ " +
				"Gamma(25, 4), alpha ~ half-N(0, 2). 13 parameters; strongly correlated f (condition " +
				"number ≈ 1.6e3), skewed hyperparameters and a mild funnel through alpha.",
		},
		build: newGPPoisRegr,
	}
}

// gpJitter is the diagonal jitter the Stan program adds to K.
const gpJitter = 1e-10

// gpPoisRegr is gp_pois_regr. Parameters: rho > 0, alpha > 0, f_tilde[1..N]
// (z = (log rho, log alpha, f_tilde)); reported: rho, alpha, f[1..N] with f = L·f_tilde.
type gpPoisRegr struct {
	n      int
	x      []float64
	k      []int
	negSq  []float64 // −(x_i − x_j)²/2, N×N row-major
	jitter []float64 // gpJitter·I, N×N row-major
	lay    *model.Layout
}

func newGPPoisRegr(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	x, err := d.Vector("x", n)
	if err != nil {
		return nil, err
	}
	ki, err := d.IntVector("k", n)
	if err != nil {
		return nil, err
	}
	for i, v := range ki {
		if v < 0 {
			return nil, fmt.Errorf("data %s: field \"k[%d]\": %d, want a count ≥ 0", d.Name, i+1, v)
		}
	}
	m := &gpPoisRegr{n: n, x: x, k: ki, negSq: make([]float64, n*n), jitter: make([]float64, n*n), lay: mustLayout(
		model.Param{Name: "rho", Constraint: bijector.Lower(1, 0)},
		model.Param{Name: "alpha", Constraint: bijector.Lower(1, 0)},
		model.Param{Name: "f_tilde", Dims: []int{n}},
	)}
	for i := range n {
		for j := range n {
			dx := x[i] - x[j]
			m.negSq[i*n+j] = -0.5 * dx * dx
		}
		m.jitter[i*n+i] = gpJitter
	}
	return m, nil
}

func (m *gpPoisRegr) layout() *model.Layout { return m.lay }

// density: log Gamma(rho | 25, 4) + log N(alpha | 0, 2) + Σ log N(f_tilde | 0, 1) +
// Σ log Poisson(k | exp(f)), f = chol(K)·f_tilde. K, its Cholesky factor and f are matrix
// nodes (O(N³) for the factor and its adjoint).
func (m *gpPoisRegr) density(t *ad.Tape, p []ad.Var) ad.Var {
	n := m.n
	rho, alpha, ft := p[0], p[1], p[2]
	e := t.Exp(t.Div(t.ConstRef(m.negSq), t.Square(rho)))
	kk := t.Add(t.Mul(e, t.Square(alpha)), t.ConstRef(m.jitter))
	f := t.MatVec(t.Cholesky(t.AsMatrix(kk, n, n)), ft)
	zero := t.Const(0)
	lp := t.Add(density.Gamma(t, rho, t.Const(25), t.Const(4)), density.Normal(t, alpha, zero, t.Const(2)))
	return t.Add(lp, t.Add(density.Normal(t, ft, zero, t.Const(1)), density.PoissonLog(t, m.k, f)))
}

func (m *gpPoisRegr) referenceNames() []string {
	return append([]string{"rho", "alpha"}, flatNames("f", m.n)...)
}

// chol returns the lower Cholesky factor of K(rho, alpha), row-major, or an error if K is not
// numerically positive definite.
func (m *gpPoisRegr) chol(rho, alpha float64) ([]float64, error) {
	n := m.n
	k := make([]float64, n*n) // lower triangle of K
	for i := range n {
		for j := 0; j <= i; j++ {
			k[i*n+j] = alpha*alpha*math.Exp(m.negSq[i*n+j]/(rho*rho)) + m.jitter[i*n+j]
		}
	}
	l := make([]float64, n*n)
	if !mathx.Cholesky(l, k, n) {
		return nil, fmt.Errorf("K(rho=%g, alpha=%g) is not positive definite", rho, alpha)
	}
	return l, nil
}

func (m *gpPoisRegr) derived() []model.Quantity {
	return []model.Quantity{{Name: "f", Dims: []int{m.n}}}
}

// derive: f = L·f_tilde with L = chol K(rho, alpha) (Stan's transformed parameters block); NaN
// where K is not numerically positive definite.
func (m *gpPoisRegr) derive(p, out [][]float64) {
	n, f, ft := m.n, out[0], p[2]
	l, err := m.chol(p[0][0], p[1][0])
	for i := range n {
		if err != nil {
			f[i] = math.NaN()
			continue
		}
		s := 0.0
		for q := 0; q <= i; q++ {
			s += l[i*n+q] * ft[q]
		}
		f[i] = s
	}
}

// freeReference: f_tilde = L⁻¹f by forward substitution, from (rho, alpha, f).
func (m *gpPoisRegr) freeReference(dst, x []float64) error {
	n := m.n
	rho, alpha := x[0], x[1]
	if !(rho > 0) || !(alpha > 0) {
		return fmt.Errorf("rho = %g, alpha = %g, want both > 0", rho, alpha)
	}
	l, err := m.chol(rho, alpha)
	if err != nil {
		return err
	}
	dst[0], dst[1] = rho, alpha
	ft := dst[2:]
	for i := range n {
		s := x[2+i]
		for p := range i {
			s -= l[i*n+p] * ft[p]
		}
		ft[i] = s / l[i*n+i]
	}
	return nil
}
