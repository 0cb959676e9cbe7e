package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// MADE is the masked autoencoder for distribution estimation of Germain, Gregor, Murray &
// Larochelle (2015, ICML, §4): an MLP on x ∈ ℝ^d whose weights are multiplied by fixed binary
// masks so that every output for dimension j depends only on the inputs that come before j in
// the ordering. With K outputs per dimension it is the conditioner of autoregressive flows
// (MAF, IAF, multivariate Bernstein flows): out_{p,j} = f_{p,j}(x_{<j}).
//
// Degrees (Germain et al. §4.2). Input i has degree m(i) ∈ {1..d}, its rank in the ordering
// (default m(i) = i + 1, TFP's "left-to-right"). Hidden unit h of a layer of size H has degree
// 1 + ⌊h·(d−1)/H⌋ ∈ {1..d−1}, spread evenly and deterministically (the "equal" hidden degrees
// of TFP's AutoregressiveNetwork). A unit of degree m' sees input i iff m' ≥ m(i) (hidden
// layers, including hidden to hidden), an output of dimension j sees a unit of degree m' iff
// m(j) > m' (strict, so out_j never sees x_j). With no hidden layers the network is one masked
// affine layer with the strict mask. For d = 1 no hidden unit reaches the output: the output is
// its bias, a constant, as it must be.
//
// Output layout is parameter-major: out[p·d + j] is parameter p of dimension j, so parameter p
// of all dimensions is the contiguous block out[p·d : (p+1)·d].
//
// Parameters are those of the MLP with sizes (d, hidden…, K·d), masked entries included (they
// receive zero gradient and Init sets them to 0), then the direct connections (WithDirect). Cost: that of the MLP plus one elementwise
// mask product per layer (in_l·out_l flops forward and backward).
type MADE struct {
	mlp    *MLP
	d, k   int
	deg    []int       // input degrees m(i)
	masks  [][]float64 // per layer, in_l × out_l row-major, entries 0 or 1
	hidden []int
	direct []float64 // strict d × K·d mask of the direct connections, nil without them
	// rows[j]: the rows of the output layer's weight matrix (units of the last hidden layer,
	// or inputs without hidden layers) that the outputs of dimension j see; drows[j]: the
	// inputs whose direct connections reach dimension j (empty without them). poff[j]: the
	// offset of dimension j in the packed output layer (PackOutput), len d+1.
	rows, drows [][]int
	poff        []int
	// cols[r]: the dimensions j whose outputs see row r of the output layer's weight matrix,
	// ascending, each with the offset of its weight run for r in the packed output layer.
	cols [][]colRun
}

// colRun is one weight run of the packed output layer: dimension j, offset off.
type colRun struct{ j, off int }

// MADEOption configures a MADE.
type MADEOption func(*madeConfig)

type madeConfig struct {
	act    ad.Activation
	order  []int
	direct bool
}

// WithActivation sets the hidden activation (default ad.Tanh). ad.Linear gives the network
// without nonlinearity, a masked affine map (TFP's AutoregressiveNetwork default, used by the
// BF-VI reference code).
func WithActivation(a ad.Activation) MADEOption { return func(c *madeConfig) { c.act = a } }

// WithOrder sets the input ordering: order[i] is the degree (1-based position in the
// autoregressive order) of input i, a permutation of 1..d. Default: order[i] = i + 1.
func WithOrder(order []int) MADEOption {
	return func(c *madeConfig) { c.order = append([]int(nil), order...) }
}

// WithDirect adds direct input-to-output connections (Germain et al. 2015, §4.1): a strictly
// masked d × K·d weight matrix V whose product with x is added to the output, so
// out = MLP(x) + x·V. The network then contains every affine autoregressive map exactly (for a
// MAF, every full-rank Gaussian), and its outputs extrapolate linearly instead of saturating in
// the tails. V follows the MLP's parameters; Init sets it to 0.
func WithDirect() MADEOption { return func(c *madeConfig) { c.direct = true } }

// NewMADE returns a MADE on ℝ^d with the given hidden layer sizes (may be empty) and k ≥ 1
// outputs per dimension.
func NewMADE(d int, hidden []int, k int, opts ...MADEOption) *MADE {
	if d < 1 || k < 1 {
		panic(fmt.Sprintf("nn: NewMADE: d=%d, k=%d, want both ≥ 1", d, k))
	}
	c := madeConfig{act: ad.Tanh}
	for _, o := range opts {
		o(&c)
	}
	deg := make([]int, d)
	if c.order == nil {
		for i := range deg {
			deg[i] = i + 1
		}
	} else {
		if len(c.order) != d {
			panic(fmt.Sprintf("nn: NewMADE: order has %d entries, d=%d", len(c.order), d))
		}
		seen := make([]bool, d+1)
		for _, m := range c.order {
			if m < 1 || m > d || seen[m] {
				panic(fmt.Sprintf("nn: NewMADE: order %v is not a permutation of 1..%d", c.order, d))
			}
			seen[m] = true
		}
		copy(deg, c.order)
	}
	sizes := append(append([]int{d}, hidden...), k*d)
	m := &MADE{mlp: NewMLP(sizes, c.act), d: d, k: k, deg: deg, hidden: append([]int(nil), hidden...)}

	// Unit degrees layer by layer.
	prev := deg
	for _, H := range hidden {
		cur := make([]int, H)
		for h := range cur {
			cur[h] = 1 + h*(d-1)/H
		}
		m.masks = append(m.masks, mask(prev, cur, false))
		prev = cur
	}
	out := make([]int, k*d)
	for p := 0; p < k; p++ {
		copy(out[p*d:(p+1)*d], deg)
	}
	m.masks = append(m.masks, mask(prev, out, true))
	if c.direct && len(hidden) > 0 {
		m.direct = mask(deg, out, true)
	}
	m.rows = seenBy(prev, deg)
	m.drows = make([][]int, d)
	if m.direct != nil {
		m.drows = seenBy(deg, deg)
	}
	m.poff = make([]int, d+1)
	for j := range d {
		m.poff[j+1] = m.poff[j] + k*(1+len(m.rows[j])+len(m.drows[j]))
	}
	m.cols = make([][]colRun, len(prev))
	for j := range d {
		for i, r := range m.rows[j] {
			m.cols[r] = append(m.cols[r], colRun{j, m.poff[j] + k*(1+i)})
		}
	}
	return m
}

// seenBy returns, for each output degree b in out, the indices i with in[i] < b: the units an
// output of that degree sees through a strict mask.
func seenBy(in, out []int) [][]int {
	r := make([][]int, len(out))
	for j, b := range out {
		r[j] = []int{}
		for i, a := range in {
			if a < b {
				r[j] = append(r[j], i)
			}
		}
	}
	return r
}

// mask returns the in × out mask: 1 where out degree ≥ in degree (> when strict).
func mask(in, out []int, strict bool) []float64 {
	M := make([]float64, len(in)*len(out))
	for i, a := range in {
		for j, b := range out {
			if b > a || (!strict && b == a) {
				M[i*len(out)+j] = 1
			}
		}
	}
	return M
}

// Dim returns d.
func (m *MADE) Dim() int { return m.d }

// K returns the number of outputs per dimension.
func (m *MADE) K() int { return m.k }

// Hidden returns the hidden layer sizes.
func (m *MADE) Hidden() []int { return m.hidden }

// Activation returns the hidden activation.
func (m *MADE) Activation() ad.Activation { return m.mlp.act }

// Degrees returns the input degrees m(i).
func (m *MADE) Degrees() []int { return m.deg }

// NumParams returns the parameter count of the underlying MLP, plus d·K·d with direct
// connections.
func (m *MADE) NumParams() int { return m.mlp.NumParams() + len(m.direct) }

// HasDirect reports whether the network has direct input-to-output connections (always false
// without hidden layers, where the only layer already is the direct one).
func (m *MADE) HasDirect() bool { return m.direct != nil }

// Direct returns the view of the direct connection weights V (d × K·d, row-major) in params,
// or nil without direct connections.
func (m *MADE) Direct(params []float64) []float64 {
	checkLen("MADE.Direct", "params", len(params), m.NumParams())
	if m.direct == nil {
		return nil
	}
	return params[m.mlp.NumParams():]
}

// DirectMask returns the strict d × K·d mask of the direct connections (entries 0 or 1), or
// nil without them. Do not modify it.
func (m *MADE) DirectMask() []float64 { return m.direct }

// Layers returns the number of weight layers (len(Hidden) + 1).
func (m *MADE) Layers() int { return m.mlp.Layers() }

// Layer returns views of layer l's weights (in_l × out_l, row-major) and bias in params.
func (m *MADE) Layer(params []float64, l int) (W, b []float64) {
	checkLen("MADE.Layer", "params", len(params), m.NumParams())
	return layer(params, m.mlp.offs[l], m.mlp.sizes[l], m.mlp.sizes[l+1])
}

// Mask returns layer l's mask (in_l × out_l, row-major, entries 0 or 1). Do not modify it.
func (m *MADE) Mask(l int) []float64 { return m.masks[l] }

// Init draws the weights as MLP.Init does, zeroes the masked ones, sets biases and direct
// connections to 0. rnd must not be nil.
func (m *MADE) Init(params []float64, rnd *rand.Rand) {
	checkLen("MADE.Init", "params", len(params), m.NumParams())
	n := m.mlp.NumParams()
	m.mlp.Init(params[:n], rnd)
	clear(params[n:])
	for l := range m.masks {
		W, _ := m.Layer(params, l)
		for i, v := range m.masks[l] {
			W[i] *= v
		}
	}
}

// HiddenLen returns the number of hidden units, Σ of the hidden sizes: the length of the
// activations HiddenForward keeps.
func (m *MADE) HiddenLen() int {
	n := 0
	for _, h := range m.hidden {
		n += h
	}
	return n
}

// HiddenForward evaluates the hidden layers for one input x (size d) in plain float64,
// writing their activations into hs (length HiddenLen, layer after layer), and returns the
// output of the last hidden layer (a view of hs), or x itself when there are no hidden layers:
// the input of the output layer. With OutputsByDim and the pullbacks HiddenBack and
// OutputsByDimBack it is Forward for callers that put the whole network into one node of their
// own (ad.Custom), which saves the tape nodes of every layer and the masked copies of the
// weights. Masked weights are never used. Cost: Σ_l in_l·out_l multiply-adds and one
// activation per hidden unit; no allocation.
func (m *MADE) HiddenForward(params, x, hs []float64) []float64 {
	checkLen("MADE.HiddenForward", "params", len(params), m.NumParams())
	checkLen("MADE.HiddenForward", "x", len(x), m.d)
	checkLen("MADE.HiddenForward", "hs", len(hs), m.HiddenLen())
	in := x
	for l, H := range m.hidden {
		W, b := m.Layer(params, l)
		M := m.masks[l]
		y := hs[:H]
		hs = hs[H:]
		copy(y, b)
		for i, xi := range in {
			w, mk := W[i*H:(i+1)*H], M[i*H:(i+1)*H]
			for o := range y {
				y[o] += xi * (w[o] * mk[o])
			}
		}
		Activate(m.mlp.act, y)
		in = y
	}
	return in
}

// HiddenBack is the pullback of HiddenForward at x with activations hs: for the adjoint gLast
// of its result (the last hidden layer; it is overwritten) it adds ∂/∂params into gparams and
// ∂/∂x into gx (either may be nil to skip it). ws is scratch of length HiddenLen. Without
// hidden layers there is nothing to do (the result was x: its adjoint is the caller's).
// Cost: twice that of HiddenForward.
func (m *MADE) HiddenBack(params, x, hs, gLast, gparams, gx, ws []float64) {
	L := len(m.hidden)
	if L == 0 {
		return
	}
	checkLen("MADE.HiddenBack", "params", len(params), m.NumParams())
	checkLen("MADE.HiddenBack", "hs", len(hs), m.HiddenLen())
	checkLen("MADE.HiddenBack", "ws", len(ws), m.HiddenLen())
	checkLen("MADE.HiddenBack", "gLast", len(gLast), m.hidden[L-1])
	off := len(hs) - m.hidden[L-1]
	g := gLast
	for l := L - 1; l >= 0; l-- {
		H := m.hidden[l]
		y := hs[off : off+H]
		ActivateBack(m.mlp.act, g, y) // g = ȳ ⊙ act′ at this layer
		W, _ := m.Layer(params, l)
		M := m.masks[l]
		var gW, gb []float64
		if gparams != nil {
			gW, gb = m.Layer(gparams, l)
			for o, v := range g {
				gb[o] += v
			}
		}
		var in, gin []float64
		if l == 0 {
			in, gin = x, gx
		} else {
			off -= m.hidden[l-1]
			in = hs[off : off+m.hidden[l-1]]
			gin = ws[off : off+m.hidden[l-1]]
			clear(gin)
		}
		for i, xi := range in {
			w, mk := W[i*H:(i+1)*H], M[i*H:(i+1)*H]
			if gW != nil {
				gw := gW[i*H : (i+1)*H]
				for o, v := range g {
					gw[o] += mk[o] * (xi * v)
				}
			}
			if gin != nil {
				s := 0.0
				for o, v := range g {
					s += (w[o] * mk[o]) * v
				}
				gin[i] += s
			}
		}
		g = gin
	}
}

// Activate applies a hidden activation in place, as ad.Dense does (for code that runs a
// network's layers outside the tape, as nn.MADE's and flow's batched nodes do). Cost O(len(y)).
func Activate(act ad.Activation, y []float64) {
	switch act {
	case ad.ReLU:
		for i, z := range y {
			y[i] = max(z, 0)
		}
	case ad.Tanh:
		for i, z := range y {
			y[i] = math.Tanh(z)
		}
	case ad.Sigmoid:
		for i, z := range y {
			y[i] = mathx.Logistic(z)
		}
	}
}

// ActivateBack multiplies the adjoint g by the activation's derivative, written in terms of
// the output y, as ad.Dense's backward does. Cost O(len(y)).
func ActivateBack(act ad.Activation, g, y []float64) {
	switch act {
	case ad.ReLU:
		for i, yi := range y {
			if yi <= 0 {
				g[i] = 0
			}
		}
	case ad.Tanh:
		for i, yi := range y {
			g[i] *= 1 - yi*yi
		}
	case ad.Sigmoid:
		for i, yi := range y {
			g[i] *= yi * (1 - yi)
		}
	}
}

// PackedLen returns the length of the packed output layer (PackOutput).
func (m *MADE) PackedLen() int { return m.poff[m.d] }

// PackOutput copies the parameters of the output layer that the outputs can see into packed
// (length PackedLen), dimension by dimension: for dimension j its K biases, then for each unit
// of the last hidden layer it sees (each input, without hidden layers) its K weights, then for
// each input it reaches by direct connections its K weights, every run contiguous. Masked
// weights are left out. This is the layout OutputsByDim reads: pack once per parameter value
// (once per gradient step), evaluate for many inputs. Cost: one pass over the unmasked
// weights, about half of the output layer for the default degrees.
func (m *MADE) PackOutput(params, packed []float64) {
	checkLen("MADE.PackOutput", "params", len(params), m.NumParams())
	checkLen("MADE.PackOutput", "packed", len(packed), m.PackedLen())
	L := m.mlp.Layers() - 1
	W, b := m.Layer(params, L)
	V := m.Direct(params)
	d, k, kd := m.d, m.k, m.k*m.d
	for j := range d {
		q := packed[m.poff[j]:m.poff[j+1]]
		stridedCopy(q[:k], b[j:], d)
		q = q[k:]
		for _, r := range m.rows[j] {
			stridedCopy(q[:k], W[r*kd+j:], d)
			q = q[k:]
		}
		for _, r := range m.drows[j] {
			stridedCopy(q[:k], V[r*kd+j:], d)
			q = q[k:]
		}
	}
}

// OutputsByDim writes the network's outputs for one input, dimension by dimension:
// C[j·K + p] = out[p·d + j], the K outputs of dimension j contiguous (the transpose of
// Forward's parameter-major layout), from the packed output layer (PackOutput), the output h
// of HiddenForward and the input x (read only with direct connections). Cost:
// K·Σ_j (|units seen by j| + |direct inputs of j|) multiply-adds in contiguous runs, about
// half of the dense K·d·H for the default degrees, four runs per pass over the outputs
// (kernel.Axpy4: AVX2+FMA assembly in the default amd64 build, pure Go elsewhere). No
// allocation.
func (m *MADE) OutputsByDim(packed, h, x, C []float64) {
	checkLen("MADE.OutputsByDim", "packed", len(packed), m.PackedLen())
	checkLen("MADE.OutputsByDim", "C", len(C), m.d*m.k)
	checkLen("MADE.OutputsByDim", "h", len(h), m.mlp.sizes[m.mlp.Layers()-1])
	if m.direct != nil {
		checkLen("MADE.OutputsByDim", "x", len(x), m.d)
	}
	k := m.k
	for j := range m.d {
		c := C[j*k : (j+1)*k]
		q := packed[m.poff[j]:m.poff[j+1]]
		copy(c, q[:k])
		q = q[k:]
		rows := m.rows[j]
		for ; len(rows) >= 4; rows = rows[4:] { // four rows per pass over c
			kernel.Axpy4(h[rows[0]], h[rows[1]], h[rows[2]], h[rows[3]], q[:4*k], c)
			q = q[4*k:]
		}
		for ; len(rows) >= 2; rows = rows[2:] {
			kernel.Axpy2(h[rows[0]], h[rows[1]], q[:2*k], c)
			q = q[2*k:]
		}
		for _, r := range rows {
			kernel.Axpy(h[r], q[:k], c)
			q = q[k:]
		}
		for _, r := range m.drows[j] {
			kernel.Axpy(x[r], q[:k], c)
			q = q[k:]
		}
	}
}

// OutputsByDimBack is the pullback of OutputsByDim: for the adjoint G of C (same layout) it
// adds ∂/∂params into gparams (output layer weights and bias, direct connections, in the
// layout of params), ∂/∂h into gh and, with direct connections, ∂/∂x into gx. Any of gparams,
// gh, gx may be nil to skip it. Cost: twice that of OutputsByDim.
func (m *MADE) OutputsByDimBack(packed, h, x, G, gparams, gh, gx []float64) {
	checkLen("MADE.OutputsByDimBack", "packed", len(packed), m.PackedLen())
	checkLen("MADE.OutputsByDimBack", "G", len(G), m.d*m.k)
	L := m.mlp.Layers() - 1
	d, k, kd := m.d, m.k, m.k*m.d
	var gW, gb, gV []float64
	if gparams != nil {
		checkLen("MADE.OutputsByDimBack", "gparams", len(gparams), m.NumParams())
		gW, gb = m.Layer(gparams, L)
		gV = m.Direct(gparams)
	}
	if gb != nil {
		// Four dimensions per pass where d allows (the kernel's dot product, here Σ ḡ², is
		// not used; a = 1 makes every addition the same as the scalar loop's).
		j := 0
		for ; d >= 4 && j+4 <= d; j += 4 {
			g := G[j*k : (j+4)*k]
			kernel.ScatterAxpyDot4(1, g, gb[j:], d, g, [4]int{0, k, 2 * k, 3 * k})
		}
		for ; j < d; j++ {
			scatterAxpy(1, G[j*k:(j+1)*k], gb[j:], d)
		}
	}
	if gW != nil {
		// Row by row of the weight adjoint (K·d contiguous entries, 4 KB at K = 51, d = 10):
		// the strided scatters of all dimensions that see row r hit the same cache lines one
		// after the other (dimension by dimension, they swept the whole 40 KB adjoint d
		// times). Four adjacent dimensions at a time where they see the row
		// (kernel.ScatterAxpyDot4: one vector read-modify-write per four entries), one at a
		// time otherwise; one pass over each run of G, which also forms ∂h_r. Every entry of
		// the adjoint receives one rounded product, as before.
		for r, cs := range m.cols {
			row, a := gW[r*kd:(r+1)*kd], h[r]
			for len(cs) > 0 {
				c := cs[0]
				if gh != nil && d >= 4 && len(cs) >= 4 && cs[3].j == c.j+3 {
					o := [4]int{c.off, cs[1].off, cs[2].off, cs[3].off}
					gh[r] += kernel.ScatterAxpyDot4(a, G[c.j*k:(c.j+4)*k], row[c.j:], d, packed, o)
					cs = cs[4:]
					continue
				}
				g := G[c.j*k : (c.j+1)*k]
				if gh != nil { // one pass over g
					gh[r] += kernel.ScatterAxpyDot(a, g, row[c.j:], d, packed[c.off:c.off+k])
				} else {
					scatterAxpy(a, g, row[c.j:], d)
				}
				cs = cs[1:]
			}
		}
	}
	for j := range d {
		g := G[j*k : (j+1)*k]
		q := packed[m.poff[j]+k : m.poff[j+1]]
		if gW == nil && gh != nil {
			for _, r := range m.rows[j] {
				gh[r] += kernel.Dot(q[:k], g)
				q = q[k:]
			}
		} else {
			q = q[k*len(m.rows[j]):]
		}
		for _, r := range m.drows[j] {
			if gV != nil {
				scatterAxpy(x[r], g, gV[r*kd+j:], d)
			}
			if gx != nil {
				gx[r] += kernel.Dot(q[:k], g)
			}
			q = q[k:]
		}
	}
}

// OutputsOfDimBack is OutputsByDimBack for the K outputs of dimension j alone and without the
// parameter adjoints: for the adjoint g (length K) of C[j·K : (j+1)·K] it adds ∂/∂h into gh
// and, with direct connections, ∂/∂x into gx (either may be nil to skip it). Cost:
// K·(|units seen by j| + |direct inputs of j|) multiply-adds, so the d dimensions one at a time
// cost one OutputsByDimBack without parameters. No allocation.
func (m *MADE) OutputsOfDimBack(packed []float64, j int, g, gh, gx []float64) {
	checkLen("MADE.OutputsOfDimBack", "packed", len(packed), m.PackedLen())
	checkLen("MADE.OutputsOfDimBack", "g", len(g), m.k)
	if j < 0 || j >= m.d {
		panic(fmt.Sprintf("nn: MADE.OutputsOfDimBack: dimension %d, want 0..%d", j, m.d-1))
	}
	k := m.k
	q := packed[m.poff[j]+k : m.poff[j+1]]
	for _, r := range m.rows[j] {
		if gh != nil {
			gh[r] += kernel.Dot(q[:k], g)
		}
		q = q[k:]
	}
	if gx == nil {
		return
	}
	for _, r := range m.drows[j] {
		gx[r] += kernel.Dot(q[:k], g)
		q = q[k:]
	}
}

// Forward records the network on t for x (a vector of size d, or an n × d matrix of rows) and
// returns the n × K·d output in the parameter-major layout.
func (m *MADE) Forward(t *ad.Tape, params, x ad.Var) ad.Var {
	checkLen("MADE.Forward", "params", t.Size(params), m.NumParams())
	x = asRows(t, x, m.d, "MADE.Forward")
	in := x
	mlp := m.mlp
	for l := 0; l < mlp.Layers(); l++ {
		W := t.Mul(mlp.weights(t, params, l), t.ConstRef(m.masks[l]))
		x = t.Dense(x, W, mlp.bias(t, params, l), mlp.activation(l))
	}
	if m.direct != nil {
		n := mlp.NumParams()
		V := t.AsMatrix(t.Slice(params, n, n+len(m.direct)), m.d, m.k*m.d)
		x = t.Add(x, t.MatMul(in, t.Mul(V, t.ConstRef(m.direct))))
	}
	return x
}

// scatterAxpy adds a·g[p] to dst[p·s] for p < len(g).
func scatterAxpy(a float64, g, dst []float64, s int) {
	if len(g) == 0 {
		return
	}
	dst = dst[:(len(g)-1)*s+1]
	for p, v := range g {
		dst[p*s] += a * v
	}
}

// stridedCopy sets c[p] = w[p·s] for p < len(c).
func stridedCopy(c, w []float64, s int) {
	if len(c) == 0 {
		return
	}
	w = w[:(len(c)-1)*s+1]
	for p := range c {
		c[p] = w[p*s]
	}
}

// OutputsByDimBackBatch is OutputsByDimBack for S inputs at once, with the weight adjoints
// summed over the S inputs before they are added to gparams: the output layer's backward pass
// of a batch of draws as matrix products over the draws. h holds the S inputs of the output
// layer (S×n row-major, n the last hidden size, or d without hidden layers), x the S inputs of
// the network (S×d, read only with direct connections), and G the adjoints of the S outputs by
// dimension, then input: G[(j·S + s)·K + p] is the adjoint of C_s[j·K + p] (OutputsByDim's
// layout for input s). It adds ∂/∂params into gparams and ∂/∂h into gh (S×n), ∂/∂x into gx
// (S×d, with direct connections); any of them may be nil to skip it. acc is scratch of K.
//
// For a weight W_rc of the output layer, ∂/∂W_rc = Σ_s h_sr·Ḡ_sc: for every run (row r,
// dimension j) of the packed layer the K sums over s are formed contiguously (kernel.Axpy4,
// four inputs per pass) and added to the strided parameter layout once, where
// OutputsByDimBack adds S strided runs; ∂/∂h_sr = Σ_c W_rc·Ḡ_sc is one dot product per run and
// input, as there. Cost: 2·S·K·Σ_j |units seen by j| multiply-adds plus one strided pass over
// the unmasked weights, against the same multiply-adds and S strided passes.
func (m *MADE) OutputsByDimBackBatch(S int, packed, h, x, G, gparams, gh, gx, acc []float64) {
	checkLen("MADE.OutputsByDimBackBatch", "packed", len(packed), m.PackedLen())
	checkLen("MADE.OutputsByDimBackBatch", "G", len(G), S*m.d*m.k)
	checkLen("MADE.OutputsByDimBackBatch", "acc", len(acc), m.k)
	n := m.mlp.sizes[m.mlp.Layers()-1]
	checkLen("MADE.OutputsByDimBackBatch", "h", len(h), S*n)
	if gh != nil {
		checkLen("MADE.OutputsByDimBackBatch", "gh", len(gh), S*n)
	}
	L := m.mlp.Layers() - 1
	d, k, kd := m.d, m.k, m.k*m.d
	var gW, gb, gV []float64
	if gparams != nil {
		checkLen("MADE.OutputsByDimBackBatch", "gparams", len(gparams), m.NumParams())
		gW, gb = m.Layer(gparams, L)
		gV = m.Direct(gparams)
	}
	// sumRuns sets acc = Σ_s a(s)·G_js, the K-vector sum over the inputs of dimension j's
	// adjoints weighted by a(s) = v[s·stride + r].
	sumRuns := func(j int, v []float64, stride, r int) {
		Gj := G[j*S*k : (j+1)*S*k]
		clear(acc)
		s := 0
		for ; s+4 <= S; s += 4 {
			kernel.Axpy4(v[s*stride+r], v[(s+1)*stride+r], v[(s+2)*stride+r], v[(s+3)*stride+r], Gj[s*k:(s+4)*k], acc)
		}
		for ; s < S; s++ {
			kernel.Axpy(v[s*stride+r], Gj[s*k:(s+1)*k], acc)
		}
	}
	if gb != nil {
		for j := range d {
			Gj := G[j*S*k : (j+1)*S*k]
			clear(acc)
			for s := range S {
				g := Gj[s*k : (s+1)*k]
				for p, v := range g {
					acc[p] += v
				}
			}
			scatterAxpy(1, acc, gb[j:], d)
		}
	}
	for j := range d {
		q := packed[m.poff[j]+k : m.poff[j+1]]
		Gj := G[j*S*k : (j+1)*S*k]
		for _, r := range m.rows[j] {
			if gW != nil {
				sumRuns(j, h, n, r)
				scatterAxpy(1, acc, gW[r*kd+j:], d)
			}
			if gh != nil {
				w := q[:k]
				for s := range S {
					gh[s*n+r] += kernel.Dot(w, Gj[s*k:(s+1)*k])
				}
			}
			q = q[k:]
		}
		for _, r := range m.drows[j] {
			if gV != nil {
				sumRuns(j, x, d, r)
				scatterAxpy(1, acc, gV[r*kd+j:], d)
			}
			if gx != nil {
				w := q[:k]
				for s := range S {
					gx[s*d+r] += kernel.Dot(w, Gj[s*k:(s+1)*k])
				}
			}
			q = q[k:]
		}
	}
}
