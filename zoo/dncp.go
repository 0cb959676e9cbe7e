package zoo

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// The two synthetic models of the reparameterisation study of Kingma & Welling (2014),
// "Efficient gradient-based inference through transformations between Bayes nets and neural
// nets", ICML, §4 and §5.1 (../shared/docs/papers.md §4), which bench.RunDNCP reruns. Unlike
// the posteriordb models of this package they have no data file and are not among entries(): each is a
// plain value with a centred (CP) and a differentiable non-centred (DNCP) form of its log
// density and the maps between the two coordinate systems (FromNoise, ToNoise), which is what
// mcmc.Reparam needs. A latent z with parent y is either centred, z | y ~ N(w·y, σ²), or
// non-centred, z = w·y + σ·ε with ε ~ N(0, 1) the sampled variable.

// DNCPToy is the two-latent Gaussian toy: z₁ ~ N(0, 1), x₁ | z₁ ~ N(z₁, σ_x²),
// z₂ | z₁ ~ N(z₁, σ_z²), x₂ | z₂ ~ N(z₂, σ_x²), with x₁ = X1 and x₂ = X2 observed.
// Its DNCP form samples (z₁, ε₂) with z₂ = z₁ + σ_z·ε₂.
type DNCPToy struct {
	SigmaX, SigmaZ float64
	X1, X2         float64
}

// Correlations returns the posterior correlations corr(z₁, z₂ | x) of the CP form and
// corr(z₁, ε₂ | x) of the DNCP form. With a = 1/σ_x² and s = σ_z² the posterior precisions
// are [[1 + a + 1/s, −1/s], [−1/s, 1/s + a]] (CP) and [[1 + 2a, σ_z·a], [σ_z·a, 1 + s·a]]
// (DNCP), so
//
//	ρ_CP   = (1/s) / √((1 + a + 1/s)(1/s + a))
//	ρ_DNCP = −σ_z·a / √((1 + 2a)(1 + s·a))
//
// and ρ_DNCP² < ρ_CP² ⇔ s·a²·(s(1 + a) + 1) < 1 + 2a ⇔ σ_z² < σ_x² (the left side grows
// with s and equals the right at s = 1/a). They do not depend on the data.
func (m DNCPToy) Correlations() (cp, dncp float64) {
	a, s := 1/(m.SigmaX*m.SigmaX), m.SigmaZ*m.SigmaZ
	cp = (1 / s) / math.Sqrt((1+a+1/s)*(1/s+a))
	dncp = -m.SigmaZ * a / math.Sqrt((1+2*a)*(1+s*a))
	return cp, dncp
}

// gaussLogDensity is log N(x | mu, sd²) and its derivative in x.
func gaussLogDensity(x, mu, sd float64) (lp, dx float64) {
	r := (x - mu) / sd
	return -0.5*r*r - math.Log(sd) - 0.5*math.Log(2*math.Pi), -r / sd
}

// Centred is the toy's log density over (z₁, z₂), normalising constants included.
func (m DNCPToy) Centred() model.Target {
	return model.GradFunc{N: 2, F: func(z, g []float64) float64 {
		l1, d1 := gaussLogDensity(z[0], 0, 1)
		l2, d2 := gaussLogDensity(m.X1, z[0], m.SigmaX)
		l3, d3 := gaussLogDensity(z[1], z[0], m.SigmaZ)
		l4, d4 := gaussLogDensity(m.X2, z[1], m.SigmaX)
		g[0] = d1 - d2 - d3
		g[1] = d3 - d4
		return l1 + l2 + l3 + l4
	}}
}

// NonCentred is the toy's log density over (z₁, ε₂), z₂ = z₁ + σ_z·ε₂: the CP density at
// (z₁, z₂) times the Jacobian σ_z.
func (m DNCPToy) NonCentred() model.Target {
	return model.GradFunc{N: 2, F: func(u, g []float64) float64 {
		z2 := u[0] + m.SigmaZ*u[1]
		l1, d1 := gaussLogDensity(u[0], 0, 1)
		l2, d2 := gaussLogDensity(m.X1, u[0], m.SigmaX)
		l3, d3 := gaussLogDensity(u[1], 0, 1)
		l4, d4 := gaussLogDensity(m.X2, z2, m.SigmaX)
		g[0] = d1 - d2 - d4
		g[1] = d3 - m.SigmaZ*d4
		return l1 + l2 + l3 + l4
	}}
}

// FromNoise writes the CP coordinates z = (z₁, z₁ + σ_z·ε₂) of the DNCP coordinates
// u = (z₁, ε₂).
func (m DNCPToy) FromNoise(z, u []float64) { z[0], z[1] = u[0], u[0]+m.SigmaZ*u[1] }

// ToNoise writes the DNCP coordinates u = (z₁, (z₂ − z₁)/σ_z) of the CP coordinates z.
func (m DNCPToy) ToNoise(u, z []float64) { u[0], u[1] = z[0], (z[1]-z[0])/m.SigmaZ }

// TanhDBN is the nonlinear dynamic Bayesian network of Kingma & Welling (2014, §5.1, Fig. 2):
// T time steps of K latents and P binary observations,
//
//	z₁ ~ N(0, I),  z_t | z_{t−1} ~ N(tanh(W_z z_{t−1} + b_z), σ_z² I),  x_t | z_t ~ Bernoulli(sigmoid(W_x z_t)),
//
// with W_z (K×K), b_z (K) and W_x (P×K) drawn from N(0, 1) and held fixed. (papers.md
// transcribes the emission as sigmoid(W_x z_{t−1}), probably a misprint: z_T would then be
// unobserved. We use z_t.) The DNCP form samples ε with z₁ = ε₁ and
// z_t = tanh(W_z z_{t−1} + b_z) + σ_z ε_t, ε ~ N(0, I).
//
// Latents and noise are stored time-major: z[t·K + k]. X[t·P + p] ∈ {0, 1}.
type TanhDBN struct {
	T, K, P    int
	SigmaZ     float64
	Wz, Bz, Wx []float64
	X          []float64
}

// NewTanhDBN draws the parameters from N(0, 1) with stream 0 of seed and simulates
// latents and observations with stream 1, so two networks with the same seed and shape share
// their parameters and noise and differ only through σ_z.
//
// It returns an error naming the bad argument when T, K or P is below 1 or σ_z is not
// positive.
func NewTanhDBN(T, K, P int, sigmaZ float64, seed uint64) (*TanhDBN, error) {
	for _, a := range []struct {
		name string
		v    int
	}{{"T", T}, {"K", K}, {"P", P}} {
		if a.v < 1 {
			return nil, fmt.Errorf("zoo: NewTanhDBN: %s must be at least 1 (%s=%d)", a.name, a.name, a.v)
		}
	}
	if !(sigmaZ > 0) || math.IsInf(sigmaZ, 1) {
		return nil, fmt.Errorf("zoo: NewTanhDBN: sigma_z must be positive and finite (sigma_z=%v)", sigmaZ)
	}
	m := &TanhDBN{T: T, K: K, P: P, SigmaZ: sigmaZ, Wz: make([]float64, K*K), Bz: make([]float64, K), Wx: make([]float64, P*K), X: make([]float64, T*P)}
	r := rng.New(seed, 0)
	for _, v := range [][]float64{m.Wz, m.Bz, m.Wx} {
		for i := range v {
			v[i] = r.NormFloat64()
		}
	}
	r = rng.New(seed, 1)
	eps := make([]float64, T*K)
	for i := range eps {
		eps[i] = r.NormFloat64()
	}
	z := make([]float64, T*K)
	m.FromNoise(z, eps)
	for t := range T {
		for p := range P {
			if r.Float64() < mathx.Logistic(dbnDot(m.Wx[p*K:(p+1)*K], z[t*K:(t+1)*K])) {
				m.X[t*P+p] = 1
			}
		}
	}
	return m, nil
}

// Dim is the number of latents T·K.
func (m *TanhDBN) Dim() int { return m.T * m.K }

func dbnDot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// mean writes h = tanh(W_z z_prev + b_z).
func (m *TanhDBN) mean(h, zPrev []float64) {
	k := m.K
	for i := range k {
		h[i] = math.Tanh(dbnDot(m.Wz[i*k:(i+1)*k], zPrev) + m.Bz[i])
	}
}

// FromNoise writes the latents z of noise eps (DNCP → CP).
func (m *TanhDBN) FromNoise(z, eps []float64) {
	k := m.K
	copy(z[:k], eps[:k])
	for t := 1; t < m.T; t++ {
		zt := z[t*k : (t+1)*k]
		m.mean(zt, z[(t-1)*k:t*k])
		for i := range zt {
			zt[i] += m.SigmaZ * eps[t*k+i]
		}
	}
}

// ToNoise writes the noise eps of latents z (CP → DNCP).
func (m *TanhDBN) ToNoise(eps, z []float64) {
	k := m.K
	copy(eps[:k], z[:k])
	for t := 1; t < m.T; t++ {
		e := eps[t*k : (t+1)*k]
		m.mean(e, z[(t-1)*k:t*k])
		for i := range e {
			e[i] = (z[t*k+i] - e[i]) / m.SigmaZ
		}
	}
}

// emission adds log p(x_t | z_t) and, into g, its gradient W_xᵀ(x_t − sigmoid(W_x z_t)).
func (m *TanhDBN) emission(t int, zt, g []float64) float64 {
	k := m.K
	var lp float64
	for p := range m.P {
		w := m.Wx[p*k : (p+1)*k]
		eta := dbnDot(w, zt)
		x := m.X[t*m.P+p]
		lp += x*eta - mathx.Log1pExp(eta)
		r := x - mathx.Logistic(eta)
		for i, v := range w {
			g[i] += r * v
		}
	}
	return lp
}

// Centred returns the log density over the latents z (normalising constants included).
// Cost O(T·K·(K + P)) per gradient; no heap allocation (scratch on the tape).
func (m *TanhDBN) Centred() model.Target { return dbnTarget{m: m} }

// NonCentred returns the log density over the noise ε: log p(ε) + log p(x | z(ε)), which is
// the CP density at z(ε) times the Jacobian σ_z^{K(T−1)}. Cost O(T·K·(K + P)) per gradient.
func (m *TanhDBN) NonCentred() model.Target { return dbnTarget{m: m, noise: true} }

type dbnTarget struct {
	m     *TanhDBN
	noise bool
}

func (d dbnTarget) Dim() int { return d.m.Dim() }

func (d dbnTarget) LogDensity(t *ad.Tape, v ad.Var) ad.Var {
	n := d.m.Dim()
	if s := t.Size(v); s != n {
		panic(fmt.Sprintf("zoo: TanhDBN.LogDensity: z has size %d, want %d", s, n))
	}
	x := t.Value(v)
	fb := t.Fused()
	g := fb.Partial(v)
	if g == nil {
		g = t.Scratch(n)
	}
	var lp float64
	if d.noise {
		lp = d.m.noiseLogDensity(x, g, t.Scratch(2*n))
	} else {
		lp = d.m.centredLogDensity(x, g, t.Scratch(n))
	}
	return fb.Done(lp)
}

// centredLogDensity returns log p(z, x) and writes its gradient into g (zeroed); h (T·K) is
// scratch.
func (m *TanhDBN) centredLogDensity(z, g, h []float64) float64 {
	k := m.K
	var lp float64
	for i := range k {
		l, d := gaussLogDensity(z[i], 0, 1)
		lp += l
		g[i] += d
	}
	for t := 1; t < m.T; t++ {
		ht := h[t*k : (t+1)*k]
		m.mean(ht, z[(t-1)*k:t*k])
		gPrev := g[(t-1)*k : t*k]
		for i := range k {
			l, d := gaussLogDensity(z[t*k+i], ht[i], m.SigmaZ)
			lp += l
			g[t*k+i] += d
			// ∂/∂z_{t−1} of the mean: −d·(1 − h²)·W_z[i, :].
			u := -d * (1 - ht[i]*ht[i])
			for j, w := range m.Wz[i*k : (i+1)*k] {
				gPrev[j] += u * w
			}
		}
	}
	for t := range m.T {
		lp += m.emission(t, z[t*k:(t+1)*k], g[t*k:(t+1)*k])
	}
	return lp
}

// noiseLogDensity returns log p(ε, x) and writes its gradient into g (zeroed); s (2·T·K) is
// scratch for z(ε) and ∂/∂z. Reverse recursion: G_t = ∂ log p(x | z)/∂z_t through z_t's
// emission and every later step, G_t = W_xᵀ(x_t − σ(η_t)) + W_zᵀ[(1 − h²_{t+1}) ⊙ G_{t+1}];
// then ∂/∂ε₁ = G₁ − ε₁ and ∂/∂ε_t = σ_z·G_t − ε_t.
func (m *TanhDBN) noiseLogDensity(eps, g, s []float64) float64 {
	n, k := m.Dim(), m.K
	z, gz := s[:n], s[n:]
	m.FromNoise(z, eps)
	var lp float64
	for _, e := range eps {
		l, _ := gaussLogDensity(e, 0, 1)
		lp += l
	}
	for t := m.T - 1; t >= 0; t-- {
		gt := gz[t*k : (t+1)*k]
		lp += m.emission(t, z[t*k:(t+1)*k], gt)
		if t+1 < m.T {
			// z_{t+1} = tanh(W_z z_t + b_z) + σ ε_{t+1}; recompute h_{t+1} from z_t.
			next := gz[(t+1)*k : (t+2)*k]
			zt := z[t*k : (t+1)*k]
			for i := range k {
				h := math.Tanh(dbnDot(m.Wz[i*k:(i+1)*k], zt) + m.Bz[i])
				u := (1 - h*h) * next[i]
				for j, w := range m.Wz[i*k : (i+1)*k] {
					gt[j] += u * w
				}
			}
		}
	}
	for i, e := range eps {
		scale := m.SigmaZ
		if i < k {
			scale = 1
		}
		g[i] = scale*gz[i] - e
	}
	return lp
}
