package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
)

// outputModel has parameters a (2×2, unconstrained) and s > 0 and derived quantities
// b = s·a (2×2, so the row-major → column-major flattening shows) and the scalar tr = a₁₁ + a₂₂,
// and one observation y = 1 ~ N(a₁₁, s).
func outputModel(t *testing.T) *Model {
	t.Helper()
	lay, err := NewLayout(Param{Name: "a", Dims: []int{2, 2}}, Param{Name: "s", Constraint: bijector.Lower(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return &Model{
		Layout:  lay,
		Density: func(t *ad.Tape, p []ad.Var) ad.Var { return t.Sum(p[0]) },
		Derived: []Quantity{{Name: "b", Dims: []int{2, 2}}, {Name: "tr"}},
		Derive: func(p, out [][]float64) {
			for i, v := range p[0] {
				out[0][i] = p[1][0] * v
			}
			out[1][0] = p[0][0] + p[0][3]
		},
		NumObs: 1,
		LogLik: func(p [][]float64, out []float64) {
			r := (1 - p[0][0]) / p[1][0]
			out[0] = -0.5*r*r - math.Log(p[1][0]) - 0.5*math.Log(2*math.Pi)
		},
	}
}

func TestModelRow(t *testing.T) {
	m := outputModel(t)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	want := []string{"a[1,1]", "a[2,1]", "a[1,2]", "a[2,2]", "s", "b[1,1]", "b[2,1]", "b[1,2]", "b[2,2]", "tr"}
	if got := m.Columns(); !slices.Equal(got, want) {
		t.Fatalf("columns %v, want %v", got, want)
	}
	z := []float64{1, 2, 3, 4, math.Log(2)} // a row-major (1 2; 3 4), s = 2
	row := m.Row(nil, z)
	s := row[4]
	wantRow := []float64{1, 3, 2, 4, s, s * 1, s * 3, s * 2, s * 4, 5}
	if !slices.Equal(row, wantRow) {
		t.Fatalf("row %v, want %v", row, wantRow)
	}
	ll, err := m.PointwiseLogLik(nil, z)
	if err != nil || len(ll) != 1 || math.Abs(ll[0]-(-math.Log(2)-0.5*math.Log(2*math.Pi))) > 1e-15 {
		t.Fatalf("log-lik %v, %v", ll, err)
	}
	m.LogLik, m.NumObs = nil, 0
	if _, err := m.PointwiseLogLik(nil, z); err == nil {
		t.Fatal("PointwiseLogLik without LogLik: no error")
	}
}

func TestModelCheck(t *testing.T) {
	for _, c := range []struct {
		edit func(m *Model)
		want string
	}{
		{func(m *Model) { m.Derived[1].Name = "s" }, `Derived[1].Name="s": declared twice`},
		{func(m *Model) { m.Derived[1].Name = "1x" }, `Derived[1].Name="1x": not a Stan identifier`},
		{func(m *Model) { m.Derived[0].Dims = []int{-1} }, `Derived[0].Dims=[-1]`},
		{func(m *Model) { m.Derive = nil }, "Derive is nil"},
		{func(m *Model) { m.NumObs = 0 }, "NumObs=0 and LogLik is set"},
		{func(m *Model) { m.NumObs = -2 }, "NumObs=-2, want ≥ 0"},
		{func(m *Model) { m.Density = nil }, "Density is nil"},
	} {
		m := outputModel(t)
		c.edit(m)
		if err := m.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}
