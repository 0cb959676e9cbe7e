package mathx

import "math"

// Cholesky writes into l the lower-triangular factor L of the symmetric positive-definite
// n×n row-major matrix a, A = L·Lᵀ, and reports whether a is numerically positive definite
// (every pivot finite and > 0). Only the lower triangle of a is read; the upper triangle of l
// is zeroed. When it returns false l holds a partial factor and must not be used. l and a
// must not overlap and must hold n·n values.
//
// It is the unblocked column-oriented form (Golub & Van Loan 2013, Algorithm
// 4.2.1, gaxpy Cholesky): column j is L[j,j] = √(A[j,j] − Σₖ₍ₖ<ⱼ₎ L[j,k]²) and
// L[i,j] = (A[i,j] − Σₖ₍ₖ<ⱼ₎ L[i,k]·L[j,k]) / L[j,j] for i > j. Cost n³/3 multiply-adds, no
// allocation: meant for the small dense matrices of metrics, Gaussian families and model
// covariances; for large matrices use gonum's mat.Cholesky (blocked, LAPACK).
func Cholesky(l, a []float64, n int) bool {
	clear(l[:n*n])
	for j := range n {
		s := a[j*n+j]
		for k := range j {
			s -= l[j*n+k] * l[j*n+k]
		}
		if !(s > 0) || math.IsInf(s, 1) {
			return false
		}
		d := math.Sqrt(s)
		l[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := range j {
				s -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = s / d
		}
	}
	return true
}
