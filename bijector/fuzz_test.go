package bijector

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
)

// floats decodes data as little-endian float64s (a trailing partial chunk is ignored).
func floats(data []byte) []float64 {
	v := make([]float64, len(data)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return v
}

func encode(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// fill sets dst from src cyclically starting at off (zeros when src is empty).
func fill(dst, src []float64, off int) {
	for i := range dst {
		if len(src) == 0 {
			dst[i] = 0
		} else {
			dst[i] = src[(off+i)%len(src)]
		}
	}
}

// scale is the magnitude that x[i]'s round-trip error is relative to: |x_i| for every
// transform but the ordered ones, whose x_i is a sum of the gaps before it and so is accurate
// relative to max_{j≤i} |x_j| (see Ordered's doc).
func scale(b Bijector, x []float64, i int) float64 {
	lo := 0
	if r, ok := b.(*repeat); ok { // copies are independent: the scale of i's own copy
		b = r.b
		lo = i / r.b.Size() * r.b.Size()
	}
	if _, ok := b.(*ordered); !ok {
		return math.Abs(x[i])
	}
	s := 0.0
	for _, v := range x[lo : i+1] {
		s = math.Max(s, math.Abs(v))
	}
	return s
}

// nearScaled reports |a − b| ≤ tol·max(1, s).
func nearScaled(a, b, s, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, s)
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// FuzzRoundTrip drives every transform with arbitrary float64 inputs (including NaN, ±Inf,
// subnormals and huge values). Nothing may panic. When Constrain gives a finite x that Free
// accepts, Constrain(Free(x)) must reproduce x; and any x that Free accepts must come back
// from Constrain(Free(x)).
//
// Tolerances: the x → u → x map is well conditioned in x (each inverse step is a log of a
// difference that the forward step recomputes), so 1e-9·max(1,|x|) is loose. For arbitrary
// accepted x, Free tolerates a simplex sum or correlation row norm off by up to 1e-8 and
// Constrain renormalises, so there the tolerance is 1e-7. The ordered transforms are accurate
// relative to the running magnitude max_{j≤i}|x_j| (see Ordered), so their scale is that; the
// regression case testdata/fuzz/FuzzRoundTrip/ordered_huge_cancellation is x = (−1e304,
// 1.4e-76, 1, 2, 3), which came back as x_2 ≈ 5e290 and failed the old relative check.
//
// Run: go test -fuzz FuzzRoundTrip ./bijector
func FuzzRoundTrip(f *testing.F) {
	cs := cases()
	for k := range cs {
		f.Add(uint8(k), encode(0.3, -1.2, 2.5, 0.01, -4, 7))
		f.Add(uint8(k), encode(-700, 700, 40, -40))
		f.Add(uint8(k), encode(0.2, 0.3, 0.5, 1, 2, 3, math.NaN(), math.Inf(1)))
	}
	f.Add(uint8(0), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		c := cs[int(kind)%len(cs)]
		b := c.b
		vals := floats(data)
		u := make([]float64, b.FreeSize())
		x := make([]float64, b.Size())
		fill(u, vals, 0)

		var tp ad.Tape
		b.Forward(&tp, tp.Input(u)) // must not panic
		lj := b.Constrain(u, x)
		if finite(x) && !math.IsNaN(lj) {
			u2 := make([]float64, len(u))
			if err := b.Free(x, u2); err == nil {
				if !finite(u2) {
					t.Fatalf("%s: Free(%v) accepted but gave u = %v", c.name, x, u2)
				}
				x2 := make([]float64, len(x))
				b.Constrain(u2, x2)
				for i := range x {
					if !nearScaled(x2[i], x[i], scale(b, x, i), 1e-9) {
						t.Fatalf("%s: u=%v: x[%d] = %.17g → %.17g", c.name, u, i, x[i], x2[i])
					}
				}
			}
		}

		// Arbitrary x: Free must not panic; if it accepts x, x must be in the support.
		xg := make([]float64, b.Size())
		fill(xg, vals, len(u))
		ug := make([]float64, len(u))
		if err := b.Free(xg, ug); err == nil {
			if !finite(ug) {
				t.Fatalf("%s: Free(%v) accepted but gave u = %v", c.name, xg, ug)
			}
			x3 := make([]float64, len(xg))
			b.Constrain(ug, x3)
			for i := range xg {
				if !nearScaled(x3[i], xg[i], scale(b, xg, i), 1e-7) {
					t.Fatalf("%s: Free accepted x=%v but Constrain gives back x[%d] = %.17g", c.name, xg, i, x3[i])
				}
			}
		}
	})
}
