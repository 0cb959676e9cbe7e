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
	t.Logf("AVX2 and FMA usable: %v (Impl %q)", useAsm, Impl())
	if useAsm != hasAVX2FMA() {
		t.Error("useAsm differs from a fresh detection")
	}
}

// softplusAsm against softplusGo at every tail length and unaligned starts, with the memory
// around the outputs checked for stray writes (masked tail stores), and aliased outputs.
// Each is within 1.5 ulp (softplus) and 2 ulp (σ) of the exact value
// (TestSoftplusReference), so they agree within 3 and 4 ulp.
func TestSoftplusAsm(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2+FMA")
	}
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
				t.Errorf("n=%d off=%d: softplusAsm wrote outside its outputs", n, off)
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
	if !useAsm {
		t.Skip("no AVX2+FMA")
	}
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
			t.Fatalf("softplusAsm(%v) = (%v, %v), want (%v, %v)", r, sp[i], sg[i], wsp, wsg)
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
