package ad

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

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
// n×m pre-activation never goes on the tape. Cost 2nkm flops forward, 4nkm backward (gonum
// BLAS Dgemm).
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
	bv := t.nodes[b.id].val
	for i := 0; i < n; i++ {
		copy(y[i*m:(i+1)*m], bv)
	}
	if m == 1 { // a single output (regression head): n dots of length k
		blas64.Gemv(blas.NoTrans, 1, gm(x, n, k), vec(t.nodes[W.id].val), 1, vec(y))
	} else {
		gemm(blas.NoTrans, blas.NoTrans, 1, gm(x, n, k), gm(t.nodes[W.id].val, k, m), 1, gm(y, n, m))
	}
	switch act {
	case ReLU:
		for i, z := range y {
			y[i] = max(z, 0)
		}
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
	// G = Ȳ ⊙ act'(Z), computed from the output value.
	g := nd.adj
	if act := Activation(nd.c); act != Linear {
		g = t.mem.alloc(n * m)
		y := nd.val
		switch act {
		case ReLU:
			for i, yi := range y {
				if yi > 0 {
					g[i] = nd.adj[i]
				} else {
					g[i] = 0
				}
			}
		case Tanh:
			for i, yi := range y {
				g[i] = nd.adj[i] * (1 - yi*yi)
			}
		case Sigmoid:
			for i, yi := range y {
				g[i] = nd.adj[i] * yi * (1 - yi)
			}
		}
	}
	if m == 1 { // GEMMs with an inner dimension of 1 are outer products: use GEMV and GER
		if W.adj != nil {
			blas64.Gemv(blas.Trans, 1, gm(x, n, k), vec(g), 1, vec(W.adj))
		}
		if b.adj != nil {
			s := 0.0
			for _, gi := range g {
				s += gi
			}
			b.adj[0] += s
		}
		if xadj != nil {
			blas64.Ger(1, vec(g), vec(W.val), gm(xadj, n, k))
		}
		return
	}
	if W.adj != nil { // W̄ += Xᵀ G
		gemm(blas.Trans, blas.NoTrans, 1, gm(x, n, k), gm(g, n, m), 1, gm(W.adj, k, m))
	}
	if b.adj != nil { // b̄ += column sums of G
		for i := 0; i < n; i++ {
			row := g[i*m : (i+1)*m]
			for j, gj := range row {
				b.adj[j] += gj
			}
		}
	}
	if xadj != nil { // X̄ += G Wᵀ
		gemm(blas.NoTrans, blas.Trans, 1, gm(g, n, m), gm(W.val, k, m), 1, gm(xadj, n, k))
	}
}
