// Package nn holds the neural-network layers vigo's flows and Bayesian neural nets are built
// from: the multilayer perceptron (MLP) and the masked autoencoder for distribution estimation
// (MADE). Like families and flows, a network holds structure, never values: its weights arrive
// as a caller-owned slice (for Init) or as a Var on an ad.Tape (for Forward), so one network
// value serves any number of parameter vectors and goroutines.
//
// Each layer is one fused ad.Dense node (matrix product, bias and activation together), so
// Forward records one node per layer (two for a masked layer: the mask product and the dense
// node), never per-unit nodes.
//
// Parameter layout, for every layer l in order: the weight matrix W_l (in_l × out_l, row-major:
// W_l[i·out_l + j] connects input i to output j), then the bias b_l (out_l).
package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
)

// MLP is the multilayer perceptron x ↦ W_L·act(…act(W_1·x + b_1)…) + b_L with sizes
// (in, h_1, …, h_{L−1}, out): the activation follows every hidden layer, the output layer is
// linear. Cost per row of input: 2·Σ_l in_l·out_l flops forward, twice that backward.
type MLP struct {
	sizes []int
	act   ad.Activation
	offs  []int // offs[l] is the offset of W_l; b_l follows at offs[l] + in_l·out_l
}

// NewMLP returns the MLP with layer sizes (in, hidden…, out) and hidden activation act.
// len(sizes) ≥ 2 and every size ≥ 1.
func NewMLP(sizes []int, act ad.Activation) *MLP {
	if len(sizes) < 2 {
		panic(fmt.Sprintf("nn: NewMLP: need at least input and output sizes, got %v", sizes))
	}
	for _, s := range sizes {
		if s < 1 {
			panic(fmt.Sprintf("nn: NewMLP: sizes %v must all be ≥ 1", sizes))
		}
	}
	m := &MLP{sizes: append([]int(nil), sizes...), act: act, offs: make([]int, len(sizes))}
	for l := 0; l+1 < len(sizes); l++ {
		m.offs[l+1] = m.offs[l] + sizes[l]*sizes[l+1] + sizes[l+1]
	}
	return m
}

// Sizes returns the layer sizes (in, hidden…, out).
func (m *MLP) Sizes() []int { return m.sizes }

// Activation returns the hidden activation.
func (m *MLP) Activation() ad.Activation { return m.act }

// In returns the input size.
func (m *MLP) In() int { return m.sizes[0] }

// Out returns the output size.
func (m *MLP) Out() int { return m.sizes[len(m.sizes)-1] }

// Layers returns the number of weight layers, len(Sizes) − 1.
func (m *MLP) Layers() int { return len(m.sizes) - 1 }

// NumParams returns Σ_l (in_l·out_l + out_l).
func (m *MLP) NumParams() int { return m.offs[len(m.offs)-1] }

// Layer returns views of layer l's weights (in_l × out_l, row-major) and bias in params.
func (m *MLP) Layer(params []float64, l int) (W, b []float64) {
	checkLen("MLP.Layer", "params", len(params), m.NumParams())
	return layer(params, m.offs[l], m.sizes[l], m.sizes[l+1])
}

func layer(params []float64, off, in, out int) (W, b []float64) {
	w := off + in*out
	return params[off:w:w], params[w : w+out : w+out]
}

// Init draws every weight from Glorot's uniform distribution U(−a, a), a = √(6/(in+out))
// (Glorot & Bengio 2010, eq. 16; Keras' and TFP's default), and sets biases to 0. rnd must not
// be nil.
func (m *MLP) Init(params []float64, rnd *rand.Rand) {
	checkLen("MLP.Init", "params", len(params), m.NumParams())
	for l := 0; l < m.Layers(); l++ {
		W, b := m.Layer(params, l)
		glorot(W, m.sizes[l], m.sizes[l+1], rnd)
		clear(b)
	}
}

func glorot(W []float64, in, out int, rnd *rand.Rand) {
	a := math.Sqrt(6 / float64(in+out))
	for i := range W {
		W[i] = a * (2*rnd.Float64() - 1)
	}
}

// Forward records the network on t for input x: a matrix node n × In (n rows of input) or a
// vector of size In (one row). The result is an n × Out matrix node (1 × Out for a vector,
// which Slice and the elementwise ops treat as a vector of size Out).
func (m *MLP) Forward(t *ad.Tape, params, x ad.Var) ad.Var {
	checkLen("MLP.Forward", "params", t.Size(params), m.NumParams())
	x = asRows(t, x, m.In(), "MLP.Forward")
	for l := 0; l < m.Layers(); l++ {
		x = t.Dense(x, m.weights(t, params, l), m.bias(t, params, l), m.activation(l))
	}
	return x
}

// ForwardC is Forward for a constant input matrix X (data, n × In), which stays off the
// gradient: the first layer is one ad.DenseC node.
func (m *MLP) ForwardC(t *ad.Tape, params ad.Var, X ad.Mat) ad.Var {
	checkLen("MLP.ForwardC", "params", t.Size(params), m.NumParams())
	if X.Cols != m.In() {
		panic(fmt.Sprintf("nn: MLP.ForwardC: X has %d columns, network input is %d", X.Cols, m.In()))
	}
	x := t.DenseC(X, m.weights(t, params, 0), m.bias(t, params, 0), m.activation(0))
	for l := 1; l < m.Layers(); l++ {
		x = t.Dense(x, m.weights(t, params, l), m.bias(t, params, l), m.activation(l))
	}
	return x
}

func (m *MLP) activation(l int) ad.Activation {
	if l == m.Layers()-1 {
		return ad.Linear
	}
	return m.act
}

func (m *MLP) weights(t *ad.Tape, params ad.Var, l int) ad.Var {
	in, out := m.sizes[l], m.sizes[l+1]
	return t.AsMatrix(t.Slice(params, m.offs[l], m.offs[l]+in*out), in, out)
}

func (m *MLP) bias(t *ad.Tape, params ad.Var, l int) ad.Var {
	w := m.offs[l] + m.sizes[l]*m.sizes[l+1]
	return t.Slice(params, w, w+m.sizes[l+1])
}

// asRows returns x as a matrix node with in columns: a vector of size in becomes 1 × in.
func asRows(t *ad.Tape, x ad.Var, in int, fn string) ad.Var {
	r, c := t.Shape(x)
	if c == in {
		return x
	}
	if r*c == in {
		return t.AsMatrix(x, 1, in)
	}
	panic(fmt.Sprintf("nn: %s: input is %d×%d, want n×%d or a vector of size %d", fn, r, c, in, in))
}

func checkLen(fn, name string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("nn: %s: len(%s)=%d, want %d", fn, name, got, want))
	}
}
