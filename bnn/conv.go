package bnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
)

// DefaultPriorPrecClass is ConvNet's default prior precision α: the VBP paper's value for its
// classification experiments (papers.md §2.2).
const DefaultPriorPrecClass = 100

// ConvSpec is one convolution layer of a ConvNet: Out output channels, a Kernel×Kernel kernel
// over all input channels, stride Stride, valid padding (no padding).
type ConvSpec struct {
	Out    int // output channels
	Kernel int // kernel height and width k
	Stride int // stride s; 0 means 1
}

// ConvNet is a ReLU network of strided 2-D convolutions followed by dense layers, all with
// mean-field Gaussian weights and biases, propagated by Method like Net (see the package
// documentation). The all-convolutional LeNet of the VBP paper for 28×28 grey images is
//
//	ConvNet{Height: 28, Width: 28, Channels: 1,
//		Conv:  []ConvSpec{{Out: 20, Kernel: 5, Stride: 2}, {Out: 50, Kernel: 5, Stride: 2}},
//		Dense: []int{500, 10}}
//
// (28×28×1 → 12×12×20 → 4×4×50 = 800 → 500 → 10). Every layer but the last is followed by a
// ReLU; the last is linear. Images and feature maps are stored per data point as H×W×C,
// row-major with the channel fastest (NHWC); the last convolution's map is flattened in that
// order into the first dense layer.
//
// A convolution layer with input H×W×C_in, kernel k, stride s and C_out channels has
// H_o = ⌊(H−k)/s⌋+1 by W_o output positions. Gathering every data point's k×k×C_in input patches
// into the rows of a (B·H_o·W_o)×(k·k·C_in) matrix (im2col) turns it into a dense layer with
// B·H_o·W_o rows, k·k·C_in inputs and C_out outputs, so the moment rules of the package
// documentation carry over: the convolution with kernels μ, σ² and μ²+σ² gives
// E[f] = conv(M, μ) + μ_b and var[f] = conv(V, μ²+σ²) + conv(M², σ²) + σ_b² (the VBP paper's
// "replace the sums by convolutions", papers.md §2.1). As for dense layers, every output unit
// is treated as independent of the others given the layer's input: MonteCarlo draws one noise
// per output unit and position (local reparameterisation), VBP and DVI propagate the diagonal
// moments; both ignore the correlation that shared weights induce between positions. The backward pass scatters the
// patch gradients back onto the input (col2im). Cost per layer and step: 6 (sampling methods)
// to 9 (moment methods) GEMMs of B·H_o·W_o × k·k·C_in × C_out (4 and 5 for the first layer,
// which needs no input gradient).
//
// Parameters live in a caller-owned slice of length NumParams, layer by layer in Net's layout
// with k = Kernel²·C_in inputs (patch order kernel row, kernel column, input channel) and
// m = C_out outputs for a convolution:
//
//	MonteCarlo, VBP, DVI:  μ_W (k×m), μ_b (m), log σ²_W (k×m), log σ²_b (m)
//	VarDrop:               θ_W (k×m), b (m), log σ²_W (k×m)
type ConvNet struct {
	Height, Width, Channels int        // input image shape
	Conv                    []ConvSpec // convolution layers, applied first
	Dense                   []int      // widths of the dense layers that follow; the last is the output (may be empty)
	Method                  Method     // propagation
	C                       float64    // VBP relaxation constant; 0 means DefaultC
	PriorPrec               float64    // prior precision α; 0 means DefaultPriorPrecClass
}

// convGeom is one layer of a ConvNet: its parameter layout (Layer; In is the patch size for a
// convolution) and, for a convolution, the input shape h×w×cin, kernel k, stride s and output
// shape ho×wo. pos is the number of output positions per data point (ho·wo; 1 for dense).
type convGeom struct {
	Layer
	conv                    bool
	h, w, cin, k, s, ho, wo int
	pos                     int
}

// inputs is the number of input values per data point.
func (g *convGeom) inputs() int {
	if g.conv {
		return g.h * g.w * g.cin
	}
	return g.In
}

// appendGeoms appends the layers to dst. It panics on an invalid shape.
func (n *ConvNet) appendGeoms(dst []convGeom) []convGeom {
	h, w, c := n.Height, n.Width, n.Channels
	if h <= 0 || w <= 0 || c <= 0 {
		panic(fmt.Sprintf("bnn: ConvNet: non-positive input shape (H=%d, W=%d, C=%d)", h, w, c))
	}
	if len(n.Conv)+len(n.Dense) == 0 {
		panic("bnn: ConvNet: no layers")
	}
	off := 0
	for _, cs := range n.Conv {
		s := cs.Stride
		if s == 0 {
			s = 1
		}
		if cs.Out <= 0 || cs.Kernel <= 0 || s < 0 || cs.Kernel > h || cs.Kernel > w {
			panic(fmt.Sprintf("bnn: ConvNet: bad convolution %+v on a %d×%d×%d input", cs, h, w, c))
		}
		g := convGeom{conv: true, h: h, w: w, cin: c, k: cs.Kernel, s: s,
			ho: (h-cs.Kernel)/s + 1, wo: (w-cs.Kernel)/s + 1}
		g.pos = g.ho * g.wo
		g.Layer, off = n.layout(cs.Kernel*cs.Kernel*c, cs.Out, off)
		dst = append(dst, g)
		h, w, c = g.ho, g.wo, cs.Out
	}
	in := h * w * c
	for _, m := range n.Dense {
		if m <= 0 {
			panic(fmt.Sprintf("bnn: ConvNet: non-positive dense width (Dense=%v)", n.Dense))
		}
		g := convGeom{pos: 1}
		g.Layer, off = n.layout(in, m, off)
		dst = append(dst, g)
		in = m
	}
	return dst
}

// layout places a layer with k inputs and m outputs at offset off (Net's layout).
func (n *ConvNet) layout(k, m, off int) (Layer, int) {
	L := Layer{In: k, Out: m, Mu: off, MuB: off + k*m, Rho: off + k*m + m, RhoB: -1}
	off += 2*k*m + m
	if n.Method != VarDrop {
		L.RhoB = off
		off += m
	}
	return L, off
}

// Layers returns the parameter layout of every layer, convolutions first (In is the patch
// size k·k·C_in for a convolution). It panics on an invalid shape.
func (n *ConvNet) Layers() []Layer {
	gs := n.appendGeoms(nil)
	ls := make([]Layer, len(gs))
	for i, g := range gs {
		ls[i] = g.Layer
	}
	return ls
}

// NumParams returns the length of the parameter slice.
func (n *ConvNet) NumParams() int {
	var buf [8]convGeom
	return paramsEnd(n.appendGeoms(buf[:0]))
}

// paramsEnd is the offset after the last layer's parameters.
func paramsEnd(gs []convGeom) int {
	L := gs[len(gs)-1].Layer
	if L.RhoB >= 0 {
		return L.RhoB + L.Out
	}
	return L.Rho + L.In*L.Out
}

// outputs is the number of outputs per data point.
func outputs(gs []convGeom) int {
	g := gs[len(gs)-1]
	return g.pos * g.Out
}

// Inputs returns the number of input values per data point, Height·Width·Channels.
func (n *ConvNet) Inputs() int { return n.Height * n.Width * n.Channels }

// Outputs returns the number of outputs per data point (for a classifier, the classes).
func (n *ConvNet) Outputs() int {
	var buf [8]convGeom
	return outputs(n.appendGeoms(buf[:0]))
}

func (n *ConvNet) c() float64 {
	if n.C == 0 {
		return DefaultC
	}
	return n.C
}

func (n *ConvNet) alpha() float64 {
	if n.PriorPrec == 0 {
		return DefaultPriorPrecClass
	}
	return n.PriorPrec
}

// Init fills params with the VBP reference initialisation (as Net.Init): weight means
// N(0, 1/fan-in) with fan-in k·k·C_in for a convolution, bias means 0, log-variances
// N(−9, 0.001²).
func (n *ConvNet) Init(params []float64, r *rand.Rand) {
	if len(params) != n.NumParams() {
		panic(fmt.Sprintf("bnn: ConvNet.Init: len(params)=%d, want %d", len(params), n.NumParams()))
	}
	initLayers(n.Layers(), params, r)
}

// KL returns KL(q‖p) = ½ Σ [α(μ² + σ²) − log σ² − 1 − log α] over every Gaussian weight and bias
// (VarDrop: weights only) and adds its gradient to grad when grad is not nil. Cost
// O(NumParams).
func (n *ConvNet) KL(params, grad []float64) float64 {
	var buf [8]convGeom
	gs := n.appendGeoms(buf[:0])
	np := paramsEnd(gs)
	if len(params) != np || (grad != nil && len(grad) != np) {
		panic(fmt.Sprintf("bnn: ConvNet.KL: len(params)=%d, len(grad)=%d, want %d", len(params), len(grad), np))
	}
	a := n.alpha()
	la := math.Log(a)
	kl := 0.0
	for _, g := range gs {
		kl += layerKL(n.Method, g.Layer, params, grad, a, la)
	}
	return kl
}

// KLNode records KL on t as one fused node of params.
func (n *ConvNet) KLNode(t *ad.Tape, params ad.Var) ad.Var {
	fb := t.Fused()
	d := fb.Partial(params)
	return fb.Done(n.KL(t.Value(params), d))
}

// ConvWorkspace holds the buffers of forward and backward passes through a ConvNet. It grows
// to the largest batch it has seen and then allocates nothing. One goroutine at a time.
type ConvWorkspace struct {
	rows int
	gs   []convGeom
	ls   []convWS
}

// convWS is one layer's buffers: the dense-layer buffers (wsLayer, whose M, V, M2 are the
// patch matrices of a convolution, rows·pos × k), the layer's input moments in, vin (rows ×
// inputs; in aliases the data in layer 0; for a dense layer M and V alias them), the patch
// buffers pM, pV and the gradient with respect to the patches, gMp, gVp.
type convWS struct {
	wsLayer
	in, vin  []float64
	pM, pV   []float64
	gMp, gVp []float64
}

func (ws *ConvWorkspace) prepare(n *ConvNet, rows int) {
	ws.gs = n.appendGeoms(ws.gs[:0])
	if len(ws.ls) != len(ws.gs) {
		ws.ls = make([]convWS, len(ws.gs))
	}
	ws.rows = rows
	for l, g := range ws.gs {
		w := &ws.ls[l]
		k, m := g.In, g.Out
		rp := rows * g.pos
		if l > 0 {
			w.in = grow(w.in, rows*g.inputs())
			w.vin = grow(w.vin, rows*g.inputs())
		}
		if g.conv {
			w.pM = grow(w.pM, rp*k)
			w.pV = grow(w.pV, rp*k)
			if l > 0 {
				w.gMp = grow(w.gMp, rp*k)
				w.gVp = grow(w.gVp, rp*k)
			}
		}
		w.size(rp, k, m)
	}
}

// im2col copies the k×k×cin input patches of rows images (h×w×cin each, in) into the rows of
// out ((rows·ho·wo) × (k·k·cin)), patch order kernel row, kernel column, channel.
func im2col(g *convGeom, rows int, in, out []float64) {
	kc := g.k * g.cin
	nin := g.inputs()
	o := 0
	for n := range rows {
		img := in[n*nin : (n+1)*nin]
		for oh := range g.ho {
			for ow := range g.wo {
				for kh := range g.k {
					st := ((oh*g.s+kh)*g.w + ow*g.s) * g.cin
					copy(out[o:o+kc], img[st:st+kc])
					o += kc
				}
			}
		}
	}
}

// col2im is im2col's adjoint: it sets in to the sum, over every patch entry of out, of the
// entry at the input position it was copied from.
func col2im(g *convGeom, rows int, out, in []float64) {
	kc := g.k * g.cin
	nin := g.inputs()
	clear(in[:rows*nin])
	o := 0
	for n := range rows {
		img := in[n*nin : (n+1)*nin]
		for oh := range g.ho {
			for ow := range g.wo {
				for kh := range g.k {
					st := ((oh*g.s+kh)*g.w + ow*g.s) * g.cin
					dst := img[st : st+kc]
					for i, v := range out[o : o+kc] {
						dst[i] += v
					}
					o += kc
				}
			}
		}
	}
}

// forward propagates rows images X (rows×Inputs) through the network, leaving the output
// moments in the last layer's Mf, Vf. Sampling methods draw hidden-layer noise from r.
func (n *ConvNet) forward(ws *ConvWorkspace, params, X []float64, rows int, r *rand.Rand) {
	ws.prepare(n, rows)
	if np := paramsEnd(ws.gs); len(params) != np {
		panic(fmt.Sprintf("bnn: ConvNet: len(params)=%d, want %d", len(params), np))
	}
	if len(X) < rows*n.Inputs() || rows <= 0 {
		panic(fmt.Sprintf("bnn: ConvNet: X has %d values, want rows×inputs = %d×%d", len(X), rows, n.Inputs()))
	}
	sampling := n.Method.Sampling()
	if sampling && r == nil {
		panic(fmt.Sprintf("bnn: ConvNet: method %s draws noise: r must not be nil", n.Method))
	}
	C := n.c()
	last := len(ws.gs) - 1
	for l := range ws.gs {
		g := &ws.gs[l]
		w := &ws.ls[l]
		k, m := g.In, g.Out
		rp := rows * g.pos
		weightVars(n.Method, &w.wsLayer, params, g.Layer)
		if l == 0 {
			w.in = X[:rows*g.inputs()]
			w.hasV = false
		}
		if g.conv {
			w.M = w.pM[:rp*k]
			im2col(g, rows, w.in, w.M)
			if w.hasV {
				w.V = w.pV[:rp*k]
				im2col(g, rows, w.vin, w.V)
			}
		} else {
			w.M, w.V = w.in, w.vin
		}
		linearForward(&w.wsLayer, params[g.Mu:g.Mu+k*m], params[g.MuB:g.MuB+m], rp, k, m)
		if l == last {
			break
		}
		next := &ws.ls[l+1]
		next.hasV = !sampling
		activate(n.Method, C, &w.wsLayer, rp*m, next.in, next.vin, r)
	}
}

// backward takes the gradient with respect to the output moments in the last layer's gM, gV
// and adds s times the gradient with respect to params to grad.
func (n *ConvNet) backward(ws *ConvWorkspace, params, grad []float64, s float64) {
	rows := ws.rows
	for l := len(ws.gs) - 1; l >= 0; l-- {
		g := &ws.gs[l]
		w := &ws.ls[l]
		k, m := g.In, g.Out
		rp := rows * g.pos
		linearBackward(n.Method, &w.wsLayer, g.Layer, rp, params, grad, s)
		if l == 0 {
			break
		}
		p := &ws.ls[l-1]
		nin := rows * g.inputs()
		gMh, gVh := p.gM[:nin], p.gV[:nin]
		mu := params[g.Mu : g.Mu+k*m]
		if g.conv {
			inputGrad(&w.wsLayer, mu, rp, k, m, w.gMp[:rp*k], w.gVp[:rp*k])
			col2im(g, rows, w.gMp, gMh)
			if w.hasV {
				col2im(g, rows, w.gVp, gVh)
			}
		} else {
			inputGrad(&w.wsLayer, mu, rows, k, m, gMh, gVh)
		}
		applyJacobian(&p.wsLayer, w.hasV, gMh, gVh)
	}
}

// Moments computes the output moments E[f], var[f] (rows×Outputs) for the images X: closed
// form for VBP and DVI; for the sampling methods the output layer's moments given one draw of
// the hidden layers (from r). The slices are owned by ws and valid until its next use.
func (n *ConvNet) Moments(ws *ConvWorkspace, params, X []float64, rows int, r *rand.Rand) (mean, variance []float64) {
	n.forward(ws, params, X, rows, r)
	w := &ws.ls[len(ws.ls)-1]
	no := rows * outputs(ws.gs)
	return w.Mf[:no], w.Vf[:no]
}

// CategoricalLogLik returns scale · Σ_n E_q[log softmax(f(x_n))_{y_n}] over rows images X
// (rows×Inputs) with labels y_n ∈ [0, Outputs) and, when grad is not nil, adds its gradient
// with respect to params to grad; as Net.CategoricalLogLik (Taylor approximation for VBP and
// DVI, one draw per data point for the sampling methods). With scale = N/B it is the unbiased
// minibatch estimate of the ELBO's data term. Cost: one forward and one backward pass.
func (n *ConvNet) CategoricalLogLik(ws *ConvWorkspace, params, X []float64, y []int, rows int, scale float64, r *rand.Rand, grad []float64) float64 {
	if len(y) < rows {
		panic(fmt.Sprintf("bnn: ConvNet.CategoricalLogLik: %d labels for %d rows", len(y), rows))
	}
	if grad != nil && len(grad) != len(params) {
		panic(fmt.Sprintf("bnn: ConvNet.CategoricalLogLik: len(grad)=%d, len(params)=%d", len(grad), len(params)))
	}
	n.forward(ws, params, X, rows, r)
	K := outputs(ws.gs)
	for _, c := range y[:rows] {
		if c < 0 || c >= K {
			panic(fmt.Sprintf("bnn: ConvNet.CategoricalLogLik: label %d outside [0, %d)", c, K))
		}
	}
	w := &ws.ls[len(ws.ls)-1]
	sampling := n.Method.Sampling()
	ll := 0.0
	for i := range rows {
		ll += categoricalRow(sampling, w.Mf[i*K:(i+1)*K], w.Vf[i*K:(i+1)*K], w.gM[i*K:(i+1)*K], w.gV[i*K:(i+1)*K], y[i], r)
	}
	if grad != nil {
		n.backward(ws, params, grad, scale)
	}
	return scale * ll
}

// CategoricalLogLikNode records CategoricalLogLik on t as one fused node of params.
func (n *ConvNet) CategoricalLogLikNode(t *ad.Tape, ws *ConvWorkspace, params ad.Var, X []float64, y []int, rows int, scale float64, r *rand.Rand) ad.Var {
	fb := t.Fused()
	d := fb.Partial(params)
	v := n.CategoricalLogLik(ws, t.Value(params), X, y, rows, scale, r, d)
	return fb.Done(v)
}
