//go:build goexperiment.simd && amd64

package kernel

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// AVX2+FMA kernels written with simd/archsimd (4 float64 lanes). The exported functions have
// checked every length, so the loops below index with unchecked pointer arithmetic; each loop
// states the range it touches. Remainders shorter than a vector go through the scalar code
// or a zero-padded 4-element buffer.

// useAVX2 is fixed at start-up: the archsimd operations used here need AVX2 and FMA.
var useAVX2 = archsimd.X86.AVX2() && archsimd.X86.FMA()

// clearUpper clears the upper halves of the vector registers (VZEROUPPER) after AVX code:
// the scalar (SSE) code the compiler emits for the caller otherwise runs with false
// dependencies on the dirty upper bits, 2.5× slower on the test machine
// (BenchmarkScalarAfterExp). Called by every exported kernel after its vector code.
func clearUpper() {
	if useAVX2 {
		archsimd.ClearAVXUpperBits()
	}
}

func impl() string {
	if useAVX2 {
		return "avx2+fma"
	}
	return "go"
}

type f4 = archsimd.Float64x4

// at returns &p[i] for p pointing into a slice with at least i+1 elements.
func at(p *float64, i int) *float64 {
	return (*float64)(unsafe.Add(unsafe.Pointer(p), uintptr(i)*8))
}

// ld loads p[i:i+4]; st stores v there.
func ld(p *float64, i int) f4 { return archsimd.LoadFloat64x4((*[4]float64)(unsafe.Pointer(at(p, i)))) }

func st(v f4, p *float64, i int) { v.Store((*[4]float64)(unsafe.Pointer(at(p, i)))) }

// laneMasks[w] selects the first w lanes.
var laneMasks = [5][4]int64{{}, {-1}, {-1, -1}, {-1, -1, -1}, {-1, -1, -1, -1}}

// tailMask returns the mask of the first w lanes, 0 ≤ w ≤ 4; compute it once per tail.
func tailMask(w int) archsimd.Mask64x4 { return archsimd.LoadInt64x4(&laneMasks[w]).ToMask() }

// ldm loads the lanes of p[i:i+4] selected by mk, zeros elsewhere; stm stores those lanes. The
// other lanes' memory is not touched (VMASKMOVPD), so they may lie beyond the slice.
func ldm(p *float64, i int, mk archsimd.Mask64x4) f4 {
	return archsimd.LoadMaskedFloat64x4((*[4]float64)(unsafe.Pointer(at(p, i))), mk)
}

func stm(v f4, p *float64, i int, mk archsimd.Mask64x4) {
	v.StoreMasked((*[4]float64)(unsafe.Pointer(at(p, i))), mk)
}

// Vector constants live in memory as four lanes and are loaded with one instruction; a
// broadcast of a scalar constant costs two in every call. Package initialisation only writes
// memory, so it runs on any CPU.
type lanes = [4]float64

func splat(v float64) lanes { return lanes{v, v, v, v} }

func splatU(v uint64) [4]uint64 { return [4]uint64{v, v, v, v} }

func cv(p *lanes) f4 { return archsimd.LoadFloat64x4(p) }

func cu(p *[4]uint64) archsimd.Uint64x4 { return archsimd.LoadUint64x4(p) }

var (
	vE10          = splat(e10)
	vE11          = splat(e11)
	vE12          = splat(e12)
	vE13          = splat(e13)
	vE2           = splat(e2)
	vE3           = splat(e3)
	vE4           = splat(e4)
	vE5           = splat(e5)
	vE6           = splat(e6)
	vE7           = splat(e7)
	vE8           = splat(e8)
	vE9           = splat(e9)
	vExpHi        = splat(expHi)
	vExpLo        = splat(expLo)
	vHalf         = splat(0.5)
	vL1           = splat(l1)
	vL10          = splat(l10)
	vL2           = splat(l2)
	vL3           = splat(l3)
	vL4           = splat(l4)
	vL5           = splat(l5)
	vL6           = splat(l6)
	vL7           = splat(l7)
	vL8           = splat(l8)
	vL9           = splat(l9)
	vLn2Hi        = splat(ln2Hi)
	vLn2Lo        = splat(ln2Lo)
	vLog2e        = splat(log2e)
	vNaN          = splat(math.NaN())
	vNegInf       = splat(math.Inf(-1))
	vNegOne       = splat(-1)
	vNegZero      = splat(math.Copysign(0, -1))
	vNegLn2Hi     = splat(-ln2Hi)
	vNegLn2Lo     = splat(-ln2Lo)
	vOne          = splat(1)
	vPosInf       = splat(math.Inf(1))
	vRoundMagic   = splat(roundMagic)
	vTwo          = splat(2)
	vTwoTo52      = splat(1 << 52)
	vTwoTo52p1023 = splat(1<<52 + 1023) // + n (integer, |n| < 1024): n + 1023 in the low bits
	vZero         = splat(0)
	uAbsMask      = splatU(1<<63 - 1)
	uLogOffset    = splatU(oneBits - sqrtHalfBits)
	uMantMask     = splatU(mantMask)
	uSqrtHalf     = splatU(sqrtHalfBits)
	uTwoTo52Bits  = splatU(twoTo52Bits)
)

func bc(v float64) f4 { return archsimd.BroadcastFloat64x4(v) }

// hsum returns the sum of the lanes of v.
func hsum(v f4) float64 {
	h := v.GetLo().Add(v.GetHi())
	return h.AddPairs(h).GetElem(0)
}

// hsum4 returns (Σa, Σb, Σc, Σd), each the sum of the lanes of one argument.
func hsum4(a, b, c, d f4) f4 {
	ab := a.AddPairsGrouped(b) // a0+a1, b0+b1, a2+a3, b2+b3
	cd := c.AddPairsGrouped(d) // c0+c1, d0+d1, c2+c3, d2+d3
	return ab.Select128FromPair(0, 2, cd).Add(ab.Select128FromPair(1, 3, cd))
}

func axpy(a float64, x, y []float64) {
	if !useAVX2 {
		axpyGo(a, x, y)
		return
	}
	n := len(x)
	if n == 0 {
		return
	}
	px, py := &x[0], &y[0]
	av := bc(a)
	i := 0
	for ; i+16 <= n; i += 16 { // touches [i, i+16)
		st(ld(px, i).MulAdd(av, ld(py, i)), py, i)
		st(ld(px, i+4).MulAdd(av, ld(py, i+4)), py, i+4)
		st(ld(px, i+8).MulAdd(av, ld(py, i+8)), py, i+8)
		st(ld(px, i+12).MulAdd(av, ld(py, i+12)), py, i+12)
	}
	for ; i+4 <= n; i += 4 {
		st(ld(px, i).MulAdd(av, ld(py, i)), py, i)
	}
	for ; i < n; i++ {
		y[i] += a * x[i]
	}
}

func dot(x, y []float64) float64 {
	if !useAVX2 {
		return dotGo(x, y)
	}
	n := len(x)
	if n == 0 {
		return 0
	}
	return dotP(&x[0], &y[0], n)
}

// dotP returns Σ p[i]·q[i] over i < n.
func dotP(p, q *float64, n int) float64 {
	var a0, a1, a2, a3 f4
	i := 0
	for ; i+16 <= n; i += 16 {
		a0 = ld(p, i).MulAdd(ld(q, i), a0)
		a1 = ld(p, i+4).MulAdd(ld(q, i+4), a1)
		a2 = ld(p, i+8).MulAdd(ld(q, i+8), a2)
		a3 = ld(p, i+12).MulAdd(ld(q, i+12), a3)
	}
	for ; i+4 <= n; i += 4 {
		a0 = ld(p, i).MulAdd(ld(q, i), a0)
	}
	if i < n {
		mk := tailMask(n - i)
		a1 = ldm(p, i, mk).MulAdd(ldm(q, i, mk), a1)
	}
	return hsum(a0.Add(a1).Add(a2.Add(a3)))
}

func gemvN(A []float64, lda int, x, y []float64) {
	if !useAVX2 {
		gemvNGo(A, lda, x, y)
		return
	}
	rows, cols := len(y), len(x)
	pa, px, py := &A[0], &x[0], &y[0]
	i := 0
	for ; i+4 <= rows; i += 4 { // rows [i, i+4) of A, each [0, cols)
		r0, r1, r2, r3 := at(pa, i*lda), at(pa, (i+1)*lda), at(pa, (i+2)*lda), at(pa, (i+3)*lda)
		var a0, a1, a2, a3, b0, b1, b2, b3 f4
		j := 0
		for ; j+8 <= cols; j += 8 {
			xv, xw := ld(px, j), ld(px, j+4)
			a0 = ld(r0, j).MulAdd(xv, a0)
			a1 = ld(r1, j).MulAdd(xv, a1)
			a2 = ld(r2, j).MulAdd(xv, a2)
			a3 = ld(r3, j).MulAdd(xv, a3)
			b0 = ld(r0, j+4).MulAdd(xw, b0)
			b1 = ld(r1, j+4).MulAdd(xw, b1)
			b2 = ld(r2, j+4).MulAdd(xw, b2)
			b3 = ld(r3, j+4).MulAdd(xw, b3)
		}
		for ; j < cols; j += 4 {
			w := min(4, cols-j)
			mk := tailMask(w)
			xv := ldm(px, j, mk)
			a0 = ldm(r0, j, mk).MulAdd(xv, a0)
			a1 = ldm(r1, j, mk).MulAdd(xv, a1)
			a2 = ldm(r2, j, mk).MulAdd(xv, a2)
			a3 = ldm(r3, j, mk).MulAdd(xv, a3)
		}
		s := hsum4(a0.Add(b0), a1.Add(b1), a2.Add(b2), a3.Add(b3))
		st(ld(py, i).Add(s), py, i)
	}
	for ; i < rows; i++ {
		y[i] += dotP(at(pa, i*lda), px, cols)
	}
}

func gemvT(A []float64, lda int, x, y []float64) {
	if !useAVX2 {
		gemvTGo(A, lda, x, y)
		return
	}
	rows, cols := len(x), len(y)
	pa, py := &A[0], &y[0]
	i := 0
	for ; i+4 <= rows; i += 4 { // rows [i, i+4) of A, each [0, cols)
		r0, r1, r2, r3 := at(pa, i*lda), at(pa, (i+1)*lda), at(pa, (i+2)*lda), at(pa, (i+3)*lda)
		s0, s1, s2, s3 := x[i], x[i+1], x[i+2], x[i+3]
		x0, x1, x2, x3 := bc(s0), bc(s1), bc(s2), bc(s3)
		j := 0
		for ; j+4 <= cols; j += 4 {
			v := ld(r0, j).MulAdd(x0, ld(py, j))
			v = ld(r1, j).MulAdd(x1, v)
			v = ld(r2, j).MulAdd(x2, v)
			st(ld(r3, j).MulAdd(x3, v), py, j)
		}
		for ; j < cols; j++ {
			y[j] += s0**at(r0, j) + s1**at(r1, j) + s2**at(r2, j) + s3**at(r3, j)
		}
	}
	for ; i < rows; i++ {
		axpy(x[i], unsafe.Slice(at(pa, i*lda), cols), y)
	}
}

func ger(x, y, A []float64, lda int) {
	if !useAVX2 {
		gerGo(x, y, A, lda)
		return
	}
	cols := len(y)
	pa := &A[0]
	for i, xi := range x {
		axpy(xi, y, unsafe.Slice(at(pa, i*lda), cols))
	}
}

func gemvTGer(A []float64, lda int, x, w, y, B []float64) {
	if !useAVX2 {
		gemvTGo(A, lda, x, y)
		gerGo(x, w, B, lda)
		return
	}
	rows, cols := len(x), len(w)
	pa, pb, pw, py := &A[0], &B[0], &w[0], &y[0]
	i := 0
	for ; i+4 <= rows; i += 4 { // rows [i, i+4) of A and B, each [0, cols)
		r0, r1, r2, r3 := at(pa, i*lda), at(pa, (i+1)*lda), at(pa, (i+2)*lda), at(pa, (i+3)*lda)
		q0, q1, q2, q3 := at(pb, i*lda), at(pb, (i+1)*lda), at(pb, (i+2)*lda), at(pb, (i+3)*lda)
		s0, s1, s2, s3 := x[i], x[i+1], x[i+2], x[i+3]
		x0, x1, x2, x3 := bc(s0), bc(s1), bc(s2), bc(s3)
		j := 0
		for ; j+4 <= cols; j += 4 {
			v := ld(r0, j).MulAdd(x0, ld(py, j))
			v = ld(r1, j).MulAdd(x1, v)
			v = ld(r2, j).MulAdd(x2, v)
			st(ld(r3, j).MulAdd(x3, v), py, j)
			wv := ld(pw, j)
			st(wv.MulAdd(x0, ld(q0, j)), q0, j)
			st(wv.MulAdd(x1, ld(q1, j)), q1, j)
			st(wv.MulAdd(x2, ld(q2, j)), q2, j)
			st(wv.MulAdd(x3, ld(q3, j)), q3, j)
		}
		for ; j < cols; j++ {
			y[j] += s0**at(r0, j) + s1**at(r1, j) + s2**at(r2, j) + s3**at(r3, j)
			wj := w[j]
			*at(q0, j) += s0 * wj
			*at(q1, j) += s1 * wj
			*at(q2, j) += s2 * wj
			*at(q3, j) += s3 * wj
		}
	}
	for ; i < rows; i++ {
		axpy(x[i], unsafe.Slice(at(pa, i*lda), cols), y)
		axpy(x[i], w, unsafe.Slice(at(pb, i*lda), cols))
	}
}

// exp4 is exp1 on four lanes, with FMA.
func exp4(x f4) f4 {
	xc := x.Max(cv(&vExpLo)).Min(cv(&vExpHi))
	n := xc.MulAdd(cv(&vLog2e), cv(&vRoundMagic)).Sub(cv(&vRoundMagic))
	rHi := n.MulAdd(cv(&vNegLn2Hi), xc) // exact
	rLo := n.Mul(cv(&vNegLn2Lo))
	r := rHi.Add(rLo)
	r2 := r.Mul(r)
	r4 := r2.Mul(r2)
	r8 := r4.Mul(r4)
	a0 := r.MulAdd(cv(&vE3), cv(&vE2))
	a1 := r.MulAdd(cv(&vE5), cv(&vE4))
	a2 := r.MulAdd(cv(&vE7), cv(&vE6))
	a3 := r.MulAdd(cv(&vE9), cv(&vE8))
	a4 := r.MulAdd(cv(&vE11), cv(&vE10))
	a5 := r.MulAdd(cv(&vE13), cv(&vE12))
	b0 := a1.MulAdd(r2, a0)
	b1 := a3.MulAdd(r2, a2)
	b2 := a5.MulAdd(r2, a4)
	q := b2.MulAdd(r8, b1.MulAdd(r4, b0))
	p := rHi.Add(r2.MulAdd(q, rLo)).Add(cv(&vOne))
	// 2ⁿ = 2^n1·2^n2 with n1 = ⌊n/2⌋: both factors are normal numbers for n ∈ [−1076, 1024].
	n1 := n.Mul(cv(&vHalf)).Floor()
	n2 := n.Sub(n1)
	s1 := n1.Add(cv(&vTwoTo52p1023)).AsUint64x4().ShiftAllLeft(52).AsFloat64x4()
	s2 := n2.Add(cv(&vTwoTo52p1023)).AsUint64x4().ShiftAllLeft(52).AsFloat64x4()
	return p.Mul(s1).Mul(s2).Merge(x, x.Equal(x)) // NaN in, NaN out
}

// logCore4 is logCore on four lanes, with FMA.
func logCore4(w, corr f4) f4 {
	one := cv(&vOne)
	t := w.AsUint64x4().Add(cu(&uLogOffset))
	k := t.ShiftAllRight(52).Or(cu(&uTwoTo52Bits)).AsFloat64x4().Sub(cv(&vTwoTo52p1023))
	f := t.And(cu(&uMantMask)).Add(cu(&uSqrtHalf)).AsFloat64x4().Sub(one)
	s := f.Div(f.Add(cv(&vTwo)))
	z := s.Mul(s)
	z2 := z.Mul(z)
	z4 := z2.Mul(z2)
	z8 := z4.Mul(z4)
	a0 := z.MulAdd(cv(&vL2), cv(&vL1))
	a1 := z.MulAdd(cv(&vL4), cv(&vL3))
	a2 := z.MulAdd(cv(&vL6), cv(&vL5))
	a3 := z.MulAdd(cv(&vL8), cv(&vL7))
	a4 := z.MulAdd(cv(&vL10), cv(&vL9))
	b0 := a1.MulAdd(z2, a0)
	b1 := a3.MulAdd(z2, a2)
	R := z.Mul(a4.MulAdd(z8, b1.MulAdd(z4, b0)))
	hfsq := f.Mul(f).Mul(cv(&vHalf))
	c := k.MulAdd(cv(&vLn2Lo), corr)
	c = s.MulAdd(hfsq.Add(R), c)
	return k.MulAdd(cv(&vLn2Hi), f.Sub(hfsq.Sub(c)))
}

// log1p4 is log1p1 on four lanes.
func log1p4(x f4) f4 {
	one := cv(&vOne)
	w := x.Add(one)
	bb := w.Sub(one)
	c := one.Sub(w.Sub(bb)).Add(x.Sub(bb))
	r := logCore4(w, c.Div(w))
	keep := x.Equal(cv(&vZero)).Or(x.Equal(cv(&vPosInf))).Or(x.IsNaN()) // ±0, +Inf, NaN: x itself
	r = x.Merge(r, keep)
	r = cv(&vNegInf).Merge(r, x.Equal(cv(&vNegOne)))
	return cv(&vNaN).Merge(r, x.Less(cv(&vNegOne)))
}

// elementwise applies f to x in vectors of four, the last one zero-padded.
func elementwise(dst, x []float64, f func(f4) f4) {
	n := len(x)
	if n == 0 {
		return
	}
	pd, px := &dst[0], &x[0]
	i := 0
	for ; i+4 <= n; i += 4 {
		st(f(ld(px, i)), pd, i)
	}
	if i < n {
		var buf [4]float64
		copy(buf[:], x[i:])
		f(ld(&buf[0], 0)).Store(&buf)
		copy(dst[i:], buf[:])
	}
}

func expv(dst, x []float64) {
	if !useAVX2 {
		expGo(dst, x)
		return
	}
	elementwise(dst, x, exp4)
}

func log1pv(dst, x []float64) {
	if !useAVX2 {
		log1pGo(dst, x)
		return
	}
	elementwise(dst, x, log1p4)
}

// softplus4 returns softplus(r) and σ(r) on four lanes: the algorithm of bernoulli4 (one
// exp4, one division, one logCore4).
func softplus4(r f4) (sp, sg f4) {
	one := cv(&vOne)
	a := r.AsUint64x4().And(cu(&uAbsMask)).AsFloat64x4() // |r|
	u := exp4(cv(&vZero).Sub(a))
	w := u.Add(one)
	inv := one.Div(w)
	c := one.Sub(w).Add(u)
	l := logCore4(w, c.Mul(inv))
	sg = inv.Mul(u.Merge(one, r.Less(cv(&vZero))))
	sp = r.Max(cv(&vZero)).Add(l)
	nan := r.IsNaN()
	return r.Merge(sp, nan), r.Merge(sg, nan)
}

func softplusv(sp, sg, r []float64) {
	if !useAVX2 {
		softplusGo(sp, sg, r)
		return
	}
	n := len(r)
	i := 0
	if n >= 4 {
		ps, pg, pr := &sp[0], &sg[0], &r[0]
		for ; i+4 <= n; i += 4 {
			a, b := softplus4(ld(pr, i))
			st(a, ps, i)
			st(b, pg, i)
		}
	}
	if i < n {
		softplusGo(sp[i:], sg[i:], r[i:])
	}
}

// bernoulli4 is one vector of bernoulliLogitGo: it returns ∂log p/∂η and log p for η = e and
// labels y (0 or 1 as floats).
func bernoulli4(e, y f4) (g, lp f4) {
	one := cv(&vOne)
	a := e.AsUint64x4().And(cu(&uAbsMask)).AsFloat64x4() // |η|
	u := exp4(cv(&vZero).Sub(a))
	w := u.Add(one)
	inv := one.Div(w)
	c := one.Sub(w).Add(u)
	l := logCore4(w, c.Mul(inv))
	s := inv.Mul(u.Merge(one, e.Less(cv(&vZero)))) // σ(η)
	lp = y.MulAdd(e, cv(&vZero).Sub(e.Max(cv(&vZero)))).Sub(l)
	return y.Sub(s), lp
}

// labels4 converts four int labels at p[i:i+4] to float64 (bits of 0 and 1 only) and ORs
// every other bit into bad.
func labels4(p *int, i int, bad archsimd.Int64x4) (f4, archsimd.Int64x4) {
	v := archsimd.LoadInt64x4((*[4]int64)(unsafe.Add(unsafe.Pointer(p), uintptr(i)*8)))
	one := archsimd.BroadcastInt64x4(1)
	bad = bad.Or(v.AndNot(one))
	y := v.And(one).AsUint64x4().Or(cu(&uTwoTo52Bits)).AsFloat64x4().Sub(cv(&vTwoTo52))
	return y, bad
}

func bernoulliLogit(eta []float64, y []int) (lp, sum float64, ok bool) {
	if !useAVX2 {
		return bernoulliLogitGo(eta, y)
	}
	n := len(eta)
	if n == 0 {
		return 0, 0, true
	}
	pe, py := &eta[0], &y[0]
	var lpv, sv f4
	var bad archsimd.Int64x4
	i := 0
	for ; i+4 <= n; i += 4 {
		var yv f4
		yv, bad = labels4(py, i, bad)
		g, l := bernoulli4(ld(pe, i), yv)
		st(g, pe, i)
		lpv = lpv.Add(l)
		sv = sv.Add(g)
	}
	lp, sum = hsum(lpv), hsum(sv)
	ok = bad.IsZero()
	if i < n {
		l, s, o := bernoulliLogitGo(eta[i:], y[i:])
		lp, sum, ok = lp+l, sum+s, ok && o
	}
	return lp, sum, ok
}

func reluBack(g, adj, y []float64) {
	if !useAVX2 {
		reluBackGo(g, adj, y)
		return
	}
	n := len(g)
	if n == 0 {
		return
	}
	pg, pa, py := &g[0], &adj[0], &y[0]
	zero := cv(&vZero)
	i := 0
	for ; i+4 <= n; i += 4 {
		st(ld(pa, i).Masked(ld(py, i).Greater(zero)), pg, i)
	}
	for ; i < n; i++ {
		if y[i] > 0 {
			g[i] = adj[i]
		} else {
			g[i] = 0
		}
	}
}

func positiveBits(bits []uint64, y []float64) {
	if !useAVX2 {
		positiveBitsGo(bits, y)
		return
	}
	n := len(y)
	if n == 0 {
		return
	}
	py, zero := &y[0], cv(&vZero)
	w := 0
	for ; w*64+64 <= n; w++ { // y[64w, 64w+64)
		var b uint64
		for q := 0; q < 16; q++ {
			b |= uint64(ld(py, w*64+4*q).Greater(zero).ToBits()) << (4 * q)
		}
		bits[w] = b
	}
	if w*64 < n {
		positiveBitsGo(bits[w:], y[w*64:])
	}
}

// laneBits[b] has lane l all ones if bit l of b is set.
var laneBits = func() (t [16][4]int64) {
	for b := range t {
		for l := range 4 {
			t[b][l] = -int64(b >> l & 1)
		}
	}
	return t
}()

func reluBackBits(g, adj []float64, bits []uint64) {
	if !useAVX2 {
		reluBackBitsGo(g, adj, bits)
		return
	}
	n := len(g)
	if n == 0 {
		return
	}
	pg, pa := &g[0], &adj[0]
	w := 0
	for ; w*64+64 <= n; w++ { // g[64w, 64w+64)
		b := bits[w]
		for q := 0; q < 16; q++ {
			mk := archsimd.LoadInt64x4(&laneBits[b>>(4*q)&15])
			st(ld(pa, w*64+4*q).AsInt64x4().And(mk).AsFloat64x4(), pg, w*64+4*q)
		}
	}
	if w*64 < n {
		reluBackBitsGo(g[w*64:], adj[w*64:], bits[w:])
	}
}

func colSums(s, G []float64, n, m int) {
	if !useAVX2 || m < 4 {
		colSumsGo(s, G, n, m)
		return
	}
	ps, pg := &s[0], &G[0]
	for c := 0; c < m; c += 4 { // columns [c, c+w)
		w := min(4, m-c)
		mk := tailMask(w)
		acc := ldm(ps, c, mk)
		for i := 0; i < n; i++ {
			acc = acc.Add(ldm(pg, i*m+c, mk))
		}
		stm(acc, ps, c, mk)
	}
}

// act4 zeroes the lanes of v below lo and adds z. With lo = z = +0 it is Go's max(v, 0): NaN
// stays NaN and −0 becomes +0 (a Max instruction would turn NaN into 0, as the compiler may
// swap its operands).
func act4(v, lo, z f4) f4 {
	return v.AsInt64x4().AndNot(v.Less(lo).ToInt64x4()).AsFloat64x4().Add(z)
}

func dense(Y, X []float64, n, k int, W []float64, m int, b []float64, relu bool) {
	if !useAVX2 || m < 4 {
		denseGo(Y, X, n, k, W, m, b, relu)
		return
	}
	// X and W are empty when k = 0; their pointers are then never dereferenced.
	py, px, pb, pw := &Y[0], unsafe.SliceData(X), &b[0], unsafe.SliceData(W)
	// The activation is act4(v, lo, z): ReLU with lo = z = +0; without, lo = −Inf and z = −0
	// make it the identity.
	lo, z := cv(&vNegInf), cv(&vNegZero)
	if relu {
		lo, z = cv(&vZero), cv(&vZero)
	}
	i := 0
	for ; i+4 <= n; i += 4 { // rows [i, i+4)
		x0, x1, x2, x3 := at(px, i*k), at(px, (i+1)*k), at(px, (i+2)*k), at(px, (i+3)*k)
		y0, y1, y2, y3 := at(py, i*m), at(py, (i+1)*m), at(py, (i+2)*m), at(py, (i+3)*m)
		c := 0
		for ; c+8 <= m; c += 8 { // columns [c, c+8)
			ba, bb := ld(pb, c), ld(pb, c+4)
			a0, a1, a2, a3 := ba, ba, ba, ba
			b0, b1, b2, b3 := bb, bb, bb, bb
			for j := 0; j < k; j++ {
				wa, wb := ld(pw, j*m+c), ld(pw, j*m+c+4)
				a0 = bc(*at(x0, j)).MulAdd(wa, a0)
				b0 = bc(*at(x0, j)).MulAdd(wb, b0)
				a1 = bc(*at(x1, j)).MulAdd(wa, a1)
				b1 = bc(*at(x1, j)).MulAdd(wb, b1)
				a2 = bc(*at(x2, j)).MulAdd(wa, a2)
				b2 = bc(*at(x2, j)).MulAdd(wb, b2)
				a3 = bc(*at(x3, j)).MulAdd(wa, a3)
				b3 = bc(*at(x3, j)).MulAdd(wb, b3)
			}
			st(act4(a0, lo, z), y0, c)
			st(act4(b0, lo, z), y0, c+4)
			st(act4(a1, lo, z), y1, c)
			st(act4(b1, lo, z), y1, c+4)
			st(act4(a2, lo, z), y2, c)
			st(act4(b2, lo, z), y2, c+4)
			st(act4(a3, lo, z), y3, c)
			st(act4(b3, lo, z), y3, c+4)
		}
		for ; c < m; c += 4 { // columns [c, c+w), w ≤ 4
			w := min(4, m-c)
			mk := tailMask(w)
			a0 := ldm(pb, c, mk)
			a1, a2, a3 := a0, a0, a0
			for j := 0; j < k; j++ {
				wa := ldm(pw, j*m+c, mk)
				a0 = bc(*at(x0, j)).MulAdd(wa, a0)
				a1 = bc(*at(x1, j)).MulAdd(wa, a1)
				a2 = bc(*at(x2, j)).MulAdd(wa, a2)
				a3 = bc(*at(x3, j)).MulAdd(wa, a3)
			}
			stm(act4(a0, lo, z), y0, c, mk)
			stm(act4(a1, lo, z), y1, c, mk)
			stm(act4(a2, lo, z), y2, c, mk)
			stm(act4(a3, lo, z), y3, c, mk)
		}
	}
	for ; i < n; i++ { // one row
		x0, y0 := at(px, i*k), at(py, i*m)
		for c := 0; c < m; c += 4 {
			w := min(4, m-c)
			mk := tailMask(w)
			a0 := ldm(pb, c, mk)
			for j := 0; j < k; j++ {
				a0 = bc(*at(x0, j)).MulAdd(ldm(pw, j*m+c, mk), a0)
			}
			stm(act4(a0, lo, z), y0, c, mk)
		}
	}
}

func denseBackW(Wadj, X []float64, n, k int, G []float64, m int) {
	if !useAVX2 || m < 4 {
		denseBackWGo(Wadj, X, n, k, G, m)
		return
	}
	pw, px, pg := &Wadj[0], &X[0], &G[0]
	c := 0
	for ; c+8 <= m; c += 8 { // columns [c, c+8) of G and Wadj
		j := 0
		for ; j+4 <= k; j += 4 { // rows [j, j+4) of Wadj
			w0, w1, w2, w3 := at(pw, j*m+c), at(pw, (j+1)*m+c), at(pw, (j+2)*m+c), at(pw, (j+3)*m+c)
			a0, a1, a2, a3 := ld(w0, 0), ld(w1, 0), ld(w2, 0), ld(w3, 0)
			b0, b1, b2, b3 := ld(w0, 4), ld(w1, 4), ld(w2, 4), ld(w3, 4)
			for i := 0; i < n; i++ {
				ga, gb := ld(pg, i*m+c), ld(pg, i*m+c+4)
				xr := at(px, i*k+j)
				a0 = bc(*xr).MulAdd(ga, a0)
				b0 = bc(*xr).MulAdd(gb, b0)
				a1 = bc(*at(xr, 1)).MulAdd(ga, a1)
				b1 = bc(*at(xr, 1)).MulAdd(gb, b1)
				a2 = bc(*at(xr, 2)).MulAdd(ga, a2)
				b2 = bc(*at(xr, 2)).MulAdd(gb, b2)
				a3 = bc(*at(xr, 3)).MulAdd(ga, a3)
				b3 = bc(*at(xr, 3)).MulAdd(gb, b3)
			}
			st(a0, w0, 0)
			st(a1, w1, 0)
			st(a2, w2, 0)
			st(a3, w3, 0)
			st(b0, w0, 4)
			st(b1, w1, 4)
			st(b2, w2, 4)
			st(b3, w3, 4)
		}
		for ; j < k; j++ {
			w0 := at(pw, j*m+c)
			a0, b0 := ld(w0, 0), ld(w0, 4)
			for i := 0; i < n; i++ {
				v := bc(*at(px, i*k+j))
				a0 = v.MulAdd(ld(pg, i*m+c), a0)
				b0 = v.MulAdd(ld(pg, i*m+c+4), b0)
			}
			st(a0, w0, 0)
			st(b0, w0, 4)
		}
	}
	for ; c < m; c += 4 { // columns [c, c+w), w ≤ 4
		w := min(4, m-c)
		mk := tailMask(w)
		j := 0
		for ; j+4 <= k; j += 4 {
			w0, w1, w2, w3 := at(pw, j*m+c), at(pw, (j+1)*m+c), at(pw, (j+2)*m+c), at(pw, (j+3)*m+c)
			a0, a1, a2, a3 := ldm(w0, 0, mk), ldm(w1, 0, mk), ldm(w2, 0, mk), ldm(w3, 0, mk)
			for i := 0; i < n; i++ {
				ga := ldm(pg, i*m+c, mk)
				xr := at(px, i*k+j)
				a0 = bc(*xr).MulAdd(ga, a0)
				a1 = bc(*at(xr, 1)).MulAdd(ga, a1)
				a2 = bc(*at(xr, 2)).MulAdd(ga, a2)
				a3 = bc(*at(xr, 3)).MulAdd(ga, a3)
			}
			stm(a0, w0, 0, mk)
			stm(a1, w1, 0, mk)
			stm(a2, w2, 0, mk)
			stm(a3, w3, 0, mk)
		}
		for ; j < k; j++ {
			w0 := at(pw, j*m+c)
			a0 := ldm(w0, 0, mk)
			for i := 0; i < n; i++ {
				a0 = bc(*at(px, i*k+j)).MulAdd(ldm(pg, i*m+c, mk), a0)
			}
			stm(a0, w0, 0, mk)
		}
	}
}

func denseBackX(Xadj []float64, n, k int, G []float64, m int, W []float64) {
	if !useAVX2 || m < 4 {
		denseBackXGo(Xadj, n, k, G, m, W)
		return
	}
	px, pg, pw := &Xadj[0], &G[0], &W[0]
	for i := 0; i < n; i++ { // row i: Xadj[i, :] += G[i, :]·Wᵀ
		gr, xr := at(pg, i*m), at(px, i*k)
		j := 0
		for ; j+4 <= k; j += 4 {
			w0, w1, w2, w3 := at(pw, j*m), at(pw, (j+1)*m), at(pw, (j+2)*m), at(pw, (j+3)*m)
			var a0, a1, a2, a3 f4
			c := 0
			for ; c+4 <= m; c += 4 {
				g := ld(gr, c)
				a0 = g.MulAdd(ld(w0, c), a0)
				a1 = g.MulAdd(ld(w1, c), a1)
				a2 = g.MulAdd(ld(w2, c), a2)
				a3 = g.MulAdd(ld(w3, c), a3)
			}
			if c < m {
				mk := tailMask(m - c)
				g := ldm(gr, c, mk)
				a0 = g.MulAdd(ldm(w0, c, mk), a0)
				a1 = g.MulAdd(ldm(w1, c, mk), a1)
				a2 = g.MulAdd(ldm(w2, c, mk), a2)
				a3 = g.MulAdd(ldm(w3, c, mk), a3)
			}
			st(ld(xr, j).Add(hsum4(a0, a1, a2, a3)), xr, j)
		}
		for ; j < k; j++ {
			*at(xr, j) += dotP(gr, at(pw, j*m), m)
		}
	}
}

// bernElev4 is BernsteinElev4 on the four lanes of one vector, as bernElev4Asm: pass 1 two
// entries per step into two pairs of accumulators, pass 2 two entries per step into two
// accumulators of z with the tail sum as one chain.
func bernElev4(m int, xy, b2, tds, b1, dzdl, res []float64) {
	if !useAVX2 {
		bernElev4Go(m, xy, b2, tds, b1, dzdl, res)
		return
	}
	P := m + 1
	n := m - 2
	px := &xy[0]
	x, y := ld(px, 0), ld(px, 4)
	// Ranges touched: b2 [0, 4(n+1)), δ = tds[0, 4P), s = tds[4P, 8P), b1 [0, 4m),
	// dz = dzdl[0, 4P), dl = dzdl[4P, 8P), res [0, 12).
	pb2, pd, ps, pb1 := &b2[0], &tds[0], &tds[4*P], &b1[0]
	pdz, pdl, pr := &dzdl[0], &dzdl[4*P], &res[0]
	zero := bc(0)
	h0, h1, q0, q1, prev := zero, zero, zero, zero, zero
	i := 0
	for ; i < n; i += 2 { // entries i, i+1 of b2
		c0, c1 := ld(pb2, 4*i), ld(pb2, 4*i+4)
		d1, d2, d3 := ld(pd, 4*i+4), ld(pd, 4*i+8), ld(pd, 4*i+12)
		q0 = d2.Sub(d1).MulAdd(c0, q0)
		q1 = d3.Sub(d2).MulAdd(c1, q1)
		e0 := prev.MulAdd(x, y.Mul(c0))
		st(e0, pb1, 4*i)
		h0 = e0.MulAdd(d1, h0)
		e1 := c0.MulAdd(x, y.Mul(c1))
		st(e1, pb1, 4*i+4)
		h1 = e1.MulAdd(d2, h1)
		prev = c1
	}
	if i == n {
		c0 := ld(pb2, 4*i)
		d1, d2 := ld(pd, 4*i+4), ld(pd, 4*i+8)
		q0 = d2.Sub(d1).MulAdd(c0, q0)
		e0 := prev.MulAdd(x, y.Mul(c0))
		st(e0, pb1, 4*i)
		h0 = e0.MulAdd(d1, h0)
		prev = c0
	}
	e := x.Mul(prev)
	st(e, pb1, 4*(m-1))
	h0 = e.MulAdd(ld(pd, 4*m), h0)
	fm := bc(float64(m))
	hp := h0.Add(h1).Mul(fm)
	st(hp, pr, 4)
	st(q0.Add(q1).Mul(bc(float64(m*(m-1)))), pr, 8)
	c := fm.Div(hp)
	next, z0, z1, tail := zero, zero, zero, zero
	k := m
	for ; k >= 2; k -= 2 { // entries k and k−1
		bp := ld(pb1, 4*(k-1))
		tail = tail.Add(bp.MulAdd(x, y.Mul(next)))
		z0 = tail.MulAdd(ld(pd, 4*k), z0)
		s := ld(ps, 4*k)
		st(tail.Mul(s), pdz, 4*k)
		st(c.Mul(bp).Mul(s), pdl, 4*k)
		bq := ld(pb1, 4*(k-2))
		tail = tail.Add(bq.MulAdd(x, y.Mul(bp)))
		z1 = tail.MulAdd(ld(pd, 4*k-4), z1)
		s = ld(ps, 4*k-4)
		st(tail.Mul(s), pdz, 4*k-4)
		st(c.Mul(bq).Mul(s), pdl, 4*k-4)
		next = bq
	}
	if k == 1 {
		bp := ld(pb1, 0)
		tail = tail.Add(bp.MulAdd(x, y.Mul(next)))
		z0 = tail.MulAdd(ld(pd, 4), z0)
		s := ld(ps, 4)
		st(tail.Mul(s), pdz, 4)
		st(c.Mul(bp).Mul(s), pdl, 4)
		next = bp
	}
	tail = tail.Add(y.Mul(next))
	z0 = tail.MulAdd(ld(pd, 0), z0)
	st(z0.Add(z1), pr, 0)
	st(bc(1), pdz, 0)
	st(zero, pdl, 0)
}
