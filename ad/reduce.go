package ad

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Sum returns Σ a_i as a scalar.
func (t *Tape) Sum(a Var) Var {
	v, n := t.newNode(opSum, a.id, -1, 1, 1)
	s := 0.0
	for _, x := range t.nodes[a.id].val {
		s += x
	}
	n.val[0] = s
	return v
}

// Mean returns (1/n) Σ a_i as a scalar.
func (t *Tape) Mean(a Var) Var {
	v, n := t.newNode(opMean, a.id, -1, 1, 1)
	x := t.nodes[a.id].val
	s := 0.0
	for _, xi := range x {
		s += xi
	}
	n.val[0] = s / float64(len(x))
	return v
}

// Dot returns Σ a_i b_i as a scalar. a and b must have the same size.
func (t *Tape) Dot(a, b Var) Var {
	x, y := t.nd(a).val, t.nd(b).val
	if len(x) != len(y) {
		panic(fmt.Sprintf("ad: Dot: sizes %d and %d", len(x), len(y)))
	}
	v, n := t.newNode(opDot, a.id, b.id, 1, 1)
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	n.val[0] = s
	return v
}

// LogSumExp returns log Σ exp(a_i) as a scalar, computed stably. Its gradient is softmax(a).
func (t *Tape) LogSumExp(a Var) Var {
	v, n := t.newNode(opLogSumExp, a.id, -1, 1, 1)
	x := t.nodes[a.id].val
	m := math.Inf(-1)
	for _, xi := range x {
		m = max(m, xi)
	}
	if math.IsInf(m, 0) {
		n.val[0] = m
		return v
	}
	s := 0.0
	for _, xi := range x {
		s += math.Exp(xi - m)
	}
	n.val[0] = m + math.Log(s)
	return v
}

// Concat returns the vectors xs joined end to end.
func (t *Tape) Concat(xs ...Var) Var {
	total := 0
	for _, x := range xs {
		total += len(t.nd(x).val)
	}
	lo := int32(len(t.args))
	for _, x := range xs {
		t.args = append(t.args, x.id)
	}
	v, n := t.newNode(opConcat, -1, -1, total, 1)
	n.lo, n.hi = lo, int32(len(t.args))
	off := 0
	for _, x := range xs {
		off += copy(n.val[off:], t.nodes[x.id].val)
	}
	return v
}

// MatVec returns A·x for a matrix node A (r×c) and a vector x of size c.
// Cost O(rc) forward and backward.
func (t *Tape) MatVec(A, x Var) Var {
	r, c := t.Shape(A)
	if t.Size(x) != c {
		panic(fmt.Sprintf("ad: MatVec: A is %d×%d, x has size %d", r, c, t.Size(x)))
	}
	v, n := t.newNode(opMatVec, A.id, x.id, r, 1)
	blas64.Gemv(blas.NoTrans, 1, gm(t.nodes[A.id].val, r, c), vec(t.nodes[x.id].val), 0, vec(n.val))
	return v
}

// MatVecC returns A·x for a constant matrix A (data) and a vector node x.
func (t *Tape) MatVecC(A Mat, x Var) Var {
	if t.Size(x) != A.Cols || len(A.Data) < A.Rows*A.Cols {
		panic(fmt.Sprintf("ad: MatVecC: A is %d×%d (len %d), x has size %d", A.Rows, A.Cols, len(A.Data), t.Size(x)))
	}
	t.consts = append(t.consts, constMat{A})
	v, n := t.newNode(opMatVecC, -1, x.id, A.Rows, 1)
	n.lo = int32(len(t.consts) - 1)
	blas64.Gemv(blas.NoTrans, 1, gm(A.Data, A.Rows, A.Cols), vec(t.nodes[x.id].val), 0, vec(n.val))
	return v
}

// MatTVecC returns Aᵀ·x for a constant matrix A (r×c) and a vector node x of size r. With a
// feature-major design matrix XT (D×N) this is X·β computed as D long axpys.
func (t *Tape) MatTVecC(A Mat, x Var) Var {
	if t.Size(x) != A.Rows || len(A.Data) < A.Rows*A.Cols {
		panic(fmt.Sprintf("ad: MatTVecC: A is %d×%d (len %d), x has size %d", A.Rows, A.Cols, len(A.Data), t.Size(x)))
	}
	t.consts = append(t.consts, constMat{A})
	v, n := t.newNode(opMatTVecC, -1, x.id, A.Cols, 1)
	n.lo = int32(len(t.consts) - 1)
	blas64.Gemv(blas.Trans, 1, gm(A.Data, A.Rows, A.Cols), vec(t.nodes[x.id].val), 0, vec(n.val))
	return v
}

// MatMul returns A·B for matrix nodes A (r×k) and B (k×c). Cost O(rkc) forward, twice that
// backward.
func (t *Tape) MatMul(A, B Var) Var {
	r, k := t.Shape(A)
	k2, c := t.Shape(B)
	if k != k2 {
		panic(fmt.Sprintf("ad: MatMul: shapes %d×%d and %d×%d", r, k, k2, c))
	}
	v, n := t.newNode(opMatMul, A.id, B.id, r, c)
	gemm(blas.NoTrans, blas.NoTrans, 1, gm(t.nodes[A.id].val, r, k), gm(t.nodes[B.id].val, k, c), 0, gm(n.val, r, c))
	return v
}

// Transpose returns Aᵀ.
func (t *Tape) Transpose(A Var) Var {
	r, c := t.Shape(A)
	v, n := t.newNode(opTranspose, A.id, -1, c, r)
	a := t.nodes[A.id].val
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			n.val[j*r+i] = a[i*c+j]
		}
	}
	return v
}

func gm(d []float64, r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: max(c, 1), Data: d}
}

func vec(d []float64) blas64.Vector { return blas64.Vector{N: len(d), Inc: 1, Data: d} }

// Gather returns y with y_i = a[idx_i]. Indices may repeat; their adjoints add up.
func (t *Tape) Gather(a Var, idx []int) Var {
	n := len(t.nd(a).val)
	lo := int32(len(t.args))
	for _, i := range idx {
		if i < 0 || i >= n {
			panic(fmt.Sprintf("ad: Gather: index %d out of range for size %d", i, n))
		}
		t.args = append(t.args, int32(i))
	}
	return t.gather(a, lo)
}

// gather records a gather node whose indices are t.args[lo:].
func (t *Tape) gather(a Var, lo int32) Var {
	hi := int32(len(t.args))
	v, n := t.newNode(opGather, a.id, -1, int(hi-lo), 1)
	n.lo, n.hi = lo, hi
	x := t.nodes[a.id].val
	for i, k := range t.args[lo:hi] {
		n.val[i] = x[k]
	}
	return v
}

// CumSum returns the running sums y_i = Σ_{j≤i} a_j. Backward: ā_j += Σ_{i≥j} ȳ_i. O(n).
func (t *Tape) CumSum(a Var) Var {
	v, n := t.newNode(opCumSum, a.id, -1, t.Size(a), 1)
	s := 0.0
	for i, x := range t.nodes[a.id].val {
		s += x
		n.val[i] = s
	}
	return v
}
