package stan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
)

// jacobian returns ∂x_i/∂u_j (rows: the constrained values listed in rowsOf) by reverse-mode
// AD, one backward pass per row.
func jacobian(tr *transform, u []float64, rowsOf []int) [][]float64 {
	out := make([][]float64, len(rowsOf))
	for k, i := range rowsOf {
		var t ad.Tape
		uv := t.Input(u)
		x, _ := tr.Forward(&t, uv)
		xi := t.Index(x, i)
		t.Backward(xi)
		out[k] = append([]float64(nil), t.Grad(uv)...)
	}
	return out
}

// logAbsDet is log|det A| by Gaussian elimination with partial pivoting.
func logAbsDet(a [][]float64) float64 {
	n := len(a)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append([]float64(nil), a[i]...)
	}
	s := 0.0
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		s += math.Log(math.Abs(m[c][c]))
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k < n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	return s
}

// TestTransformJacobian checks each transform's log J against the log determinant of the AD
// Jacobian restricted to the coordinates that determine x, the round trip Free(Forward(u)) = u,
// and Constrain against Forward.
func TestTransformJacobian(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name       string
		kind       tkind
		arr, rows  int
		cols       int
		lo, hi     []float64
		determined func(tr *transform) []int // tape indices of the determining coordinates
	}{
		{name: "lower vector bounds matrix", kind: tLower, arr: 2, rows: 2, cols: 3, lo: []float64{0, 1, 2, 3, 4, 5, -1, -2, -3, -4, -5, math.Inf(-1)}},
		{name: "upper scalar", kind: tUpper, arr: 3, rows: 1, cols: 1, hi: []float64{2}},
		{name: "lower upper per element", kind: tLowerUpper, arr: 1, rows: 4, cols: 1, lo: []float64{0, -1, math.Inf(-1), 2}, hi: []float64{1, 5, 3, math.Inf(1)}},
		{name: "offset multiplier", kind: tOffsetMult, arr: 1, rows: 3, cols: 2, lo: []float64{1}, hi: []float64{0.5, 1, 2, 3, 4, 5}},
		{name: "identity matrix", kind: tIdentity, arr: 1, rows: 2, cols: 2},
		{name: "array of simplex", kind: tSimplex, arr: 3, rows: 4, cols: 1, determined: func(tr *transform) []int {
			var out []int
			for a := 0; a < 3; a++ {
				for i := 0; i < 3; i++ {
					out = append(out, a*4+i)
				}
			}
			return out
		}},
		{name: "array of ordered", kind: tOrdered, arr: 2, rows: 3, cols: 1},
		{name: "array of positive ordered", kind: tPositiveOrdered, arr: 2, rows: 3, cols: 1},
		{name: "cov matrix", kind: tCovMatrix, arr: 1, rows: 3, cols: 3, determined: func(tr *transform) []int {
			return []int{0, 3, 4, 6, 7, 8} // lower triangle, row-major
		}},
		{name: "array of corr matrix", kind: tCorrMatrix, arr: 2, rows: 4, cols: 4, determined: func(tr *transform) []int {
			var out []int
			for a := 0; a < 2; a++ {
				for i := 0; i < 4; i++ {
					for j := 0; j < i; j++ {
						out = append(out, a*16+i*4+j)
					}
				}
			}
			return out
		}},
		{name: "array of cholesky corr", kind: tCholeskyCorr, arr: 2, rows: 3, cols: 3, determined: func(tr *transform) []int {
			return []int{3, 6, 7, 9 + 3, 9 + 6, 9 + 7} // strictly lower triangles, row-major
		}},
	}
	for _, c := range cases {
		tr, err := newTransform(c.kind, c.arr, c.rows, c.cols, c.lo, c.hi)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		u := make([]float64, tr.FreeSize())
		for i := range u {
			u[i] = 2*r.Float64() - 1
		}
		var tp ad.Tape
		x, lj := tr.Forward(&tp, tp.Const(u...))
		xv := append([]float64(nil), tp.Value(x)...)
		rows := make([]int, len(u))
		for i := range rows {
			rows[i] = i
		}
		if c.determined != nil {
			rows = c.determined(tr)
		}
		want := logAbsDet(jacobian(tr, u, rows))
		if got := tp.Float(lj); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: log J = %.15g, AD Jacobian gives %.15g", c.name, got, want)
		}
		xc := make([]float64, tr.Size())
		if lj2 := tr.Constrain(u, xc); lj2 != tp.Float(lj) {
			t.Errorf("%s: Constrain log J %g, Forward %g", c.name, lj2, tp.Float(lj))
		}
		back := make([]float64, len(u))
		if err := tr.Free(xv, back); err != nil {
			t.Fatalf("%s: Free: %v", c.name, err)
		}
		for i := range u {
			if math.Abs(back[i]-u[i]) > 1e-10 {
				t.Errorf("%s: round trip u[%d] = %g, want %g", c.name, i, back[i], u[i])
				break
			}
		}
	}
}

// TestTransformStanOrder checks the free order of a matrix with an elementwise transform:
// Stan reads it column-major, the tape stores it row-major.
func TestTransformStanOrder(t *testing.T) {
	tr, err := newTransform(tLower, 1, 2, 3, []float64{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := []float64{1, 2, 3, 4, 5, 6} // column-major: (1,1) (2,1) (1,2) (2,2) (1,3) (2,3)
	var tp ad.Tape
	x, _ := tr.Forward(&tp, tp.Const(u...))
	want := []float64{1, 3, 5, 2, 4, 6} // row-major logs
	for i, v := range tp.Value(x) {
		if math.Abs(math.Log(v)-want[i]) > 1e-12 {
			t.Fatalf("x = %v, want exp of %v", tp.Value(x), want)
		}
	}
	if r, c := tp.Shape(x); r != 2 || c != 3 {
		t.Errorf("shape %d×%d, want 2×3", r, c)
	}
}

func TestUnitVector(t *testing.T) {
	tr, err := newTransform(tUnitVector, 1, 3, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := []float64{0.3, -1.2, 2}
	var tp ad.Tape
	x, lj := tr.Forward(&tp, tp.Const(u...))
	n := math.Sqrt(0.09 + 1.44 + 4)
	for i, v := range tp.Value(x) {
		if math.Abs(v-u[i]/n) > 1e-15 {
			t.Errorf("x[%d] = %g, want %g", i, v, u[i]/n)
		}
	}
	if got, want := tp.Float(lj), -0.5*(0.09+1.44+4); math.Abs(got-want) > 1e-15 {
		t.Errorf("log J %g, want %g (Stan's −½ uᵀu)", got, want)
	}
}
