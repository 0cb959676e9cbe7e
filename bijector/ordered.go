package bijector

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// Ordered returns Stan's transform onto strictly increasing vectors of length n:
//
//	x_1 = u_1,   x_k = x_{k−1} + e^{u_k} (k ≥ 2),   log J = Σ_{k≥2} u_k.
//
// Free computes u_k = log(x_k − x_{k−1}) and fails unless x is finite and strictly increasing.
//
// Accuracy (the domain of the round trip): Constrain(Free(x)) reproduces x_k to within a few
// ulps of s_k·(1 + |u_k|), where s_k = max_{j≤k} |x_j|, not to within a few ulps of |x_k|. The
// map is ill-conditioned where a gap dwarfs the entry it leads to: x = (−10³⁰⁴, 10⁻⁷⁶) gives
// u_2 = log(10³⁰⁴) ≈ 700, whose rounding alone moves x_2 by ≈ 10²⁹¹. No choice of u_2 does
// better, since ∂x_2/∂u_2 = e^{u_2}; entries that must keep their relative precision should be
// modelled on a scale where the preceding entries are not much larger in magnitude.
//
// Forward records 3 + 3⌈log₂ n⌉ nodes (a Map, a prefix-sum scan, a fused log J); cost
// O(n log n) on the tape, O(n) in Constrain and Free. It panics if n < 0.
//
// References: Stan Reference Manual, "Ordered vector".
func Ordered(n int) Bijector {
	if n < 0 {
		panic(fmt.Sprintf("bijector: Ordered: n=%d", n))
	}
	return &ordered{n: n, scan: newScan(oneSegment(n))}
}

// PositiveOrdered returns Stan's transform onto strictly increasing positive vectors:
//
//	x_1 = e^{u_1},   x_k = x_{k−1} + e^{u_k},   log J = Σ_k u_k.
//
// Free fails unless 0 < x_1 < x_2 < … (finite). Costs and accuracy as for Ordered (here the
// entries increase, so s_k = x_k and the round trip is accurate relative to x_k itself).
//
// References: Stan Reference Manual, "Positive ordered vector".
func PositiveOrdered(n int) Bijector {
	if n < 0 {
		panic(fmt.Sprintf("bijector: PositiveOrdered: n=%d", n))
	}
	return &ordered{n: n, positive: true, scan: newScan(oneSegment(n))}
}

type ordered struct {
	n        int
	positive bool
	scan     scan
}

func (b *ordered) name() string {
	if b.positive {
		return "PositiveOrdered"
	}
	return "Ordered"
}

func (b *ordered) FreeSize() int { return b.n }
func (b *ordered) Size() int     { return b.n }
func (b *ordered) String() string {
	if b.positive {
		return fmt.Sprintf("positive_ordered[%d]", b.n)
	}
	return fmt.Sprintf("ordered[%d]", b.n)
}

func (b *ordered) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	checkVar(b.name(), "Forward", t, u, b.n)
	if b.n == 0 {
		return u, t.Const(0)
	}
	uv := t.Value(u)
	m, mv, md := t.Map(u)
	for i, ui := range uv {
		if i == 0 && !b.positive {
			mv[i], md[i] = ui, 1
			continue
		}
		e := math.Exp(ui)
		mv[i], md[i] = e, e
	}
	x = m
	if len(b.scan.steps) > 0 {
		x = b.scan.apply(t, m, t.Const(0))
	}
	if b.positive {
		return x, t.Sum(u)
	}
	fb := t.Fused()
	du := fb.Partial(u)
	lj := 0.0
	for i := 1; i < b.n; i++ {
		lj += uv[i]
		if du != nil {
			du[i] = 1
		}
	}
	return x, fb.Done(lj)
}

func (b *ordered) Constrain(u, x []float64) float64 {
	checkLens(b.name(), "Constrain", u, x, b.n, b.n)
	acc, lj := 0.0, 0.0
	for i, ui := range u {
		if i == 0 && !b.positive {
			acc = ui
		} else {
			acc += math.Exp(ui)
			lj += ui
		}
		x[i] = acc
	}
	return lj
}

func (b *ordered) Free(x, u []float64) error {
	checkLens(b.name(), "Free", u, x, b.n, b.n)
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return domainErr(b.name(), "x[%d] = %g, want finite", i, v)
		}
		switch {
		case i > 0 && !(v > x[i-1]):
			return domainErr(b.name(), "x[%d] = %g ≤ x[%d] = %g, want strictly increasing", i, v, i-1, x[i-1])
		case i > 0 && math.IsInf(v-x[i-1], 1):
			return domainErr(b.name(), "x[%d] − x[%d] overflows", i, i-1)
		case i > 0:
			u[i] = math.Log(v - x[i-1])
		case b.positive && !(v > 0):
			return domainErr(b.name(), "x[0] = %g, want > 0", v)
		case b.positive:
			u[0] = math.Log(v)
		default:
			u[0] = v
		}
	}
	return nil
}
