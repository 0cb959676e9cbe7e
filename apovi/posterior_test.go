package apovi

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
	"gonum.org/v1/gonum/mat"
)

// densePost is the direct computation of one unit's conditional: P = αI + Uᵀ diag(λ) U with
// U = [H, 1], Σ = P⁻¹ by explicit inversion, μ = Σ Uᵀ diag(λ) v, the lower Cholesky factor L of
// P, the draw w = μ + L⁻ᵀ ε and KL(N(μ, Σ) ‖ N(0, α⁻¹I)) from its definition.
func densePost(t *testing.T, n, din int, h, lam, v []float64, alpha float64, eps []float64) (w []float64, kl float64, Sig *mat.SymDense, mu []float64) {
	t.Helper()
	K := din + 1
	U := mat.NewDense(n, K, nil)
	for i := range n {
		for k := range din {
			U.Set(i, k, h[i*din+k])
		}
		U.Set(i, din, 1)
	}
	P := mat.NewSymDense(K, nil)
	for a := range K {
		for b := range K {
			s := 0.0
			if a == b {
				s = alpha
			}
			for i := range n {
				s += lam[i] * U.At(i, a) * U.At(i, b)
			}
			P.SetSym(a, b, s)
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(P); err != nil {
		t.Fatal(err)
	}
	Sig = mat.NewSymDense(K, nil)
	for a := range K {
		for b := a; b < K; b++ {
			Sig.SetSym(a, b, 0.5*(inv.At(a, b)+inv.At(b, a)))
		}
	}
	bv := make([]float64, K)
	for k := range K {
		for i := range n {
			bv[k] += U.At(i, k) * lam[i] * v[i]
		}
	}
	mu = make([]float64, K)
	for a := range K {
		for b := range K {
			mu[a] += inv.At(a, b) * bv[b]
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(P) {
		t.Fatal("not positive definite")
	}
	var L mat.TriDense
	ch.LTo(&L)
	var Linv mat.Dense
	if err := Linv.Inverse(&L); err != nil {
		t.Fatal(err)
	}
	w = make([]float64, K)
	for a := range K {
		w[a] = mu[a]
		for b := range K {
			w[a] += Linv.At(b, a) * eps[b] // (L⁻ᵀ)_{ab} = (L⁻¹)_{ba}
		}
	}
	tr, mm := 0.0, 0.0
	for a := range K {
		tr += Sig.At(a, a)
		mm += mu[a] * mu[a]
	}
	ld, sign := mat.LogDet(Sig)
	if sign <= 0 {
		t.Fatal("Σ not positive definite")
	}
	kl = 0.5 * (alpha*(tr+mm) - float64(K) + float64(K)*math.Log(1/alpha) - ld)
	return w, kl, Sig, mu
}

func closeRel(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

// TestGipAgainstDense checks the layer node's draw and KL, for each pseudo-likelihood mode,
// against densePost. Both are deterministic given ε (the node draws ε unit by unit from the
// stream, which the test replays), so the tolerance is rounding: 1e-9 relative for K ≤ 6 and
// condition numbers below 1e4.
func TestGipAgainstDense(t *testing.T) {
	const n, din, D = 7, 3, 4
	r := rng.New(3, 0)
	h := make([]float64, n*din)
	for i := range h {
		h[i] = r.NormFloat64()
	}
	raw := make([]float64, n*2*D)
	for i := range raw {
		raw[i] = r.NormFloat64()
	}
	y := make([]float64, n*D)
	for i := range y {
		y[i] = r.NormFloat64()
	}
	for _, mode := range []pseudoMode{amortised, free, exact} {
		g := &gip{din: din, dout: D, mode: mode, alpha: 0.7}
		var tp ad.Tape
		H := tp.AsMatrix(tp.Const(h...), n, din)
		rv := tp.Const(raw...)
		if mode == exact {
			rv = tp.Const(math.Log(0.4))
		}
		W, b, kl := g.record(&tp, H, rv, y, rng.New(11, 0).Rand)
		wv, bvv, klv := tp.Value(W), tp.Value(b), tp.Float(kl)
		replay := rng.New(11, 0)
		K := din + 1
		klSum := 0.0
		for d := range D {
			lam, v := make([]float64, n), make([]float64, n)
			for i := range n {
				switch mode {
				case amortised:
					s := math.Exp((raw[i*2*D+D+d]-4)/2) + 1e-8
					lam[i], v[i] = 1/(s*s), raw[i*2*D+d]
				case free:
					lam[i], v[i] = math.Exp(raw[i*2*D+D+d]), raw[i*2*D+d]
				case exact:
					lam[i], v[i] = 1/(0.4*0.4), y[i*D+d]
				}
			}
			eps := make([]float64, K)
			for k := range eps {
				eps[k] = replay.NormFloat64()
			}
			w, kld, _, _ := densePost(t, n, din, h, lam, v, 0.7, eps)
			for k := range din {
				if !closeRel(wv[k*D+d], w[k], 1e-9) {
					t.Errorf("mode %d unit %d: w[%d] = %.12g, dense %.12g", mode, d, k, wv[k*D+d], w[k])
				}
			}
			if !closeRel(bvv[d], w[din], 1e-9) {
				t.Errorf("mode %d unit %d: bias = %.12g, dense %.12g", mode, d, bvv[d], w[din])
			}
			klSum += kld
		}
		if !closeRel(klv, klSum, 1e-9) {
			t.Errorf("mode %d: KL = %.12g, dense %.12g", mode, klv, klSum)
		}
	}
}

// blrPosterior is the exact Bayesian-linear-regression posterior for y = [x, 1]·w + N(0, σ²),
// w ~ N(0, α⁻¹ I): Σ = (αI + σ⁻² X̃ᵀX̃)⁻¹, μ = σ⁻² Σ X̃ᵀ y, and the log evidence
// log N(y; 0, σ²I + α⁻¹ X̃X̃ᵀ).
func blrPosterior(t *testing.T, d Dataset, sigma, alpha float64) (Sig *mat.SymDense, mu []float64, logEv float64) {
	lam := make([]float64, d.N)
	for i := range lam {
		lam[i] = 1 / (sigma * sigma)
	}
	_, _, Sig, mu = densePost(t, d.N, d.DX, d.X, lam, d.Y, alpha, make([]float64, d.DX+1))
	C := mat.NewSymDense(d.N, nil)
	for i := range d.N {
		for j := i; j < d.N; j++ {
			s := 1.0
			for k := range d.DX {
				s += d.X[i*d.DX+k] * d.X[j*d.DX+k]
			}
			s /= alpha
			if i == j {
				s += sigma * sigma
			}
			C.SetSym(i, j, s)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(C) {
		t.Fatal("evidence covariance not positive definite")
	}
	var z mat.VecDense
	if err := ch.SolveVecTo(&z, mat.NewVecDense(d.N, append([]float64(nil), d.Y...))); err != nil {
		t.Fatal(err)
	}
	q := mat.Dot(&z, mat.NewVecDense(d.N, d.Y))
	logEv = -0.5*q - 0.5*ch.LogDet() - 0.5*float64(d.N)*math.Log(2*math.Pi)
	return Sig, mu, logEv
}

// checkPredictive compares Predict's S function samples at xt with the exact Gaussian
// predictive N(x̃ᵀμ, x̃ᵀΣx̃) of the BLR posterior. Tolerances: the sample mean has standard error
// sd/√S and the unbiased sample variance has relative standard error ≈ √(2/(S−1)) (Gaussian
// samples, S = 4000, where the normal approximation holds); 4.5 standard errors give a two-sided
// false-failure rate of 6.8e-6 per comparison, 1e-4 over the 2×5 comparisons of a call.
func checkPredictive(t *testing.T, pr *Prediction, xt []float64, dx int, Sig *mat.SymDense, mu []float64) {
	t.Helper()
	S := float64(pr.S)
	for j := range pr.NTest {
		xr := append(append([]float64(nil), xt[j*dx:(j+1)*dx]...), 1)
		m, v := 0.0, 0.0
		for a := range xr {
			m += xr[a] * mu[a]
			for b := range xr {
				v += xr[a] * Sig.At(a, b) * xr[b]
			}
		}
		sd := math.Sqrt(v)
		if math.Abs(pr.Mean[j]-m) > 4.5*sd/math.Sqrt(S) {
			t.Errorf("test point %d: mean %.6g, exact %.6g (se %.3g)", j, pr.Mean[j], m, sd/math.Sqrt(S))
		}
		v2 := pr.Std[j] * pr.Std[j]
		if math.Abs(v2/v-1) > 4.5*math.Sqrt(2/(S-1)) {
			t.Errorf("test point %d: variance %.6g, exact %.6g", j, v2, v)
		}
	}
}

// TestPOVIOneLayerIsBLR: with one linear layer, inducing inputs = the data, pseudo-outputs = y
// and precisions = σ⁻², q is the exact BLR posterior (apovi.md §1.2–1.3).
func TestPOVIOneLayerIsBLR(t *testing.T) {
	d := toyData(9, 2, 1, false, 7)
	const sigma, priorVar = 0.3, 1.5
	m, err := NewPOVI(POVIConfig{DX: 2, DY: 1, M: d.N, Inducing: d.X, PriorVar: priorVar,
		Likelihood: Likelihood{Kind: Gaussian, NoiseStd: sigma}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Params()
	for i := range d.N {
		row := p[m.offs[0]+2*i:]
		row[0], row[1] = d.Y[i], -2*math.Log(sigma)
	}
	Sig, mu, logEv := blrPosterior(t, d, sigma, 1/priorVar)
	xt := []float64{-1, 0.5, 0, 0, 2, -2, 0.3, 0.7, 3, 1}
	pr, err := m.Predict(Dataset{}, xt, 4000, rng.New(2, 0).Rand)
	if err != nil {
		t.Fatal(err)
	}
	checkPredictive(t, pr, xt, 2, Sig, mu)
	checkELBOIsEvidence(t, m, d, logEv)
}

// checkELBOIsEvidence: when q is the exact posterior, E_q[log p(y|w)] − KL(q‖p) = log p(y).
// The one-sample loss −(log p(y|w) − KL)/N is averaged over 1500 seeds; 4.5 of its standard
// errors (estimated from the same draws, n large enough for the normal approximation) give a
// false-failure rate of about 6.8e-6.
func checkELBOIsEvidence(t *testing.T, m Model, d Dataset, logEv float64) {
	t.Helper()
	const n = 1500
	sum, sum2 := 0.0, 0.0
	var tp ad.Tape
	for s := range n {
		tp.Reset()
		l, err := m.Loss(&tp, tp.Input(m.Params()), ELBO, d, Dataset{}, 1, rng.New(uint64(s), 4).Rand)
		if err != nil {
			t.Fatal(err)
		}
		e := -tp.Float(l) * float64(d.N)
		sum += e
		sum2 += e * e
	}
	mean := sum / n
	se := math.Sqrt((sum2/n - mean*mean) / (n - 1))
	if math.Abs(mean-logEv) > 4.5*se {
		t.Errorf("mean ELBO %.6g, log evidence %.6g (se %.3g)", mean, logEv, se)
	}
	if se == 0 {
		t.Error("zero variance: the check is vacuous")
	}
}

// TestAPOVIOneLayerIsBLR: APOVI's exact last layer with no hidden layers is the BLR posterior
// given the context (no inference network at all).
func TestAPOVIOneLayerIsBLR(t *testing.T) {
	d := toyData(8, 1, 1, false, 8)
	const sigma = 0.2
	m, err := NewAPOVI(Config{DX: 1, DY: 1, Likelihood: Likelihood{Kind: Gaussian, NoiseStd: sigma}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Params()) != 0 {
		t.Fatalf("%d parameters, want 0", len(m.Params()))
	}
	Sig, mu, logEv := blrPosterior(t, d, sigma, 1)
	xt := []float64{-2, -0.5, 0, 1, 2.5}
	pr, err := m.Predict(d, xt, 4000, rng.New(3, 0).Rand)
	if err != nil {
		t.Fatal(err)
	}
	checkPredictive(t, pr, xt, 1, Sig, mu)
	checkELBOIsEvidence(t, m, d, logEv)
}

// TestMeanFieldProduct checks the AMFVI natural-parameter sum against the direct product of the
// prior and the n Gaussian factors, multiplied one at a time (v ← 1/(1/v + 1/σ²),
// m ← v(m/v_old + μ/σ²)), and the KL against its definition. Deterministic given ε: 1e-10.
func TestMeanFieldProduct(t *testing.T) {
	const n, din, D = 5, 2, 3
	K, KD := din+1, (din+1)*D
	r := rng.New(4, 0)
	raw := make([]float64, n*2*KD)
	for i := range raw {
		raw[i] = 2 * r.NormFloat64()
	}
	const priorVar = 0.8
	g := &mf{din: din, dout: D, alpha: 1 / priorVar}
	var tp ad.Tape
	W, b, kl := g.record(&tp, tp.AsMatrix(tp.Const(raw...), n, 2*KD), rng.New(12, 0).Rand)
	wv, bv := tp.Value(W), tp.Value(b)
	replay := rng.New(12, 0)
	klSum := 0.0
	for j := range KD {
		d, k := j/K, j%K
		m, v := 0.0, priorVar
		for i := range n {
			s := math.Exp((raw[i*2*KD+KD+j]-4)/2) + 1e-8
			vNew := 1 / (1/v + 1/(s*s))
			m = vNew * (m/v + raw[i*2*KD+j]/(s*s))
			v = vNew
		}
		w := m + math.Sqrt(v)*replay.NormFloat64()
		got := bv[d]
		if k < din {
			got = wv[k*D+d]
		}
		if !closeRel(got, w, 1e-10) {
			t.Errorf("weight (unit %d, input %d) = %.12g, product of Gaussians %.12g", d, k, got, w)
		}
		klSum += 0.5 * ((v+m*m)/priorVar - 1 + math.Log(priorVar) - math.Log(v))
	}
	if !closeRel(tp.Float(kl), klSum, 1e-10) {
		t.Errorf("KL = %.12g, direct %.12g", tp.Float(kl), klSum)
	}
}

// TestKLBetweenPosteriors checks NPVI's KL nodes against the Gaussian KL computed from the dense
// posteriors: ½[tr(Σ_b⁻¹Σ_a) + δᵀΣ_b⁻¹δ − K + ln det Σ_b − ln det Σ_a]. Deterministic: 1e-9.
func TestKLBetweenPosteriors(t *testing.T) {
	const na, nb, din, D = 6, 4, 2, 3
	K := din + 1
	r := rng.New(6, 0)
	draw := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		return x
	}
	ha, hb, ra, rb := draw(na*din), draw(nb*din), draw(na*2*D), draw(nb*2*D)
	g := &gip{din: din, dout: D, mode: amortised, alpha: 1.3}
	var tp ad.Tape
	kl := tp.Float(klGip(&tp, g, tp.AsMatrix(tp.Const(ha...), na, din), tp.Const(ra...), nil,
		tp.AsMatrix(tp.Const(hb...), nb, din), tp.Const(rb...), nil))
	want := 0.0
	for d := range D {
		post := func(n int, h, raw []float64) (*mat.SymDense, []float64) {
			lam, v := make([]float64, n), make([]float64, n)
			for i := range n {
				s := math.Exp((raw[i*2*D+D+d]-4)/2) + 1e-8
				lam[i], v[i] = 1/(s*s), raw[i*2*D+d]
			}
			_, _, S, mu := densePost(t, n, din, h, lam, v, 1.3, make([]float64, K))
			return S, mu
		}
		Sa, ma := post(na, ha, ra)
		Sb, mb := post(nb, hb, rb)
		var Pb mat.Dense
		if err := Pb.Inverse(Sb); err != nil {
			t.Fatal(err)
		}
		var PS mat.Dense
		PS.Mul(&Pb, Sa)
		q := 0.0
		for i := range K {
			for j := range K {
				q += (ma[i] - mb[i]) * Pb.At(i, j) * (ma[j] - mb[j])
			}
		}
		lda, _ := mat.LogDet(Sa)
		ldb, _ := mat.LogDet(Sb)
		want += 0.5 * (mat.Trace(&PS) + q - float64(K) + ldb - lda)
	}
	if !closeRel(kl, want, 1e-9) {
		t.Errorf("KL(q_a‖q_b) = %.12g, dense %.12g", kl, want)
	}

	// Mean field: the per-weight Gaussian KL of the two natural-parameter products.
	KD := K * D
	oa, ob := draw(na*2*KD), draw(nb*2*KD)
	mk := &mfKL{din: din, dout: D, alpha: 1.3}
	tp.Reset()
	got := tp.Float(mk.record(&tp, tp.AsMatrix(tp.Const(oa...), na, 2*KD), tp.AsMatrix(tp.Const(ob...), nb, 2*KD)))
	want = 0
	for j := range KD {
		prod := func(n int, o []float64) (m, v float64) {
			P, e := 1.3, 0.0
			for i := range n {
				s := math.Exp((o[i*2*KD+KD+j]-4)/2) + 1e-8
				P += 1 / (s * s)
				e += o[i*2*KD+j] / (s * s)
			}
			return e / P, 1 / P
		}
		m1, v1 := prod(na, oa)
		m2, v2 := prod(nb, ob)
		want += 0.5 * (v1/v2 + (m1-m2)*(m1-m2)/v2 - 1 + math.Log(v2/v1))
	}
	if !closeRel(got, want, 1e-9) {
		t.Errorf("mean-field KL = %.12g, direct %.12g", got, want)
	}
}

// TestNormalPrecExtremes: the NormalActivation stays finite at overflow and underflow.
func TestNormalPrecExtremes(t *testing.T) {
	for _, b := range []float64{-1e4, -100, 0, 4, 100, 1e4} {
		l, dl := normalPrec(b)
		if math.IsNaN(l) || math.IsInf(l, 0) || math.IsNaN(dl) || math.IsInf(dl, 0) {
			t.Errorf("b=%v: λ=%v dλ/db=%v", b, l, dl)
		}
		if b > -50 && b < 50 {
			const h = 1e-6
			lp, _ := normalPrec(b + h)
			lm, _ := normalPrec(b - h)
			if fd := (lp - lm) / (2 * h); !closeRel(dl, fd, 1e-6) {
				t.Errorf("b=%v: dλ/db=%v, finite difference %v", b, dl, fd)
			}
		}
	}
	if l, _ := normalPrec(4); !closeRel(l, 1/((1+1e-8)*(1+1e-8)), 1e-15) {
		t.Errorf("λ(4) = %v, want (1+1e-8)⁻²", l)
	}
}

// TestJitterRescuesRounding: two nearly collinear inducing rows with precisions at the 1e16
// ceiling make αI + UᵀΛU indefinite in floating point (the plain factorisation fails, checked
// below, so the test exercises the retry); the layer then factorises P + δI and stays finite.
func TestJitterRescuesRounding(t *testing.T) {
	const n, din = 3, 2
	h := []float64{1, 1, 1, 1 + 1e-9, 1 - 1e-9, 1}
	lam := []float64{1e16, 1e16, 1e16}
	v := []float64{1, 2, 3}
	K := din + 1
	g := &gip{din: din, dout: 1, mode: free, alpha: 1}
	Y, bv, tmp, R, md := make([]float64, n*K), make([]float64, K), make([]float64, K), make([]float64, K*K), make([]float64, K)
	// The plain factorisation of the same matrix must fail for the test to mean anything.
	P := make([]float64, K*K)
	for a := range K {
		for b := range K {
			s := 0.0
			for i := range n {
				ua, ub := 1.0, 1.0
				if a < din {
					ua = h[i*din+a]
				}
				if b < din {
					ub = h[i*din+b]
				}
				s += lam[i] * ua * ub
			}
			if a == b {
				s += 1
			}
			P[a*K+b] = s
		}
	}
	if _, ok := cholInv(K, P, tmp); ok {
		t.Skip("this platform's rounding factorises the matrix without jitter")
	}
	ld, ok := g.post(n, h, lam, v, Y, bv, tmp, R, md, nil)
	if !ok {
		t.Fatal("jittered factorisation failed")
	}
	for _, x := range append(append([]float64{ld}, R...), md...) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("non-finite result: logdet %v, R⁻¹ %v, μ %v", ld, R, md)
		}
	}
}

// TestWoodburyAgainstDense: with fewer points than weights (n < K) the layer node takes the
// N-space form of wood.go. Its draw must equal the pathwise formula w = w₀ + Aᵀ G⁻¹(ṽ − Aw₀ − ε₁)
// computed densely with an explicit inverse (ε replayed from the stream), and its KL must equal
// the K-space KL of densePost (the determinant and push-through identities). Deterministic:
// 1e-9.
func TestWoodburyAgainstDense(t *testing.T) {
	const n, din, D = 4, 6, 3
	K := din + 1
	r := rng.New(8, 0)
	h := make([]float64, n*din)
	for i := range h {
		h[i] = r.NormFloat64()
	}
	raw := make([]float64, n*2*D)
	for i := range raw {
		raw[i] = r.NormFloat64()
	}
	const alpha = 0.6
	for _, mode := range []pseudoMode{amortised, free} {
		g := &gip{din: din, dout: D, mode: mode, alpha: alpha}
		var tp ad.Tape
		W, b, kl := g.record(&tp, tp.AsMatrix(tp.Const(h...), n, din), tp.Const(raw...), nil, rng.New(13, 0).Rand)
		if c := tp.Value(b); len(c) != D {
			t.Fatal("bias size")
		}
		wv, bv := tp.Value(W), tp.Value(b)
		replay := rng.New(13, 0)
		klSum := 0.0
		for d := range D {
			lam, v := make([]float64, n), make([]float64, n)
			for i := range n {
				if mode == amortised {
					s := math.Exp((raw[i*2*D+D+d]-4)/2) + 1e-8
					lam[i], v[i] = 1/(s*s), raw[i*2*D+d]
				} else {
					lam[i], v[i] = math.Exp(raw[i*2*D+D+d]), raw[i*2*D+d]
				}
			}
			_, kld, _, _ := densePost(t, n, din, h, lam, v, alpha, make([]float64, K))
			klSum += kld
			A := mat.NewDense(n, K, nil)
			vt := mat.NewVecDense(n, nil)
			for i := range n {
				s := math.Sqrt(lam[i])
				for k := range din {
					A.Set(i, k, s*h[i*din+k])
				}
				A.Set(i, din, s)
				vt.SetVec(i, s*v[i])
			}
			var G mat.Dense
			G.Mul(A, A.T())
			for i := range n {
				G.Set(i, i, G.At(i, i)+alpha)
			}
			var Gi mat.Dense
			if err := Gi.Inverse(&G); err != nil {
				t.Fatal(err)
			}
			w0 := mat.NewVecDense(K, nil)
			for k := range K {
				w0.SetVec(k, replay.NormFloat64()/math.Sqrt(alpha))
			}
			var Aw mat.VecDense
			Aw.MulVec(A, w0)
			res := mat.NewVecDense(n, nil)
			for i := range n {
				res.SetVec(i, vt.AtVec(i)-Aw.AtVec(i)-replay.NormFloat64())
			}
			var beta, upd mat.VecDense
			beta.MulVec(&Gi, res)
			upd.MulVec(A.T(), &beta)
			for k := range K {
				want := w0.AtVec(k) + upd.AtVec(k)
				got := bv[d]
				if k < din {
					got = wv[k*D+d]
				}
				if !closeRel(got, want, 1e-9) {
					t.Errorf("mode %d unit %d: w[%d] = %.12g, dense pathwise %.12g", mode, d, k, got, want)
				}
			}
		}
		if !closeRel(tp.Float(kl), klSum, 1e-9) {
			t.Errorf("mode %d: KL = %.12g, K-space dense %.12g", mode, tp.Float(kl), klSum)
		}
	}
}

// TestAPOVIWoodburyIsBLR: the N-space draws have the exact BLR predictive distribution (n = 4
// points, K = 7 weights), checked as in TestAPOVIOneLayerIsBLR (same tolerances and rates).
func TestAPOVIWoodburyIsBLR(t *testing.T) {
	d := toyData(4, 6, 1, false, 9)
	const sigma = 0.3
	m, err := NewAPOVI(Config{DX: 6, DY: 1, Likelihood: Likelihood{Kind: Gaussian, NoiseStd: sigma}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	Sig, mu, logEv := blrPosterior(t, d, sigma, 1)
	xt := make([]float64, 5*6)
	r := rng.New(10, 0)
	for i := range xt {
		xt[i] = r.NormFloat64()
	}
	pr, err := m.Predict(d, xt, 4000, rng.New(4, 0).Rand)
	if err != nil {
		t.Fatal(err)
	}
	checkPredictive(t, pr, xt, 6, Sig, mu)
	checkELBOIsEvidence(t, m, d, logEv)
}
