package kernel

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Pure-Go implementations: the default build's kernels and the SIMD build's fallback on CPUs
// without AVX2+FMA (and for the remainders of its BernoulliLogit). The BLAS-2 shapes go to
// gonum's assembly loops; exp and log1p are the same algorithms as the SIMD versions, scalar
// and without FMA.

func vec(d []float64) blas64.Vector { return blas64.Vector{N: len(d), Inc: 1, Data: d} }

func gm(d []float64, r, c, stride int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: max(stride, 1), Data: d}
}

func axpyGo(a float64, x, y []float64) { blas64.Axpy(a, vec(x), vec(y)) }

func dotGo(x, y []float64) float64 { return blas64.Dot(vec(x), vec(y)) }

func gemvNGo(A []float64, lda int, x, y []float64) {
	blas64.Gemv(blas.NoTrans, 1, gm(A, len(y), len(x), lda), vec(x), 1, vec(y))
}

func gemvTGo(A []float64, lda int, x, y []float64) {
	blas64.Gemv(blas.Trans, 1, gm(A, len(x), len(y), lda), vec(x), 1, vec(y))
}

func gerGo(x, y, A []float64, lda int) {
	blas64.Ger(1, vec(x), vec(y), gm(A, len(x), len(y), lda))
}

// gemmTile is the largest edge of a C tile handed to gonum's Dgemm: gonum goes parallel (and
// allocates) once C spans 4 or more 64×64 blocks; tiles of at most 64×192 or 192×64 stay on
// its serial, allocation-free path.
const gemmTile = 64

// gemmSerial computes C += op(A)·op(B) (shapes as blas64.Gemm) without gonum's parallel path.
func gemmSerial(tA, tB blas.Transpose, a, b, c blas64.General) {
	m, n := c.Rows, c.Cols
	rowStep, colStep := 3*gemmTile, gemmTile
	if n <= gemmTile {
		colStep = n
	} else if m <= gemmTile {
		rowStep, colStep = m, 3*gemmTile
	}
	for i := 0; i < m; i += rowStep {
		mi := min(rowStep, m-i)
		ai := subMat(a, tA, i, mi, true)
		for j := 0; j < n; j += colStep {
			nj := min(colStep, n-j)
			bj := subMat(b, tB, j, nj, false)
			cij := blas64.General{Rows: mi, Cols: nj, Stride: c.Stride, Data: c.Data[i*c.Stride+j:]}
			blas64.Gemm(tA, tB, 1, ai, bj, 1, cij)
		}
	}
}

// subMat restricts op(A) to rows [i, i+k) when left, or op(B) to columns [i, i+k) otherwise.
func subMat(x blas64.General, t blas.Transpose, i, k int, left bool) blas64.General {
	if (left && t == blas.NoTrans) || (!left && t == blas.Trans) {
		if k == x.Rows {
			return x
		}
		return blas64.General{Rows: k, Cols: x.Cols, Stride: x.Stride, Data: x.Data[i*x.Stride:]}
	}
	if k == x.Cols {
		return x
	}
	return blas64.General{Rows: x.Rows, Cols: k, Stride: x.Stride, Data: x.Data[i:]}
}

// denseGo computes Y = X·W + b (then ReLU) two rows and four outputs at a time: the eight sums
// stay in registers over the k inputs and are stored once, with bias and ReLU applied on the
// way out. (gonum's Dgemm would do k axpys of length m per row, reloading and storing the row
// k times.)
func denseGo(Y, X []float64, n, k int, W []float64, m int, b []float64, relu bool) {
	lo := math.Inf(-1)
	if relu {
		lo = 0
	}
	i := 0
	for ; i+2 <= n; i += 2 {
		x0, x1 := X[i*k:(i+1)*k], X[(i+1)*k:(i+2)*k]
		y0, y1 := Y[i*m:(i+1)*m], Y[(i+1)*m:(i+2)*m]
		c := 0
		for ; c+4 <= m; c += 4 {
			bc := b[c : c+4]
			s0, s1, s2, s3 := bc[0], bc[1], bc[2], bc[3]
			t0, t1, t2, t3 := s0, s1, s2, s3
			for j, u := range x0 {
				v := x1[j]
				wj := W[j*m+c : j*m+c+4]
				s0 += u * wj[0]
				t0 += v * wj[0]
				s1 += u * wj[1]
				t1 += v * wj[1]
				s2 += u * wj[2]
				t2 += v * wj[2]
				s3 += u * wj[3]
				t3 += v * wj[3]
			}
			y0[c], y0[c+1], y0[c+2], y0[c+3] = max(s0, lo), max(s1, lo), max(s2, lo), max(s3, lo)
			y1[c], y1[c+1], y1[c+2], y1[c+3] = max(t0, lo), max(t1, lo), max(t2, lo), max(t3, lo)
		}
		for ; c < m; c++ {
			s, t := b[c], b[c]
			for j, u := range x0 {
				s += u * W[j*m+c]
				t += x1[j] * W[j*m+c]
			}
			y0[c], y1[c] = max(s, lo), max(t, lo)
		}
	}
	if i < n {
		x, y := X[i*k:(i+1)*k], Y[i*m:(i+1)*m]
		for c := range y {
			s := b[c]
			for j, u := range x {
				s += u * W[j*m+c]
			}
			y[c] = max(s, lo)
		}
	}
}

func reluBackGo(g, adj, y []float64) {
	adj = adj[:len(g)]
	y = y[:len(g)]
	for i := range g {
		// A mask instead of a branch (the sign pattern of ReLU outputs is random); the
		// compiler turns the if into a conditional move.
		var m uint64
		if y[i] > 0 {
			m = ^uint64(0)
		}
		g[i] = math.Float64frombits(math.Float64bits(adj[i]) & m)
	}
}

func positiveBitsGo(bits []uint64, y []float64) {
	for w := 0; w*64 < len(y); w++ {
		var b uint64
		for i, v := range y[w*64 : min(w*64+64, len(y))] {
			if v > 0 { // a conditional move, not a branch
				b |= 1 << uint(i)
			}
		}
		bits[w] = b
	}
}

func reluBackBitsGo(g, adj []float64, bits []uint64) {
	adj = adj[:len(g)]
	for i := range g {
		m := -(bits[i>>6] >> uint(i&63) & 1) // all ones if the bit is set
		g[i] = math.Float64frombits(math.Float64bits(adj[i]) & m)
	}
}

func denseBackWGo(Wadj, X []float64, n, k int, G []float64, m int) {
	gemmSerial(blas.Trans, blas.NoTrans, gm(X, n, k, k), gm(G, n, m, m), gm(Wadj, k, m, m))
}

func colSumsGo(s, G []float64, n, m int) {
	for i := 0; i < n; i++ {
		row := G[i*m : (i+1)*m]
		s := s[:len(row)]
		for j, v := range row {
			s[j] += v
		}
	}
}

func denseBackXGo(Xadj []float64, n, k int, G []float64, m int, W []float64) {
	gemmSerial(blas.NoTrans, blas.Trans, gm(G, n, m, m), gm(W, k, m, m), gm(Xadj, n, k, k))
}

// Constants of exp and log1p.
const (
	log2e = 1.44269504088896340735992468100189214 // 1/log 2
	// ln2Hi + ln2Lo = log 2; ln2Hi has 21 trailing zero bits, so k·ln2Hi is exact for
	// |k| < 2²¹ (Cody & Waite 1980).
	ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
	ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
	// roundMagic = 1.5·2⁵²: v + roundMagic − roundMagic rounds v to the nearest integer (ties
	// to even) for |v| < 2⁵¹.
	roundMagic = 6755399441055744.0
	// expHi and expLo bound the arguments exp works on: e^710 overflows, e^−746 rounds to 0.
	expHi = 710.0
	expLo = -746.0

	// sqrtHalfBits is the bit pattern of √½; log1p splits 1+x = 2ᵏ·m with m ∈ [√½, √2).
	sqrtHalfBits = 0x3fe6a09e667f3bcd
	oneBits      = 0x3ff0000000000000
	mantMask     = 1<<52 - 1
	// twoTo52Bits is the bit pattern of 2⁵²: OR-ing an integer j < 2⁵² into its mantissa gives
	// the float64 2⁵² + j.
	twoTo52Bits = 0x4330000000000000
)

// Taylor coefficients 1/j! of eˣ, j = 2..13. On |r| ≤ log(2)/2 the truncation error of the
// degree-13 polynomial is r¹⁴/14! < 5·10⁻¹⁸, below 0.05 ulp.
const (
	e2  = 1.0 / 2
	e3  = 1.0 / 6
	e4  = 1.0 / 24
	e5  = 1.0 / 120
	e6  = 1.0 / 720
	e7  = 1.0 / 5040
	e8  = 1.0 / 40320
	e9  = 1.0 / 362880
	e10 = 1.0 / 3628800
	e11 = 1.0 / 39916800
	e12 = 1.0 / 479001600
	e13 = 1.0 / 6227020800
)

// exp1 returns eˣ (the algorithm of Exp, scalar): x = n·log 2 + r with n = round(x/log 2),
// r = rHi + rLo, rHi = x − n·ln2Hi exact (Cody–Waite) and |r| ≤ log(2)/2;
// eʳ = 1 + (rHi + (rLo + r²·q(r))) with q the Taylor polynomial 1/2! + r/3! + … + r¹¹/13!
// (Estrin's scheme, for a short dependency chain); and 2ⁿ applied as 2^⌊n/2⌋·2^(n−⌊n/2⌋) so
// that subnormal results are rounded once.
func exp1(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > expHi:
		x = expHi
	case x < expLo:
		x = expLo
	}
	n := (x*log2e + roundMagic) - roundMagic
	rHi := x - n*ln2Hi
	rLo := -n * ln2Lo
	r := rHi + rLo
	p := expPoly(r, rHi, rLo)
	ni := int64(n)
	n1 := ni >> 1
	s1 := math.Float64frombits(uint64(n1+1023) << 52)
	s2 := math.Float64frombits(uint64(ni-n1+1023) << 52)
	return p * s1 * s2
}

// expPoly returns eʳ for r = rHi + rLo (rounded), |r| ≤ log(2)/2.
func expPoly(r, rHi, rLo float64) float64 {
	r2 := r * r
	r4 := r2 * r2
	r8 := r4 * r4
	a0 := e2 + e3*r
	a1 := e4 + e5*r
	a2 := e6 + e7*r
	a3 := e8 + e9*r
	a4 := e10 + e11*r
	a5 := e12 + e13*r
	b0 := a0 + a1*r2
	b1 := a2 + a3*r2
	b2 := a4 + a5*r2
	q := (b0 + b1*r4) + b2*r8
	return 1 + (rHi + (rLo + r2*q))
}

// Coefficients 2/(2j+1), j = 1..10, of log(1+f) = 2s + s·R(s²), s = f/(2+f):
// log(1+f) = 2·atanh(s) = 2s·Σⱼ s²ʲ/(2j+1). With |s| ≤ 0.1716 (s² ≤ 0.0295) the first term
// left out, 2s·s²²/23, is below 10⁻¹⁸ relative.
const (
	l1  = 2.0 / 3
	l2  = 2.0 / 5
	l3  = 2.0 / 7
	l4  = 2.0 / 9
	l5  = 2.0 / 11
	l6  = 2.0 / 13
	l7  = 2.0 / 15
	l8  = 2.0 / 17
	l9  = 2.0 / 19
	l10 = 2.0 / 21
)

// log1p1 returns log(1+x) (the algorithm of Log1p, scalar). w = fl(1+x) and its rounding
// error c (so 1+x = w + c exactly, Knuth's TwoSum) give log(1+x) = log w + c/w to well below
// an ulp. w = 2ᵏ·m with m ∈ [√½, √2), f = m − 1, and
// log w = k·log 2 + f − f²/2 + s·(f²/2 + R(s²)), s = f/(2+f), which keeps f exact and
// everything added to it small.
func log1p1(x float64) float64 {
	switch {
	case x != x || x < -1:
		return math.NaN()
	case x == -1:
		return math.Inf(-1)
	case x == 0 || math.IsInf(x, 1):
		return x
	}
	w := 1 + x
	bb := w - 1
	c := (1 - (w - bb)) + (x - bb)
	return logCore(w, c/w)
}

// logCore returns log(w) + corr for w ≥ 2⁻⁵⁴ finite and |corr| ≪ 1.
func logCore(w, corr float64) float64 {
	t := math.Float64bits(w) + (oneBits - sqrtHalfBits)
	k := math.Float64frombits(t>>52|twoTo52Bits) - (1<<52 + 1023)
	f := math.Float64frombits(t&mantMask+sqrtHalfBits) - 1
	s := f / (2 + f)
	z := s * s
	hfsq := 0.5 * f * f
	return k*ln2Hi + (f - (hfsq - (s*(hfsq+logPoly(z)) + (k*ln2Lo + corr))))
}

// logPoly returns R(z) = Σⱼ₌₁¹⁰ 2zʲ/(2j+1) (Estrin's scheme).
func logPoly(z float64) float64 {
	z2 := z * z
	z4 := z2 * z2
	z8 := z4 * z4
	a0 := l1 + l2*z
	a1 := l3 + l4*z
	a2 := l5 + l6*z
	a3 := l7 + l8*z
	a4 := l9 + l10*z
	b0 := a0 + a1*z2
	b1 := a2 + a3*z2
	return z * ((b0 + b1*z4) + a4*z8)
}

func expGo(dst, x []float64) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = exp1(v)
	}
}

func log1pGo(dst, x []float64) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = log1p1(v)
	}
}

func bernoulliLogitGo(eta []float64, y []int) (lp, sum float64, ok bool) {
	y = y[:len(eta)]
	var bad int
	for i, e := range eta {
		yi := y[i]
		bad |= yi &^ 1
		u := exp1(-math.Abs(e)) // in (0, 1]
		w := 1 + u
		inv := 1 / w
		c := (1 - w) + u // 1 + u = w + c exactly (|u| ≤ 1)
		l := logCore(w, c*inv)
		// σ(η) = inv·u for η < 0 and inv otherwise, selected on the sign bit without a
		// branch (the sign of η is random).
		neg := uint64(int64(math.Float64bits(e)) >> 63)
		s := inv * math.Float64frombits(math.Float64bits(u)&neg|oneBits&^neg)
		yf := float64(yi & 1)
		lp += yf*e - max(e, 0) - l
		g := yf - s
		sum += g
		eta[i] = g
	}
	return lp, sum, bad == 0
}
