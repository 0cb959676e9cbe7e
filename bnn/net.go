package bnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Method selects how a Net propagates weight uncertainty (see the package documentation).
type Method uint8

// Propagation methods.
const (
	MonteCarlo Method = iota // local reparameterisation, one draw per data point and unit
	VBP                      // variance backpropagation, Bernoulli relaxation of the ReLU gate
	DVI                      // Gaussian pre-activations, closed-form ReLU moments
	VarDrop                  // variational dropout, additive parameterisation, Gaussian prior
)

var methodNames = [...]string{"mfvi", "vbp", "dvi", "vardrop"}

func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// ParseMethod returns the method named s: mfvi (or mc), vbp, dvi or vardrop.
func ParseMethod(s string) (Method, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "mfvi", "mc", "montecarlo":
		return MonteCarlo, nil
	case "vbp":
		return VBP, nil
	case "dvi":
		return DVI, nil
	case "vardrop", "varout":
		return VarDrop, nil
	}
	return 0, fmt.Errorf("bnn: ParseMethod: unknown method (name=%q)", s)
}

// Sampling reports whether the method draws noise (MonteCarlo, VarDrop) rather than
// propagating moments in closed form (VBP, DVI).
func (m Method) Sampling() bool { return m == MonteCarlo || m == VarDrop }

// Defaults of Net's fields.
const (
	DefaultC         = 100 // VBP's Bernoulli relaxation constant (reference code's value)
	DefaultPriorPrec = 10  // α of the prior N(0, α⁻¹I) for regression (VBP paper)
	vardropClip      = 8   // |log α| bound of VarDrop (Molchanov et al.'s code)
)

// Net is a fully connected ReLU network with mean-field Gaussian weights. It holds structure,
// never values: parameters live in a caller-owned slice of length NumParams, laid out layer by
// layer as
//
//	MonteCarlo, VBP, DVI:  μ_W (k×m, row-major), μ_b (m), log σ²_W (k×m), log σ²_b (m)
//	VarDrop:               θ_W (k×m), b (m), log σ²_W (k×m)
//
// for a layer with k inputs and m outputs. Hidden layers use ReLU; the output layer is linear.
type Net struct {
	Sizes     []int   // widths [inputs, hidden…, outputs]
	Method    Method  // propagation
	C         float64 // VBP relaxation constant; 0 means DefaultC
	PriorPrec float64 // prior precision α; 0 means DefaultPriorPrec
}

// Layer describes where one layer's parameters sit in the flat slice.
type Layer struct {
	In, Out int
	Mu      int // offset of the k×m weight means (θ for VarDrop)
	MuB     int // offset of the m bias means (the biases for VarDrop)
	Rho     int // offset of the k×m weight log-variances
	RhoB    int // offset of the m bias log-variances; −1 for VarDrop (deterministic biases)
}

// Layers returns the parameter layout of every layer. It panics on fewer than two sizes or a
// non-positive width.
func (n *Net) Layers() []Layer {
	n.check()
	ls := make([]Layer, len(n.Sizes)-1)
	off := 0
	for l := range ls {
		ls[l], off = n.layerAt(l, off)
	}
	return ls
}

func (n *Net) check() {
	if len(n.Sizes) < 2 {
		panic(fmt.Sprintf("bnn: Net: need at least input and output sizes (len(Sizes)=%d)", len(n.Sizes)))
	}
	for _, s := range n.Sizes {
		if s <= 0 {
			panic(fmt.Sprintf("bnn: Net: non-positive width (Sizes=%v)", n.Sizes))
		}
	}
}

// layerAt returns layer l given the offset where it starts, and the offset after it.
func (n *Net) layerAt(l, off int) (Layer, int) {
	k, m := n.Sizes[l], n.Sizes[l+1]
	L := Layer{In: k, Out: m, Mu: off, MuB: off + k*m, Rho: off + k*m + m, RhoB: -1}
	off += 2*k*m + m
	if n.Method != VarDrop {
		L.RhoB = off
		off += m
	}
	return L, off
}

// NumParams returns the length of the parameter slice.
func (n *Net) NumParams() int {
	n.check()
	off := 0
	for l := range len(n.Sizes) - 1 {
		_, off = n.layerAt(l, off)
	}
	return off
}

func (n *Net) c() float64 {
	if n.C == 0 {
		return DefaultC
	}
	return n.C
}

func (n *Net) alpha() float64 {
	if n.PriorPrec == 0 {
		return DefaultPriorPrec
	}
	return n.PriorPrec
}

// Init fills params with the VBP reference initialisation: weight means N(0, 1/k) for fan-in k,
// bias means 0, log-variances N(−9, 0.001²) (weights and, where variational, biases).
func (n *Net) Init(params []float64, r *rand.Rand) {
	if len(params) != n.NumParams() {
		panic(fmt.Sprintf("bnn: Init: len(params)=%d, want %d", len(params), n.NumParams()))
	}
	initLayers(n.Layers(), params, r)
}

// varDropVar returns VarDrop's weight variance σ² = α θ² with log α = clip(ρ − log θ², ±8), and
// ∂σ²/∂θ and ∂σ²/∂ρ.
func varDropVar(theta, rho float64) (s2, dTheta, dRho float64) {
	t2 := theta*theta + 1e-16 // keeps log θ² finite at θ = 0
	la := rho - math.Log(t2)
	switch {
	case la > vardropClip:
		a := math.Exp(vardropClip)
		return a * t2, 2 * a * theta, 0
	case la < -vardropClip:
		a := math.Exp(-vardropClip)
		return a * t2, 2 * a * theta, 0
	}
	s2 = math.Exp(rho)
	return s2, 0, s2
}

// KL returns KL(q‖p) = ½ Σ [α(μ² + σ²) − log σ² − 1 − log α] over every Gaussian weight (and
// bias, except VarDrop's deterministic biases) and adds its gradient to grad when grad is not
// nil. Cost O(NumParams).
func (n *Net) KL(params, grad []float64) float64 {
	if len(params) != n.NumParams() || (grad != nil && len(grad) != len(params)) {
		panic(fmt.Sprintf("bnn: KL: len(params)=%d, len(grad)=%d, want %d", len(params), len(grad), n.NumParams()))
	}
	a := n.alpha()
	la := math.Log(a)
	kl := 0.0
	off := 0
	for l := range len(n.Sizes) - 1 {
		var L Layer
		L, off = n.layerAt(l, off)
		kl += layerKL(n.Method, L, params, grad, a, la)
	}
	return kl
}

// layerKL is layer L's share of KL (weights, and biases unless VarDrop) for prior precision a
// (la = log a); it adds the gradient to grad when grad is not nil.
func layerKL(meth Method, L Layer, params, grad []float64, a, la float64) float64 {
	km := L.In * L.Out
	mu, rho := params[L.Mu:L.Mu+km], params[L.Rho:L.Rho+km]
	kl := 0.0
	if meth == VarDrop {
		for i, th := range mu {
			s2, dth, drho := varDropVar(th, rho[i])
			kl += 0.5 * (a*(th*th+s2) - math.Log(s2) - 1 - la)
			if grad != nil {
				g := 0.5 * (a - 1/s2) // ∂KL/∂σ²
				grad[L.Mu+i] += a*th + g*dth
				grad[L.Rho+i] += g * drho
			}
		}
		return kl
	}
	kl += klGauss(mu, rho, a, la, gradSlice(grad, L.Mu, km), gradSlice(grad, L.Rho, km))
	m := L.Out
	kl += klGauss(params[L.MuB:L.MuB+m], params[L.RhoB:L.RhoB+m], a, la, gradSlice(grad, L.MuB, m), gradSlice(grad, L.RhoB, m))
	return kl
}

func gradSlice(g []float64, off, n int) []float64 {
	if g == nil {
		return nil
	}
	return g[off : off+n]
}

// klGauss is the KL of independent N(μ_i, e^{ρ_i}) to N(0, 1/a); it adds gradients when dmu is
// not nil.
func klGauss(mu, rho []float64, a, la float64, dmu, drho []float64) float64 {
	kl := 0.0
	for i, m := range mu {
		s2 := math.Exp(rho[i])
		kl += 0.5 * (a*(m*m+s2) - rho[i] - 1 - la)
		if dmu != nil {
			dmu[i] += a * m
			drho[i] += 0.5 * (a*s2 - 1)
		}
	}
	return kl
}

// initLayers writes the VBP reference initialisation of layers into params: weight means
// N(0, 1/fan-in), bias means 0, log-variances N(−9, 0.001²) (weights and, where variational,
// biases), layer by layer in this order (so a seed gives the same parameters everywhere).
func initLayers(layers []Layer, params []float64, r *rand.Rand) {
	for _, L := range layers {
		sd := 1 / math.Sqrt(float64(L.In))
		for i := range L.In * L.Out {
			params[L.Mu+i] = sd * r.NormFloat64()
			params[L.Rho+i] = -9 + 0.001*r.NormFloat64()
		}
		for j := range L.Out {
			params[L.MuB+j] = 0
			if L.RhoB >= 0 {
				params[L.RhoB+j] = -9 + 0.001*r.NormFloat64()
			}
		}
	}
}
