package ad

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// accum adds g (length n, or broadcast from length 1 destination) into dst.
// If dst has length 1 and g longer, the sum of g is added.
func accum(dst, g []float64) {
	if dst == nil {
		return
	}
	if len(dst) == len(g) {
		g = g[:len(dst)]
		for i := range dst {
			dst[i] += g[i]
		}
		return
	}
	s := 0.0
	for _, gi := range g {
		s += gi
	}
	dst[0] += s
}

// chain propagates the adjoint of node i to its operands.
func (t *Tape) chain(i int) {
	n := &t.nodes[i]
	g := n.adj
	if g == nil {
		return
	}
	switch n.op {
	case opInput, opConst, opView:
		return
	case opAdd:
		accum(t.nodes[n.a].adj, g)
		accum(t.nodes[n.b].adj, g)
	case opSub:
		accum(t.nodes[n.a].adj, g)
		if d := t.nodes[n.b].adj; d != nil {
			if len(d) == len(g) {
				for k := range d {
					d[k] -= g[k]
				}
			} else {
				for _, gk := range g {
					d[0] -= gk
				}
			}
		}
	case opMul:
		a, b := &t.nodes[n.a], &t.nodes[n.b]
		if len(a.val) == len(g) && len(b.val) == len(g) { // no broadcasting: the common case
			if a.adj != nil {
				for k, bk := range b.val[:len(g)] {
					a.adj[k] += g[k] * bk
				}
			}
			if b.adj != nil {
				for k, ak := range a.val[:len(g)] {
					b.adj[k] += g[k] * ak
				}
			}
			return
		}
		binaryBack(g, a.adj, b.adj, a.val, b.val, func(x, y float64) (float64, float64) { return y, x })
	case opDiv:
		a, b := &t.nodes[n.a], &t.nodes[n.b]
		binaryBack(g, a.adj, b.adj, a.val, b.val, func(x, y float64) (float64, float64) { return 1 / y, -x / (y * y) })
	case opPow:
		a, b := &t.nodes[n.a], &t.nodes[n.b]
		binaryBack(g, a.adj, b.adj, a.val, b.val, func(x, y float64) (float64, float64) {
			p := math.Pow(x, y)
			db := 0.0
			if x != 0 || y <= 0 {
				db = p * math.Log(x)
			}
			return y * math.Pow(x, y-1), db
		})
	case opAddC:
		accum(t.nodes[n.a].adj, g)
	case opMulC:
		d := t.nodes[n.a].adj
		for k := range d {
			d[k] += n.c * g[k]
		}
	case opPowC:
		a := &t.nodes[n.a]
		for k := range a.adj {
			a.adj[k] += g[k] * n.c * math.Pow(a.val[k], n.c-1)
		}
	case opNeg:
		d := t.nodes[n.a].adj
		for k := range d {
			d[k] -= g[k]
		}
	case opExp:
		d := t.nodes[n.a].adj
		for k := range d {
			d[k] += g[k] * n.val[k]
		}
	case opLog:
		a := &t.nodes[n.a]
		for k := range a.adj {
			a.adj[k] += g[k] / a.val[k]
		}
	case opLog1p:
		a := &t.nodes[n.a]
		for k := range a.adj {
			a.adj[k] += g[k] / (1 + a.val[k])
		}
	case opExpm1:
		d := t.nodes[n.a].adj
		for k := range d {
			d[k] += g[k] * (n.val[k] + 1)
		}
	case opSqrt:
		d := t.nodes[n.a].adj
		for k := range d {
			d[k] += g[k] * 0.5 / n.val[k]
		}
	case opSquare:
		a := &t.nodes[n.a]
		for k := range a.adj {
			a.adj[k] += g[k] * 2 * a.val[k]
		}
	case opAbs:
		a := &t.nodes[n.a]
		for k := range a.adj {
			switch {
			case a.val[k] > 0:
				a.adj[k] += g[k]
			case a.val[k] < 0:
				a.adj[k] -= g[k]
			}
		}
	case opSoftplus:
		a := &t.nodes[n.a]
		for k := range a.adj {
			a.adj[k] += g[k] * mathx.Logistic(a.val[k])
		}
	case opSigmoid:
		d := t.nodes[n.a].adj
		for k := range d {
			s := n.val[k]
			d[k] += g[k] * s * (1 - s)
		}
	case opLogSigmoid:
		a := &t.nodes[n.a]
		for k := range a.adj {
			a.adj[k] += g[k] * mathx.Logistic(-a.val[k])
		}
	case opTanh:
		d := t.nodes[n.a].adj
		for k := range d {
			y := n.val[k]
			d[k] += g[k] * (1 - y*y)
		}
	case opRelu:
		a := &t.nodes[n.a]
		for k := range a.adj {
			if a.val[k] > 0 {
				a.adj[k] += g[k]
			}
		}
	case opLgamma:
		a := &t.nodes[n.a]
		for k := range a.adj {
			a.adj[k] += g[k] * mathx.Digamma(a.val[k])
		}
	case opMap:
		d := t.nodes[n.a].adj
		for k := range d {
			d[k] += g[k] * n.aux[k]
		}
	case opSum:
		d := t.nodes[n.a].adj
		for k := range d {
			d[k] += g[0]
		}
	case opMean:
		d := t.nodes[n.a].adj
		s := g[0] / float64(len(d))
		for k := range d {
			d[k] += s
		}
	case opDot:
		a, b := &t.nodes[n.a], &t.nodes[n.b]
		for k := range a.adj {
			a.adj[k] += g[0] * b.val[k]
		}
		for k := range b.adj {
			b.adj[k] += g[0] * a.val[k]
		}
	case opLogSumExp:
		a := &t.nodes[n.a]
		if math.IsInf(n.val[0], 0) {
			return
		}
		for k := range a.adj {
			a.adj[k] += g[0] * math.Exp(a.val[k]-n.val[0])
		}
	case opGather:
		d := t.nodes[n.a].adj
		if d == nil {
			return
		}
		for k, idx := range t.args[n.lo:n.hi] {
			d[idx] += g[k]
		}
	case opConcat:
		off := 0
		for _, id := range t.args[n.lo:n.hi] {
			a := &t.nodes[id]
			m := len(a.val)
			if a.adj != nil {
				accum(a.adj, g[off:off+m])
			}
			off += m
		}
	case opMatVec:
		A, x := &t.nodes[n.a], &t.nodes[n.b]
		r, c := int(A.rows), int(A.cols)
		if A.adj != nil { // Ā += ḡ xᵀ
			blas64.Ger(1, vec(g), vec(x.val), gm(A.adj, r, c))
		}
		if x.adj != nil { // x̄ += Aᵀ ḡ
			blas64.Gemv(blas.Trans, 1, gm(A.val, r, c), vec(g), 1, vec(x.adj))
		}
	case opMatVecC:
		A := t.consts[n.lo].m
		if x := &t.nodes[n.b]; x.adj != nil {
			blas64.Gemv(blas.Trans, 1, gm(A.Data, A.Rows, A.Cols), vec(g), 1, vec(x.adj))
		}
	case opMatTVecC:
		A := t.consts[n.lo].m
		if x := &t.nodes[n.b]; x.adj != nil {
			blas64.Gemv(blas.NoTrans, 1, gm(A.Data, A.Rows, A.Cols), vec(g), 1, vec(x.adj))
		}
	case opMatMul:
		A, B := &t.nodes[n.a], &t.nodes[n.b]
		r, k, c := int(A.rows), int(A.cols), int(B.cols)
		if A.adj != nil { // Ā += Ḡ Bᵀ
			gemm(blas.NoTrans, blas.Trans, 1, gm(g, r, c), gm(B.val, k, c), 1, gm(A.adj, r, k))
		}
		if B.adj != nil { // B̄ += Aᵀ Ḡ
			gemm(blas.Trans, blas.NoTrans, 1, gm(A.val, r, k), gm(g, r, c), 1, gm(B.adj, k, c))
		}
	case opTranspose:
		d := t.nodes[n.a].adj
		if d == nil {
			return
		}
		r, c := int(n.cols), int(n.rows) // shape of the operand
		for a := 0; a < r; a++ {
			for b := 0; b < c; b++ {
				d[a*c+b] += g[b*r+a]
			}
		}
	case opCumSum:
		d := t.nodes[n.a].adj
		if d == nil {
			return
		}
		s := 0.0
		for k := len(g) - 1; k >= 0; k-- {
			s += g[k]
			d[k] += s
		}
	case opDense:
		t.denseBack(n)
	case opCholesky:
		t.choleskyBack(n)
	case opTriSolve:
		t.triSolveBack(n)
	case opLogDet:
		A := &t.nodes[n.a]
		if A.adj == nil {
			return
		}
		r := int(A.rows)
		inv := n.aux[r*r:]
		for a := 0; a < r; a++ {
			for b := 0; b < r; b++ {
				A.adj[a*r+b] += g[0] * inv[b*r+a]
			}
		}
	case opFused:
		s := g[0]
		for _, p := range t.parts[n.lo:n.hi] {
			d := t.nodes[p.id].adj
			for k := range d {
				d[k] += s * p.d[k]
			}
		}
	case opCustom:
		t.fns[n.b].Backward(Custom{t: t, id: int32(i)})
	default:
		panic("ad: internal error: unknown op")
	}
}

// binaryBack propagates through z = f(x, y) with partials df(x, y) = (∂z/∂x, ∂z/∂y), handling
// length-1 broadcasting on either side.
func binaryBack(g, ax, ay, x, y []float64, df func(x, y float64) (float64, float64)) {
	for k := range g {
		dx, dy := df(at(x, k), at(y, k))
		if ax != nil {
			if len(ax) == 1 {
				ax[0] += g[k] * dx
			} else {
				ax[k] += g[k] * dx
			}
		}
		if ay != nil {
			if len(ay) == 1 {
				ay[0] += g[k] * dy
			} else {
				ay[k] += g[k] * dy
			}
		}
	}
}

// choleskyBack: Ā = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹ folded onto the lower triangle.
func (t *Tape) choleskyBack(n *node) {
	A := &t.nodes[n.a]
	if A.adj == nil {
		return
	}
	r := int(n.rows)
	l, lbar := n.val, n.adj
	m := t.mem.allocZero(r * r) // scratch; released with the tape
	// m = Lᵀ L̄ (only the lower triangle of L̄ matters; L̄'s upper part is zero by construction
	// unless a caller wrote into it, so mask it explicitly).
	for i := 0; i < r; i++ {
		for j := 0; j <= i; j++ {
			s := 0.0
			for k := i; k < r; k++ { // (Lᵀ)_{ik} = L_{ki}, nonzero for k ≥ i
				if j <= k {
					s += l[k*r+i] * lbar[k*r+j]
				}
			}
			if i == j {
				s *= 0.5
			}
			m[i*r+j] = s // Φ: keep lower triangle, halve diagonal
		}
	}
	// m ← L⁻ᵀ m L⁻¹: first solve Lᵀ X = m, then X L⁻¹ = (L⁻ᵀ Xᵀ)ᵀ.
	backSubstT(l, m, r, r)
	// transpose in place, solve again, transpose back
	transposeSq(m, r)
	backSubstT(l, m, r, r)
	transposeSq(m, r)
	for i := 0; i < r; i++ {
		for j := 0; j < i; j++ {
			A.adj[i*r+j] += m[i*r+j] + m[j*r+i]
		}
		A.adj[i*r+i] += m[i*r+i]
	}
}

func transposeSq(m []float64, r int) {
	for i := 0; i < r; i++ {
		for j := 0; j < i; j++ {
			m[i*r+j], m[j*r+i] = m[j*r+i], m[i*r+j]
		}
	}
}

// triSolveBack: X = L⁻¹B. B̄ += L⁻ᵀX̄, L̄ −= tril(L⁻ᵀX̄ Xᵀ).
func (t *Tape) triSolveBack(n *node) {
	L, B := &t.nodes[n.a], &t.nodes[n.b]
	if L.adj == nil && B.adj == nil {
		return
	}
	r, m := int(L.rows), int(n.cols)
	bb := t.mem.alloc(r * m)
	copy(bb, n.adj)
	backSubstT(L.val, bb, r, m)
	if B.adj != nil {
		accum(B.adj, bb)
	}
	if L.adj != nil {
		x := n.val
		for i := 0; i < r; i++ {
			for j := 0; j <= i; j++ {
				s := 0.0
				for k := 0; k < m; k++ {
					s += bb[i*m+k] * x[j*m+k]
				}
				L.adj[i*r+j] -= s
			}
		}
	}
}
