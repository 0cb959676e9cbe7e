package bijector

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// Repeat returns n independent copies of b side by side: u = (u₁, …, uₙ) with each uᵢ of
// b.FreeSize() coordinates maps to x = (b(u₁), …, b(uₙ)) with log J = Σ log Jᵢ — Stan's
// array[n] simplex[K] (or ordered, positive_ordered), whose free coordinates are the elements'
// one after the other. b must describe itself (every transform of this package does). Cost:
// n times b's, plus one Concat on the tape.
func Repeat(b Bijector, n int) Bijector {
	d, ok := b.(Describer)
	if n < 0 || !ok {
		panic(fmt.Sprintf("bijector: Repeat: n=%d, describer=%v", n, ok))
	}
	return &repeat{b: b, d: d, n: n}
}

type repeat struct {
	b Bijector
	d Describer
	n int
}

func (r *repeat) FreeSize() int  { return r.n * r.b.FreeSize() }
func (r *repeat) Size() int      { return r.n * r.b.Size() }
func (r *repeat) String() string { return fmt.Sprintf("%d × %v", r.n, r.b) }

// Spec is b's spec with Count n.
func (r *repeat) Spec() Spec {
	s := r.d.Spec()
	s.Count = r.n
	return s
}

func (r *repeat) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	checkVar("Repeat", "Forward", t, u, r.FreeSize())
	if r.n == 0 {
		return t.Const(), t.Const(0)
	}
	fs := r.b.FreeSize()
	var buf [16]ad.Var // no allocation for up to 16 copies
	xs := buf[:0]
	if r.n > len(buf) {
		xs = make([]ad.Var, 0, r.n)
	}
	for a := range r.n {
		xa, ja := r.b.Forward(t, t.Slice(u, a*fs, (a+1)*fs))
		xs = append(xs, xa)
		if a == 0 {
			logJ = ja
		} else {
			logJ = t.Add(logJ, ja)
		}
	}
	if r.n == 1 {
		return xs[0], logJ
	}
	return t.Concat(xs...), logJ
}

func (r *repeat) Constrain(u, x []float64) float64 {
	checkLens("Repeat", "Constrain", u, x, r.FreeSize(), r.Size())
	fs, s := r.b.FreeSize(), r.b.Size()
	lj := 0.0
	for a := range r.n {
		lj += r.b.Constrain(u[a*fs:(a+1)*fs], x[a*s:(a+1)*s])
	}
	return lj
}

func (r *repeat) Free(x, u []float64) error {
	checkLens("Repeat", "Free", u, x, r.FreeSize(), r.Size())
	fs, s := r.b.FreeSize(), r.b.Size()
	for a := range r.n {
		if err := r.b.Free(x[a*s:(a+1)*s], u[a*fs:(a+1)*fs]); err != nil {
			return fmt.Errorf("element %d: %w", a+1, err)
		}
	}
	return nil
}

// IdentityColMajor is the identity on a rows×cols matrix whose free coordinates are in
// column-major order (Stan's, after Eigen) while its values are row-major (the tape's): x[i, j]
// = u[j·rows + i], log J = 0. Cost: one Gather.
func IdentityColMajor(rows, cols int) Bijector {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("bijector: IdentityColMajor: rows=%d, cols=%d", rows, cols))
	}
	perm := make([]int, rows*cols)
	for i := range rows {
		for j := range cols {
			perm[i*cols+j] = j*rows + i
		}
	}
	return &colMajor{rows: rows, cols: cols, perm: perm}
}

type colMajor struct {
	rows, cols int
	perm       []int // perm[row-major index] = column-major index
}

func (b *colMajor) FreeSize() int { return b.rows * b.cols }
func (b *colMajor) Size() int     { return b.rows * b.cols }
func (b *colMajor) String() string {
	return fmt.Sprintf("identity[%d×%d, column-major]", b.rows, b.cols)
}

// Spec is identity with Shape {rows, cols} and ColMajor set.
func (b *colMajor) Spec() Spec {
	return Spec{Kind: KindIdentity, Shape: []int{b.rows, b.cols}, ColMajor: true}
}

func (b *colMajor) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	checkVar("IdentityColMajor", "Forward", t, u, b.Size())
	x = t.Gather(u, b.perm)
	if b.rows > 1 && b.cols > 1 {
		x = t.AsMatrix(x, b.rows, b.cols)
	}
	return x, t.Const(0)
}

func (b *colMajor) Constrain(u, x []float64) float64 {
	checkLens("IdentityColMajor", "Constrain", u, x, b.Size(), b.Size())
	for i, j := range b.perm {
		x[i] = u[j]
	}
	return 0
}

func (b *colMajor) Free(x, u []float64) error {
	checkLens("IdentityColMajor", "Free", u, x, b.Size(), b.Size())
	for i, j := range b.perm {
		if v := x[i]; math.IsNaN(v) || math.IsInf(v, 0) {
			return domainErr("IdentityColMajor", "x[%d] = %g, want finite", i, v)
		}
		u[j] = x[i]
	}
	return nil
}
