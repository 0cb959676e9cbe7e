package bench

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/rng"
)

// dncpNet is the 4-layer hierarchical model of Kingma & Welling (2014) §6 (papers.md §4.2) in
// differentiable non-centred (DNCP) form. With ε = (ε₁, ε₂) ~ N(0, I_{K1+K2}) the latent
// that is sampled,
//
//	z₁ = ε₁                                  (K1-dimensional, z₁ ~ N(0, I))
//	z₂ = tanh(W₁z₁ + b₁) + σ₂·ε₂              (K2-dimensional, z₂ | z₁ ~ N(tanh(W₁z₁ + b₁), σ₂²I))
//	z₃ = tanh(W₂z₂ + b₂)                      (K3-dimensional, noiseless: σ₃ = 0)
//	x_j | z₃ ~ Bernoulli(sigmoid(η_j)),  η = W_x z₃ + b_x   (D binary pixels)
//
// so p_θ(x, ε) = N(ε; 0, I)·p_θ(x | ε) and p_θ(x) = E_{ε~N(0,I)}[p_θ(x | ε)]. The parameters θ
// are W₁ (K2×K1), b₁, W₂ (K3×K2), b₂, W_x (D×K3), b_x and log σ₂, in one flat slice in that
// order, matrices row-major.
//
// Cost of one log p(x | ε): D·K3 + K3·K2 + K2·K1 multiply-adds (the W_x product dominates),
// K3 + K2 tanh and D softplus; its gradient in ε and θ about twice that. Nothing allocates:
// the intermediate vectors live in a netWork.
type dncpNet struct {
	K1, K2, K3, D int
	theta         []float64
	// views into theta
	W1, b1, W2, b2, Wx, bx []float64
}

// newDNCPNet returns a net with zero parameters and σ₂ = 1.
func newDNCPNet(k1, k2, k3, d int) (*dncpNet, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"K1", k1}, {"K2", k2}, {"K3", k3}, {"D", d}} {
		if f.v < 1 {
			return nil, fmt.Errorf("bench: newDNCPNet: %s must be at least 1 (%s=%d)", f.name, f.name, f.v)
		}
	}
	n := &dncpNet{K1: k1, K2: k2, K3: k3, D: d}
	n.theta = make([]float64, k2*k1+k2+k3*k2+k3+d*k3+d+1)
	n.setViews(n.theta)
	return n, nil
}

// views cuts a parameter-shaped slice (theta or a gradient) into its blocks.
func (n *dncpNet) views(t []float64) (W1, b1, W2, b2, Wx, bx []float64, logSigma *float64) {
	o := 0
	cut := func(m int) []float64 { s := t[o : o+m : o+m]; o += m; return s }
	W1, b1 = cut(n.K2*n.K1), cut(n.K2)
	W2, b2 = cut(n.K3*n.K2), cut(n.K3)
	Wx, bx = cut(n.D*n.K3), cut(n.D)
	return W1, b1, W2, b2, Wx, bx, &t[o]
}

func (n *dncpNet) setViews(t []float64) {
	n.W1, n.b1, n.W2, n.b2, n.Wx, n.bx, _ = n.views(t)
}

// Dim is the dimension K1 + K2 of the sampled latent ε.
func (n *dncpNet) Dim() int { return n.K1 + n.K2 }

// sigma is σ₂ = exp(log σ₂).
func (n *dncpNet) sigma() float64 { return math.Exp(n.theta[len(n.theta)-1]) }

// init draws the starting parameters: W₁, W₂ ~ N(0, 1) entrywise (as the paper's DBN
// experiment), W_x ~ N(0, 1/K3) so that η starts with unit scale, b₁ = b₂ = 0, σ₂ = 1, and
// b_x the logit of the training pixels' mean (clamped to [0.01, 0.99]).
func (n *dncpNet) init(r *rng.Stream, pixelMean []float64) {
	for i := range n.W1 {
		n.W1[i] = r.NormFloat64()
	}
	for i := range n.W2 {
		n.W2[i] = r.NormFloat64()
	}
	s := 1 / math.Sqrt(float64(n.K3))
	for i := range n.Wx {
		n.Wx[i] = s * r.NormFloat64()
	}
	clear(n.b1)
	clear(n.b2)
	for j := range n.bx {
		m := math.Min(0.99, math.Max(0.01, pixelMean[j]))
		n.bx[j] = math.Log(m / (1 - m))
	}
	n.theta[len(n.theta)-1] = 0
}

// netWork holds one evaluation's intermediate vectors.
type netWork struct {
	a1, t1, z2, gz2, ga1 []float64 // K2
	z3, g3               []float64 // K3
	eta                  []float64 // D: η, then the residual c·(x − sigmoid(η))
	sp, sg               []float64 // D: softplus(η), sigmoid(η)
}

func (n *dncpNet) newWork() *netWork {
	return &netWork{
		a1: make([]float64, n.K2), t1: make([]float64, n.K2), z2: make([]float64, n.K2),
		gz2: make([]float64, n.K2), ga1: make([]float64, n.K2),
		z3: make([]float64, n.K3), g3: make([]float64, n.K3),
		eta: make([]float64, n.D), sp: make([]float64, n.D), sg: make([]float64, n.D),
	}
}

// logLik returns log p_θ(x | ε) = Σ_j x_j η_j − softplus(η_j) and leaves the residuals
// x − sigmoid(η) in w.eta for backward. x holds 0/1 pixels.
func (n *dncpNet) logLik(w *netWork, eps []float64, x []int) float64 {
	e1, e2 := eps[:n.K1], eps[n.K1:]
	copy(w.a1, n.b1)
	kernel.GemvN(n.W1, n.K1, e1, w.a1)
	sg := n.sigma()
	for i, a := range w.a1 {
		w.t1[i] = math.Tanh(a)
		w.z2[i] = w.t1[i] + sg*e2[i]
	}
	copy(w.z3, n.b2)
	kernel.GemvN(n.W2, n.K2, w.z2, w.z3)
	for i, a := range w.z3 {
		w.z3[i] = math.Tanh(a)
	}
	copy(w.eta, n.bx)
	kernel.GemvN(n.Wx, n.K3, w.z3, w.eta)
	kernel.Softplus(w.sp, w.sg, w.eta)
	var lp float64
	for j, v := range x {
		if v != 0 {
			lp += w.eta[j]
		}
		lp -= w.sp[j]
		w.eta[j] = float64(v) - w.sg[j]
	}
	return lp
}

// backward accumulates c·∇ log p_θ(x | ε) into gEps (∂/∂ε, length Dim) and gTheta (∂/∂θ,
// parameter-shaped); either may be nil. It must follow logLik on the same w and ε, and it
// overwrites w.eta.
func (n *dncpNet) backward(w *netWork, eps []float64, c float64, gEps, gTheta []float64) {
	e1, e2 := eps[:n.K1], eps[n.K1:]
	r := w.eta
	if c != 1 {
		for j := range r {
			r[j] *= c
		}
	}
	var gW1, gb1, gW2, gb2, gWx, gbx []float64
	var gls *float64
	if gTheta != nil {
		gW1, gb1, gW2, gb2, gWx, gbx, gls = n.views(gTheta)
		kernel.Axpy(1, r, gbx)
	}
	clear(w.g3)
	kernel.GemvTGer(n.Wx, n.K3, r, w.z3, w.g3, gWx) // g3 = W_xᵀ r, ∂W_x += r z₃ᵀ
	for i, z := range w.z3 {
		w.g3[i] *= 1 - z*z // now ∂/∂a₂
	}
	if gTheta != nil {
		kernel.Axpy(1, w.g3, gb2)
		kernel.Ger(w.g3, w.z2, gW2, n.K2)
	}
	clear(w.gz2)
	kernel.GemvT(n.W2, n.K2, w.g3, w.gz2) // ∂/∂z₂
	sg := n.sigma()
	for i, g := range w.gz2 {
		if gEps != nil {
			gEps[n.K1+i] += sg * g
		}
		if gls != nil {
			*gls += sg * g * e2[i]
		}
		w.ga1[i] = g * (1 - w.t1[i]*w.t1[i])
	}
	if gTheta != nil {
		kernel.Axpy(1, w.ga1, gb1)
		kernel.Ger(w.ga1, e1, gW1, n.K1)
	}
	if gEps != nil {
		kernel.GemvT(n.W1, n.K1, w.ga1, gEps[:n.K1])
	}
}

// logPrior is log N(ε; 0, I), the DNCP prior of the sampled latent (gradient −ε).
func logPrior(eps []float64) float64 {
	return -0.5*kernel.Dot(eps, eps) - 0.5*float64(len(eps))*math.Log(2*math.Pi)
}

// logJoint returns log p_θ(x, ε) = log N(ε; 0, I) + log p_θ(x | ε) and, when g is not nil,
// sets g to its gradient in ε.
func (n *dncpNet) logJoint(w *netWork, eps []float64, x []int, g []float64) float64 {
	lp := n.logLik(w, eps, x) + logPrior(eps)
	if g != nil {
		for i, e := range eps {
			g[i] = -e
		}
		n.backward(w, eps, 1, g, nil)
	}
	return lp
}

// mmclWork is the MMCL step's scratch: L draws of ε and their log-likelihoods.
type mmclWork struct {
	eps []float64 // L × Dim
	ll  []float64
}

// mmclWeightFloor is the normalised weight below which a draw is left out of the MMCL
// gradient: the gradient is Σ_l w_l ∇ log p(x | ε_l) with w = softmax(log p(x | ε_l)), and the
// draws left out carry at most L·mmclWeightFloor of the weight, a relative change of the
// gradient far below its Monte Carlo error. It saves the backward pass of the draws that
// do not matter (most of them once the model has learned).
const mmclWeightFloor = 1e-12

// mmclStep computes the MMCL objective of one image, log p̂(x) = log (1/L) Σ_l p_θ(x | ε_l)
// with ε_l ~ N(0, I) (L = len(mw.ll)), and accumulates its gradient in θ into g. It returns
// log p̂(x) and the number of draws whose backward pass ran. Cost: L forward passes plus one
// forward and backward pass per draw with weight ≥ mmclWeightFloor.
func (n *dncpNet) mmclStep(w *netWork, mw *mmclWork, x []int, r *rng.Stream, g []float64) (float64, int) {
	d := n.Dim()
	L := len(mw.ll)
	mx := math.Inf(-1)
	for l := range L {
		e := mw.eps[l*d : (l+1)*d]
		for i := range e {
			e[i] = r.NormFloat64()
		}
		mw.ll[l] = n.logLik(w, e, x)
		mx = math.Max(mx, mw.ll[l])
	}
	var s float64
	for _, v := range mw.ll {
		s += math.Exp(v - mx)
	}
	used := 0
	for l, v := range mw.ll {
		wl := math.Exp(v-mx) / s
		if wl < mmclWeightFloor {
			continue
		}
		e := mw.eps[l*d : (l+1)*d]
		n.logLik(w, e, x)
		n.backward(w, e, wl, nil, g)
		used++
	}
	return mx + math.Log(s/float64(L)), used
}
