package cnp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// checkGrad compares the tape gradient of f at x with central finite differences (step h =
// 1e-6: truncation error O(h²·f‴) ≈ 1e-12 and rounding error O(ε·|f|/h) ≈ 1e-10 for the O(1)
// functions here, so a tolerance of 1e-6·(1 + |g|) has a wide margin and a wrong partial —
// off by a factor, a sign or a missing term — fails it).
func checkGrad(t *testing.T, name string, x []float64, f func(tp *ad.Tape, p ad.Var) ad.Var) {
	t.Helper()
	var tp ad.Tape
	p := tp.Input(x)
	out := f(&tp, p)
	tp.Backward(out)
	g := append([]float64(nil), tp.Grad(p)...)
	val := func(z []float64) float64 {
		var t2 ad.Tape
		return t2.Float(f(&t2, t2.Input(z)))
	}
	const h = 1e-6
	z := append([]float64(nil), x...)
	nonzero := 0
	for i := range x {
		z[i] = x[i] + h
		fp := val(z)
		z[i] = x[i] - h
		fm := val(z)
		z[i] = x[i]
		fd := (fp - fm) / (2 * h)
		if math.Abs(fd-g[i]) > 1e-6*(1+math.Abs(g[i])) {
			t.Fatalf("%s: ∂/∂x[%d]: tape %v, finite difference %v", name, i, g[i], fd)
		}
		if g[i] != 0 {
			nonzero++
		}
	}
	if nonzero < len(x)/2 {
		t.Fatalf("%s: only %d of %d partials are non-zero; the check is too weak", name, nonzero, len(x))
	}
}

func randVec(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

func TestIm2ColGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	g := &im2col1{G: 7, C: 3, K: 5}
	w := randVec(r, g.G*g.K*g.C)
	checkGrad(t, "im2col", randVec(r, g.G*g.C), func(tp *ad.Tape, p ad.Var) ad.Var {
		col := g.im2col(tp, tp.AsMatrix(p, g.G, g.C))
		return tp.Dot(tp.Square(col), tp.Const(w...))
	})
}

func TestIm2ColMatchesDirectConvolution(t *testing.T) {
	// im2col(X)·W against the direct sum y[p, o] = Σ_{j, c} W[j·C + c, o] X[p + j − r, c].
	r := rand.New(rand.NewPCG(2, 2))
	G, C, K, O := 9, 2, 3, 4
	x, w := randVec(r, G*C), randVec(r, K*C*O)
	var tp ad.Tape
	g := &im2col1{G: G, C: C, K: K}
	y := tp.Value(tp.MatMul(g.im2col(&tp, tp.AsMatrix(tp.Const(x...), G, C)), tp.AsMatrix(tp.Const(w...), K*C, O)))
	for p := range G {
		for o := range O {
			s := 0.0
			for j := range K {
				q := p + j - 1
				if q < 0 || q >= G {
					continue
				}
				for c := range C {
					s += w[(j*C+c)*O+o] * x[q*C+c]
				}
			}
			if math.Abs(s-y[p*O+o]) > 1e-13 {
				t.Fatalf("y[%d, %d] = %v, want %v", p, o, y[p*O+o], s)
			}
		}
	}
}

func TestDepthwiseGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	g := &depthwise2{H: 4, W: 5, C: 3, K: 3}
	nx, nw := g.H*g.W*g.C, g.K*g.K*g.C
	v := randVec(r, nx)
	checkGrad(t, "depthwise", randVec(r, nx+nw+g.C), func(tp *ad.Tape, p ad.Var) ad.Var {
		x := tp.Slice(p, 0, nx)
		w := tp.Slice(p, nx, nx+nw)
		b := tp.Slice(p, nx+nw, nx+nw+g.C)
		return tp.Dot(tp.Square(g.conv(tp, x, w, b)), tp.Const(v...))
	})
}

func TestDepthwiseMatchesDirect(t *testing.T) {
	// One channel, a 3×3 image, a 3×3 kernel: the centre output sees every pixel, the corner
	// output four of them.
	g := &depthwise2{H: 3, W: 3, C: 1, K: 3}
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	w := []float64{1, 0, 0, 0, 1, 0, 0, 0, 2} // taps (i, j) row-major
	var tp ad.Tape
	y := tp.Value(g.conv(&tp, tp.Const(x...), tp.Const(w...), tp.Const(0.5)))
	// centre (1,1): w00·x00 + w11·x11 + w22·x22 = 1 + 5 + 18, + bias.
	if y[4] != 24.5 {
		t.Fatalf("centre = %v, want 24.5", y[4])
	}
	// corner (0,0): taps (1,1) → x00 and (2,2) → x11: 1 + 10 + 0.5.
	if y[0] != 11.5 {
		t.Fatalf("corner = %v, want 11.5", y[0])
	}
}

func TestGaussLogLikGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	y := randVec(r, 6)
	for _, sig := range []bool{false, true} {
		for _, floored := range []bool{false, true} {
			checkGrad(t, "gaussLogLik", randVec(r, 12), func(tp *ad.Tape, p ad.Var) ad.Var {
				return gaussLogLik(tp, tp.Slice(p, 0, 6), tp.Slice(p, 6, 12), y, sig, floored)
			})
		}
	}
	// Values against the closed form at one point: σ = exp(log 0.5) = 0.5, and the floored
	// σ = 0.01 + 0.99·softplus(s) = 0.5 at s = log(exp(0.49/0.99) − 1).
	for _, c := range []struct {
		s       float64
		floored bool
	}{{math.Log(0.5), false}, {math.Log(math.Exp(0.49/0.99) - 1), true}} {
		var tp ad.Tape
		got := tp.Float(gaussLogLik(&tp, tp.Const(0.3), tp.Const(c.s), []float64{1}, false, c.floored))
		want := -0.5*math.Log(2*math.Pi) - math.Log(0.5) - 0.5*(0.7/0.5)*(0.7/0.5)
		if math.Abs(got-want) > 1e-14 {
			t.Fatalf("floored=%v: log N = %v, want %v", c.floored, got, want)
		}
	}
}

func tinyOffGrid(t *testing.T) *OffGrid {
	m, err := NewOffGrid(OffGridConfig{EmbedDim: 3, Channels: []int{4}, Kernel: 3, Granularity: 6}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOffGridGradient(t *testing.T) {
	m := tinyOffGrid(t)
	xc, yc := []float64{-0.5, 0.1, 0.7}, []float64{0.3, -1, 0.5}
	xt, yt := []float64{-0.3, 0.4}, []float64{0.2, 0.1}
	checkGrad(t, "OffGrid.Loss", m.Params, func(tp *ad.Tape, p ad.Var) ad.Var {
		l, err := m.Loss(tp, p, xc, yc, xt, yt)
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
}

func TestOffGridShapesAndNormalisation(t *testing.T) {
	m, err := NewOffGrid(OffGridConfig{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// apovi.md §5 "Network sizes": 17,410 trainable parameters at the thesis's settings.
	if m.NumParams() != 17410 {
		t.Fatalf("%d parameters, want 17410", m.NumParams())
	}
	xc, yc := []float64{-1, 0, 0.5, 1.5}, []float64{0.1, 0.5, -0.2, 0.3}
	xt, yt := []float64{-0.5, 0.25, 1}, []float64{0.4, 0.1, -0.3}
	mean, std, err := m.Predict(xc, yc, xt)
	if err != nil {
		t.Fatal(err)
	}
	// Loss = −(1/|T|) Σ log N(y_t; mean_t, std_t).
	want := 0.0
	for i := range yt {
		e := (yt[i] - mean[i]) / std[i]
		want -= -0.5*math.Log(2*math.Pi) - math.Log(std[i]) - 0.5*e*e
	}
	want /= float64(len(yt))
	var tp ad.Tape
	l, err := m.Loss(&tp, tp.Input(m.Params), xc, yc, xt, yt)
	if err != nil {
		t.Fatal(err)
	}
	if got := tp.Float(l); math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
		t.Fatalf("loss %v, want %v", got, want)
	}
	// Translation equivariance: shifting every input by δ shifts the grid by δ, so the
	// predictions do not change (up to rounding in the grid and the distances).
	const d = 0.37
	sh := func(v []float64) []float64 {
		o := make([]float64, len(v))
		for i := range v {
			o[i] = v[i] + d
		}
		return o
	}
	m2, s2, _ := m.Predict(sh(xc), yc, sh(xt))
	for i := range mean {
		if math.Abs(m2[i]-mean[i]) > 1e-9 || math.Abs(s2[i]-std[i]) > 1e-9*std[i] {
			t.Fatalf("shift by %v changed target %d: (%v, %v) → (%v, %v)", d, i, mean[i], std[i], m2[i], s2[i])
		}
	}
	// Bad input names the field.
	if _, err := m.Loss(&tp, tp.Input(m.Params), xc, yc[:2], xt, yt); err == nil {
		t.Fatal("len(yc) ≠ len(xc) accepted")
	}
	if _, err := m.Loss(&tp, tp.Input(m.Params), xc, yc, nil, nil); err == nil {
		t.Fatal("no targets accepted")
	}
	if _, _, err := m.Predict(xc, []float64{0, math.NaN(), 0, 0}, xt); err == nil {
		t.Fatal("NaN context accepted")
	}
	if _, err := NewOffGrid(OffGridConfig{Kernel: 4}, 0); err == nil {
		t.Fatal("even kernel accepted")
	}
	if _, err := NewOffGrid(OffGridConfig{EncScale: -1}, 0); err == nil {
		t.Fatal("negative lengthscale accepted")
	}
}

func tinyGrid(t *testing.T) *Grid {
	m, err := NewGrid(GridConfig{Height: 5, Width: 6, Channels: 3, MLPWidth: 4, Blocks: 2, ConvKernel: 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tinyImage(r *rand.Rand, P int) ([]float64, []bool) {
	y, mask := make([]float64, P), make([]bool, P)
	for i := range y {
		if r.Float64() < 0.5 {
			y[i] = 1
		}
		mask[i] = r.Float64() < 0.4
	}
	mask[0] = true
	return y, mask
}

func TestGridGradient(t *testing.T) {
	m := tinyGrid(t)
	y, mask := tinyImage(rand.New(rand.NewPCG(5, 5)), m.Pixels())
	checkGrad(t, "Grid.Loss", m.Params, func(tp *ad.Tape, p ad.Var) ad.Var {
		l, err := m.Loss(tp, p, y, mask)
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
}

func TestGridShapesAndNormalisation(t *testing.T) {
	full, err := NewGrid(GridConfig{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// apovi.md §5 "Network sizes": 239,004 parameters at the thesis's settings.
	if full.NumParams() != 239004 {
		t.Fatalf("%d parameters, want 239004", full.NumParams())
	}
	m := tinyGrid(t)
	y, mask := tinyImage(rand.New(rand.NewPCG(6, 6)), m.Pixels())
	mean, std, err := m.Predict(y, mask)
	if err != nil {
		t.Fatal(err)
	}
	// Loss = −Σ over all pixels log N(y; mean, std) / |C|.
	nc, want := 0, 0.0
	for i := range y {
		if mask[i] {
			nc++
		}
		e := (y[i] - mean[i]) / std[i]
		want -= -0.5*math.Log(2*math.Pi) - math.Log(std[i]) - 0.5*e*e
		if mean[i] <= 0 || mean[i] >= 1 {
			t.Fatalf("mean %v outside (0, 1)", mean[i])
		}
	}
	want /= float64(nc)
	var tp ad.Tape
	l, err := m.Loss(&tp, tp.Input(m.Params), y, mask)
	if err != nil {
		t.Fatal(err)
	}
	if got := tp.Float(l); math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
		t.Fatalf("loss %v, want %v", got, want)
	}
	// The prediction reads only the observed pixels.
	y2 := append([]float64(nil), y...)
	for i := range y2 {
		if !mask[i] {
			y2[i] = 1 - y2[i]
		}
	}
	m2, _, _ := m.Predict(y2, mask)
	for i := range mean {
		if m2[i] != mean[i] {
			t.Fatalf("unobserved pixels changed the prediction at %d", i)
		}
	}
	if _, err := m.Loss(&tp, tp.Input(m.Params), y, make([]bool, len(y))); err == nil {
		t.Fatal("empty mask accepted")
	}
	if _, _, err := m.Predict(y[:3], mask); err == nil {
		t.Fatal("short image accepted")
	}
	if _, err := NewGrid(GridConfig{CNNKernel: 2}, 0); err == nil {
		t.Fatal("even kernel accepted")
	}
}

// TestGridEmptyWindowNegativeRawBias is the first failure of bench/results/apovi_baselines.md
// (|Ξ| = 10, repetition 1: NaN loss at iteration 0): the model of that run (32 channels, seed
// rng.Derive(1, 2, 0, 1)) starts with the raw encoder bias −0.184, and a mask with windows
// that hold no observed pixel (here: only the top four rows observed). With the bias used as
// is, those windows had conv(m) = −0.184, clamped to 1e-8, so z = −1.8·10⁷ and the loss
// overflowed; with the bias through softplus the density is positive everywhere and the
// loss and its gradient are finite and of order one.
func TestGridEmptyWindowNegativeRawBias(t *testing.T) {
	m, err := NewGrid(GridConfig{Channels: 32}, rng.Derive(1, 2, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if b := m.Params[25]; !(b < -0.1) {
		t.Fatalf("raw encoder bias %v: the seed no longer gives the failing run's negative bias", b)
	}
	r := rand.New(rand.NewPCG(9, 9))
	y, mask := make([]float64, m.Pixels()), make([]bool, m.Pixels())
	for i := range y {
		if r.Float64() < 0.3 {
			y[i] = 1
		}
		mask[i] = i < 4*28
	}
	var tp ad.Tape
	p := tp.Input(m.Params)
	l, err := m.Loss(&tp, p, y, mask)
	if err != nil {
		t.Fatal(err)
	}
	tp.Backward(l)
	// At initialisation σ ≈ 0.01 + 0.99·softplus(O(0.1)) ≈ 0.7 and |μ − y| < 1, so each pixel
	// costs −log N ∈ (0.5, 2): 784 pixels over 112 context pixels give a loss in (3.5, 14).
	if v := tp.Float(l); !(v > 1 && v < 20) {
		t.Fatalf("loss %v at initialisation, want O(1) (in (1, 20))", v)
	}
	for k, g := range tp.Grad(p) {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			t.Fatalf("gradient component %d is %v", k, g)
		}
	}
}

// TestGridScaleFloor is the second failure of apovi_baselines.md (repetition 2: NaN gradient
// at iteration 567): on binarised targets training drove the raw log σ to −300 by iteration
// 500 (the loss per context pixel fell without bound), until exp(log σ) underflowed. With σ =
// 0.01 + 0.99·softplus(s) a raw output of −1000 gives σ = 0.01, a finite loss no lower than the
// bound −P·(−½ log 2π − log 0.01)/|C|, and a finite gradient.
func TestGridScaleFloor(t *testing.T) {
	m := tinyGrid(t)
	y, mask := tinyImage(rand.New(rand.NewPCG(10, 10)), m.Pixels())
	m.Params[len(m.Params)-1] = -1000 // the bias of the s output of the last layer
	_, std, err := m.Predict(y, mask)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range std {
		if s != minStd {
			t.Fatalf("σ[%d] = %v, want the floor %v", i, s, minStd)
		}
	}
	var tp ad.Tape
	p := tp.Input(m.Params)
	l, err := m.Loss(&tp, p, y, mask)
	if err != nil {
		t.Fatal(err)
	}
	tp.Backward(l)
	nc := 0
	for _, o := range mask {
		if o {
			nc++
		}
	}
	bound := -float64(m.Pixels()) * (-0.5*math.Log(2*math.Pi) - math.Log(minStd)) / float64(nc)
	if v := tp.Float(l); math.IsNaN(v) || math.IsInf(v, 0) || v < bound {
		t.Fatalf("loss %v, want finite and ≥ %v", v, bound)
	}
	for k, g := range tp.Grad(p) {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			t.Fatalf("gradient component %d is %v", k, g)
		}
	}
}

func TestContextTargetSplit(t *testing.T) {
	r := rng.New(1, 0)
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	seen := map[int]bool{}
	for range 500 {
		xc, yc, xt, yt, err := ContextTargetSplit(x, x, 3, 20, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(xc)+len(xt) != len(x) || len(yc) != len(xc) || len(yt) != len(xt) {
			t.Fatal("split does not partition the data")
		}
		seen[len(xc)] = true
	}
	// N = 12: n_c ∈ {3, …, 10}; each of the 8 sizes has probability 1/8, so the chance that
	// one is missing from 500 draws is below 8·(7/8)^500 ≈ 1e-28.
	for k := 3; k <= 10; k++ {
		if !seen[k] {
			t.Fatalf("context size %d never drawn", k)
		}
	}
	if seen[2] || seen[11] {
		t.Fatal("context size outside {3, …, 10}")
	}
	if _, _, _, _, err := ContextTargetSplit(x[:4], x[:4], 3, 20, r); err == nil {
		t.Fatal("N = 4 accepted (needs N ≥ 5)")
	}
}

func TestTrainOffGridLearns(t *testing.T) {
	// Ten noisy sine datasets; 150 Adam steps at lr 3e-3 lower the NPML loss.
	m := tinyOffGrid(t)
	r := rand.New(rand.NewPCG(7, 7))
	var xs, ys [][]float64
	for range 10 {
		x, y := make([]float64, 15), make([]float64, 15)
		ph := r.Float64() * 3
		for i := range x {
			x[i] = 4*r.Float64() - 2
			y[i] = math.Sin(2*x[i]+ph) + 0.05*r.NormFloat64()
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	loss := func(tp *ad.Tape, p ad.Var, i int, s *rng.Stream) (ad.Var, error) {
		xc, yc, xt, yt, err := ContextTargetSplit(xs[i], ys[i], 3, 20, s)
		if err != nil {
			return ad.Var{}, err
		}
		return m.Loss(tp, p, xc, yc, xt, yt)
	}
	res, err := Train(context.Background(), m.Params, len(xs), loss, TrainConfig{LR: 3e-3, MaxIter: 150, Batch: 5})
	if err != nil {
		t.Fatal(err)
	}
	first, last := mean(res.Losses[:20]), mean(res.Losses[130:])
	if !(last < first-0.1) {
		t.Fatalf("loss did not fall: first 20 iterations %v, last 20 %v", first, last)
	}
	// Stop is honoured; a bad config names the field.
	res, err = Train(context.Background(), m.Params, len(xs), loss, TrainConfig{MaxIter: 50, Stop: func(l []float64) bool { return len(l) == 7 }})
	if err != nil || res.Iters != 7 || !res.Stopped {
		t.Fatalf("Stop after 7: iters %d stopped %v err %v", res.Iters, res.Stopped, err)
	}
	if _, err := Train(context.Background(), m.Params, 0, loss, TrainConfig{}); err == nil {
		t.Fatal("empty meta-dataset accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, m.Params, 3, loss, TrainConfig{}); err == nil {
		t.Fatal("cancelled context ignored")
	}
}

func TestTrainGridLearns(t *testing.T) {
	m := tinyGrid(t)
	r := rand.New(rand.NewPCG(8, 8))
	var ys [][]float64
	var ms [][]bool
	for range 4 {
		y, mask := tinyImage(r, m.Pixels())
		ys, ms = append(ys, y), append(ms, mask)
	}
	loss := func(tp *ad.Tape, p ad.Var, i int, _ *rng.Stream) (ad.Var, error) { return m.Loss(tp, p, ys[i], ms[i]) }
	res, err := Train(context.Background(), m.Params, len(ys), loss, TrainConfig{LR: 1e-2, MaxIter: 100, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	if first, last := mean(res.Losses[:10]), mean(res.Losses[90:]); !(last < first-0.1) {
		t.Fatalf("loss did not fall: %v → %v", first, last)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
