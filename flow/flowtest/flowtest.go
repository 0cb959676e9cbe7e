// Package flowtest checks implementations of flow.Flow against the contract of the interface,
// as testing/fstest does for file systems: every flow type of package flow passes Check, and
// a new flow type should too.
//
// Check draws parameters near Init (Init's values plus N(0, ParamScale²) noise) and inputs u
// from fixed seeds, and tests, at each pair:
//
//   - the float inverse: Inverse(T(u)) = u (also in place, u aliasing z), with the forward
//     log-determinant;
//   - the tape inverse: InverseTape(T(u)) = u with the same log-determinant, and agreeing with
//     the float inverse;
//   - the log-determinant: log|det ∂T/∂u| equals log|det J| of a finite-difference Jacobian;
//   - gradients: the tape gradients of w·T(u) + log|det| with respect to φ and u, and of
//     w·T⁻¹(z) + log|det| with respect to φ and z, equal five-point finite differences;
//   - the pushed-forward score: flow.ForwardPullback(u, g) gives z = T(u), the log-determinant
//     and (∂T/∂u)⁻ᵀ(g − ∇_u log|det|) with the finite-difference Jacobian and log-det gradient;
//
// and once per flow: Init is the identity (or the permutation Config.InitPerm, or within
// Config.InitTol of the identity), deterministic for a nil or a seeded generator; the spec
// counts the flow's parameters, survives JSON, and FromSpec rebuilds a flow with the same
// spec and bit for bit the same map; Inverse and ForwardPullback do not allocate in steady
// state.
//
// Tolerances. Finite differences use the five-point rule with step 1e-4 (truncation
// O(h⁴·f⁽⁵⁾), rounding about ε·|f|/h); a round trip is allowed 1e-9 relative plus the
// rounding of z propagated through the inverse Jacobian (10⁻¹²·Σ_j |J⁻¹_ij|(1 + |z_j|)),
// so that maps that are flat somewhere (bounded Bernstein tails) are judged by their
// conditioning, not by an absolute bar.
package flowtest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/internal/race"
)

// Config tunes Check for one flow. The zero value suits a flow whose Init is exactly the
// identity, checked at three random points.
type Config struct {
	// Seed seeds the parameters and inputs (default 1).
	Seed uint64
	// Trials is the number of random (parameters, u) pairs (default 3).
	Trials int
	// ParamScale is the standard deviation of the noise added to Init's parameters
	// (default 0.4).
	ParamScale float64
	// InputScale is the standard deviation of the Gaussian inputs u (default 1.5).
	InputScale float64
	// Inputs are further inputs u (each of length Dim), each checked at its own random
	// parameters: points in the tails, say.
	Inputs [][]float64
	// InitPerm, when not nil, is the map Init must give: z_i = u_{InitPerm[i]} (a flow that
	// contains a permutation).
	InitPerm []int
	// InitTol bounds |z_i − u_i|/(1 + |u_i|) at Init, and InitLogDetTol |log det|/d; 0 asks
	// for the exact identity and log-determinant 0.
	InitTol, InitLogDetTol float64
}

func (c Config) withDefaults() Config {
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Trials == 0 {
		c.Trials = 3
	}
	if c.ParamScale == 0 {
		c.ParamScale = 0.4
	}
	if c.InputScale == 0 {
		c.InputScale = 1.5
	}
	return c
}

// Check runs every check of the package comment on f and reports failures on t.
func Check(t testing.TB, f flow.Flow, c Config) {
	t.Helper()
	c = c.withDefaults()
	r := rand.New(rand.NewPCG(c.Seed, 0x666c6f77))
	d := f.Dim()
	if d < 1 {
		t.Fatalf("Dim() = %d, want ≥ 1", d)
	}
	checkSpec(t, f, r)
	checkInit(t, f, c, r)
	inputs := make([][]float64, 0, c.Trials+len(c.Inputs))
	for range c.Trials {
		inputs = append(inputs, RandVec(r, d, c.InputScale))
	}
	inputs = append(inputs, c.Inputs...)
	for k, u := range inputs {
		if len(u) != d {
			t.Fatalf("Config.Inputs[%d] has %d values, want %d", k-c.Trials, len(u), d)
		}
		p := RandomParams(f, r, c.ParamScale)
		checkPoint(t, f, p, u, fmt.Sprintf("point %d", k))
		if k == 0 {
			checkGradients(t, f, p, u, RandVec(r, d, 1))
		}
	}
	checkAllocs(t, f, RandomParams(f, r, c.ParamScale), inputs[0])
}

// RandomParams returns Init's parameters (drawn with r) plus N(0, s²) noise, so that the flow
// is away from the identity and every part of it matters.
func RandomParams(f flow.Flow, r *rand.Rand, s float64) []float64 {
	p := make([]float64, f.NumParams())
	f.Init(p, r)
	for i := range p {
		p[i] += s * r.NormFloat64()
	}
	return p
}

// RandVec returns n draws from N(0, s²).
func RandVec(r *rand.Rand, n int, s float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = s * r.NormFloat64()
	}
	return x
}

// Forward returns z = T(u) and log|det ∂T/∂u|, evaluated on a fresh tape.
func Forward(f flow.Flow, p, u []float64) (z []float64, logdet float64) {
	var t ad.Tape
	zv, ld := f.Forward(&t, t.Const(p...), t.Const(u...))
	return append([]float64(nil), t.Value(zv)...), t.Float(ld)
}

// inverseTape returns T⁻¹(z) and the log-determinant recorded by InverseTape.
func inverseTape(f flow.Flow, p, z []float64) (u []float64, logdet float64) {
	var t ad.Tape
	uv, ld := f.InverseTape(&t, t.Const(p...), t.Const(z...))
	return append([]float64(nil), t.Value(uv)...), t.Float(ld)
}

// roundSlack multiplies Σ_j |J⁻¹_ij|(1 + |z_j|) in the round-trip tolerance: 1000 times a
// relative error of 1e-15 in z (a few ulps, and the 1e-15 relative step at which the
// Bernstein root search stops).
const roundSlack = 1e3 * 1e-15

// fdStep is the step of the five-point differences.
const fdStep = 1e-4

// fd5 is the five-point central difference of g at x.
func fd5(g func(float64) float64, x float64) float64 {
	h := fdStep
	return (8*(g(x+h)-g(x-h)) - (g(x+2*h) - g(x-2*h))) / (12 * h)
}

// Jacobian returns the d×d Jacobian ∂z_o/∂u_i of u ↦ T(u; p), row-major (row o), by five-point
// differences with step 1e-4: 4d Forward evaluations. An output that does not depend on an
// input gets an exact zero.
func Jacobian(f flow.Flow, p, u []float64) []float64 {
	d := len(u)
	J := make([]float64, d*d)
	x := append([]float64(nil), u...)
	for i := range d {
		col := make([][]float64, 4)
		for k, s := range []float64{2, 1, -1, -2} {
			x[i] = u[i] + s*fdStep
			col[k], _ = Forward(f, p, x)
		}
		x[i] = u[i]
		for o := range d {
			J[o*d+i] = (8*(col[1][o]-col[2][o]) - (col[0][o] - col[3][o])) / (12 * fdStep)
		}
	}
	return J
}

// LogAbsDet returns log|det A| of the d×d row-major matrix A (an LU decomposition).
func LogAbsDet(A []float64, d int) float64 {
	var lu mat.LU
	lu.Factorize(mat.NewDense(d, d, append([]float64(nil), A...)))
	ld, _ := lu.LogDet()
	return ld
}

// Finite reports whether every value is finite.
func Finite(x ...float64) bool {
	for _, v := range x {
		if v-v != 0 { // NaN and ±Inf
			return false
		}
	}
	return true
}

// checkSpec: the spec counts the parameters, survives JSON, and rebuilds the same flow.
func checkSpec(t testing.TB, f flow.Flow, r *rand.Rand) {
	t.Helper()
	s := f.Spec()
	if s.Dim != f.Dim() {
		t.Errorf("Spec().Dim = %d, Dim() = %d", s.Dim, f.Dim())
	}
	n, err := s.NumParams()
	if err != nil {
		t.Fatalf("Spec().NumParams: %v", err)
	}
	if n != f.NumParams() {
		t.Errorf("Spec().NumParams() = %d, NumParams() = %d", n, f.NumParams())
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back flow.Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("spec changes through JSON: %s gives %+v", b, back)
	}
	g, err := flow.FromSpec(s)
	if err != nil {
		t.Fatalf("FromSpec(Spec()): %v", err)
	}
	if g.NumParams() != f.NumParams() || g.Dim() != f.Dim() || !reflect.DeepEqual(g.Spec(), s) {
		t.Fatalf("FromSpec(Spec()) has %d parameters in d=%d and spec %+v; the flow %d, %d, %+v",
			g.NumParams(), g.Dim(), g.Spec(), f.NumParams(), f.Dim(), s)
	}
	p, u := RandomParams(f, r, 0.4), RandVec(r, f.Dim(), 1)
	z1, l1 := Forward(f, p, u)
	z2, l2 := Forward(g, p, u)
	if !reflect.DeepEqual(z1, z2) || math.Float64bits(l1) != math.Float64bits(l2) {
		t.Errorf("FromSpec(Spec()) maps u to %v (log-det %v), the flow to %v (%v)", z2, l2, z1, l1)
	}
}

// checkInit: Init is deterministic and gives the identity (or InitPerm, or within InitTol).
func checkInit(t testing.TB, f flow.Flow, c Config, r *rand.Rand) {
	t.Helper()
	d := f.Dim()
	p, q := make([]float64, f.NumParams()), make([]float64, f.NumParams())
	f.Init(p, nil)
	f.Init(q, nil)
	if !reflect.DeepEqual(p, q) {
		t.Error("Init(params, nil) is not deterministic")
	}
	a, b := make([]float64, f.NumParams()), make([]float64, f.NumParams())
	f.Init(a, rand.New(rand.NewPCG(5, 6)))
	f.Init(b, rand.New(rand.NewPCG(5, 6)))
	if !reflect.DeepEqual(a, b) {
		t.Error("Init with equally seeded generators differs")
	}
	if !Finite(p...) || !Finite(a...) {
		t.Fatal("Init writes non-finite parameters")
	}
	u := RandVec(r, d, 1)
	z, ld := Forward(f, p, u)
	for i := range z {
		want := u[i]
		if c.InitPerm != nil {
			want = u[c.InitPerm[i]]
		}
		if math.Abs(z[i]-want) > c.InitTol*(1+math.Abs(want)) {
			t.Errorf("Init: z[%d] = %.15g, want %.15g (tolerance %g)", i, z[i], want, c.InitTol)
		}
	}
	if math.Abs(ld) > c.InitLogDetTol*float64(d) {
		t.Errorf("Init: log-det %g, want 0 (tolerance %g per coordinate)", ld, c.InitLogDetTol)
	}
}

// checkPoint checks both inverses and the log-determinant at (p, u).
func checkPoint(t testing.TB, f flow.Flow, p, u []float64, where string) {
	t.Helper()
	d := f.Dim()
	z, ld := Forward(f, p, u)
	if !Finite(append(z, ld)...) {
		t.Fatalf("%s: Forward is not finite: z %v, log-det %v", where, z, ld)
	}
	J := Jacobian(f, p, u)
	if want := LogAbsDet(J, d); math.Abs(ld-want) > 1e-6*(1+math.Abs(ld)) {
		t.Errorf("%s: log-det %.15g, log|det J| of the finite-difference Jacobian %.15g", where, ld, want)
	}
	// slack_i: the rounding of z propagated through J⁻¹.
	slack := make([]float64, d)
	var Ji mat.Dense
	if err := Ji.Inverse(mat.NewDense(d, d, J)); err == nil {
		for i := range d {
			for j := range d {
				slack[i] += math.Abs(Ji.At(i, j)) * (1 + math.Abs(z[j]))
			}
		}
	} else {
		for i := range slack {
			slack[i] = math.Inf(1)
		}
	}
	same := func(what string, back []float64, ldb float64) {
		t.Helper()
		for i := range u {
			if !(math.Abs(back[i]-u[i]) <= 1e-9*(1+math.Abs(u[i]))+roundSlack*slack[i]) {
				t.Errorf("%s: %s: u[%d] = %.15g, got back %.15g", where, what, i, u[i], back[i])
			}
		}
		if !(math.Abs(ldb-ld) <= 1e-8*(1+math.Abs(ld))) {
			t.Errorf("%s: %s: log-det %.15g, forward %.15g", where, what, ldb, ld)
		}
	}
	back := make([]float64, d)
	ldi, err := f.Inverse(p, z, back)
	if err != nil {
		t.Fatalf("%s: Inverse: %v", where, err)
	}
	same("Inverse", back, ldi)
	zz := append([]float64(nil), z...)
	ldz, err := f.Inverse(p, zz, zz)
	if err != nil {
		t.Fatalf("%s: Inverse in place: %v", where, err)
	}
	same("Inverse in place", zz, ldz)
	ut, ldt := inverseTape(f, p, z)
	same("InverseTape", ut, ldt)
	for i := range ut {
		if !(math.Abs(ut[i]-back[i]) <= 1e-9*(1+math.Abs(back[i]))+roundSlack*slack[i]) {
			t.Errorf("%s: InverseTape u[%d] = %.15g, Inverse %.15g", where, i, ut[i], back[i])
		}
	}
	if err == nil {
		checkPullback(t, f, p, u, z, ld, &Ji, where)
	}
}

// checkPullback compares flow.ForwardPullback at u with g_i = sin(i + 1) − u_i against
// J⁻ᵀ(g − ∇_u log|det|), J and ∇ log|det| by five-point differences (Ji = J⁻¹). Tolerance: the
// differences' error, about 10⁻⁸ relative, carried through J⁻ᵀ and allowed 10⁻⁶.
func checkPullback(t testing.TB, f flow.Flow, p, u, z []float64, ld float64, Ji *mat.Dense, where string) {
	t.Helper()
	d := len(u)
	g, v := make([]float64, d), make([]float64, d)
	x := append([]float64(nil), u...)
	for i := range d {
		g[i] = math.Sin(float64(i+1)) - u[i]
		dld := fd5(func(s float64) float64 {
			x[i] = s
			_, l := Forward(f, p, x)
			return l
		}, u[i])
		x[i] = u[i]
		v[i] = g[i] - dld
	}
	y, gy := make([]float64, d), make([]float64, d)
	ldp, err := flow.ForwardPullback(f, p, u, g, y, gy)
	if err != nil {
		t.Errorf("%s: ForwardPullback: %v", where, err)
		return
	}
	if !(math.Abs(ldp-ld) <= 1e-10*(1+math.Abs(ld))) {
		t.Errorf("%s: ForwardPullback log-det %.15g, Forward %.15g", where, ldp, ld)
	}
	for i := range d {
		if !(math.Abs(y[i]-z[i]) <= 1e-12*(1+math.Abs(z[i]))) {
			t.Errorf("%s: ForwardPullback y[%d] = %.15g, Forward %.15g", where, i, y[i], z[i])
		}
		want, scale := 0.0, 0.0
		for j := range d {
			want += Ji.At(j, i) * v[j]
			scale += math.Abs(Ji.At(j, i)) * (1 + math.Abs(v[j]))
		}
		if !(math.Abs(gy[i]-want) <= 1e-6*scale) {
			t.Errorf("%s: ForwardPullback g_y[%d] = %.12g, J⁻ᵀ(g − ∇ log|det|) by differences %.12g", where, i, gy[i], want)
		}
	}
}

// checkGradients compares the tape gradients of w·T(u) + log|det| (w.r.t. p and u) and of
// w·T⁻¹(z) + log|det| (w.r.t. p and z, at z = T(u)) with five-point differences.
func checkGradients(t testing.TB, f flow.Flow, p, u, w []float64) {
	t.Helper()
	z, _ := Forward(f, p, u)
	for _, dir := range []struct {
		name string
		rec  func(t *ad.Tape, p, x ad.Var) (ad.Var, ad.Var)
		x    []float64
	}{{"Forward", f.Forward, u}, {"InverseTape", f.InverseTape, z}} {
		var tp ad.Tape
		eval := func(p, x []float64) float64 {
			tp.Reset()
			y, ld := dir.rec(&tp, tp.Const(p...), tp.Const(x...))
			return tp.Float(tp.Add(ld, tp.Dot(y, tp.Const(w...))))
		}
		tp.Reset()
		P, X := tp.Input(p), tp.Input(dir.x)
		y, ld := dir.rec(&tp, P, X)
		tp.Backward(tp.Add(ld, tp.Dot(y, tp.Const(w...))))
		gp := append([]float64(nil), tp.Grad(P)...)
		gx := append([]float64(nil), tp.Grad(X)...)
		if len(gp) != f.NumParams() {
			t.Fatalf("%s: gradient has %d parameters, NumParams() = %d", dir.name, len(gp), f.NumParams())
		}
		// Five-point differences: truncation ~h⁴·f⁽⁵⁾ ≈ 1e-16·f⁽⁵⁾, rounding ~ε·|f|/h ≈
		// 2e-12·|f|; the bound is 1e-6 relative plus 1e-10·|f| (50× the rounding).
		fabs := 1e-10 * math.Abs(eval(p, dir.x))
		check := func(what string, i int, g float64, fd float64) {
			if !(math.Abs(g-fd) <= 1e-6*(1+math.Abs(fd))+fabs) {
				t.Errorf("%s: ∂/∂%s[%d]: tape %.10g, finite differences %.10g", dir.name, what, i, g, fd)
			}
		}
		pp := append([]float64(nil), p...)
		for i := range p {
			check("params", i, gp[i], fd5(func(v float64) float64 {
				pp[i] = v
				defer func() { pp[i] = p[i] }()
				return eval(pp, dir.x)
			}, p[i]))
		}
		xx := append([]float64(nil), dir.x...)
		for i := range xx {
			check("x", i, gx[i], fd5(func(v float64) float64 {
				xx[i] = v
				defer func() { xx[i] = dir.x[i] }()
				return eval(p, xx)
			}, dir.x[i]))
		}
	}
}

// checkAllocs: Inverse allocates nothing in steady state.
func checkAllocs(t testing.TB, f flow.Flow, p, u []float64) {
	t.Helper()
	if race.Enabled {
		return // allocation counts are not meaningful under the race detector
	}
	z, _ := Forward(f, p, u)
	back := make([]float64, len(z))
	f.Inverse(p, z, back)
	if a := testing.AllocsPerRun(10, func() { f.Inverse(p, z, back) }); a != 0 {
		t.Errorf("%v allocations per Inverse, want 0", a)
	}
	g, y, gy := make([]float64, len(u)), make([]float64, len(u)), make([]float64, len(u))
	for i := range g {
		g[i] = -u[i]
	}
	flow.ForwardPullback(f, p, u, g, y, gy)
	if a := testing.AllocsPerRun(10, func() { flow.ForwardPullback(f, p, u, g, y, gy) }); a != 0 {
		t.Errorf("%v allocations per ForwardPullback, want 0", a)
	}
}
