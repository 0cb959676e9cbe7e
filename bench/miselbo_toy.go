package bench

import (
	"context"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// The MISELBO paper's toy experiments (Kviman, Melin, Koptagel, Elvira & Lagergren 2022,
// AISTATS, §5.1; papers.md §5.2 items 1 and 2).

const log2Pi = 1.8378770664093453 // log 2π

// toy2D is a 2-D unnormalised log density log p̃(z) = −U(z) with its gradient, as a
// model.Target (one fused node per evaluation).
type toy2D struct {
	name string
	// logp returns log p̃(z) and, when g is not nil, writes ∇ log p̃(z) into g.
	logp func(z, g []float64) float64
}

func (t toy2D) Dim() int { return 2 }

func (t toy2D) LogDensity(tp *ad.Tape, z ad.Var) ad.Var {
	var g [2]float64
	v := t.logp(tp.Value(z), g[:])
	return tp.FusedVec(v, []ad.Var{z}, [][]float64{g[:]})
}

// logU1 is −U₁ of Rezende & Mohamed (2015, Table 1), the MISELBO paper's first 2-D target:
//
//	U₁(z) = ½((‖z‖ − 2)/0.4)² − log(exp(−½((z₁ − 2)/0.6)²) + exp(−½((z₁ + 2)/0.6)²)),
//
// a ring of radius 2 with two lobes at z₁ = ±2. It is integrable (Z by quadrature, u1LogZ).
func logU1(z, g []float64) float64 {
	r := math.Hypot(z[0], z[1])
	a := -0.5 * sq((z[0]-2)/0.6)
	b := -0.5 * sq((z[0]+2)/0.6)
	m := max(a, b)
	lse := m + math.Log(math.Exp(a-m)+math.Exp(b-m))
	v := -0.5*sq((r-2)/0.4) + lse
	if g != nil {
		wa, wb := math.Exp(a-lse), math.Exp(b-lse)
		dl := -wa*(z[0]-2)/0.36 - wb*(z[0]+2)/0.36
		g[0], g[1] = dl, 0
		if r > 0 {
			c := -(r - 2) / 0.16 / r
			g[0] += c * z[0]
			g[1] += c * z[1]
		}
	}
	return v
}

// logU2 is −U₂ of Rezende & Mohamed (2015, Table 1): U₂(z) = ½((z₂ − w₁(z))/0.4)² with
// w₁(z) = sin(2πz₁/4). It is not integrable on ℝ² (for every z₁ the z₂-integral is
// 0.4·√(2π)), so only its unnormalised KL (normaliser c = 1, as the paper's code) is defined,
// and only for members of fixed scale (with a free scale the ELBO grows without bound).
func logU2(z, g []float64) float64 {
	w := math.Sin(math.Pi * z[0] / 2)
	d := z[1] - w
	if g != nil {
		g[1] = -d / 0.16
		g[0] = d / 0.16 * math.Pi / 2 * math.Cos(math.Pi*z[0]/2)
	}
	return -0.5 * sq(d/0.4)
}

func sq(x float64) float64 { return x * x }

// u1LogZ returns log ∫ exp(−U₁) by the midpoint rule on [−5, 5]² with n×n cells (the density
// is below e⁻²⁸ outside).
func u1LogZ(n int) float64 {
	h := 10 / float64(n)
	s := 0.0
	z := make([]float64, 2)
	for i := range n {
		z[0] = -5 + (float64(i)+0.5)*h
		for j := range n {
			z[1] = -5 + (float64(j)+0.5)*h
			s += math.Exp(logU1(z, nil))
		}
	}
	return math.Log(s * h * h)
}

// gauss2 is a diagonal Gaussian in 2-D: mean and standard deviations.
type gauss2 struct{ mu, sd [2]float64 }

func (q gauss2) logpdf(z []float64) float64 {
	u0, u1 := (z[0]-q.mu[0])/q.sd[0], (z[1]-q.mu[1])/q.sd[1]
	return -0.5*(u0*u0+u1*u1) - math.Log(q.sd[0]) - math.Log(q.sd[1]) - log2Pi
}

func (q gauss2) entropy() float64 { return math.Log(q.sd[0]) + math.Log(q.sd[1]) + 1 + log2Pi }

// ToyRun is one §5.1.1 ensemble: S Gaussian members of a 2-D target and the Monte Carlo
// comparison of the mixture's KL with the members' average KL.
type ToyRun struct {
	Target  string
	Fitting string // how the members were fitted, in words
	Starts  [][2]float64
	Members []gauss2 // the fitted members (means, standard deviations)
	// MemberKL are the members' KL(q_s‖p) (U₁) or unnormalised KL (U₂, c = 1) with their
	// Monte Carlo standard errors, on J draws each.
	MemberKL, MemberKLSE []float64
	// AvgKL = (1/S) Σ KL(q_s‖p) and MISKL = KL(q_mix‖p) estimated from the same S·J draws (the
	// paper's compare_kls), Gap = AvgKL − MISKL (the JSD by the theorem) with its paired
	// standard error.
	AvgKL, MISKL, Gap, GapSE float64
	// JSDQuad is the members' JSD by quadrature of the mixture's entropy on a grid (independent
	// of the draws).
	JSDQuad float64
	LogZ    float64  // log Z (quadrature; 0 for U₂, whose KL is the unnormalised one)
	J       int      // draws per member
	Grads   int      // target gradient evaluations of the fits
	Notes   []string // the fits' start notes and stopping reasons
}

// runToy2D fits S Gaussian members to a 2-D target and compares the mixture's KL with the
// members' average (paper §5.1.1).
//
// U₁: each member is vigo's default mean-field fit (fit.Run, DefaultRecipe("meanfield"))
// from its own start (the Laplace mode search starts at Init.Point), so mean and scale are
// fitted. U₂: the paper's protocol, because U₂ is improper: means only, standard deviation
// fixed at 0.8, Adam (step 0.001) on the ELBO's gradient with steps×batch draws.
//
// init is U₁'s fit.InitRecipe method: fit.InitMethodLaplace (the default recipe's mode
// search and Laplace scale) or fit.InitMethodZero (N(start, I) as the starting Gaussian).
func runToy2D(ctx context.Context, name, init string, S, J, steps, batch int, seed uint64) (ToyRun, error) {
	run := ToyRun{Target: name, J: J}
	var tgt toy2D
	switch name {
	case "U1":
		tgt = toy2D{name: name, logp: logU1}
		run.LogZ = u1LogZ(2000)
	case "U2":
		tgt = toy2D{name: name, logp: logU2}
	default:
		return run, fmt.Errorf("bench: runToy2D: unknown target (name=%q)", name)
	}
	for s := range S {
		var start [2]float64
		if name == "U1" {
			start = [2]float64{6*float64(s) - 3, 0} // (−3, 0), (3, 0): the script's intended U₁ start
		} else {
			start = [2]float64{3*float64(s) - 3, 0} // (−3, 0), (0, 0), (3, 0): the script's start
		}
		run.Starts = append(run.Starts, start)
		switch name {
		case "U1":
			r := fit.DefaultRecipe("meanfield")
			r.Seed = rng.Derive(seed, 511, uint64(s))
			r.Init.Point = []float64{start[0], start[1]}
			r.Init.Method = init
			r.Init.Starts = 1 // each member from its own start (the paper's protocol), not a multi-start search
			if init == fit.InitMethodZero {
				r.Init.Scale = 1
			}
			res, err := fit.Run(ctx, tgt, r)
			if err != nil {
				return run, fmt.Errorf("bench: runToy2D: %s member %d: %w", name, s, err)
			}
			run.Grads += res.GradEvals
			run.Notes = append(run.Notes, fmt.Sprintf("member %d: %s; %s; ELBO %.4g, k̂ %.2f", s+1, res.InitNote, res.Reason, res.ELBO, res.KHat))
			var mean [2]float64
			cov := make([]float64, 4)
			res.Family.Moments(res.Params, mean[:], cov)
			run.Members = append(run.Members, gauss2{mu: mean, sd: [2]float64{math.Sqrt(cov[0]), math.Sqrt(cov[3])}})
			run.Fitting = "fit.Run, DefaultRecipe(\"meanfield\") (STL ELBO, Adam 0.02, plateau stop) with init.point = the start and init.method = " + init
			if init == fit.InitMethodLaplace {
				run.Fitting += " (the default: L-BFGS mode search from the start, Laplace scale)"
			} else {
				run.Fitting += " (N(start, I) as the first Gaussian)"
			}
			run.Fitting += "; means and scales fitted"
		case "U2":
			q := fitFixedScale(tgt, start, 0.8, steps, batch, rng.Derive(seed, 512, uint64(s)))
			run.Grads += steps * batch
			run.Members = append(run.Members, q)
			run.Fitting = fmt.Sprintf("the paper's protocol: means only, standard deviation fixed at 0.8, Adam step 0.001, %d steps × %d draws", steps, batch)
		}
	}
	compareKL(&run, tgt, rng.Derive(seed, 513))
	run.JSDQuad = jsdQuad2D(run.Members)
	return run, nil
}

// fitFixedScale fits the mean of N(μ, sd²I) to tgt by Adam on the ELBO's reparameterised
// gradient E[∇ log p̃(μ + sd·ε)] (the entropy does not depend on μ).
func fitFixedScale(tgt toy2D, start [2]float64, sd float64, steps, batch int, seed uint64) gauss2 {
	r := rng.New(seed, 0)
	mu := []float64{start[0], start[1]}
	opt := optim.NewAdam(2, optim.AdamConfig{LR: 0.001})
	g, gs, z := make([]float64, 2), make([]float64, 2), make([]float64, 2)
	for range steps {
		gs[0], gs[1] = 0, 0
		for range batch {
			z[0] = mu[0] + sd*r.NormFloat64()
			z[1] = mu[1] + sd*r.NormFloat64()
			tgt.logp(z, g)
			gs[0] -= g[0] / float64(batch)
			gs[1] -= g[1] / float64(batch)
		}
		opt.Step(mu, gs)
	}
	return gauss2{mu: [2]float64{mu[0], mu[1]}, sd: [2]float64{sd, sd}}
}

// compareKL estimates the members' KLs, their average and the mixture's KL on J draws per
// member, with objective's log-weight functions: the log weights against each member
// (ELBO = log Z − KL) and against the balance-heuristic mixture (MixtureLogWeights; MISELBO
// with L = 1 = log Z − KL(q_mix‖p)).
func compareKL(run *ToyRun, tgt toy2D, seed uint64) {
	S, J := len(run.Members), run.J
	r := rng.New(seed, 0)
	logp := make([]float64, S*J)
	logq := make([]float64, S*J*S)
	own := make([]float64, S*J)
	mix := make([]float64, S*J)
	z := make([]float64, 2)
	for s, q := range run.Members {
		for n := range J {
			row := s*J + n
			z[0] = q.mu[0] + q.sd[0]*r.NormFloat64()
			z[1] = q.mu[1] + q.sd[1]*r.NormFloat64()
			logp[row] = tgt.logp(z, nil) - run.LogZ
			for j, qj := range run.Members {
				logq[row*S+j] = qj.logpdf(z)
			}
			own[row] = logp[row] - logq[row*S+s]
		}
	}
	objective.MixtureLogWeights(mix, logp, logq, S)
	run.AvgKL = -objective.ELBO(own)
	run.MISKL = -objective.ELBO(mix)
	gapVar := 0.0
	for s := range S {
		kl, se := signedMeanSE(own[s*J:(s+1)*J], -1)
		run.MemberKL = append(run.MemberKL, kl)
		run.MemberKLSE = append(run.MemberKLSE, se)
		d := make([]float64, J)
		for n := range J {
			d[n] = mix[s*J+n] - own[s*J+n]
		}
		_, se = signedMeanSE(d, 1)
		gapVar += se * se
	}
	run.Gap = run.AvgKL - run.MISKL
	run.GapSE = math.Sqrt(gapVar) / float64(S)
}

// signedMeanSE returns sign·mean(x) and the standard error of the mean.
func signedMeanSE(x []float64, sign float64) (float64, float64) {
	n := float64(len(x))
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= n
	ss := 0.0
	for _, v := range x {
		ss += sq(v - m)
	}
	return sign * m, math.Sqrt(ss / (n - 1) / n)
}

// jsdQuad2D returns JSD = H[q_mix] − (1/S) Σ H[q_s] of 2-D diagonal Gaussians, the mixture's
// entropy by the midpoint rule on a 1,000×1,000 grid over the members' ±9 sd box, the
// members' entropies in closed form.
func jsdQuad2D(qs []gauss2) float64 {
	lo := [2]float64{math.Inf(1), math.Inf(1)}
	hi := [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, q := range qs {
		for k := range 2 {
			lo[k] = min(lo[k], q.mu[k]-9*q.sd[k])
			hi[k] = max(hi[k], q.mu[k]+9*q.sd[k])
		}
	}
	const n = 1000
	hx, hy := (hi[0]-lo[0])/n, (hi[1]-lo[1])/n
	S := float64(len(qs))
	H := 0.0
	z := make([]float64, 2)
	for i := range n {
		z[0] = lo[0] + (float64(i)+0.5)*hx
		for j := range n {
			z[1] = lo[1] + (float64(j)+0.5)*hy
			p := 0.0
			for _, q := range qs {
				p += math.Exp(q.logpdf(z))
			}
			p /= S
			if p > 0 {
				H -= p * math.Log(p)
			}
		}
	}
	H *= hx * hy
	avg := 0.0
	for _, q := range qs {
		avg += q.entropy() / S
	}
	return H - avg
}

// DeltaRow is one point of §5.1.2: Δ_L = MISELBO_L − mean IWELBO_L for two Gaussian members
// N(μ, 2²) and N(0, 2²) of the target ½N(0, 2²) + ½N(10, 4²) (the paper's notebook).
type DeltaRow struct {
	Mu      float64
	JSD     float64 // by quadrature (jsd1D)
	L       int
	Groups  int     // groups of L draws per member
	Delta   float64 // MISELBO_L − mean IWELBO_L
	DeltaSE float64 // paired Monte Carlo standard error
	MISELBO float64
	IWELBO  float64 // mean over the two members
}

// deltaTargetLogPdf is log(½N(z; 0, 2²) + ½N(z; 10, 4²)).
func deltaTargetLogPdf(z float64) float64 {
	a := normLogPdf(z, 0, 2)
	b := normLogPdf(z, 10, 4)
	m := max(a, b)
	return m + math.Log(0.5*math.Exp(a-m)+0.5*math.Exp(b-m))
}

func normLogPdf(z, mu, sd float64) float64 {
	u := (z - mu) / sd
	return -0.5*u*u - math.Log(sd) - 0.5*log2Pi
}

// jsd1D returns the JSD of equally weighted 1-D Gaussians N(mu_s, sd_s²): the mixture's
// entropy by the midpoint rule with n cells over the members' ±12 sd range, minus the mean of
// the members' closed-form entropies ½log(2πe sd²).
func jsd1D(mu, sd []float64, n int) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for s := range mu {
		lo = min(lo, mu[s]-12*sd[s])
		hi = max(hi, mu[s]+12*sd[s])
	}
	h := (hi - lo) / float64(n)
	S := float64(len(mu))
	H := 0.0
	for i := range n {
		z := lo + (float64(i)+0.5)*h
		p := 0.0
		for s := range mu {
			p += math.Exp(normLogPdf(z, mu[s], sd[s]))
		}
		p /= S
		if p > 0 {
			H -= p * math.Log(p) * h
		}
	}
	for s := range mu {
		H -= (0.5*(log2Pi+1) + math.Log(sd[s])) / S
	}
	return H
}

// runDelta computes Δ_L for one separation μ and one L on J groups of L draws per member
// (common random numbers for MISELBO and the IWELBOs, so Δ's error is that of the paired
// difference).
func runDelta(mu float64, L, J int, seed uint64) DeltaRow {
	row := DeltaRow{Mu: mu, L: L, Groups: J, JSD: jsd1D([]float64{mu, 0}, []float64{2, 2}, 200000)}
	r := rng.New(seed, 0)
	means := [2]float64{mu, 0}
	logp := make([]float64, L)
	logq := make([]float64, 2*L)
	own := make([]float64, L)
	mix := make([]float64, L)
	d := make([]float64, 0, 2*J)
	var mis, iw float64
	for s := range 2 {
		for range J {
			for l := range L {
				z := means[s] + 2*r.NormFloat64()
				logp[l] = deltaTargetLogPdf(z)
				logq[2*l] = normLogPdf(z, means[0], 2)
				logq[2*l+1] = normLogPdf(z, means[1], 2)
				own[l] = logp[l] - logq[2*l+s]
			}
			objective.MixtureLogWeights(mix, logp, logq, 2)
			a, b := objective.IWELBO(mix, L), objective.IWELBO(own, L)
			mis += a
			iw += b
			d = append(d, a-b)
		}
	}
	n := float64(2 * J)
	row.MISELBO, row.IWELBO = mis/n, iw/n
	row.Delta, row.DeltaSE = signedMeanSE(d, 1)
	return row
}
