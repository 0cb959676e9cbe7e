package ad

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Cholesky returns the lower-triangular L with L·Lᵀ = A for a symmetric positive-definite
// matrix node A (n×n). Only the lower triangle of A is read, so only it receives adjoints.
// The factorisation is mathx.Cholesky. If A is not positive definite the result holds NaN (a density built on it is then NaN,
// which callers treat as a rejected point), it never panics on data.
//
// Backward (Murray 2016, "Differentiation of the Cholesky decomposition", arXiv:1602.07527):
// Ā = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹, with Φ taking the lower triangle and halving the diagonal; the
// adjoint is then folded onto the lower triangle. Cost O(n³) both ways, for small dense n.
func (t *Tape) Cholesky(A Var) Var {
	r, c := t.Shape(A)
	if r != c {
		panic(fmt.Sprintf("ad: Cholesky: matrix is %d×%d", r, c))
	}
	v, nd := t.newNode(opCholesky, A.id, -1, r, r)
	if !mathx.Cholesky(nd.val, t.nodes[A.id].val, r) {
		for i := range nd.val {
			nd.val[i] = math.NaN()
		}
	}
	return v
}

// TriSolve returns X = L⁻¹B for a lower-triangular matrix node L (n×n) and B either a vector
// of size n or an n×m matrix. Only the lower triangle of L is read.
// Backward: B̄ = L⁻ᵀX̄, L̄ = −tril(B̄ Xᵀ). Cost O(n²m).
func (t *Tape) TriSolve(L, B Var) Var {
	n, c := t.Shape(L)
	br, bc := t.Shape(B)
	if n != c || br != n {
		panic(fmt.Sprintf("ad: TriSolve: L is %d×%d, B is %d×%d", n, c, br, bc))
	}
	v, nd := t.newNode(opTriSolve, L.id, B.id, br, bc)
	copy(nd.val, t.nodes[B.id].val)
	forwardSubst(t.nodes[L.id].val, nd.val, n, bc)
	return v
}

// forwardSubst solves L X = X in place (X is n×m row-major).
func forwardSubst(l, x []float64, n, m int) {
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			s := x[i*m+j]
			for k := 0; k < i; k++ {
				s -= l[i*n+k] * x[k*m+j]
			}
			x[i*m+j] = s / l[i*n+i]
		}
	}
}

// backSubstT solves Lᵀ X = X in place (X is n×m row-major), L lower triangular.
func backSubstT(l, x []float64, n, m int) {
	for i := n - 1; i >= 0; i-- {
		for j := 0; j < m; j++ {
			s := x[i*m+j]
			for k := i + 1; k < n; k++ {
				s -= l[k*n+i] * x[k*m+j]
			}
			x[i*m+j] = s / l[i*n+i]
		}
	}
}

// LogDet returns log|det A| for a square matrix node A, by LU factorisation with partial
// pivoting. ∂/∂A = A⁻ᵀ. A singular matrix gives −Inf (and a NaN/Inf gradient).
// Cost O(n³). For a Cholesky factor L, 2·Σ log L_ii (Diag, Log, Sum) is cheaper.
func (t *Tape) LogDet(A Var) Var {
	r, c := t.Shape(A)
	if r != c {
		panic(fmt.Sprintf("ad: LogDet: matrix is %d×%d", r, c))
	}
	v, nd := t.newNode(opLogDet, A.id, -1, 1, 1)
	// aux holds the LU factors, then A⁻ᵀ for the backward pass.
	nd.aux = t.mem.alloc(2 * r * r)
	lu, inv := nd.aux[:r*r], nd.aux[r*r:]
	copy(lu, t.nodes[A.id].val)
	// LU with partial pivoting; perm stored implicitly by applying swaps to the identity.
	for i := range inv {
		inv[i] = 0
	}
	for i := 0; i < r; i++ {
		inv[i*r+i] = 1
	}
	logdet := 0.0
	for k := 0; k < r; k++ {
		p := k
		for i := k + 1; i < r; i++ {
			if math.Abs(lu[i*r+k]) > math.Abs(lu[p*r+k]) {
				p = i
			}
		}
		if p != k {
			for j := 0; j < r; j++ {
				lu[k*r+j], lu[p*r+j] = lu[p*r+j], lu[k*r+j]
				inv[k*r+j], inv[p*r+j] = inv[p*r+j], inv[k*r+j]
			}
		}
		d := lu[k*r+k]
		logdet += math.Log(math.Abs(d))
		for i := k + 1; i < r; i++ {
			f := lu[i*r+k] / d
			lu[i*r+k] = f
			for j := k + 1; j < r; j++ {
				lu[i*r+j] -= f * lu[k*r+j]
			}
		}
	}
	nd.val[0] = logdet
	// inv currently holds P (rows of I permuted). Solve L U X = P → X = A⁻¹.
	for j := 0; j < r; j++ {
		for i := 0; i < r; i++ { // unit lower
			s := inv[i*r+j]
			for k := 0; k < i; k++ {
				s -= lu[i*r+k] * inv[k*r+j]
			}
			inv[i*r+j] = s
		}
		for i := r - 1; i >= 0; i-- {
			s := inv[i*r+j]
			for k := i + 1; k < r; k++ {
				s -= lu[i*r+k] * inv[k*r+j]
			}
			inv[i*r+j] = s / lu[i*r+i]
		}
	}
	return v
}

// Diag returns the diagonal of a square matrix node as a vector.
func (t *Tape) Diag(A Var) Var {
	r, c := t.Shape(A)
	if r != c {
		panic(fmt.Sprintf("ad: Diag: matrix is %d×%d", r, c))
	}
	lo := int32(len(t.args))
	for i := 0; i < r; i++ {
		t.args = append(t.args, int32(i*r+i))
	}
	return t.gather(A, lo)
}
