package mcmc

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// dualAveraging is Nesterov's dual averaging of log ε as Hoffman & Gelman (2014, §3.2.1) and
// Stan use it. After iteration t with acceptance statistic α (capped at 1):
//
//	s̄ₜ = (1 − 1/(t+t₀))·s̄ₜ₋₁ + (δ − α)/(t+t₀)
//	log εₜ = μ − √t·s̄ₜ/γ
//	x̄ₜ = (1 − t^−κ)·x̄ₜ₋₁ + t^−κ·log εₜ
//
// with μ = log(10ε₀); the final step size is exp(x̄).
type dualAveraging struct {
	delta, gamma, t0, kappa float64
	mu                      float64
	counter, sBar, xBar     float64
}

func (a *dualAveraging) restart() { a.counter, a.sBar, a.xBar = 0, 0, 0 }

// learn updates the state with the acceptance statistic stat and returns the next step size.
// A statistic that is not a number in [0, 1] (NaN from a trajectory with no finite energy)
// counts as 0, a rejection, so that s̄ and x̄ stay finite.
func (a *dualAveraging) learn(stat float64) float64 {
	a.counter++
	stat = math.Min(stat, 1)
	if !(stat >= 0) {
		stat = 0
	}
	eta := 1 / (a.counter + a.t0)
	a.sBar = (1-eta)*a.sBar + eta*(a.delta-stat)
	x := a.mu - a.sBar*math.Sqrt(a.counter)/a.gamma
	xEta := math.Pow(a.counter, -a.kappa)
	a.xBar = (1-xEta)*a.xBar + xEta*x
	return math.Exp(x)
}

// final returns the averaged step size exp(x̄).
func (a *dualAveraging) final() float64 { return math.Exp(a.xBar) }

// windows is Stan's windowed adaptation schedule over n warmup iterations: a fast initial
// buffer (step size only), slow windows of doubling length in which the metric estimator
// collects draws (the last window stretched to meet the terminal buffer), and a fast terminal
// buffer. When the three stages do not fit, they are shrunk to 15%/75%/10% of the warmup, as
// Stan documents (Stan 2.21's set_window_params shrinks them but skips the restart that sets
// the first window's end, so that Stan then adapts no metric at all); with fewer than 20
// warmup iterations there is no metric adaptation.
type windows struct {
	n, initBuf, termBuf, base int
	counter, size, next       int
	off                       bool
}

func newWindows(n, initBuf, termBuf, base int) *windows {
	w := &windows{n: n, initBuf: initBuf, termBuf: termBuf, base: base}
	switch {
	case n < 20:
		w.off = true
	case initBuf+base+termBuf > n:
		w.initBuf = int(0.15 * float64(n))
		w.termBuf = int(0.10 * float64(n))
		w.base = n - (w.initBuf + w.termBuf)
	}
	w.size = w.base
	w.next = w.initBuf + w.size - 1
	return w
}

// inWindow reports whether the current iteration's draw goes to the metric estimator.
func (w *windows) inWindow() bool {
	return !w.off && w.counter >= w.initBuf && w.counter < w.n-w.termBuf && w.counter != w.n
}

// endOfWindow reports whether the current iteration closes a slow window.
func (w *windows) endOfWindow() bool {
	return !w.off && w.counter == w.next && w.counter != w.n
}

// advance computes the end of the next window after one closed: twice as long, stretched to
// the terminal buffer when the window after it would not fit.
func (w *windows) advance() {
	last := w.n - w.termBuf - 1
	if w.next == last {
		return
	}
	w.size *= 2
	w.next = w.counter + w.size
	if w.next == last {
		return
	}
	if w.next+2*w.size >= w.n-w.termBuf {
		w.next = last
	}
}

// covEstimator is Welford's running mean and (co)variance of the draws of one window and,
// when grads is set, the running variance of their gradients (FisherDiag).
type covEstimator struct {
	d            int
	dense, grads bool
	n            int
	mean         []float64
	m2           []float64 // D (diagonal) or D×D
	delta        []float64
	gMean, gM2   []float64 // gradients: mean and Σ squared deviations (grads only)
	gDelta       []float64
}

func newCovEstimator(d int, dense, grads bool) *covEstimator {
	e := &covEstimator{d: d, dense: dense, grads: grads, mean: make([]float64, d), delta: make([]float64, d)}
	if dense {
		e.m2 = make([]float64, d*d)
	} else {
		e.m2 = make([]float64, d)
	}
	if grads {
		e.gMean, e.gM2, e.gDelta = make([]float64, d), make([]float64, d), make([]float64, d)
		if dense {
			e.gM2 = make([]float64, d*d)
		}
	}
	return e
}

func (e *covEstimator) restart() {
	e.n = 0
	clear(e.mean)
	clear(e.m2)
	clear(e.gMean)
	clear(e.gM2)
}

// add records the draw q and, for an estimator with grads, its gradient g (else g may be nil).
func (e *covEstimator) add(q, g []float64) {
	e.n++
	fn := float64(e.n)
	for i, x := range q {
		e.delta[i] = x - e.mean[i]
		e.mean[i] += e.delta[i] / fn
	}
	if e.grads && !e.dense {
		for i, x := range g {
			dg := x - e.gMean[i]
			e.gMean[i] += dg / fn
			e.gM2[i] += (x - e.gMean[i]) * dg
		}
	}
	if e.grads && e.dense {
		d := e.d
		for i, x := range g {
			e.gDelta[i] = x - e.gMean[i]
			e.gMean[i] += e.gDelta[i] / fn
		}
		for i, x := range g {
			a := x - e.gMean[i]
			row := e.gM2[i*d : (i+1)*d]
			for j, dj := range e.gDelta {
				row[j] += a * dj
			}
		}
	}
	if !e.dense {
		for i, x := range q {
			e.m2[i] += (x - e.mean[i]) * e.delta[i]
		}
		return
	}
	d := e.d
	for i, x := range q {
		a := x - e.mean[i]
		row := e.m2[i*d : (i+1)*d]
		for j, dj := range e.delta {
			row[j] += a * dj
		}
	}
}

// shrink returns Stan's regularisation weights for a window of n draws: the estimate S
// becomes w·S + eps·I with w = n/(n+5), eps = 10⁻³·5/(n+5), which shrinks a short window's
// estimate towards a small multiple of the identity.
func (e *covEstimator) shrink() (w, eps float64) {
	n := float64(e.n)
	return n / (n + 5), 1e-3 * 5 / (n + 5)
}

// variance returns the sample variance (divisor n − 1) of coordinate i.
func (e *covEstimator) variance(i int) float64 {
	if e.dense {
		return e.m2[i*e.d+i] / float64(e.n-1)
	}
	return e.m2[i] / float64(e.n-1)
}

// regularised writes Stan's regularised estimate into inv: with n draws and the sample
// (co)variance S (divisor n − 1), n/(n+5)·S + 10⁻³·5/(n+5)·I; D values for a diagonal
// estimator, D×D for a dense one.
func (e *covEstimator) regularised(inv []float64) {
	w, eps := e.shrink()
	n := float64(e.n)
	for i, v := range e.m2 {
		inv[i] = w * v / (n - 1)
	}
	if !e.dense {
		for i := range inv {
			inv[i] += eps
		}
		return
	}
	for i := range e.d {
		inv[i*e.d+i] += eps
	}
	// Symmetrise: Welford's outer products are symmetric up to rounding.
	for i := range e.d {
		for j := range i {
			a := 0.5 * (inv[i*e.d+j] + inv[j*e.d+i])
			inv[i*e.d+j], inv[j*e.d+i] = a, a
		}
	}
}

// regularisedDiag writes the regularised diagonal estimate (Stan's diag_e) into inv (D values),
// from a diagonal or a dense estimator.
func (e *covEstimator) regularisedDiag(inv []float64) {
	w, eps := e.shrink()
	for i := range e.d {
		inv[i] = w*e.variance(i) + eps
	}
}

// scaled writes Auto's regularised estimate into inv (D×D when dense, else D values):
// Stan's regularisation applied in the coordinates standardised by the window's standard
// deviations, n/(n+5)·S + 10⁻³·5/(n+5)·diag(S). Stan's shrinkage towards 10⁻³·I swamps
// coordinates whose posterior variance is far below 10⁻³ (a variance of 10⁻⁶ becomes
// 10⁻⁶ + 10⁻⁵ after a 500-draw window); this one is scale equivariant and still adds only
// ≈ 10⁻⁵ of each variance to the conditional variances of strongly correlated coordinates.
// It reports false, writing nothing, when a variance is not positive and finite (a chain that
// did not move); the caller then falls back to Stan's regularisation.
func (e *covEstimator) scaled(inv []float64, dense bool) bool {
	d := e.d
	for i := range d {
		if v := e.variance(i); !(v > 0) || math.IsInf(v, 1) {
			return false
		}
	}
	w, eps := e.shrink()
	if !dense {
		for i := range d {
			inv[i] = (w + eps) * e.variance(i)
		}
		return true
	}
	n := float64(e.n)
	for i := range d {
		for j := range d {
			inv[i*d+j] = w * 0.5 * (e.m2[i*d+j] + e.m2[j*d+i]) / (n - 1)
		}
		inv[i*d+i] += eps * e.variance(i)
	}
	return true
}

// fisherDiag writes the regularised Fisher-divergence diagonal into inv (D values):
// √(Var(xᵢ)/Var(gᵢ)) in place of Var(xᵢ), with Stan's shrinkage. A coordinate whose gradient
// does not vary (or whose ratio is not finite) falls back to its draws' variance.
func (e *covEstimator) fisherDiag(inv []float64) {
	w, eps := e.shrink()
	n := float64(e.n)
	for i := range e.d {
		v := e.variance(i)
		vg := e.gM2[i] / (n - 1)
		if e.dense {
			vg = e.gM2[i*e.d+i] / (n - 1)
		}
		if vg > 0 {
			if r := math.Sqrt(v / vg); r > 0 && !math.IsInf(r, 1) {
				v = r
			}
		}
		inv[i] = w*v + eps
	}
}

// denseHelps is Auto's choice, from a dense estimator with gradients: a dense metric when
// the window's draws are strongly correlated and the posterior looks Gaussian enough for one
// covariance to precondition all of it. With n draws in d dimensions (n ≥ 2d), sample
// covariance S = LLᵀ, correlation R and gradient covariance G:
//
//   - strongly correlated: κ(R) > 2κ₀, where κ₀ = ((1+√(d/n))/(1−√(d/n)))² is the largest
//     condition number sampling noise alone gives for uncorrelated draws (the ratio of the
//     edges of the Marchenko–Pastur law). With a diagonal metric NUTS's trajectories grow as
//     √κ(R); with a dense one the preconditioned target keeps only the estimation noise.
//   - Gaussian enough: λmax(LᵀGL) ≤ 4(1+√(d/n))². For a Gaussian target Cov(∇log π) = S⁻¹,
//     so in the coordinates standardised by L the gradients have covariance I, up to the
//     Marchenko–Pastur upper edge (1+√(d/n))². A much larger eigenvalue says the curvature
//     changes across the posterior (a funnel, a strongly skewed scale parameter), where a
//     single dense estimate can hide the divergences that reveal it: on the centred eight
//     schools it turned ≈ 100 divergences into ≈ 3 and moved E[log τ] further from the truth.
//
// Cost O(d³) (two eigenvalue problems, a Cholesky factorisation), once per window.
func (e *covEstimator) denseHelps() bool {
	d, n := e.d, e.n
	if !e.dense || !e.grads || d < 2 || n < 2*d {
		return false
	}
	sd := make([]float64, d)
	for i := range d {
		sd[i] = math.Sqrt(e.m2[i*d+i])
		if !(sd[i] > 0) || math.IsInf(sd[i], 1) {
			return false
		}
	}
	fn := float64(n - 1)
	r := mat.NewSymDense(d, nil)
	s := mat.NewSymDense(d, nil)
	g := mat.NewSymDense(d, nil)
	for i := range d {
		for j := range i + 1 {
			c := 0.5 * (e.m2[i*d+j] + e.m2[j*d+i])
			r.SetSym(i, j, c/(sd[i]*sd[j]))
			s.SetSym(i, j, c/fn)
			g.SetSym(i, j, 0.5*(e.gM2[i*d+j]+e.gM2[j*d+i])/fn)
		}
	}
	lo, hi, ok := eigenRange(r)
	x := math.Sqrt(float64(d) / float64(n))
	k0 := (1 + x) * (1 + x) / ((1 - x) * (1 - x))
	if !ok || !(lo > 0) || hi/lo <= 2*k0 {
		return false
	}
	var chol mat.Cholesky
	if !chol.Factorize(s) {
		return false
	}
	var l mat.TriDense
	chol.LTo(&l)
	var a mat.Dense
	a.Mul(l.T(), g)
	a.Mul(&a, &l)
	sa := mat.NewSymDense(d, nil)
	for i := range d {
		for j := range i + 1 {
			sa.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	_, gMax, ok := eigenRange(sa)
	return ok && gMax <= 4*(1+x)*(1+x)
}

// eigenRange returns the smallest and largest eigenvalues of the symmetric matrix a.
func eigenRange(a mat.Symmetric) (lo, hi float64, ok bool) {
	var eig mat.EigenSym
	if !eig.Factorize(a, false) {
		return 0, 0, false
	}
	v := eig.Values(nil) // ascending
	return v[0], v[len(v)-1], true
}
