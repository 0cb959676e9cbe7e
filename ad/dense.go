package ad

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Activation is the elementwise nonlinearity fused into a Dense node.
type Activation uint8

// Activations for Dense and DenseC.
const (
	Linear Activation = iota
	ReLU
	Tanh
	Sigmoid
)

func (a Activation) String() string {
	switch a {
	case Linear:
		return "linear"
	case ReLU:
		return "relu"
	case Tanh:
		return "tanh"
	case Sigmoid:
		return "sigmoid"
	}
	return fmt.Sprintf("Activation(%d)", uint8(a))
}

// Dense returns act(X·W + 1·bᵀ) for a matrix node X (n×k), weights W (k×m) and bias b (size m),
// as one node: the layer of a neural network with its bias and activation fused, so the
// n×m pre-activation never goes on the tape. Cost 2nkm flops forward, 4nkm backward, on
// package internal/kernel: the forward product, bias and ReLU in one register-blocked pass
// (kernel.Dense; a GEMV when m = 1) that also keeps the ReLU pattern as one bit per output;
// the backward in blocks of rows that stay in L1 (activation derivative, then W̄ += XᵀG with
// the bias sums, then X̄ += G·Wᵀ); a single output's backward is one kernel.GemvTGer pass.
func (t *Tape) Dense(X, W, b Var, act Activation) Var {
	n, k := t.Shape(X)
	return t.dense(t.nodes[X.id].val, n, k, X.id, -1, W, b, act)
}

// DenseC is Dense for a constant input matrix X (data such as a design matrix), which gets no
// adjoint and costs nothing to keep on the tape.
func (t *Tape) DenseC(X Mat, W, b Var, act Activation) Var {
	if len(X.Data) < X.Rows*X.Cols {
		panic(fmt.Sprintf("ad: DenseC: X is %d×%d but has %d values", X.Rows, X.Cols, len(X.Data)))
	}
	t.consts = append(t.consts, constMat{X})
	return t.dense(X.Data, X.Rows, X.Cols, -1, int32(len(t.consts)-1), W, b, act)
}

func (t *Tape) dense(x []float64, n, k int, xid, cid int32, W, b Var, act Activation) Var {
	wk, m := t.Shape(W)
	if wk != k || t.Size(b) != m {
		panic(fmt.Sprintf("ad: Dense: X is %d×%d, W is %d×%d, b has size %d", n, k, wk, m, t.Size(b)))
	}
	v, nd := t.newNode(opDense, W.id, b.id, n, m)
	nd.lo, nd.hi = xid, cid
	nd.c = float64(act)
	y := nd.val
	bv, wv := t.nodes[b.id].val, t.nodes[W.id].val
	if m == 1 { // a single output (regression head): n dots of length k
		for i := range y {
			y[i] = bv[0]
		}
		kernel.GemvN(x[:n*k], k, wv, y)
		if act == ReLU {
			for i, z := range y {
				y[i] = max(z, 0)
			}
		}
	} else if act != ReLU {
		kernel.Dense(y, x, n, k, wv, m, bv, false)
	} else {
		// Block by block, record which outputs are positive (one bit each, in aux) while the
		// block is in L1: the backward pass then reads these bits instead of the n×m output.
		aux := t.mem.alloc((n*m + 63) / 64)
		nd.aux = aux
		bits := asBits(aux)
		for r0 := 0; r0 < n; r0 += denseBlock {
			r := min(denseBlock, n-r0)
			yb := y[r0*m : (r0+r)*m]
			kernel.Dense(yb, x[r0*k:(r0+r)*k], r, k, wv, m, bv, true)
			kernel.PositiveBits(bits[r0*m/64:], yb)
		}
	}
	switch act {
	case Tanh:
		for i, z := range y {
			y[i] = math.Tanh(z)
		}
	case Sigmoid:
		for i, z := range y {
			y[i] = mathx.Logistic(z)
		}
	}
	return v
}

// denseBlock is the number of rows denseBack handles at a time: a block of G (denseBlock·m
// values, 25 KiB for m = 50) is made by the activation pass and read by the two products while
// it is in L1. A multiple of 64, so that each block's ReLU bits start at a word boundary.
const denseBlock = 64

// asBits views arena storage as the 64-bit words of a bit set (same size, no copy).
func asBits(s []float64) []uint64 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&s[0])), len(s))
}

func (t *Tape) denseBack(nd *node) {
	n, m := int(nd.rows), int(nd.cols)
	W, b := &t.nodes[nd.a], &t.nodes[nd.b]
	k := int(W.rows)
	var x, xadj []float64
	if nd.lo >= 0 {
		X := &t.nodes[nd.lo]
		x, xadj = X.val, X.adj
	} else {
		x = t.consts[nd.hi].m.Data
	}
	act := Activation(nd.c)
	if m == 1 { // GEMMs with an inner dimension of 1 are outer products: use GEMV and GER
		g := nd.adj
		if act != Linear {
			g = t.mem.alloc(n)
			actBack(act, g, nd.adj, nd.val)
		}
		// w̄ += Xᵀg and X̄ += g·wᵀ in one pass over the rows of X and X̄ (either may be absent).
		kernel.GemvTGer(x[:n*k], k, g, W.val, W.adj, xadj)
		if b.adj != nil {
			s := 0.0
			for _, gi := range g {
				s += gi
			}
			b.adj[0] += s
		}
		return
	}
	var gbuf []float64
	if act != Linear {
		gbuf = t.mem.alloc(min(n, denseBlock) * m)
	}
	for r0 := 0; r0 < n; r0 += denseBlock {
		r := min(denseBlock, n-r0)
		// G = Ȳ ⊙ act'(Z) for this block, computed from the output value.
		g := nd.adj[r0*m : (r0+r)*m]
		switch {
		case act == ReLU && nd.aux != nil:
			g = gbuf[:r*m]
			kernel.ReLUBackBits(g, nd.adj[r0*m:(r0+r)*m], asBits(nd.aux)[r0*m/64:])
		case act != Linear:
			g = gbuf[:r*m]
			actBack(act, g, nd.adj[r0*m:(r0+r)*m], nd.val[r0*m:(r0+r)*m])
		}
		xb := x[r0*k : (r0+r)*k]
		kernel.DenseBackW(W.adj, b.adj, xb, r, k, g, m) // W̄ += XᵀG, b̄ += column sums of G
		if xadj != nil {                                // X̄ += G·Wᵀ
			kernel.DenseBackX(xadj[r0*k:(r0+r)*k], r, k, g, m, W.val)
		}
	}
}

// actBack sets g = adj ⊙ act'(z), with the derivative written in terms of the output y = act(z).
func actBack(act Activation, g, adj, y []float64) {
	switch act {
	case ReLU:
		kernel.ReLUBack(g, adj, y)
	case Tanh:
		for i, yi := range y {
			g[i] = adj[i] * (1 - yi*yi)
		}
	case Sigmoid:
		for i, yi := range y {
			g[i] = adj[i] * yi * (1 - yi)
		}
	}
}
