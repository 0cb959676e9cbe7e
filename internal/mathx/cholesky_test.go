package mathx

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCholesky factors random SPD matrices A = BBᵀ + nI and checks LLᵀ = A, L lower
// triangular with a positive diagonal, and the upper triangle of A not read.
func TestCholesky(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 5, 13} {
		b := make([]float64, n*n)
		for i := range b {
			b[i] = r.NormFloat64()
		}
		a := make([]float64, n*n)
		for i := range n {
			for j := range n {
				for k := range n {
					a[i*n+j] += b[i*n+k] * b[j*n+k]
				}
			}
			a[i*n+i] += float64(n)
		}
		want := append([]float64(nil), a...)
		for i := range n { // garbage above the diagonal must not matter
			for j := i + 1; j < n; j++ {
				a[i*n+j] = math.NaN()
			}
		}
		l := make([]float64, n*n)
		for i := range l {
			l[i] = 7 // must be overwritten, upper triangle zeroed
		}
		if !Cholesky(l, a, n) {
			t.Fatalf("n=%d: SPD matrix reported not positive definite", n)
		}
		for i := range n {
			if !(l[i*n+i] > 0) {
				t.Errorf("n=%d: L[%d,%d] = %v, want > 0", n, i, i, l[i*n+i])
			}
			for j := range n {
				if j > i && l[i*n+j] != 0 {
					t.Errorf("n=%d: L[%d,%d] = %v above the diagonal", n, i, j, l[i*n+j])
				}
				s := 0.0
				for k := range n {
					s += l[i*n+k] * l[j*n+k]
				}
				if math.Abs(s-want[i*n+j]) > 1e-12*math.Abs(want[i*n+i]) {
					t.Errorf("n=%d: (LLᵀ)[%d,%d] = %v, A = %v", n, i, j, s, want[i*n+j])
				}
			}
		}
	}
	// Known factor: [[4, 2], [2, 3]] = LLᵀ with L = [[2, 0], [1, √2]].
	l := make([]float64, 4)
	if !Cholesky(l, []float64{4, 2, 2, 3}, 2) || l[0] != 2 || l[1] != 0 || l[2] != 1 || math.Abs(l[3]-math.Sqrt2) > 1e-15 {
		t.Errorf("Cholesky([[4,2],[2,3]]) = %v", l)
	}
}

func TestCholeskyRejects(t *testing.T) {
	for name, a := range map[string][]float64{
		"indefinite":   {1, 2, 2, 1},
		"singular":     {1, 1, 1, 1},
		"negative":     {-1, 0, 0, 1},
		"NaN":          {math.NaN(), 0, 0, 1},
		"+Inf pivot":   {math.Inf(1), 0, 0, 1},
		"NaN off-diag": {1, 0, math.NaN(), 1},
	} {
		if Cholesky(make([]float64, 4), a, 2) {
			t.Errorf("%s: %v reported positive definite", name, a)
		}
	}
}
