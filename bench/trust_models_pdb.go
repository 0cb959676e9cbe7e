package bench

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// The posteriordb posteriors of the trust benchmark: two zoo models with their reference
// draws, and two Stan programs of posteriordb's full set written here in Go (the Stan front
// end is not ready): bball_drive_event_1-hmm_drive_1 and eight_schools_centered.

// layoutConstrain is the constrained parameters of a layout at z, flat in Layout.Names order.
func layoutConstrain(lay *model.Layout) func(dst, z []float64) []float64 {
	return func(dst, z []float64) []float64 {
		x := make([]float64, lay.Len())
		lay.ConstrainValues(z, x)
		return append(dst[:0], x...)
	}
}

// ZooTrustPosterior is a zoo model with its posteriordb reference draws as a trust posterior
// (log Z unknown).
func ZooTrustPosterior(name, dir string) (TrustPosterior, error) {
	m, err := zoo.Load(name, dir)
	if err != nil {
		return TrustPosterior{}, fmt.Errorf("bench: ZooTrustPosterior: %w", err)
	}
	return TrustPosterior{Name: m.Posterior, About: m.Description, Target: m, Names: m.Names(),
		Constrain: m.Constrain, LogZ: math.NaN(), RefSource: "posteriordb reference draws (10 chains × 1,000)",
		Ref: func() (*diag.Draws, error) { return referenceDraws(m, dir) }}, nil
}

// hmmDrive is posteriordb's hmm_drive_1 (Stan program models/hmm_drive_1.stan of the full
// set): a two-state HMM of a basketball drive with two Gaussian emissions per step,
// u_t ~ N(phi_k, tau) and v_t ~ N(lambda_k, rho) (tau, rho data), transition rows theta1,
// theta2 ~ Dirichlet(alpha[k, ]), phi and lambda ordered with priors N(0, 1) on the first and
// N(3, 1) on the second entry; the states are summed out by the forward algorithm with no
// initial-state distribution (γ₁(k) = e₁(k)), as the program does.
type hmmDrive struct {
	u, v     []float64
	tau, rho float64
	alpha    [4]float64 // row-major 2×2
	lay      *model.Layout
}

// newHMMDrive reads the bball_drive_event data (K = 2) from a posteriordb directory.
func newHMMDrive(path string) (*hmmDrive, error) {
	d, err := model.LoadData(path)
	if err != nil {
		return nil, err
	}
	k, err := d.Int("K")
	if err != nil {
		return nil, err
	}
	if k != 2 {
		return nil, fmt.Errorf("data %s: field \"K\": %d states, want 2", path, k)
	}
	n, err := d.Int("N")
	if err != nil {
		return nil, err
	}
	m := &hmmDrive{}
	if m.u, err = d.Vector("u", n); err != nil {
		return nil, err
	}
	if m.v, err = d.Vector("v", n); err != nil {
		return nil, err
	}
	if m.tau, err = d.Real("tau"); err != nil {
		return nil, err
	}
	if m.rho, err = d.Real("rho"); err != nil {
		return nil, err
	}
	a, err := d.Matrix("alpha", 2, 2)
	if err != nil {
		return nil, err
	}
	copy(m.alpha[:], a)
	m.lay, err = model.NewLayout(
		model.Param{Name: "theta1", Dims: []int{2}, Constraint: bijector.Simplex(2)},
		model.Param{Name: "theta2", Dims: []int{2}, Constraint: bijector.Simplex(2)},
		model.Param{Name: "phi", Dims: []int{2}, Constraint: bijector.Ordered(2)},
		model.Param{Name: "lambda", Dims: []int{2}, Constraint: bijector.Ordered(2)},
	)
	return m, err
}

// density is the model block: Dirichlet priors, normal priors, the forward algorithm.
func (m *hmmDrive) density(t *ad.Tape, p []ad.Var) ad.Var {
	th1, th2, phi, lam := p[0], p[1], p[2], p[3]
	lp := t.Add(density.Normal(t, phi, t.Const(0, 3), t.Const(1)), density.Normal(t, lam, t.Const(0, 3), t.Const(1)))
	lp = t.Add(lp, t.Add(density.Dirichlet(t, th1, t.Const(m.alpha[0], m.alpha[1])), density.Dirichlet(t, th2, t.Const(m.alpha[2], m.alpha[3]))))
	return t.Add(lp, m.logLik(t, th1, th2, phi, lam))
}

// logLik records the forward algorithm's log-likelihood as one fused node. Scaled forward
// recursion α̂_t = φ_t ∘ (Aᵀ α̂_{t−1})/c_t on emissions φ_t(k) = exp(e_t(k) − max_k e_t(k)),
// log-likelihood Σ_t (log c_t + max_k e_t(k)); the scaled backward recursion gives the
// posterior state marginals γ_t(k) = α̂_t(k) β̂_t(k) and the pair sums for ∂/∂A[j,k] =
// Σ_{t≥2} α̂_{t−1}(j) φ_t(k) β̂_t(k)/c_t; ∂/∂phi_k = Σ_t γ_t(k)(u_t − phi_k)/tau², likewise
// lambda (Rabiner 1989, "A tutorial on hidden Markov models", §V.A). Cost O(N).
func (m *hmmDrive) logLik(t *ad.Tape, th1, th2, phi, lam ad.Var) ad.Var {
	n := len(m.u)
	buf := t.Scratch(5 * n)
	alpha, ph, invC := buf[:2*n], buf[2*n:4*n], buf[4*n:]
	a1, a2, pv, lv := t.Value(th1), t.Value(th2), t.Value(phi), t.Value(lam)
	A := [2][2]float64{{a1[0], a1[1]}, {a2[0], a2[1]}}
	it2, ir2 := 1/(m.tau*m.tau), 1/(m.rho*m.rho)
	lp := -float64(n) * (math.Log(m.tau) + math.Log(m.rho) + math.Log(2*math.Pi))
	for i := range n {
		var e [2]float64
		for k := range 2 {
			du, dv := m.u[i]-pv[k], m.v[i]-lv[k]
			e[k] = -0.5 * (du*du*it2 + dv*dv*ir2)
		}
		mx := max(e[0], e[1])
		lp += mx
		p0, p1 := math.Exp(e[0]-mx), math.Exp(e[1]-mx)
		ph[2*i], ph[2*i+1] = p0, p1
		f0, f1 := p0, p1
		if i > 0 {
			q0, q1 := alpha[2*i-2], alpha[2*i-1]
			f0 = p0 * (q0*A[0][0] + q1*A[1][0])
			f1 = p1 * (q0*A[0][1] + q1*A[1][1])
		}
		c := f0 + f1
		lp += math.Log(c)
		invC[i] = 1 / c
		alpha[2*i], alpha[2*i+1] = f0/c, f1/c
	}
	fb := t.Fused()
	d1, d2, dp, dl := fb.Partial(th1), fb.Partial(th2), fb.Partial(phi), fb.Partial(lam)
	var gA [2][2]float64
	var gp, gl [2]float64
	b0, b1 := 1.0, 1.0
	for i := n - 1; i >= 0; i-- {
		g0, g1 := alpha[2*i]*b0, alpha[2*i+1]*b1
		gp[0] += g0 * (m.u[i] - pv[0]) * it2
		gp[1] += g1 * (m.u[i] - pv[1]) * it2
		gl[0] += g0 * (m.v[i] - lv[0]) * ir2
		gl[1] += g1 * (m.v[i] - lv[1]) * ir2
		if i == 0 {
			break
		}
		r0, r1 := ph[2*i]*b0*invC[i], ph[2*i+1]*b1*invC[i]
		q0, q1 := alpha[2*i-2], alpha[2*i-1]
		gA[0][0] += q0 * r0
		gA[0][1] += q0 * r1
		gA[1][0] += q1 * r0
		gA[1][1] += q1 * r1
		b0, b1 = A[0][0]*r0+A[0][1]*r1, A[1][0]*r0+A[1][1]*r1
	}
	if d1 != nil {
		d1[0], d1[1] = gA[0][0], gA[0][1]
	}
	if d2 != nil {
		d2[0], d2[1] = gA[1][0], gA[1][1]
	}
	if dp != nil {
		dp[0], dp[1] = gp[0], gp[1]
	}
	if dl != nil {
		dl[0], dl[1] = gl[0], gl[1]
	}
	return fb.Done(lp)
}

// BBallTrustPosterior is bball_drive_event_1-hmm_drive_1 from posteriordb's full set under
// full (the directory holding data/, draws/, models/), with its reference draws.
func BBallTrustPosterior(full string) (TrustPosterior, error) {
	const name = "bball_drive_event_1-hmm_drive_1"
	m, err := newHMMDrive(filepath.Join(full, "data", "bball_drive_event_1.json.zip"))
	if err != nil {
		return TrustPosterior{}, fmt.Errorf("bench: BBallTrustPosterior: %w", err)
	}
	mm := &model.Model{Layout: m.lay, Density: m.density}
	names := m.lay.Names()
	return TrustPosterior{Name: name, About: "two-state HMM of a basketball drive, N = 416 steps, two Gaussian emissions (posteriordb hmm_drive_1, written in Go)",
		Target: mm, Names: names, Constrain: layoutConstrain(m.lay), LogZ: math.NaN(),
		RefSource: "posteriordb reference draws (10 chains × 1,000)",
		Ref: func() (*diag.Draws, error) {
			all, err := model.LoadDraws(filepath.Join(full, "draws", name+".json.zip"))
			if err != nil {
				return nil, fmt.Errorf("bench: reference draws: %w", err)
			}
			return all.Select(names...)
		}}, nil
}

// eightSchoolsData are the eight schools' estimates and standard errors (Rubin 1981; the
// posteriordb eight_schools data).
var eightSchoolsData = struct{ y, sigma []float64 }{
	y:     []float64{28, 8, -3, 7, -1, 1, 18, 12},
	sigma: []float64{15, 10, 16, 11, 9, 11, 10, 18},
}

// EightSchoolsCentered is posteriordb's eight_schools_centered: theta_j ~ N(mu, tau),
// y_j ~ N(theta_j, sigma_j), mu ~ N(0, 5), tau ~ half-Cauchy(0, 5), parameters theta, mu,
// tau > 0 (log-transformed) — the centred funnel. posteriordb has no reference draws for it;
// the reference is a long NUTS run on zoo's non-centred eight schools (the same posterior of
// theta, mu, tau under another parametrisation): 4 chains × 10,000 draws after 1,000 warmup,
// seed 1. Cost of the reference: ≈ 4·10⁵ NUTS transitions on a 10-D target.
func EightSchoolsCentered() TrustPosterior {
	lay, err := model.NewLayout(
		model.Param{Name: "theta", Dims: []int{8}},
		model.Param{Name: "mu"},
		model.Param{Name: "tau", Constraint: bijector.Lower(1, 0)},
	)
	if err != nil {
		panic("bench: EightSchoolsCentered: " + err.Error()) // a fixed, valid layout
	}
	y, sg := eightSchoolsData.y, eightSchoolsData.sigma
	mm := &model.Model{Layout: lay, Density: func(t *ad.Tape, p []ad.Var) ad.Var {
		th, mu, tau := p[0], p[1], p[2]
		zero, five := t.Const(0), t.Const(5)
		lp := t.Add(density.Normal(t, th, mu, tau), density.Normal(t, t.ConstRef(y), th, t.ConstRef(sg)))
		return t.Add(lp, t.Add(density.Normal(t, mu, zero, five), density.HalfCauchy(t, tau, five)))
	}}
	return TrustPosterior{Name: "eight_schools-eight_schools_centered", About: "eight schools, centred (a funnel; posteriordb's eight_schools_centered, written in Go)",
		Target: mm, Names: lay.Names(), Constrain: layoutConstrain(lay), LogZ: math.NaN(),
		RefSource: "vigo NUTS on the non-centred eight schools (zoo), 4 chains × 10,000 draws after 1,000 warmup, seed 1",
		Ref: func() (*diag.Draws, error) {
			nc := zoo.EightSchools()
			res, err := mcmc.Sample(context.Background(), nc, mcmc.Config{Chains: 4, Warmup: 1000, Draws: 10000, Seed: 1})
			if err != nil {
				return nil, fmt.Errorf("bench: EightSchoolsCentered: reference NUTS: %w", err)
			}
			return res.Draws(nc.Names(), nc.Constrain), nil
		}}
}
