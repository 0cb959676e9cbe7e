package mcmc

import "math"

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
func (a *dualAveraging) learn(stat float64) float64 {
	a.counter++
	stat = math.Min(stat, 1)
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
// Stan does; with fewer than 20 warmup iterations there is no metric adaptation.
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

// covEstimator is Welford's running mean and (co)variance of the draws of one window.
type covEstimator struct {
	d     int
	dense bool
	n     int
	mean  []float64
	m2    []float64 // D (diagonal) or D×D
	delta []float64
}

func newCovEstimator(d int, dense bool) *covEstimator {
	e := &covEstimator{d: d, dense: dense, mean: make([]float64, d), delta: make([]float64, d)}
	if dense {
		e.m2 = make([]float64, d*d)
	} else {
		e.m2 = make([]float64, d)
	}
	return e
}

func (e *covEstimator) restart() {
	e.n = 0
	clear(e.mean)
	clear(e.m2)
}

func (e *covEstimator) add(q []float64) {
	e.n++
	fn := float64(e.n)
	for i, x := range q {
		e.delta[i] = x - e.mean[i]
		e.mean[i] += e.delta[i] / fn
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

// regularised writes Stan's regularised estimate into inv: with n draws and the sample
// (co)variance S (divisor n − 1), n/(n+5)·S + 10⁻³·5/(n+5)·I, which shrinks a short window's
// estimate towards a small multiple of the identity.
func (e *covEstimator) regularised(inv []float64) {
	n := float64(e.n)
	w := n / (n + 5)
	eps := 1e-3 * 5 / (n + 5)
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
