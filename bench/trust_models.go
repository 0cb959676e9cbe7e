package bench

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// The synthetic posteriors of the trust benchmark: targets written in closed form whose
// normalising constant is known exactly (or by 1-D quadrature to ~1e-9) and which can be
// sampled exactly, so a fit's W1/sd and log Z error are measured against the truth, not a
// sampler's estimate.

// gaussMix is the isotropic Gaussian mixture p(z) = e^c Σ_k w_k N(z; μ_k, s_k² I) over ℝ^d:
// its log normaliser is exactly c.
type gaussMix struct {
	d   int
	w   []float64   // weights, sum 1
	mu  [][]float64 // means
	sd  []float64   // component sds
	lgc float64     // c = log Z
}

// logp returns log p(z) and, when g is not nil, ∇ log p(z) = Σ_k r_k(z) (μ_k − z)/s_k² with
// the responsibilities r_k. Cost O(K·d).
func (m *gaussMix) logp(z, g []float64) float64 {
	var lk [8]float64
	l := lk[:len(m.w)]
	for k := range m.w {
		ss := 0.0
		for i, zi := range z {
			r := zi - m.mu[k][i]
			ss += r * r
		}
		v := m.sd[k] * m.sd[k]
		l[k] = math.Log(m.w[k]) - 0.5*ss/v - float64(m.d)*(math.Log(m.sd[k])+0.5*math.Log(2*math.Pi))
	}
	lse := mathx.LogSumExp(l)
	if g != nil {
		for i := range g {
			g[i] = 0
		}
		for k := range m.w {
			r := math.Exp(l[k] - lse)
			iv := 1 / (m.sd[k] * m.sd[k])
			for i, zi := range z {
				g[i] += r * (m.mu[k][i] - zi) * iv
			}
		}
	}
	return lse + m.lgc
}

// sample draws n exact draws (row-major n × d) with the stream r.
func (m *gaussMix) sample(r *rng.Stream, n int) []float64 {
	out := make([]float64, 0, n*m.d)
	for range n {
		u := r.Float64()
		k := 0
		for acc := m.w[0]; u > acc && k < len(m.w)-1; acc += m.w[k] {
			k++
		}
		for i := range m.d {
			out = append(out, m.mu[k][i]+m.sd[k]*r.NormFloat64())
		}
	}
	return out
}

// constVec is a vector of d copies of v.
func constVec(d int, v float64) []float64 {
	x := make([]float64, d)
	for i := range x {
		x[i] = v
	}
	return x
}

// banana is the Haario–Saksman–Tamminen twisted Gaussian in 2-D: x₁ ~ N(0, a²),
// x₂ | x₁ ~ N(b(x₁² − a²), 1). The map (y₁, y₂) ↦ (y₁, y₂ + b(y₁² − a²)) has unit Jacobian,
// so the density, log N(x₁; 0, a²) + log N(x₂ − b(x₁² − a²); 0, 1) + c, has log Z = c, and
// exact draws are the map of independent normals. Haario, Saksman, Tamminen (1999),
// "Adaptive proposal distribution for random walk Metropolis algorithm", Comput. Stat. 14.
type banana struct {
	a, b, lgc float64
}

func (m banana) logp(z, g []float64) float64 {
	x1, x2 := z[0], z[1]
	r := x2 - m.b*(x1*x1-m.a*m.a)
	lp := -0.5*x1*x1/(m.a*m.a) - math.Log(m.a) - 0.5*r*r - math.Log(2*math.Pi)
	if g != nil {
		g[0] = -x1/(m.a*m.a) + r*2*m.b*x1
		g[1] = -r
	}
	return lp + m.lgc
}

func (m banana) sample(r *rng.Stream, n int) []float64 {
	out := make([]float64, 0, 2*n)
	for range n {
		x1 := m.a * r.NormFloat64()
		out = append(out, x1, r.NormFloat64()+m.b*(x1*x1-m.a*m.a))
	}
	return out
}

// sinusoid is a frequency-fitting likelihood, the simplest ODE-like posterior with local
// optima: y_i = a·sin(ω t_i) + ε_i, ε_i ~ N(0, σ²), with priors ω ~ N(mω, sω²) and
// a ~ N(ma, sa²), over z = (ω, a). The log likelihood in ω oscillates with period ≈ 2π/t_max,
// so a mode search started at z = 0 stops in a local optimum. Given ω the model is linear
// in a, so a integrates out in closed form (conjugacy): with s_i = sin(ω t_i),
// P = 1/sa² + Σ s_i²/σ², M = (ma/sa² + Σ s_i y_i/σ²)/P,
//
//	log p(y | ω) = −(N/2) log(2πσ²) − ½ log(sa² P) − ½ (Σ y_i²/σ² + ma²/sa² − P M²),
//
// and a | ω, y ~ N(M, 1/P). log Z and exact draws then need only the 1-D marginal of ω
// (marginalOmega: trapezoid and inverse-CDF sampling on a fine grid).
type sinusoid struct {
	t, y                   []float64
	sigma, mw, sw, ma, sa2 float64
}

// newSinusoid simulates the data: N = 20 times t_i = 0.5 i, ω = 2, a = 1.2, σ = 0.5, from a
// fixed stream; priors ω ~ N(1, 1.5²), a ~ N(1, 1).
func newSinusoid() *sinusoid {
	s := &sinusoid{sigma: 0.5, mw: 1, sw: 1.5, ma: 1, sa2: 1}
	r := rng.New(20261201, 7)
	for i := 1; i <= 20; i++ {
		ti := 0.5 * float64(i)
		s.t = append(s.t, ti)
		s.y = append(s.y, 1.2*math.Sin(2*ti)+s.sigma*r.NormFloat64())
	}
	return s
}

func (s *sinusoid) logp(z, g []float64) float64 {
	w, a := z[0], z[1]
	iv := 1 / (s.sigma * s.sigma)
	var ll, dw, da float64
	for i, ti := range s.t {
		sn, cs := math.Sincos(w * ti)
		r := s.y[i] - a*sn
		ll -= 0.5 * r * r * iv
		dw += r * iv * a * cs * ti
		da += r * iv * sn
	}
	n := float64(len(s.t))
	ll -= n * (math.Log(s.sigma) + 0.5*math.Log(2*math.Pi))
	rw := (w - s.mw) / s.sw
	lp := ll - 0.5*rw*rw - math.Log(s.sw) - 0.5*math.Log(2*math.Pi)
	ra := a - s.ma
	lp += -0.5*ra*ra/s.sa2 - 0.5*math.Log(2*math.Pi*s.sa2)
	if g != nil {
		g[0] = dw - rw/s.sw
		g[1] = da - ra/s.sa2
	}
	return lp
}

// marginal returns log p(ω, y) with a integrated out, and a's conditional mean and variance.
func (s *sinusoid) marginal(w float64) (lp, m, v float64) {
	iv := 1 / (s.sigma * s.sigma)
	var ss, sy, yy float64
	for i, ti := range s.t {
		sn := math.Sin(w * ti)
		ss += sn * sn
		sy += sn * s.y[i]
		yy += s.y[i] * s.y[i]
	}
	p := 1/s.sa2 + ss*iv
	m = (s.ma/s.sa2 + sy*iv) / p
	n := float64(len(s.t))
	lp = -0.5*n*math.Log(2*math.Pi*s.sigma*s.sigma) - 0.5*math.Log(s.sa2*p) - 0.5*(yy*iv+s.ma*s.ma/s.sa2-p*m*m)
	rw := (w - s.mw) / s.sw
	lp += -0.5*rw*rw - math.Log(s.sw) - 0.5*math.Log(2*math.Pi)
	return lp, m, 1 / p
}

// grid1D is a 1-D log density tabulated on n+1 equally spaced points of [lo, hi]: the
// trapezoid rule gives log ∫ p, and draws come from the piecewise-linear interpolant of p
// (cells chosen by their trapezoid mass, then the exact inverse CDF of the linear density in
// the cell). The interpolation error is O(h²) relative; grids here have ≥ 100 points per
// posterior sd.
type grid1D struct {
	lo, h float64
	p     []float64 // p(x_i)/max p
	cdf   []float64 // cumulative trapezoid masses, cdf[n] = total
	logZ  float64
}

func newGrid1D(logp func(float64) float64, lo, hi float64, n int) *grid1D {
	g := &grid1D{lo: lo, h: (hi - lo) / float64(n), p: make([]float64, n+1), cdf: make([]float64, n+1)}
	l := make([]float64, n+1)
	mx := math.Inf(-1)
	for i := range l {
		l[i] = logp(lo + g.h*float64(i))
		mx = max(mx, l[i])
	}
	for i := range l {
		g.p[i] = math.Exp(l[i] - mx)
		if i > 0 {
			g.cdf[i] = g.cdf[i-1] + 0.5*g.h*(g.p[i-1]+g.p[i])
		}
	}
	g.logZ = mx + math.Log(g.cdf[n])
	return g
}

// draw returns one draw given two uniforms.
func (g *grid1D) draw(u1, u2 float64) float64 {
	n := len(g.p) - 1
	target := u1 * g.cdf[n]
	i := sort.SearchFloat64s(g.cdf, target) // cdf[i−1] < target ≤ cdf[i]
	i = min(max(i, 1), n)
	p0, p1 := g.p[i-1], g.p[i]
	// density ∝ p0 + (p1 − p0)·x on x ∈ [0, 1]: CDF p0 x + (p1 − p0) x²/2 = u2 (p0 + p1)/2.
	c := u2 * 0.5 * (p0 + p1)
	var x float64
	if d := p1 - p0; math.Abs(d) < 1e-12*(p0+p1) {
		x = u2
	} else {
		x = (-p0 + math.Sqrt(p0*p0+2*d*c)) / d
	}
	x = min(max(x, 0), 1)
	return g.lo + g.h*(float64(i-1)+x)
}

// oneDim is a 1-D target given by its log density and derivative.
type oneDim struct {
	logp, dlogp func(float64) float64
}

func (o oneDim) f(z, g []float64) float64 {
	if g != nil {
		g[0] = o.dlogp(z[0])
	}
	return o.logp(z[0])
}

// Target1D is a trust posterior over ℝ given by its log density logp and derivative dlogp:
// log Z by the trapezoid rule on [lo, hi] with n intervals and exact draws from the grid's
// piecewise-linear interpolant (grid1D). [lo, hi] must hold all but a negligible part of
// the mass and n must resolve it (≥ 100 points per sd). Cost: n+1 evaluations of logp.
func Target1D(name, about string, logp, dlogp func(float64) float64, lo, hi float64, n int) TrustPosterior {
	g := newGrid1D(logp, lo, hi, n)
	return TrustPosterior{
		Name: name, About: about, Target: model.GradFunc{N: 1, F: oneDim{logp, dlogp}.f},
		Names: []string{"x"}, LogZ: g.logZ,
		RefSource: fmt.Sprintf("exact draws (inverse CDF on a %d-interval grid of [%g, %g]); log Z by the trapezoid rule on it", n, lo, hi),
		Ref: func() (*diag.Draws, error) {
			r := rng.New(refSeed, 1)
			rows := make([]float64, RefDraws)
			for i := range rows {
				rows[i] = g.draw(r.Float64(), r.Float64())
			}
			return &diag.Draws{Names: []string{"x"}, Chains: [][]float64{rows}}, nil
		},
	}
}

// RefDraws is the number of exact reference draws of a synthetic trust posterior.
const RefDraws = 10000

// refSeed seeds the exact reference draws.
const refSeed = 424242

// zNames is z[1], …, z[d].
func zNames(d int) []string {
	n := make([]string, d)
	for i := range n {
		n[i] = fmt.Sprintf("z[%d]", i+1)
	}
	return n
}

// syntheticRef wraps an exact sampler of a target over ℝ^d as a reference-draws function.
func syntheticRef(names []string, sample func(r *rng.Stream, n int) []float64) func() (*diag.Draws, error) {
	return func() (*diag.Draws, error) {
		return &diag.Draws{Names: slices.Clone(names), Chains: [][]float64{sample(rng.New(refSeed, 0), RefDraws)}}, nil
	}
}

// SyntheticPosteriors are the trust benchmark's synthetic targets, each with log Z known and
// exact reference draws:
//
//   - gmix-d2, gmix-d10: two-component isotropic Gaussian mixtures with weights 0.3/0.7 whose
//     minor component is nearer z = 0 (so a mode search from 0 finds it), the major one far
//     from it; log Z = 2.
//   - localmode-d4: a narrow minor component (weight 0.1, sd 0.5) centred exactly at z = 0,
//     the major one (0.9, sd 1) at 2.5·1: z = 0 is a local mode; log Z = −1.
//   - banana: the Haario twisted Gaussian (a = 1.5, b = 0.5), unimodal but curved; log Z = 0.
//   - sinusoid: frequency and amplitude of a noisy sinusoid (20 points): a likelihood with
//     local optima in ω; log Z by quadrature of the closed-form marginal of ω.
//
// Built anew on each call (a table, no registry). Cost: the sinusoid's grid, 2·10⁵
// evaluations of a 20-point marginal.
func SyntheticPosteriors() []TrustPosterior {
	mk := func(name, about string, d int, f func(z, g []float64) float64, logZ float64, src string, sample func(*rng.Stream, int) []float64) TrustPosterior {
		names := zNames(d)
		return TrustPosterior{Name: name, About: about, Target: model.GradFunc{N: d, F: f}, Names: names,
			LogZ: logZ, RefSource: src, Ref: syntheticRef(names, sample)}
	}
	g2 := &gaussMix{d: 2, w: []float64{0.3, 0.7}, mu: [][]float64{constVec(2, -1), constVec(2, 4)}, sd: []float64{1, 1}, lgc: 2}
	g10 := &gaussMix{d: 10, w: []float64{0.3, 0.7}, mu: [][]float64{constVec(10, -0.5), constVec(10, 2)}, sd: []float64{1, 1}, lgc: 2}
	lm := &gaussMix{d: 4, w: []float64{0.1, 0.9}, mu: [][]float64{constVec(4, 0), constVec(4, 2.5)}, sd: []float64{0.5, 1}, lgc: -1}
	bn := banana{a: 1.5, b: 0.5}
	const exact = "exact draws; log Z exact (closed form)"
	out := []TrustPosterior{
		mk("gmix-d2", "0.3·N(−1·1, I) + 0.7·N(4·1, I) in d = 2, ×e²", 2, g2.logp, 2, exact, g2.sample),
		mk("gmix-d10", "0.3·N(−0.5·1, I) + 0.7·N(2·1, I) in d = 10, ×e²", 10, g10.logp, 2, exact, g10.sample),
		mk("localmode-d4", "0.1·N(0, 0.5² I) + 0.9·N(2.5·1, I) in d = 4, ×e⁻¹ (local mode at z = 0)", 4, lm.logp, -1, exact, lm.sample),
		mk("banana", "x₁ ~ N(0, 1.5²), x₂ | x₁ ~ N(0.5(x₁² − 1.5²), 1)", 2, bn.logp, 0, exact, bn.sample),
	}
	s := newSinusoid()
	const n, lo, hi = 200000, -8.0, 10.0 // prior N(1, 1.5²): 6 sd either side; posterior sd of ω ≈ 0.02
	grid := newGrid1D(func(w float64) float64 { lp, _, _ := s.marginal(w); return lp }, lo, hi, n)
	out = append(out, TrustPosterior{
		Name: "sinusoid", About: "y = a·sin(ω t) + N(0, 0.5²), 20 points (ω = 2, a = 1.2), ω ~ N(1, 1.5²), a ~ N(1, 1): local optima in ω, and the mirror mode (−ω, −a) holds ≈ 1.2% of the mass",
		Target: model.GradFunc{N: 2, F: s.logp}, Names: []string{"omega", "a"}, LogZ: grid.logZ,
		RefSource: fmt.Sprintf("exact draws: ω from its closed-form marginal on a %d-interval grid of [%g, %g], a | ω Gaussian; log Z by the trapezoid rule", n, lo, hi),
		Ref: func() (*diag.Draws, error) {
			r := rng.New(refSeed, 2)
			rows := make([]float64, 0, 2*RefDraws)
			for range RefDraws {
				w := grid.draw(r.Float64(), r.Float64())
				_, m, v := s.marginal(w)
				rows = append(rows, w, m+math.Sqrt(v)*r.NormFloat64())
			}
			return &diag.Draws{Names: []string{"omega", "a"}, Chains: [][]float64{rows}}, nil
		},
	})
	return out
}
