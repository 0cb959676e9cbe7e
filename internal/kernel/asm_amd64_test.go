//go:build amd64 && !goexperiment.simd && !purego

package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The assembly kernels are called directly here, next to the exported functions (which use
// them on an AVX2 machine) and the pure-Go ones, so that one test run on such a machine
// exercises both paths.
func init() {
	if useAsm {
		runImpls = append(runImpls, runImpl{"asm", axpyAsm, dotAsm, axpy4Asm, axpy2Asm, scatterAxpyDotAsm,
			func(a float64, g, dst []float64, s int, q []float64, o [4]int) float64 {
				return scatterAxpyDot4Asm(a, g, dst, s, q, o[0], o[1], o[2], o[3])
			}})
	}
}

// TestAsmConstLayout checks ·spConst at the offsets asm_amd64.s names (index·32 bytes).
func TestAsmConstLayout(t *testing.T) {
	want := map[int]float64{1: 1, 2: expLo, 3: log2e, 4: roundMagic, 5: -ln2Hi, 6: -ln2Lo, 7: e2,
		18: e13, 19: 0.5, 20: 1<<52 + 1023, 25: 2, 26: l1, 35: l10, 36: ln2Lo, 37: ln2Hi,
		38: 1<<52 + 1023 + 54, 39: 0x1p-54}
	for i, v := range want {
		for _, b := range spConst[i] {
			if b != math.Float64bits(v) {
				t.Errorf("spConst[%d] = %#x, want %v", i, b, v)
			}
		}
	}
	wantU := map[int]uint64{0: 1 << 63, 21: oneBits - sqrtHalfBits, 22: twoTo52Bits, 23: mantMask, 24: sqrtHalfBits}
	for i, v := range wantU {
		if spConst[i] != u4(v) {
			t.Errorf("spConst[%d] = %#x, want %#x", i, spConst[i], v)
		}
	}
	if len(spConst) != 40 {
		t.Errorf("len(spConst) = %d, want 40", len(spConst))
	}
}

func TestCPUDetection(t *testing.T) {
	t.Logf("AVX2 and FMA usable: %v, AVX-512 usable: %v (Impl %q)", useAsm, useAsm512, Impl())
	if useAsm != hasAVX2FMA() || useAsm512 != hasAVX512() {
		t.Error("useAsm or useAsm512 differs from a fresh detection")
	}
	if useAsm512 && !useAsm {
		t.Error("AVX-512 without AVX2 and FMA")
	}
}

// softplusAsm against softplusGo at every tail length and unaligned starts, with the memory
// around the outputs checked for stray writes (masked tail stores), and aliased outputs.
// Each is within 1.5 ulp (softplus) and 2 ulp (σ) of the exact value
// (TestSoftplusReference), so they agree within 3 and 4 ulp.
func TestSoftplusAsm(t *testing.T) {
	for _, im := range softplusAsms() {
		t.Run(im.name, func(t *testing.T) { testSoftplusAsm(t, im.f) })
	}
}

type softplusImpl struct {
	name string
	f    func(sp, sg, r []float64)
}

// softplusAsms returns the assembly versions of Softplus this CPU can run.
func softplusAsms() []softplusImpl {
	var s []softplusImpl
	if useAsm {
		s = append(s, softplusImpl{"avx2", softplusAsm})
	}
	if useAsm && useAsm512 {
		s = append(s, softplusImpl{"avx512", softplusAsm512})
	}
	return s
}

func testSoftplusAsm(t *testing.T, softplusAsm func(sp, sg, r []float64)) {
	rng := rand.New(rand.NewPCG(23, 24))
	lengths := append(kernelLengths, 200, 255, 256, 257, 1000)
	for _, n := range lengths {
		for off := range 4 {
			r, _ := guarded(rng, n, (off+3)%4)
			for i := range r {
				r[i] *= 20
			}
			if n > 5 {
				r[n/2], r[n-1] = math.Inf(-1), math.NaN()
			}
			sp, spIntact := guarded(rng, n, off)
			sg, sgIntact := guarded(rng, n, (off+1)%4)
			softplusAsm(sp, sg, r)
			wsp, wsg := make([]float64, n), make([]float64, n)
			softplusGo(wsp, wsg, r)
			for i := range r {
				if ulpDiff(sp[i], wsp[i]) > 3 || ulpDiff(sg[i], wsg[i]) > 4 {
					t.Errorf("n=%d off=%d r=%v: asm (%v, %v), go (%v, %v)", n, off, r[i], sp[i], sg[i], wsp[i], wsg[i])
					break
				}
			}
			if !spIntact() || !sgIntact() {
				t.Errorf("n=%d off=%d: wrote outside its outputs", n, off)
			}
			// Aliased: sp = r, then sg = r.
			a := append([]float64(nil), r...)
			softplusAsm(a, sg, a)
			b := append([]float64(nil), r...)
			softplusAsm(sp, b, b)
			for i := range r {
				if ulpDiff(a[i], wsp[i]) > 3 || ulpDiff(b[i], wsg[i]) > 4 {
					t.Errorf("n=%d aliased r=%v: (%v, %v), want (%v, %v)", n, r[i], a[i], b[i], wsp[i], wsg[i])
					break
				}
			}
		}
	}
}

// The assembly gives the exact references' accuracy on its own (the exported Softplus is
// checked in TestSoftplusReference; this names the assembly so a fallback cannot hide it).
func TestSoftplusAsmReference(t *testing.T) {
	for _, im := range softplusAsms() {
		t.Run(im.name, func(t *testing.T) { testSoftplusAsmReference(t, im.f) })
	}
}

func testSoftplusAsmReference(t *testing.T, softplusAsm func(sp, sg, r []float64)) {
	var rs []float64
	for r := -760.0; r <= 760; r += 0.37 {
		rs = append(rs, r)
	}
	sp, sg := make([]float64, len(rs)), make([]float64, len(rs))
	softplusAsm(sp, sg, rs)
	for i, r := range rs {
		wsp, wsg := softplusRef(r)
		// softplusRef (math.Exp, math.Log1p, a division) is within ≈ 1.5 ulp itself.
		if ulpDiff(sp[i], wsp) > 3 || ulpDiff(sg[i], wsg) > 3 {
			t.Fatalf("(%v) = (%v, %v), want (%v, %v)", r, sp[i], sg[i], wsp, wsg)
		}
	}
}

// TestFallbackDispatch runs the exported kernels with the assembly switched off, as on a CPU
// without AVX2 or FMA, and checks that they then give the pure-Go results exactly.
func TestFallbackDispatch(t *testing.T) {
	saved := useAsm
	defer func() { useAsm = saved }()
	useAsm = false
	if Impl() != "go" {
		t.Errorf("Impl() = %q without AVX2, want go", Impl())
	}
	rng := rand.New(rand.NewPCG(29, 30))
	const n = 51
	r := randVec(rng, n)
	sp, sg, wsp, wsg := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	Softplus(sp, sg, r)
	softplusGo(wsp, wsg, r)
	x := randVec(rng, 4*n)
	y, wy := make([]float64, n), make([]float64, n)
	Axpy4(1, 2, 3, 4, x, y)
	axpy4Go(1, 2, 3, 4, x, wy)
	Axpy2(5, 6, x[:2*n], y)
	axpy2Go(5, 6, x[:2*n], wy)
	Axpy(7, x[:n], y)
	axpyGo(7, x[:n], wy)
	dst, wdst := make([]float64, 10*n), make([]float64, 10*n)
	d1 := ScatterAxpyDot(0.5, y, dst, 10, x[:n])
	w1 := scatterAxpyDotGo(0.5, wy, wdst, 10, x[:n])
	d4 := ScatterAxpyDot4(0.5, x, dst, 10, x, [4]int{0, n, 2 * n, 3 * n})
	w4 := scatterAxpyDot4Go(0.5, x, wdst, 10, x, [4]int{0, n, 2 * n, 3 * n})
	for i := range sp {
		if sp[i] != wsp[i] || sg[i] != wsg[i] || y[i] != wy[i] {
			t.Fatalf("fallback differs from the Go kernels at %d", i)
		}
	}
	for i := range dst {
		if dst[i] != wdst[i] {
			t.Fatalf("fallback scatter differs at %d", i)
		}
	}
	if d1 != w1 || d4 != w4 || Dot(x, x) != dotGo(x, x) {
		t.Errorf("fallback dots (%v, %v) differ from Go (%v, %v)", d1, d4, w1, w4)
	}
}

// BenchmarkSoftplusAsmWidth times the four-lane and the eight-lane assembly on the d·M = 500
// increments of a BernsteinAR draw.
func BenchmarkSoftplusAsmWidth(b *testing.B) {
	if !useAsm {
		b.Skip("no AVX2+FMA")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	r := randVec(rng, 509)
	sp, sg := make([]float64, len(r)), make([]float64, len(r))
	b.Run("avx2", func(b *testing.B) {
		for b.Loop() {
			softplusAsm(sp, sg, r)
		}
	})
	if !useAsm512 {
		return
	}
	b.Run("avx512", func(b *testing.B) {
		for b.Loop() {
			softplusAsm512(sp, sg, r)
		}
	})
}

// The eight-lane Softplus runs the same instructions as the four-lane one on each lane: the
// results are the same bits, also at the special values.
func TestSoftplusAsm512SameBits(t *testing.T) {
	if !useAsm || !useAsm512 {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	r := randVec(rng, 1001)
	for i := range r {
		r[i] *= 40
	}
	copy(r, []float64{math.Inf(1), math.Inf(-1), math.NaN(), 0, math.Copysign(0, -1), 1e300, -1e300, -745.5, 709.9, 5e-324})
	sp4, sg4, sp8, sg8 := make([]float64, len(r)), make([]float64, len(r)), make([]float64, len(r)), make([]float64, len(r))
	for _, n := range []int{1, 7, 8, 9, 63, 64, 65, len(r)} {
		softplusAsm(sp4[:n], sg4[:n], r[:n])
		softplusAsm512(sp8[:n], sg8[:n], r[:n])
		for i := range n {
			if math.Float64bits(sp4[i]) != math.Float64bits(sp8[i]) || math.Float64bits(sg4[i]) != math.Float64bits(sg8[i]) {
				t.Fatalf("n=%d r=%v: avx-512 (%v, %v), avx2 (%v, %v)", n, r[i], sp8[i], sg8[i], sp4[i], sg4[i])
			}
		}
	}
}

// On a CPU with AVX2 and FMA but no AVX-512, Softplus runs the four-lane assembly.
func TestSoftplusDispatchNo512(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2+FMA")
	}
	saved := useAsm512
	defer func() { useAsm512 = saved }()
	useAsm512 = false
	if Impl() != "avx2+fma asm" {
		t.Errorf("Impl() = %q without AVX-512", Impl())
	}
	rng := rand.New(rand.NewPCG(43, 44))
	r := randVec(rng, 77)
	sp, sg, wsp, wsg := make([]float64, 77), make([]float64, 77), make([]float64, 77), make([]float64, 77)
	Softplus(sp, sg, r)
	softplusAsm(wsp, wsg, r)
	for i := range r {
		if sp[i] != wsp[i] || sg[i] != wsg[i] {
			t.Fatalf("Softplus without AVX-512 differs from softplusAsm at %d", i)
		}
	}
}

// expAsm (Exp's path when every x ≤ 0) against the 240-bit reference values at x ≤ 0 (below
// 1 ulp of exact, as Exp's bound), on every tail length at unaligned starts with the memory
// after dst untouched, and at −0, −745.2 (0) and the subnormal range, against expGo.
func TestExpAsm(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2+FMA")
	}
	x, hi, d := readRef(t, "exp_ref.txt")
	var nx, nhi, nd []float64
	for i, v := range x {
		if v <= 0 {
			nx, nhi, nd = append(nx, v), append(nhi, hi[i]), append(nd, d[i])
		}
	}
	if len(nx) < 100 {
		t.Fatalf("only %d reference points at x ≤ 0", len(nx))
	}
	worst, at := refUlps(expAsm, nx, nhi, nd)
	t.Logf("expAsm: max error %.3f ulp of exact over %d points (at x=%v)", worst, len(nx), at)
	if worst > 1 {
		t.Errorf("expAsm: error %.3f ulp at x=%v", worst, at)
	}
	rng := rand.New(rand.NewPCG(79, 80))
	for n := range 19 {
		for off := range 4 {
			src, _ := guarded(rng, n, (off+1)%4)
			for i := range src {
				src[i] = -math.Abs(src[i]) * 300
			}
			copy(src, []float64{0, math.Copysign(0, -1), -745.2, -709.5, -740}[:min(n, 5)])
			dst, intact := guarded(rng, n, off)
			want := make([]float64, n)
			expAsm(dst, src)
			expGo(want, src)
			for i := range want {
				if math.Abs(dst[i]-want[i]) > 2*ulpOf(want[i]) {
					t.Fatalf("n=%d: exp(%v) = %v, expGo %v", n, src[i], dst[i], want[i])
				}
			}
			if !intact() {
				t.Fatalf("n=%d off=%d: write outside dst", n, off)
			}
		}
	}
}
