package bijector

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Simplex returns Stan's stick-breaking transform from ℝ^{K−1} onto the open unit simplex
// {x ∈ ℝᴷ : x_k > 0, Σ x_k = 1}. With 1-based k = 1…K−1,
//
//	z_k = σ(u_k − log(K−k)),   x_k = r_k·z_k,   r_1 = 1, r_{k+1} = r_k·(1 − z_k),   x_K = r_K,
//	log J = Σ_{k<K} log z_k + log(1 − z_k) + log r_k.
//
// The offset log(K−k) makes u = 0 map to the uniform simplex. All products are done in log
// space (log σ, prefix sums of log(1−z)), so no entry underflows to 0 before exp(·) must.
// Free computes the remaining sticks as suffix sums r_k = Σ_{j≥k} x_j, which is exact even for
// tiny entries, and accepts x whose sum is within 1e-8 of 1 (Stan's constraint tolerance).
//
// Forward records about 10 + 3⌈log₂ K⌉ nodes (the prefix sum is a Hillis–Steele scan).
// Cost O(K log K) on the tape, O(K) in Constrain and Free. It panics if K < 1.
//
// References: Stan Reference Manual, "Unit simplex" (stick-breaking transform); Stan Math
// simplex_constrain/simplex_free (before the 2.36 switch to the ILR transform).
func Simplex(k int) Bijector {
	if k < 1 {
		panic(fmt.Sprintf("bijector: Simplex: K=%d, want ≥ 1", k))
	}
	b := &simplex{k: k, off: make([]float64, k-1), shift: make([]int, k)}
	for i := range b.off {
		b.off[i] = math.Log(float64(k - 1 - i))
	}
	// shift turns log(1−z) (size K−1) into the exclusive prefix input: c_0 = 0, c_k = b_{k−1}.
	b.shift[0] = k - 1
	for i := 1; i < k; i++ {
		b.shift[i] = i - 1
	}
	b.scan = newScan(oneSegment(k))
	return b
}

// SimplexTol is the tolerance of Simplex.Free on |Σx − 1| (Stan's CONSTRAINT_TOLERANCE).
const SimplexTol = 1e-8

type simplex struct {
	k     int
	off   []float64 // log(K−k), k = 1…K−1
	shift []int
	scan  scan
}

func (b *simplex) FreeSize() int  { return b.k - 1 }
func (b *simplex) Size() int      { return b.k }
func (b *simplex) String() string { return fmt.Sprintf("simplex[%d]", b.k) }

func (b *simplex) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	k := b.k
	checkVar("Simplex", "Forward", t, u, k-1)
	if k == 1 {
		return t.Const(1), t.Const(0)
	}
	uv := t.Value(u)
	a, av, ad1 := t.Map(u) // log z
	c, cv, cd := t.Map(u)  // log(1 − z)
	for i, ui := range uv {
		y := ui - b.off[i]
		z, zm := mathx.Logistic(y), mathx.Logistic(-y)
		av[i], ad1[i] = mathx.LogLogistic(y), zm
		cv[i], cd[i] = mathx.LogLogistic(-y), -z
	}
	zero := t.Const(0)
	logr := b.scan.apply(t, t.Gather(t.Concat(c, zero), b.shift), zero)
	x = t.Exp(t.Add(t.Concat(a, zero), logr))

	lr := t.Value(logr)
	fb := t.Fused()
	du := fb.Partial(u)
	lj := 0.0
	for i := range uv {
		lj += av[i] + cv[i] + lr[i]
		if du != nil {
			z := -cd[i]
			// d/du_i of log z_i + log(1−z_i) = 1 − 2z_i; log r_j for j > i (K−2−i of them)
			// each contribute −z_i.
			du[i] = 1 - 2*z - float64(k-2-i)*z
		}
	}
	return x, fb.Done(lj)
}

func (b *simplex) Constrain(u, x []float64) float64 {
	k := b.k
	checkLens("Simplex", "Constrain", u, x, k-1, k)
	logr, lj := 0.0, 0.0
	for i, ui := range u {
		y := ui - b.off[i]
		lz, l1 := mathx.LogLogistic(y), mathx.LogLogistic(-y)
		x[i] = math.Exp(lz + logr)
		lj += lz + l1 + logr
		logr += l1
	}
	x[k-1] = math.Exp(logr)
	return lj
}

func (b *simplex) Free(x, u []float64) error {
	k := b.k
	checkLens("Simplex", "Free", u, x, k-1, k)
	sum := 0.0
	for i, v := range x {
		if !(v > 0) || math.IsInf(v, 1) {
			return domainErr("Simplex", "x[%d] = %g, want > 0", i, v)
		}
		sum += v
	}
	if !(math.Abs(sum-1) <= SimplexTol) {
		return domainErr("Simplex", "x sums to %.17g, want 1 (tolerance %g)", sum, SimplexTol)
	}
	// u_i = logit(z_i) + log(K−1−i) with z_i = x_i / r_i, r_i = Σ_{j≥i} x_j, so
	// logit(z_i) = log x_i − log r_{i+1}.
	r := x[k-1]
	for i := k - 2; i >= 0; i-- {
		u[i] = math.Log(x[i]) - math.Log(r) + b.off[i]
		r += x[i]
	}
	return nil
}
