package bench

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/rng"
)

// The estimator of log p_θ(x) behind every train and test curve of the MMCL/MCEM study:
// importance sampling over the (K1+K2)-dimensional ε with a defensive mixture proposal fitted
// per image (Hesterberg 1995, "Weighted average importance sampling and defensive mixture
// distributions", Technometrics 37),
//
//	q(ε) = α·N(ε; 0, I) + (1 − α)·(1/J) Σ_j t_ν(ε; m_j, Σ_j),   α = 0.1, ν = 5, J ≤ 2,
//
// m_j the modes of log p_θ(x, ε) reached by damped Newton from each of the 2 best of 32 prior
// draws (Hessian by central differences of the analytic gradient, stopped when an iteration
// gains < 1e-3 nats; the posterior can be multimodal through the tanh layers) and
// Σ_j = (−H)⁻¹ at m_j with H's eigenvalues capped at −isMinCurv, and, after a first round of S
// draws, one more t component with the first round's self-normalised weighted mean and
// covariance (population Monte Carlo, Cappé, Guillin, Marin & Robert 2004, J. Comput. Graph.
// Stat. 13; the Laplace fit misses the skew that tanh saturation gives the posterior); the
// estimate uses the second round's S draws. The weights p_θ(x, ε)/q(ε) ≤ p_θ(x | ε)/α are bounded, so the
// estimator log p̂ = log (1/S) Σ_s w_s has finite variance whatever the fit; its Monte Carlo
// standard error is the delta-method sd(w)/(√S·mean(w)), and PSIS k̂ of the log weights says
// whether that error is trustworthy (k̂ < 0.7). log p̂ is biased low by about SE²/2 (Jensen).
// Cost per image: 32 likelihoods, about 12 gradients per Newton iteration of each start, and
// 2S likelihoods.
const (
	isDefensive = 0.1
	isNu        = 5.0
	isInit      = 32
	isStarts    = 2
	isNewton    = 8
	isMinCurv   = 0.25
	isFDStep    = 1e-5
)

// isEstimate is one image's estimate of log p(x).
type isEstimate struct {
	LogP, SE, K float64
}

// isWork is the estimator's scratch for a net of latent dimension d.
type isWork struct {
	q, g, qt, gp, gm, step []float64
	H                      *mat.SymDense
	eig                    mat.EigenSym
	lw, draws              []float64
}

func newISWork(d int) *isWork {
	return &isWork{q: make([]float64, d), g: make([]float64, d), qt: make([]float64, d),
		gp: make([]float64, d), gm: make([]float64, d), step: make([]float64, d), H: mat.NewSymDense(d, nil)}
}

// hessian sets iw.H to the central-difference Hessian of log p(x, ε) at q (symmetrised).
func (n *dncpNet) hessian(w *netWork, iw *isWork, q []float64, x []int) {
	d := len(q)
	copy(iw.qt, q)
	for j := range d {
		iw.qt[j] = q[j] + isFDStep
		n.logJoint(w, iw.qt, x, iw.gp)
		iw.qt[j] = q[j] - isFDStep
		n.logJoint(w, iw.qt, x, iw.gm)
		iw.qt[j] = q[j]
		for i := range d {
			iw.gp[i] = (iw.gp[i] - iw.gm[i]) / (2 * isFDStep)
		}
		for i := 0; i <= j; i++ {
			// average the two central differences of H_ij
			if i == j {
				iw.H.SetSym(i, j, iw.gp[i])
			} else {
				iw.H.SetSym(i, j, 0.5*(iw.H.At(i, j)+iw.gp[i]))
			}
		}
		for i := j + 1; i < d; i++ {
			iw.H.SetSym(i, j, iw.gp[i]) // first half; averaged when column i comes
		}
	}
}

// negCurv factorises −H = V diag(c) Vᵀ with c_i ≥ floor and returns V and c; false if the
// eigendecomposition failed.
func (iw *isWork) negCurv(floor float64) (*mat.Dense, []float64, bool) {
	if !iw.eig.Factorize(iw.H, true) {
		return nil, nil, false
	}
	lam := iw.eig.Values(nil)
	var V mat.Dense
	iw.eig.VectorsTo(&V)
	for i, l := range lam {
		lam[i] = math.Max(-l, floor)
	}
	return &V, lam, true
}

// mode climbs from iw.q to a mode of log p(x, ε), left in iw.q, and returns log p(x, m).
func (n *dncpNet) mode(w *netWork, iw *isWork, x []int) float64 {
	d := n.Dim()
	lp := n.logJoint(w, iw.q, x, iw.g)
	for range isNewton {
		n.hessian(w, iw, iw.q, x)
		V, c, ok := iw.negCurv(1e-3)
		if !ok {
			break
		}
		// step = V diag(1/c) Vᵀ g, an ascent direction
		for i := range d {
			var s float64
			for k := range d {
				var vg float64
				for j := range d {
					vg += V.At(j, k) * iw.g[j]
				}
				s += V.At(i, k) * vg / c[k]
			}
			iw.step[i] = s
		}
		t, moved, lp0 := 1.0, false, lp
		for range 30 {
			for i := range d {
				iw.qt[i] = iw.q[i] + t*iw.step[i]
			}
			if lt := n.logJoint(w, iw.qt, x, nil); lt > lp {
				copy(iw.q, iw.qt)
				lp = n.logJoint(w, iw.q, x, iw.g)
				moved = true
				break
			}
			t /= 2
		}
		var sn float64
		for _, s := range iw.step {
			sn += s * s
		}
		if !moved || t*math.Sqrt(sn) < 1e-7 || lp-lp0 < 1e-3 {
			break
		}
	}
	return lp
}

// tComponent is one multivariate-t component of the proposal: location m and the
// factorisation Σ⁻¹ = V diag(c) Vᵀ.
type tComponent struct {
	m, c []float64
	V    *mat.Dense
	lg   float64 // log normalising constant of t_ν(·; m, Σ)
}

// logDensity is log t_ν(e; m, Σ); tmp has length d.
func (t *tComponent) logDensity(e []float64) float64 {
	d := len(e)
	var d2 float64
	for k := range d {
		var u float64
		for i := range d {
			u += t.V.At(i, k) * (e[i] - t.m[i])
		}
		d2 += t.c[k] * u * u
	}
	return t.lg - 0.5*(isNu+float64(d))*math.Log1p(d2/isNu)
}

// sample draws e ~ t_ν(m, Σ) using tmp (length d).
func (t *tComponent) sample(r *rng.Stream, e, tmp []float64) {
	d := len(e)
	var chi float64
	for range int(isNu) {
		z := r.NormFloat64()
		chi += z * z
	}
	f := math.Sqrt(isNu / chi)
	for k := range d {
		tmp[k] = r.NormFloat64() * f / math.Sqrt(t.c[k])
	}
	for i := range d {
		v := t.m[i]
		for k := range d {
			v += t.V.At(i, k) * tmp[k]
		}
		e[i] = v
	}
}

// proposal fits the t components of x's proposal: Newton from each of the isStarts best of
// isInit prior draws (by log p(x, ε)).
func (n *dncpNet) proposal(w *netWork, iw *isWork, x []int, r *rng.Stream) []tComponent {
	d := n.Dim()
	starts := make([][]float64, 0, isInit)
	lps := make([]float64, 0, isInit)
	for range isInit {
		e := make([]float64, d)
		for i := range e {
			e[i] = r.NormFloat64()
		}
		starts = append(starts, e)
		lps = append(lps, n.logJoint(w, e, x, nil))
	}
	idx := make([]int, len(starts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(lps[b], lps[a]) })
	var comps []tComponent
	for _, k := range idx[:min(isStarts, len(idx))] {
		copy(iw.q, starts[k])
		n.mode(w, iw, x)
		n.hessian(w, iw, iw.q, x)
		V, c, ok := iw.negCurv(isMinCurv)
		if !ok {
			continue
		}
		var logDetHalf float64 // log |Σ|^{1/2} = −½ Σ log c
		for _, ci := range c {
			logDetHalf -= 0.5 * math.Log(ci)
		}
		lg := lgammaf((isNu+float64(d))/2) - lgammaf(isNu/2) - 0.5*float64(d)*math.Log(isNu*math.Pi) - logDetHalf
		comps = append(comps, tComponent{m: slices.Clone(iw.q), c: c, V: V, lg: lg})
	}
	return comps
}

// logMarginal estimates log p_θ(x) by importance sampling with S draws from the defensive
// mixture proposal described above, after one adaptation round of S draws.
func (n *dncpNet) logMarginal(w *netWork, iw *isWork, x []int, S int, r *rng.Stream) isEstimate {
	d := n.Dim()
	comps := n.proposal(w, iw, x, r)
	if cap(iw.lw) < S {
		iw.lw = make([]float64, S)
		iw.draws = make([]float64, S*d)
	}
	lw, draws := iw.lw[:S], iw.draws[:S*d]
	n.drawIS(w, iw, x, comps, lw, draws, r)
	// adaptation: a t component with the weighted mean and covariance of the first round
	if c, ok := momentComponent(lw, draws, d); ok {
		comps = append(comps, c)
		n.drawIS(w, iw, x, comps, lw, draws, r)
	}
	return summariseLogWeights(lw)
}

// drawIS fills lw with the log weights log p(x, ε_s) − log q(ε_s) of len(lw) draws ε_s (into
// draws) from the defensive mixture of the prior and comps.
func (n *dncpNet) drawIS(w *netWork, iw *isWork, x []int, comps []tComponent, lw, draws []float64, r *rng.Stream) {
	d := n.Dim()
	lwc := math.Log((1 - isDefensive) / float64(max(1, len(comps))))
	for s := range lw {
		e := draws[s*d : (s+1)*d]
		if len(comps) == 0 || r.Float64() < isDefensive {
			for i := range e {
				e[i] = r.NormFloat64()
			}
		} else {
			comps[r.IntN(len(comps))].sample(r, e, iw.step)
		}
		lpr := logPrior(e)
		lq := math.Log(isDefensive) + lpr
		if len(comps) == 0 {
			lq = lpr
		}
		for k := range comps {
			lq = logAddExp(lq, lwc+comps[k].logDensity(e))
		}
		lw[s] = n.logLik(w, e, x) + lpr - lq
	}
}

// momentComponent is the t component (scale matrix (ν−2)/ν times the covariance, so that its
// covariance is the weighted one) whose mean and covariance are the self-normalised weighted
// moments of the draws; false when the weights' effective sample size is below 2d or the
// covariance is not positive definite.
func momentComponent(lw, draws []float64, d int) (tComponent, bool) {
	mx := slices.Max(lw)
	wts := make([]float64, len(lw))
	var sw, sw2 float64
	for i, v := range lw {
		wts[i] = math.Exp(v - mx)
		sw += wts[i]
	}
	for i := range wts {
		wts[i] /= sw
		sw2 += wts[i] * wts[i]
	}
	if 1/sw2 < float64(2*d) {
		return tComponent{}, false
	}
	m := make([]float64, d)
	for s, wt := range wts {
		for i := range d {
			m[i] += wt * draws[s*d+i]
		}
	}
	C := mat.NewSymDense(d, nil)
	for s, wt := range wts {
		e := draws[s*d : (s+1)*d]
		for i := range d {
			for j := 0; j <= i; j++ {
				C.SetSym(i, j, C.At(i, j)+wt*(e[i]-m[i])*(e[j]-m[j]))
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(C, true) {
		return tComponent{}, false
	}
	lam := eig.Values(nil)
	var V mat.Dense
	eig.VectorsTo(&V)
	c := make([]float64, d)
	var logDetHalf float64
	for k, l := range lam {
		if !(l > 1e-12) {
			return tComponent{}, false
		}
		c[k] = isNu / ((isNu - 2) * l) // Σ⁻¹ eigenvalues of the scale matrix
		logDetHalf -= 0.5 * math.Log(c[k])
	}
	lg := lgammaf((isNu+float64(d))/2) - lgammaf(isNu/2) - 0.5*float64(d)*math.Log(isNu*math.Pi) - logDetHalf
	return tComponent{m: m, c: c, V: &V, lg: lg}, true
}

// logMarginalPrior estimates log p_θ(x) by importance sampling from the prior (the MMCL
// estimator with L = S); it is the brute-force check of logMarginal.
func (n *dncpNet) logMarginalPrior(w *netWork, x []int, S int, r *rng.Stream, lw []float64) isEstimate {
	lw = lw[:S]
	e := make([]float64, n.Dim())
	for s := range S {
		for i := range e {
			e[i] = r.NormFloat64()
		}
		lw[s] = n.logLik(w, e, x)
	}
	return summariseLogWeights(lw)
}

// summariseLogWeights returns log mean exp(lw), its delta-method standard error and PSIS k̂.
func summariseLogWeights(lw []float64) isEstimate {
	mx := math.Inf(-1)
	for _, v := range lw {
		mx = math.Max(mx, v)
	}
	var s, s2 float64
	for _, v := range lw {
		u := math.Exp(v - mx)
		s += u
		s2 += u * u
	}
	S := float64(len(lw))
	mean := s / S
	variance := math.Max(0, s2/S-mean*mean) * S / (S - 1)
	est := isEstimate{LogP: mx + math.Log(mean), SE: math.Sqrt(variance/S) / mean, K: math.NaN()}
	if ps, err := diag.PSIS(lw); err == nil {
		est.K = ps.K
	}
	return est
}

func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

func lgammaf(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// logMarginalGrid is log p_θ(x) by the midpoint rule on a g×g grid over [−lim, lim]² — exact
// up to the grid error for a net with K1 = K2 = 1 (a 2-D ε), where it is the reference the
// estimators are checked against. It panics on another net.
func (n *dncpNet) logMarginalGrid(w *netWork, x []int, g int, lim float64) float64 {
	if n.Dim() != 2 {
		panic("bench: logMarginalGrid: needs a 2-dimensional latent")
	}
	h := 2 * lim / float64(g)
	e := make([]float64, 2)
	mx, s := math.Inf(-1), 0.0
	for i := range g {
		e[0] = -lim + (float64(i)+0.5)*h
		for j := range g {
			e[1] = -lim + (float64(j)+0.5)*h
			v := n.logJoint(w, e, x, nil)
			if v > mx {
				s = s*math.Exp(mx-v) + 1
				mx = v
			} else {
				s += math.Exp(v - mx)
			}
		}
	}
	return mx + math.Log(s*h*h)
}
