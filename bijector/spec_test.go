package bijector

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestSpecRebuildsEveryTransform: New(b.Spec()) has b's kind and computes b's values and
// log J bit for bit.
func TestSpecRebuildsEveryTransform(t *testing.T) {
	for _, b := range []Bijector{
		Identity(3), Lower(2, 0.3), Upper(2, -1.5), Interval(3, -2, 5), Ordered(4),
		PositiveOrdered(3), Simplex(4), CholeskyCorr(3), CholeskyCov(4, 2),
		Repeat(Simplex(3), 4), Repeat(Ordered(2), 3), IdentityColMajor(3, 2),
	} {
		s := b.(Describer).Spec()
		c, err := New(s)
		if err != nil {
			t.Fatalf("%v: %v", b, err)
		}
		if cs := c.(Describer).Spec(); cs.Kind != s.Kind || !slices.Equal(cs.Shape, s.Shape) || cs.Lower != s.Lower || cs.Upper != s.Upper || cs.Count != s.Count || cs.ColMajor != s.ColMajor {
			t.Fatalf("%v: spec %+v rebuilt as %+v", b, s, cs)
		}
		u := make([]float64, b.FreeSize())
		for i := range u {
			u[i] = 0.7*float64(i%5) - 1.1
		}
		xa, xb := make([]float64, b.Size()), make([]float64, b.Size())
		ja, jb := b.Constrain(u, xa), c.Constrain(u, xb)
		if math.Float64bits(ja) != math.Float64bits(jb) || !slices.Equal(xa, xb) {
			t.Errorf("%v: rebuilt transform differs: %v %v vs %v %v", b, xa, ja, xb, jb)
		}
	}
}

func TestSpecKinds(t *testing.T) {
	for b, want := range map[Bijector]Kind{
		Lower(1, math.Inf(-1)): KindIdentity, Interval(1, 0, math.Inf(1)): KindLower,
		Interval(1, math.Inf(-1), 2): KindUpper, Interval(1, 0, 1): KindInterval,
	} {
		if got := b.(Describer).Spec().Kind; got != want {
			t.Errorf("%v: kind %s, want %s", b, got, want)
		}
	}
}

func TestNewErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: "spline", Shape: []int{2}}, `Kind="spline"`},
		{Spec{Kind: KindLower, Shape: []int{2}, Lower: math.NaN()}, "Lower=NaN"},
		{Spec{Kind: KindUpper, Shape: []int{2}, Upper: math.Inf(-1)}, "Upper=-Inf"},
		{Spec{Kind: KindInterval, Shape: []int{1}, Lower: 2, Upper: 1}, "want Lower < Upper"},
		{Spec{Kind: KindSimplex, Shape: []int{0}}, "K ≥ 1"},
		{Spec{Kind: KindOrdered, Shape: []int{2, 2}}, "Shape=[2 2]"},
		{Spec{Kind: KindLower, Shape: []int{-1}}, "Shape=[-1]"},
		{Spec{Kind: KindCholeskyCorr, Shape: []int{2, 3}}, "{K, K}"},
		{Spec{Kind: KindCholeskyCov, Shape: []int{2, 3}}, "M ≥ N"},
		{Spec{Kind: KindLower, Shape: []int{2}, Count: 3}, "Count=3: copies only of"},
		{Spec{Kind: KindSimplex, Shape: []int{2}, Count: -1}, "Count=-1"},
		{Spec{Kind: KindSimplex, Shape: []int{0}, Count: 2}, "K ≥ 1"},
		{Spec{Kind: KindLower, Shape: []int{2, 2}, ColMajor: true}, "ColMajor with Shape=[2 2]"},
		{Spec{Kind: KindIdentity, Shape: []int{4}, ColMajor: true}, "want identity of Shape {rows, cols}"},
	} {
		_, err := New(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bijector: New: ") {
			t.Errorf("%+v: error %v, want one containing %q", c.s, err, c.want)
		}
	}
}
