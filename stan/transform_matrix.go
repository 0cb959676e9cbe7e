package stan

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// Stan Math 2.21's cov_matrix and corr_matrix transforms, recorded with scalar nodes (they are
// rare in parameters blocks and small; cost O(K³) nodes for the product L·Lᵀ).

// lowerTimesTranspose returns L·Lᵀ (K×K row-major, matrix-shaped) for the lower-triangular L
// given as scalar nodes l[i][j], j <= i.
func lowerTimesTranspose(t *ad.Tape, l [][]ad.Var, k int) ad.Var {
	out := make([]ad.Var, k*k)
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			s := t.Mul(l[i][0], l[j][0])
			for m := 1; m <= j; m++ {
				s = t.Add(s, t.Mul(l[i][m], l[j][m]))
			}
			out[i*k+j], out[j*k+i] = s, s
		}
	}
	return t.AsMatrix(t.Concat(out...), k, k)
}

// covMatrixForward is cov_matrix_constrain: L is lower triangular, filled row by row from u
// with the diagonal exponentiated, Σ = L·Lᵀ, and
//
//	log J = K·log 2 + Σ_k (K − k + 1)·log L_kk   (0-based k),
//
// the log determinant of ∂(lower triangle of Σ)/∂u (Stan keeps the constant K·log 2).
func covMatrixForward(t *ad.Tape, u ad.Var, k int) (x, logJ ad.Var) {
	uv := t.Value(u)
	l := make([][]ad.Var, k)
	d := make([]float64, len(uv))
	lj := float64(k) * math.Ln2
	pos := 0
	for m := 0; m < k; m++ {
		l[m] = make([]ad.Var, m+1)
		for n := 0; n < m; n++ {
			l[m][n] = t.Index(u, pos)
			pos++
		}
		l[m][m] = t.Exp(t.Index(u, pos))
		d[pos] = float64(k - m + 1)
		lj += float64(k-m+1) * uv[pos]
		pos++
	}
	return lowerTimesTranspose(t, l, k), t.FusedVec(lj, []ad.Var{u}, [][]float64{d})
}

// covMatrixFree is cov_matrix_free: the Cholesky factor's lower triangle row by row, the
// diagonal's logarithm.
func covMatrixFree(x, u []float64, k int) error {
	l, err := cholesky(x, k)
	if err != nil {
		return err
	}
	pos := 0
	for m := 0; m < k; m++ {
		for n := 0; n < m; n++ {
			u[pos] = l[m*k+n]
			pos++
		}
		u[pos] = math.Log(l[m*k+m])
		pos++
	}
	return nil
}

// cholesky returns the lower Cholesky factor of the symmetric positive-definite k×k x.
func cholesky(x []float64, k int) ([]float64, error) {
	for i := 0; i < k; i++ {
		for j := 0; j < i; j++ {
			if a, b := x[i*k+j], x[j*k+i]; !(math.Abs(a-b) <= 1e-8*math.Max(1, math.Abs(a))) {
				return nil, fmt.Errorf("matrix is not symmetric: [%d,%d] = %g, [%d,%d] = %g", i+1, j+1, a, j+1, i+1, b)
			}
		}
	}
	l := make([]float64, k*k)
	for j := 0; j < k; j++ {
		s := x[j*k+j]
		for m := 0; m < j; m++ {
			s -= l[j*k+m] * l[j*k+m]
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("matrix is not positive definite")
		}
		l[j*k+j] = math.Sqrt(s)
		for i := j + 1; i < k; i++ {
			s := x[i*k+j]
			for m := 0; m < j; m++ {
				s -= l[i*k+m] * l[j*k+m]
			}
			l[i*k+j] = s / l[j*k+j]
		}
	}
	return l, nil
}

// corrMatrixForward is corr_matrix_constrain: canonical partial correlations z = tanh(u)
// (log J += Σ log(1 − z²)) read column by column into the Cholesky factor (read_corr_L:
// column 0 holds z_1…z_{K−1} below the diagonal, column j the next K−1−j, each scaled by the
// remaining stick √(1 − Σ (earlier entries of its row)²)), with the onion-method term
//
//	log J += ½·Σ_{k=1}^{K−2} Σ_{i=k+1}^{K} (K − k − 1)·log(1 − z²)   (1-based k, i; z in that order),
//
// and Σ = L·Lᵀ.
func corrMatrixForward(t *ad.Tape, u ad.Var, k int) (x, logJ ad.Var) {
	uv := t.Value(u)
	n := len(uv)
	d := make([]float64, n)
	lj := 0.0
	// log(1 − tanh²u) = 2(log 2 − |u| − log1p(e^{−2|u|})), derivative −2·tanh u.
	coef := make([]float64, n)
	for i := range coef {
		coef[i] = 1
	}
	pos := 0
	for kk := 1; kk <= k-2; kk++ {
		for i := kk + 1; i <= k; i++ {
			coef[pos] += 0.5 * float64(k-kk-1)
			pos++
		}
	}
	for i, v := range uv {
		a := math.Abs(v)
		lj += coef[i] * 2 * (math.Ln2 - a - math.Log1p(math.Exp(-2*a)))
		d[i] = -2 * coef[i] * math.Tanh(v)
	}
	z := t.Tanh(u)
	l := make([][]ad.Var, k)
	for i := range l {
		l[i] = make([]ad.Var, i+1)
	}
	one := t.Const(1)
	l[0][0] = one
	if k == 1 {
		return lowerTimesTranspose(t, l, k), t.FusedVec(lj, []ad.Var{u}, [][]float64{d})
	}
	// acc[i] is the remaining squared length of row i.
	acc := make([]ad.Var, k)
	for i := 1; i < k; i++ {
		zi := t.Index(z, i-1)
		l[i][0] = zi
		acc[i] = t.Sub(one, t.Square(zi))
	}
	pos = k - 1
	for j := 1; j < k; j++ {
		l[j][j] = t.Sqrt(acc[j])
		for i := j + 1; i < k; i++ {
			zi := t.Index(z, pos)
			pos++
			l[i][j] = t.Mul(zi, t.Sqrt(acc[i]))
			acc[i] = t.Mul(acc[i], t.Sub(one, t.Square(zi)))
		}
	}
	return lowerTimesTranspose(t, l, k), t.FusedVec(lj, []ad.Var{u}, [][]float64{d})
}

// corrMatrixFree is corr_matrix_free: the Cholesky factor's canonical partial correlations in
// read_corr_L's column order, then atanh.
func corrMatrixFree(x, u []float64, k int) error {
	for i := 0; i < k; i++ {
		if v := x[i*k+i]; !(math.Abs(v-1) <= 1e-8) {
			return fmt.Errorf("corr_matrix diagonal [%d,%d] = %g, want 1", i+1, i+1, v)
		}
	}
	l, err := cholesky(x, k)
	if err != nil {
		return err
	}
	pos := 0
	for j := 0; j < k-1; j++ {
		for i := j + 1; i < k; i++ {
			// z = L_ij / √(1 − Σ_{m<j} L_im²)
			s := 1.0
			for m := 0; m < j; m++ {
				s -= l[i*k+m] * l[i*k+m]
			}
			zz := l[i*k+j] / math.Sqrt(s)
			u[pos] = math.Atanh(zz)
			pos++
		}
	}
	return nil
}
