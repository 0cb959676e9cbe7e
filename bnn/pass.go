package bnn

import (
	"fmt"
	"github.com/vigo-bayes/vigo/internal/kernel"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Workspace holds the buffers of forward and backward passes through a Net. It grows to the
// largest batch it has seen and then allocates nothing. A Workspace is used by one goroutine at
// a time; give every worker its own.
type Workspace struct {
	rows   int
	ls     []wsLayer
	layers []Layer
}

// wsLayer holds one layer's buffers. Input moments M, V (rows×k; M aliases the data in layer 0,
// V is unused for data and for sampled activations), M2 = M², pre-activation moments Mf, Vf
// (rows×m), the hidden activation's elementwise Jacobian (ja = ∂E[h]/∂E[f], jb = ∂E[h]/∂var[f],
// jc = ∂var[h]/∂E[f], jd = ∂var[h]/∂var[f]), noise eps, gradients gM, gV with respect to
// (Mf, Vf), and the weight quantities σ², μ²+σ², σ_b², ∂σ²/∂θ, ∂σ²/∂ρ and the k×m products
// T1, T2 of the backward pass.
type wsLayer struct {
	M, V, M2       []float64
	Mf, Vf         []float64
	ja, jb, jc, jd []float64
	eps            []float64
	gM, gV         []float64
	s2, mu2s2, s2b []float64
	dth, drho      []float64
	T1, T2         []float64
	hasV           bool // V holds input variances (moment methods, layers after the first)
}

// size grows the layer's buffers for rows input rows (for a convolution: patch rows), k inputs
// and m outputs; M and V are the caller's (they alias data or the previous layer).
func (w *wsLayer) size(rows, k, m int) {
	w.M2 = grow(w.M2, rows*k)
	for _, b := range []*[]float64{&w.Mf, &w.Vf, &w.ja, &w.jb, &w.jc, &w.jd, &w.eps, &w.gM, &w.gV} {
		*b = grow(*b, rows*m)
	}
	for _, b := range []*[]float64{&w.s2, &w.mu2s2, &w.dth, &w.drho, &w.T1, &w.T2} {
		*b = grow(*b, k*m)
	}
	w.s2b = grow(w.s2b, m)
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// prepare sizes the buffers for rows data points.
func (ws *Workspace) prepare(n *Net, rows int) {
	L := len(n.Sizes) - 1
	if len(ws.ls) != L {
		ws.ls = make([]wsLayer, L)
	}
	ws.rows = rows
	ws.layers = ws.layers[:0]
	off := 0
	for l := range L {
		var ly Layer
		ly, off = n.layerAt(l, off)
		ws.layers = append(ws.layers, ly)
	}
	for l := range ws.ls {
		w := &ws.ls[l]
		k, m := n.Sizes[l], n.Sizes[l+1]
		if l > 0 {
			w.M = grow(w.M, rows*k)
			w.V = grow(w.V, rows*k)
		}
		w.size(rows, k, m)
	}
}

// forward propagates the rows×Sizes[0] inputs X through the network, leaving the output
// pre-activation moments in the last layer's Mf, Vf. Sampling methods draw their hidden-layer
// noise from r (the output layer's is left to the caller).
func (n *Net) forward(ws *Workspace, params, X []float64, rows int, r *rand.Rand) {
	if len(params) != n.NumParams() {
		panic(fmt.Sprintf("bnn: len(params)=%d, want %d", len(params), n.NumParams()))
	}
	if len(X) < rows*n.Sizes[0] {
		panic(fmt.Sprintf("bnn: X has %d values, want rows×inputs = %d×%d", len(X), rows, n.Sizes[0]))
	}
	sampling := n.Method.Sampling()
	if sampling && r == nil {
		panic(fmt.Sprintf("bnn: method %s draws noise: r must not be nil", n.Method))
	}
	ws.prepare(n, rows)
	layers := ws.layers
	C := n.c()
	for l, L := range layers {
		w := &ws.ls[l]
		k, m := L.In, L.Out
		km := k * m
		mu := params[L.Mu : L.Mu+km]
		mub := params[L.MuB : L.MuB+m]
		weightVars(n.Method, w, params, L)
		if l == 0 {
			w.M = X[:rows*k]
			w.hasV = false
		}
		linearForward(w, mu, mub, rows, k, m)
		if l == len(layers)-1 {
			break
		}
		next := &ws.ls[l+1]
		next.hasV = !sampling
		activate(n.Method, C, w, rows*m, next.M, next.V, r)
	}
}

// linearForward fills the pre-activation moments Mf, Vf (rows×m) of a linear layer with k
// inputs from its input moments M (and V when hasV), weight means mu and bias means mub, and
// the weight quantities weightVars left in w:
//
//	E[f] = M·μ + μ_b,   var[f] = V·(μ²+σ²) + M²·σ² + σ_b².
func linearForward(w *wsLayer, mu, mub []float64, rows, k, m int) {
	for i, x := range w.M[:rows*k] {
		w.M2[i] = x * x
	}
	for i := range rows {
		copy(w.Mf[i*m:(i+1)*m], mub)
		copy(w.Vf[i*m:(i+1)*m], w.s2b)
	}
	kernel.Gemm(false, false, rows, m, k, w.M, mu, 1, w.Mf)
	kernel.Gemm(false, false, rows, m, k, w.M2, w.s2, 1, w.Vf)
	if w.hasV {
		kernel.Gemm(false, false, rows, m, k, w.V, w.mu2s2, 1, w.Vf)
	}
}

// activate pushes the first nm pre-activation moments of w through the ReLU by method meth,
// writing the activation's moments (Mh, Vh; Vh unused by the sampling methods, which draw
// their noise from r) and the elementwise Jacobian ja…jd.
func activate(meth Method, C float64, w *wsLayer, nm int, Mh, Vh []float64, r *rand.Rand) {
	switch meth {
	case VBP:
		vbpGate(C, w.Mf[:nm], w.Vf[:nm], Mh[:nm], Vh[:nm], w.ja, w.jc, w.jd)
		clear(w.jb[:nm])
	case DVI:
		reluMoments(w.Mf[:nm], w.Vf[:nm], Mh[:nm], Vh[:nm], w.ja, w.jb, w.jc, w.jd)
	default:
		eps := w.eps[:nm]
		for i := range eps {
			eps[i] = r.NormFloat64()
		}
		reluSample(w.Mf[:nm], w.Vf[:nm], eps, Mh[:nm], w.ja, w.jb)
	}
}

// weightVars fills σ², μ²+σ², σ_b² and (VarDrop) ∂σ²/∂θ, ∂σ²/∂ρ of layer L.
func weightVars(meth Method, w *wsLayer, params []float64, L Layer) {
	km := L.In * L.Out
	mu := params[L.Mu : L.Mu+km]
	rho := params[L.Rho : L.Rho+km]
	if meth == VarDrop {
		for i, th := range mu {
			s2, dth, drho := varDropVar(th, rho[i])
			w.s2[i], w.dth[i], w.drho[i] = s2, dth, drho
			w.mu2s2[i] = th*th + s2
		}
		clear(w.s2b)
		return
	}
	for i, m := range mu {
		s2 := math.Exp(rho[i])
		w.s2[i] = s2
		w.mu2s2[i] = m*m + s2
	}
	for j := range L.Out {
		w.s2b[j] = math.Exp(params[L.RhoB+j])
	}
}

// backward takes the gradient with respect to the output moments in the last layer's gM, gV
// and adds the gradient with respect to params to grad, scaled by s.
func (n *Net) backward(ws *Workspace, params, grad []float64, s float64) {
	layers := ws.layers
	rows := ws.rows
	for l := len(layers) - 1; l >= 0; l-- {
		L := layers[l]
		w := &ws.ls[l]
		k, m := L.In, L.Out
		linearBackward(n.Method, w, L, rows, params, grad, s)
		if l == 0 {
			break
		}
		p := &ws.ls[l-1]
		gMh, gVh := p.gM[:rows*k], p.gV[:rows*k]
		inputGrad(w, params[L.Mu:L.Mu+k*m], rows, k, m, gMh, gVh)
		applyJacobian(p, w.hasV, gMh, gVh)
	}
}

// linearBackward adds s times the gradient of a linear layer (k = L.In inputs, m = L.Out
// outputs, rows rows) with respect to its parameters to grad, given the gradient with respect
// to its pre-activation moments in w.gM, w.gV:
//
//	∂/∂μ = Mᵀ·gM + 2μ ⊙ (Vᵀ·gV),  ∂/∂σ² = Vᵀ·gV + (M²)ᵀ·gV,  ∂/∂μ_b = Σ_rows gM,  ∂/∂σ_b² = Σ_rows gV.
func linearBackward(meth Method, w *wsLayer, L Layer, rows int, params, grad []float64, s float64) {
	k, m := L.In, L.Out
	km := k * m
	mu := params[L.Mu : L.Mu+km]
	gM, gV := w.gM[:rows*m], w.gV[:rows*m]
	kernel.Gemm(true, false, k, m, rows, w.M, gM, 0, w.T1)
	dmu := grad[L.Mu : L.Mu+km]
	for i, v := range w.T1[:km] {
		dmu[i] += s * v
	}
	kernel.Gemm(true, false, k, m, rows, w.M2, gV, 0, w.T2)
	if w.hasV {
		kernel.Gemm(true, false, k, m, rows, w.V, gV, 0, w.T1)
		for i, v := range w.T1[:km] {
			dmu[i] += s * 2 * mu[i] * v
			w.T2[i] += v
		}
	}
	drho := grad[L.Rho : L.Rho+km]
	if meth == VarDrop {
		for i, v := range w.T2[:km] {
			dmu[i] += s * v * w.dth[i]
			drho[i] += s * v * w.drho[i]
		}
	} else {
		for i, v := range w.T2[:km] {
			drho[i] += s * v * w.s2[i]
		}
	}
	dmub := grad[L.MuB : L.MuB+m]
	for i := range rows {
		for j, g := range gM[i*m : (i+1)*m] {
			dmub[j] += s * g
		}
	}
	if L.RhoB >= 0 {
		drhob := grad[L.RhoB : L.RhoB+m]
		for i := range rows {
			for j, g := range gV[i*m : (i+1)*m] {
				drhob[j] += s * g * w.s2b[j]
			}
		}
	}
}

// inputGrad writes the gradient with respect to a linear layer's input moments (rows×k) into
// gMh and, when w.hasV, gVh: ∂/∂M = gM·μᵀ + 2M ⊙ (gV·σ²ᵀ),  ∂/∂V = gV·(μ²+σ²)ᵀ.
func inputGrad(w *wsLayer, mu []float64, rows, k, m int, gMh, gVh []float64) {
	gM, gV := w.gM[:rows*m], w.gV[:rows*m]
	kernel.Gemm(false, true, rows, k, m, gV, w.s2, 0, gMh)
	for i, x := range w.M[:rows*k] {
		gMh[i] *= 2 * x
	}
	kernel.Gemm(false, true, rows, k, m, gM, mu, 1, gMh)
	if w.hasV {
		kernel.Gemm(false, true, rows, k, m, gV, w.mu2s2, 0, gVh)
	}
}

// applyJacobian turns the gradient with respect to a ReLU's output moments (gMh, and gVh when
// hasV; otherwise the output's variance is unused) into the gradient with respect to its input
// moments, in place, with the Jacobian that activate left in p.
func applyJacobian(p *wsLayer, hasV bool, gMh, gVh []float64) {
	if hasV {
		for i, a := range gMh {
			b := gVh[i]
			gMh[i] = p.ja[i]*a + p.jc[i]*b
			gVh[i] = p.jb[i]*a + p.jd[i]*b
		}
		return
	}
	for i, a := range gMh {
		gMh[i] = p.ja[i] * a
		gVh[i] = p.jb[i] * a
	}
}

// vbpGate is VBP's relaxed ReLU: with p = σ(C·m), E[h] = p·m and var[h] = p·v + p(1−p)·m².
// It also writes the Jacobian: a = ∂E[h]/∂m, c = ∂var[h]/∂m, d = ∂var[h]/∂v (∂E[h]/∂v = 0).
func vbpGate(C float64, mf, vf, mh, vh, a, c, d []float64) {
	for i, m := range mf {
		v := vf[i]
		// Saturated gate: beyond |C·m| = 40, p(1−p) < e⁻⁴⁰ ≈ 4e-18 and the exact result differs
		// from the gate fully open or shut by less than that relative to m, v — skip the exp.
		if x := C * m; x > 40 {
			mh[i], vh[i], a[i], c[i], d[i] = m, v, 1, 0, 1
			continue
		} else if x < -40 {
			mh[i], vh[i], a[i], c[i], d[i] = 0, 0, 0, 0, 0
			continue
		}
		p := mathx.Logistic(C * m)
		q := p * (1 - p)
		mh[i] = p * m
		vh[i] = p*v + q*m*m
		dp := C * q // ∂p/∂m
		a[i] = p + m*dp
		c[i] = dp*v + m*m*C*q*(1-2*p) + 2*m*q
		d[i] = p
	}
}

// reluMoments gives the mean and variance of ReLU(f) for f ~ N(m, v) (Frey & Hinton 1999):
// with s = √v, z = m/s, E[h] = mΦ(z) + sφ(z), E[h²] = (m²+v)Φ(z) + msφ(z). Its Jacobian:
// ∂E[h]/∂m = Φ, ∂E[h]/∂v = φ/(2s), ∂var[h]/∂m = 2E[h](1−Φ), ∂var[h]/∂v = Φ − E[h]φ/s.
func reluMoments(mf, vf, mh, vh, a, b, c, d []float64) {
	for i, m := range mf {
		v := vf[i]
		s := math.Sqrt(v)
		z := m / s
		Phi := 0.5 * math.Erfc(-z/math.Sqrt2)
		phi := math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi)
		e1 := m*Phi + s*phi
		e2 := (m*m+v)*Phi + m*s*phi
		mh[i] = e1
		vh[i] = max(e2-e1*e1, 0)
		a[i] = Phi
		b[i] = phi / (2 * s)
		c[i] = 2 * e1 * (1 - Phi)
		d[i] = Phi - e1*phi/s
	}
}

// reluSample draws f = m + √v·ε and returns h = max(f, 0) with ∂h/∂m in a and ∂h/∂v in b.
func reluSample(mf, vf, eps, h, a, b []float64) {
	for i, m := range mf {
		s := math.Sqrt(vf[i])
		f := m + s*eps[i]
		if f > 0 {
			h[i] = f
			a[i] = 1
			b[i] = 0 // v = 0 (VarDrop, all inputs 0): σ² has no influence, avoid 0·∞
			if s > 0 {
				b[i] = eps[i] / (2 * s)
			}
		} else {
			h[i], a[i], b[i] = 0, 0, 0
		}
	}
}
