package bijector

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// CorrTol is the tolerance of CholeskyCorr.Free on |Σ_j L_ij² − 1| for each row (Stan's
// CONSTRAINT_TOLERANCE).
const CorrTol = 1e-8

// CholeskyCorr returns Stan's transform from ℝ^{K(K−1)/2} onto Cholesky factors of K×K
// correlation matrices: lower-triangular L with positive diagonal and unit-length rows.
// The free vector holds the strictly lower triangle row by row; with z_ij = tanh(u_ij)
// (canonical partial correlations),
//
//	L_00 = 1,   L_ij = z_ij·√(1 − Σ_{j'<j} L_ij'²) (j < i),   L_ii = √(1 − Σ_{j<i} L_ij²),
//	log J = Σ_{j<i} log(1 − z_ij²) + Σ_{0<j<i} ½·log(1 − Σ_{j'<j} L_ij'²)
//	      = Σ_{j<i} (i+1−j)/2 · log(1 − z_ij²)          (0-based i, j),
//
// the log determinant of ∂(strictly lower triangle of L)/∂u. Since 1 − Σ_{j'<j} L_ij'² =
// Π_{j'<j} (1 − z_ij'²), everything is computed from log(1 − tanh² u) = 2·log sech u
// = 2(log 2 − |u| − log1p(e^{−2|u|})), which is finite for all finite u (no 1 − z² = 0
// cancellation). Free uses the suffix sums Σ_{j'≥j} L_ij'² for the remaining stick, so it
// keeps full precision when |z| is close to 1.
//
// L is K×K row-major (Forward returns a K×K matrix node). Forward records about
// 16 + 3⌈log₂ K⌉ nodes; cost O(K² log K) on the tape, O(K²) in Constrain and Free.
// It panics if K < 1.
//
// References: Stan Reference Manual, "Cholesky factors of correlation matrices";
// Lewandowski, Kurowicka & Joe (2009), "Generating random correlation matrices based on vines
// and extended onion method", J. Multivariate Anal. 100, §2.
func CholeskyCorr(k int) Bijector {
	if k < 1 {
		panic(fmt.Sprintf("bijector: CholeskyCorr: K=%d, want ≥ 1", k))
	}
	m, nl := k*(k-1)/2, k*(k+1)/2
	b := &cholCorr{k: k, m: m,
		shift: make([]int, nl), sIdx: make([]int, nl), full: make([]int, k*k), coef: make([]float64, m)}
	start := make([]int, nl)
	for i := range k {
		for j := 0; j <= i; j++ {
			q := i*(i+1)/2 + j
			start[q] = i * (i + 1) / 2
			b.shift[q], b.sIdx[q] = m, m
			if j >= 1 {
				b.shift[q] = i*(i-1)/2 + j - 1
			}
			if j < i {
				f := i*(i-1)/2 + j
				b.sIdx[q] = f
				b.coef[f] = float64(i+1-j) / 2
			}
		}
		for j := range k {
			if j <= i {
				b.full[i*k+j] = i*(i+1)/2 + j
			} else {
				b.full[i*k+j] = nl
			}
		}
	}
	b.scan = newScan(start)
	return b
}

type cholCorr struct {
	k, m  int
	shift []int     // lower cell (i,j) ← free index of (i, j−1), or m (zero slot)
	sIdx  []int     // lower cell (i,j) ← free index of z_ij, or m (the 1 on the diagonal)
	full  []int     // K×K cell ← lower cell index, or K(K+1)/2 (zero above the diagonal)
	coef  []float64 // (i+1−j)/2 per free coordinate
	scan  scan      // prefix sums within rows of the lower triangle
}

func (b *cholCorr) FreeSize() int  { return b.m }
func (b *cholCorr) Size() int      { return b.k * b.k }
func (b *cholCorr) String() string { return fmt.Sprintf("cholesky_factor_corr[%d]", b.k) }

// logSech returns log sech u = log 2 − |u| − log1p(e^{−2|u|}) = ½·log(1 − tanh² u).
func logSech(u float64) float64 {
	a := math.Abs(u)
	return math.Ln2 - a - math.Log1p(math.Exp(-2*a))
}

func (b *cholCorr) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	k := b.k
	checkVar("CholeskyCorr", "Forward", t, u, b.m)
	if k == 1 {
		return t.AsMatrix(t.Const(1), 1, 1), t.Const(0)
	}
	uv := t.Value(u)
	h, hv, hd := t.Map(u) // ½ log(1 − z²)
	for i, ui := range uv {
		hv[i], hd[i] = logSech(ui), -math.Tanh(ui)
	}
	zero := t.Const(0)
	// Row-wise exclusive prefix sums of ½ log(1 − z²): the log of the remaining stick length.
	stick := t.Exp(b.scan.apply(t, t.Gather(t.Concat(h, zero), b.shift), zero))
	s := t.Gather(t.Concat(t.Tanh(u), t.Const(1)), b.sIdx)
	lower := t.Mul(s, stick)
	x = t.AsMatrix(t.Gather(t.Concat(lower, zero), b.full), k, k)

	fb := t.Fused()
	du := fb.Partial(u)
	lj := 0.0
	for i := range uv {
		lj += 2 * b.coef[i] * hv[i]
		if du != nil {
			du[i] = 2 * b.coef[i] * hd[i]
		}
	}
	return x, fb.Done(lj)
}

func (b *cholCorr) Constrain(u, x []float64) float64 {
	k := b.k
	checkLens("CholeskyCorr", "Constrain", u, x, b.m, k*k)
	clear(x)
	lj := 0.0
	for i := range k {
		ls := 0.0 // log of the remaining stick length √(1 − Σ L_ij'²)
		for j := range i {
			f := i*(i-1)/2 + j
			x[i*k+j] = math.Tanh(u[f]) * math.Exp(ls)
			hs := logSech(u[f])
			ls += hs
			lj += 2 * b.coef[f] * hs
		}
		x[i*k+i] = math.Exp(ls)
	}
	return lj
}

func (b *cholCorr) Free(x, u []float64) error {
	k := b.k
	checkLens("CholeskyCorr", "Free", u, x, b.m, k*k)
	if err := checkLowerTri("CholeskyCorr", x, k, k); err != nil {
		return err
	}
	for i := range k {
		ss := 0.0
		for j := 0; j <= i; j++ {
			ss += x[i*k+j] * x[i*k+j]
		}
		if !(math.Abs(ss-1) <= CorrTol) {
			return domainErr("CholeskyCorr", "row %d has squared norm %.17g, want 1 (tolerance %g)", i, ss, CorrTol)
		}
		// s_j = √(Σ_{j'≥j} L_ij'²) (suffix norms, by Hypot so tiny entries do not underflow);
		// z_ij = L_ij/s_j and 1 − |z_ij| = s_{j+1}² / (s_j·(s_j + |L_ij|)).
		suf := x[i*k+i]
		for j := i - 1; j >= 0; j-- {
			l := x[i*k+j]
			next := suf
			suf = math.Hypot(suf, l)
			a := math.Abs(l)
			log1mz := 2*math.Log(next) - math.Log(suf) - math.Log(suf+a)
			v := 0.5 * (math.Log1p(a/suf) - log1mz)
			if l < 0 {
				v = -v
			}
			u[i*(i-1)/2+j] = v
		}
	}
	return nil
}

// checkLowerTri returns an error unless x (r×c row-major) is finite, exactly zero above the
// diagonal and positive on it.
func checkLowerTri(name string, x []float64, r, c int) error {
	for i := range r {
		for j := range c {
			v := x[i*c+j]
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				return domainErr(name, "x[%d,%d] = %g, want finite", i, j, v)
			case j > i && v != 0:
				return domainErr(name, "x[%d,%d] = %g above the diagonal, want 0", i, j, v)
			case j == i && !(v > 0):
				return domainErr(name, "x[%d,%d] = %g on the diagonal, want > 0", i, j, v)
			}
		}
	}
	return nil
}

// CholeskyCov returns Stan's transform onto Cholesky factors of covariance matrices: M×N
// lower-triangular matrices (M ≥ N) with positive diagonal. The free vector holds, row by
// row, the entries L_ij with j ≤ min(i, N−1); the diagonal is exponentiated:
//
//	L_ij = u (j < i),   L_ii = e^u,   log J = Σ_i u_ii,
//
// the log determinant of ∂(lower triangle of L)/∂u. Free size N(N+1)/2 + (M−N)·N; L is M×N
// row-major. Forward records 5 nodes; cost O(MN). It panics unless M ≥ N ≥ 0.
//
// References: Stan Reference Manual, "Cholesky factors of covariance matrices".
func CholeskyCov(m, n int) Bijector {
	if n < 0 || m < n {
		panic(fmt.Sprintf("bijector: CholeskyCov: M=%d, N=%d, want M ≥ N ≥ 0", m, n))
	}
	free := n*(n+1)/2 + (m-n)*n
	b := &cholCov{m: m, n: n, free: free, full: make([]int, m*n), isDiag: make([]bool, free)}
	f := 0
	for i := range m {
		for j := range n {
			if j > i {
				b.full[i*n+j] = free
				continue
			}
			b.full[i*n+j] = f
			b.isDiag[f] = i == j
			f++
		}
	}
	return b
}

type cholCov struct {
	m, n, free int
	full       []int  // M×N cell ← free index, or free (zero slot above the diagonal)
	isDiag     []bool // per free index
}

func (b *cholCov) FreeSize() int  { return b.free }
func (b *cholCov) Size() int      { return b.m * b.n }
func (b *cholCov) String() string { return fmt.Sprintf("cholesky_factor_cov[%d,%d]", b.m, b.n) }

func (b *cholCov) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	checkVar("CholeskyCov", "Forward", t, u, b.free)
	uv := t.Value(u)
	mp, mv, md := t.Map(u)
	for i, ui := range uv {
		if b.isDiag[i] {
			e := math.Exp(ui)
			mv[i], md[i] = e, e
		} else {
			mv[i], md[i] = ui, 1
		}
	}
	x = t.AsMatrix(t.Gather(t.Concat(mp, t.Const(0)), b.full), b.m, b.n)
	fb := t.Fused()
	du := fb.Partial(u)
	lj := 0.0
	for i, ui := range uv {
		if b.isDiag[i] {
			lj += ui
			if du != nil {
				du[i] = 1
			}
		}
	}
	return x, fb.Done(lj)
}

func (b *cholCov) Constrain(u, x []float64) float64 {
	checkLens("CholeskyCov", "Constrain", u, x, b.free, b.m*b.n)
	lj := 0.0
	for c, f := range b.full {
		switch {
		case f == b.free:
			x[c] = 0
		case b.isDiag[f]:
			x[c] = math.Exp(u[f])
			lj += u[f]
		default:
			x[c] = u[f]
		}
	}
	return lj
}

func (b *cholCov) Free(x, u []float64) error {
	checkLens("CholeskyCov", "Free", u, x, b.free, b.m*b.n)
	if err := checkLowerTri("CholeskyCov", x, b.m, b.n); err != nil {
		return err
	}
	for c, f := range b.full {
		switch {
		case f == b.free:
		case b.isDiag[f]:
			u[f] = math.Log(x[c])
		default:
			u[f] = x[c]
		}
	}
	return nil
}
