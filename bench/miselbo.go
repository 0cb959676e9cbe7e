package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/bnn"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/rng"
)

// MISELBOConfig says what RunMISELBO runs: the experiments of Kviman, Melin, Koptagel, Elvira
// & Lagergren (2022), "Multiple importance sampling ELBO and deep ensembles of variational
// approximations", AISTATS (papers.md §5.2): §5.1.1 ensembles of Gaussians on the 2-D targets
// U₁ and U₂, §5.1.2 Δ_L against the JSD for two 1-D Gaussians, and §5.2 an ensemble of VAE
// encoders sharing one decoder on MNIST (a small MLP VAE in place of NVAE).
type MISELBOConfig struct {
	// Parts are the experiments to run: "toy2d" (§5.1.1), "delta" (§5.1.2), "vae" (§5.2).
	Parts []string
	// Quick shrinks every experiment to a smoke run (draws, steps, epochs and test images).
	Quick bool
	// MNIST is the directory of the 10,000-digit MNIST IDX files (needed for "vae").
	MNIST string
	// PlotDir, when not empty, receives the PNG figures.
	PlotDir string
	// VAE overrides the §5.2 sizes (zero fields: the defaults, see RunMISELBO).
	VAE  VAEConfig
	Seed uint64
	// Progress receives one line per step of the run (nil: none).
	Progress io.Writer
}

// MISELBOReport is the result of RunMISELBO.
type MISELBOReport struct {
	Cfg     MISELBOConfig
	Toy     []ToyRun
	Delta   []DeltaRow
	DeltaJ  map[int]int // groups per member for each L
	VAE     *VAEResult
	Plots   []string
	Elapsed map[string]time.Duration
}

// MISELBOParts are the experiments RunMISELBO knows.
var MISELBOParts = []string{"toy2d", "delta", "vae"}

// deltaLs are the L values of §5.1.2 (the paper's).
var deltaLs = []int{1, 2, 10, 100, 1000}

// RunMISELBO runs the configured parts of the MISELBO paper's experiments.
//
// Defaults (full run; Quick in parentheses): §5.1.1 J = 10,000 (2,000) evaluation draws per
// member, U₂'s members 10,000 (1,000) Adam steps × 1,000 (100) draws; §5.1.2 separations
// μ = 0…20 (0, 5, 10, 20), groups per member min(10,000, 10⁶/L) (min(500, 10⁴/L)); §5.2
// 9,000 training and 1,000 test images (1,000 and 100), 784-200-20 networks, encoder 1
// jointly with the decoder for 15 epochs (1), each extra encoder 8 epochs (1) with the
// decoder fixed, minibatch 100, Adam 0.001, 5 encoders, L ∈ {1, 2, 3, 5, 10, 50}.
func RunMISELBO(ctx context.Context, cfg MISELBOConfig) (*MISELBOReport, error) {
	if len(cfg.Parts) == 0 {
		cfg.Parts = MISELBOParts
	}
	for _, p := range cfg.Parts {
		if !slices.Contains(MISELBOParts, p) {
			return nil, fmt.Errorf("bench: RunMISELBO: unknown part (part=%q; known: %s)", p, strings.Join(MISELBOParts, ", "))
		}
	}
	rep := &MISELBOReport{Cfg: cfg, Elapsed: map[string]time.Duration{}, DeltaJ: map[int]int{}}
	say := func(format string, a ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", a...)
		}
	}
	if slices.Contains(cfg.Parts, "toy2d") {
		t0 := time.Now()
		J, steps, batch := 10000, 10000, 1000
		if cfg.Quick {
			J, steps, batch = 2000, 1000, 100
		}
		for _, tc := range []struct {
			name, init string
			S          int
		}{{"U1", fit.InitMethodZero, 2}, {"U1", fit.InitMethodLaplace, 2}, {"U2", "", 3}} {
			say("miselbo toy2d: %s with S = %d %s", tc.name, tc.S, tc.init)
			run, err := runToy2D(ctx, tc.name, tc.init, tc.S, J, steps, batch, rng.Derive(cfg.Seed, 511))
			if err != nil {
				return nil, err
			}
			rep.Toy = append(rep.Toy, run)
		}
		rep.Elapsed["toy2d"] = time.Since(t0)
	}
	if slices.Contains(cfg.Parts, "delta") {
		t0 := time.Now()
		mus := []float64{}
		budget, cap := 1_000_000, 10000
		if cfg.Quick {
			mus = []float64{0, 5, 10, 20}
			budget, cap = 10000, 500
		} else {
			for m := range 21 {
				mus = append(mus, float64(m))
			}
		}
		for li, L := range deltaLs {
			J := min(cap, budget/L)
			rep.DeltaJ[L] = J
			say("miselbo delta: L = %d, %d groups per member", L, J)
			for mi, mu := range mus {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("bench: RunMISELBO: %w", context.Cause(ctx))
				}
				rep.Delta = append(rep.Delta, runDelta(mu, L, J, rng.Derive(cfg.Seed, 512, uint64(li), uint64(mi))))
			}
		}
		rep.Elapsed["delta"] = time.Since(t0)
	}
	if slices.Contains(cfg.Parts, "vae") {
		t0 := time.Now()
		vc := cfg.VAE
		def := VAEConfig{Train: 9000, Test: 1000, Hidden: 200, Latent: 20, Epochs: 15, ExtraEpochs: 8, Batch: 100, LR: 0.001, Members: 5, Ls: []int{1, 2, 3, 5, 10, 50}}
		if cfg.Quick {
			def.Train, def.Test, def.Epochs, def.ExtraEpochs = 1000, 100, 1, 1
		}
		for _, f := range []struct{ v, d *int }{{&vc.Train, &def.Train}, {&vc.Test, &def.Test}, {&vc.Hidden, &def.Hidden}, {&vc.Latent, &def.Latent},
			{&vc.Epochs, &def.Epochs}, {&vc.ExtraEpochs, &def.ExtraEpochs}, {&vc.Batch, &def.Batch}, {&vc.Members, &def.Members}} {
			if *f.v < 0 {
				return nil, fmt.Errorf("bench: RunMISELBO: VAE sizes must not be negative (%+v)", vc)
			}
			if *f.v == 0 {
				*f.v = *f.d
			}
		}
		if vc.LR == 0 {
			vc.LR = def.LR
		}
		if len(vc.Ls) == 0 {
			vc.Ls = def.Ls
		}
		if vc.Members > 20 || slices.ContainsFunc(vc.Ls, func(L int) bool { return L < 1 || L > 1000 }) || vc.LR < 0 || math.IsNaN(vc.LR) {
			return nil, fmt.Errorf("bench: RunMISELBO: VAE members must be 1..20, every L 1..1000 and LR > 0 (members=%d, Ls=%v, LR=%v)", vc.Members, vc.Ls, vc.LR)
		}
		vc.Seed = rng.Derive(cfg.Seed, 52)
		vc.Progress = cfg.Progress
		if cfg.MNIST == "" {
			return nil, fmt.Errorf("bench: RunMISELBO: part vae needs the MNIST directory (MNIST=%q)", cfg.MNIST)
		}
		X, rows, h, w, err := bnn.ReadIDXImages(filepath.Join(cfg.MNIST, "images-idx3-ubyte.gz"), vc.Train+vc.Test)
		if err != nil {
			return nil, fmt.Errorf("bench: RunMISELBO: %w", err)
		}
		if rows < vc.Train+vc.Test {
			return nil, fmt.Errorf("bench: RunMISELBO: %d train + %d test images, the file has %d", vc.Train, vc.Test, rows)
		}
		res, err := runVAE(ctx, vc, X, h*w)
		if err != nil {
			return nil, err
		}
		rep.VAE = res
		rep.Elapsed["vae"] = time.Since(t0)
	}
	if cfg.PlotDir != "" {
		plots, err := rep.plot(cfg.PlotDir)
		if err != nil {
			return nil, err
		}
		rep.Plots = plots
	}
	return rep, nil
}

// Markdown writes the report.
func (r *MISELBOReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	h.Machine = "one goroutine"
	resultmd.Write(&b, "MISELBO: multiple importance sampling ELBO and ensembles of variational approximations (Kviman et al. 2022)", h)
	p("- paper: Kviman, Melin, Koptagel, Elvira & Lagergren (2022), AISTATS, PMLR 151:10687–10702 (papers.md §5); its Tables 2 and 3 are NOT FOUND in our copy, so each section states the claim it checks\n")
	for _, part := range r.Cfg.Parts {
		p("- %s: %s wall\n", part, r.Elapsed[part].Round(time.Second))
	}
	if r.Cfg.Quick {
		p("- **quick run** (--quick): smoke-test sizes, not the numbers of the full run\n")
	}
	for _, pl := range r.Plots {
		p("- figure: %s\n", pl)
	}
	if len(r.Toy) > 0 {
		p("\n## §5.1.1 Ensembles of Gaussians on U₁ and U₂\n\n")
		p("Claim checked (paper Theorem 1 with L = 1, the content of Table 2): the ensemble's KL(q_mix‖p), the \"MIS-KL\", is below the members' average KL by exactly the members' JSD ∈ [0, log S] — equivalently MISELBO₁ = mean ELBO + JSD. Both KLs are estimated from the same J draws per member (the paper's compare_kls); the gap's error bar is the paired Monte Carlo standard error; the JSD beside it is computed independently, by quadrature of the mixture's entropy on a 1000×1000 grid.\n\n")
		p("Targets (Rezende & Mohamed 2015, Table 1): U₁(z) = ½((‖z‖−2)/0.4)² − log(e^{−½((z₁−2)/0.6)²} + e^{−½((z₁+2)/0.6)²}), normalised by quadrature (midpoint rule, 2000² cells on [−5, 5]²); U₂(z) = ½((z₂ − sin(πz₁/2))/0.4)², which is improper on ℝ² (every z₁ carries mass 0.4√(2π)), so its KLs are to the unnormalised density (c = 1, as the paper's code) and its members need a fixed scale.\n\n")
		p("| target | S | members fitted by | starts | fitted members (mean; sd) | member KLs | average KL | MIS-KL | average − MIS (± se) | JSD (quadrature) | J | gradients |\n|---|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|\n")
		for _, t := range r.Toy {
			var st, mem, kls []string
			for s, q := range t.Members {
				st = append(st, fmt.Sprintf("(%g, %g)", t.Starts[s][0], t.Starts[s][1]))
				mem = append(mem, fmt.Sprintf("(%.2f, %.2f; %.2f, %.2f)", q.mu[0], q.mu[1], q.sd[0], q.sd[1]))
				kls = append(kls, fmt.Sprintf("%.4f ± %.4f", t.MemberKL[s], t.MemberKLSE[s]))
			}
			name := t.Target
			if t.Target == "U2" {
				name += " (unnormalised, c = 1)"
			} else {
				name += fmt.Sprintf(" (log Z = %.4f)", t.LogZ)
			}
			p("| %s | %d | %s | %s | %s | %s | %.4f | %.4f | %.4f ± %.4f | %.4f | %d | %d |\n", name, len(t.Members), t.Fitting,
				strings.Join(st, " "), strings.Join(mem, " "), strings.Join(kls, "; "), t.AvgKL, t.MISKL, t.Gap, t.GapSE, t.JSDQuad, t.J, t.Grads)
		}
		for _, t := range r.Toy {
			for _, n := range t.Notes {
				p("- %s %s\n", t.Target, n)
			}
		}
		p("\nVerdict per ensemble: ")
		for _, t := range r.Toy {
			tol := 4*t.GapSE + 1e-3 // Monte Carlo and quadrature error
			ok := math.Abs(t.Gap-t.JSDQuad) <= tol && t.JSDQuad >= -1e-9 && t.JSDQuad <= math.Log(float64(len(t.Members)))+1e-9
			p("%s (%s): average − MIS = %.4f ± %.4f, JSD %.4f ∈ [0, log %d], |gap − JSD| = %.4f (tolerance 4 se + 0.001 = %.4f): %s; MIS-KL below the average by more than 4 se: %s. ", t.Target, firstWord(t.Fitting), t.Gap, t.GapSE, t.JSDQuad, len(t.Members),
				math.Abs(t.Gap-t.JSDQuad), tol, map[bool]string{true: "gap = JSD reproduced", false: "gap = JSD NOT reproduced"}[ok], map[bool]string{true: "yes", false: "no (the members nearly coincide)"}[t.Gap > 4*t.GapSE])
		}
		p("\n")
	}
	if len(r.Delta) > 0 {
		p("\n## §5.1.2 Δ_L = MISELBO_L − mean IWELBO_L against the JSD\n\n")
		p("Set-up (the paper's notebook): members q₁ = N(μ, 2²) and q₂ = N(0, 2²), target p = ½N(0, 2²) + ½N(10, 4²) (normalised, so every bound is ≤ log Z = 0), separations μ; L draws per member per group, Δ_L averaged over the groups of both members with common random numbers (paired standard error). The JSD is by quadrature of the mixture's entropy (midpoint rule, 200,000 cells over ±12 sd), independent of the draws. Groups per member: ")
		for _, L := range deltaLs {
			p("L=%d: %d; ", L, r.DeltaJ[L])
		}
		p("\n\nClaims checked: Δ₁ = JSD (Theorem 1); Δ_L ≥ 0; Δ_L decreases with L towards 0; Δ_L ≤ log 2 = %.4f.\n\n", math.Log(2))
		mus := []float64{}
		for _, d := range r.Delta {
			if !slices.Contains(mus, d.Mu) {
				mus = append(mus, d.Mu)
			}
		}
		p("| μ | JSD (quadrature) |")
		for _, L := range deltaLs {
			p(" Δ_%d ± se |", L)
		}
		p(" MISELBO₁ | mean ELBO |\n|---:|---:|")
		for range deltaLs {
			p("---:|")
		}
		p("---:|---:|\n")
		var worst1 float64
		neg, incr, over, fail1 := 0, 0, 0, 0
		for _, mu := range mus {
			var row []DeltaRow
			for _, d := range r.Delta {
				if d.Mu == mu {
					row = append(row, d)
				}
			}
			p("| %g | %.4f |", mu, row[0].JSD)
			for i, d := range row {
				p(" %.4f ± %.4f |", d.Delta, d.DeltaSE)
				if d.L == 1 {
					worst1 = max(worst1, math.Abs(d.Delta-d.JSD))
					if math.Abs(d.Delta-d.JSD) > 4*d.DeltaSE+1e-4 {
						fail1++
					}
				}
				if d.Delta < -4*d.DeltaSE {
					neg++
				}
				if d.Delta > math.Log(2)+4*d.DeltaSE {
					over++
				}
				if i > 0 && d.Delta > row[i-1].Delta+4*math.Hypot(d.DeltaSE, row[i-1].DeltaSE) {
					incr++
				}
			}
			p(" %.4f | %.4f |\n", row[0].MISELBO, row[0].IWELBO)
		}
		p("\nChecks over the %d separations: largest |Δ₁ − JSD| = %.4f, separations where it exceeds 4 se + 10⁻⁴ (the quadrature's tolerance): %d; cells with Δ_L < 0 by more than 4 se: %d; above log 2 by more than 4 se: %d; Δ_L larger than Δ at the previous L by more than 4 combined se: %d.\n", len(mus), worst1, fail1, neg, over, incr)
	}
	if v := r.VAE; v != nil {
		c := v.Cfg
		p("\n## §5.2 Ensembles of VAE encoders sharing one decoder (MNIST)\n\n")
		p("NVAE is out of reach on this machine; this is a small MLP VAE written with vigo's tape and nn.MLP (float64): encoder %d-%d-2·%d and decoder %d-%d-%d, tanh hidden layers, N(0, I) prior, Bernoulli likelihood, ELBO with the closed-form KL and one reparameterised draw per image.\n\n", 784, c.Hidden, c.Latent, c.Latent, c.Hidden, 784)
		p("- data: ../shared/data/mnist-10k (10,000 class-interleaved MNIST digits); train = the first %d images, test = the next %d; pixels binarised at 0.5 (x = 1 where byte/255 ≥ 0.5), fixed, not resampled\n", c.Train, c.Test)
		p("- training: encoder 1 and the decoder jointly for %d epochs; encoders 2–%d from their own seeds for %d epochs each with the decoder fixed (its parameters constants on the tape), as the paper does (`--train_new_q`); minibatch %d, Adam step %g; %d image-gradient evaluations in all; training wall time %s, evaluation %s (one goroutine)\n",
			c.Epochs, c.Members, c.ExtraEpochs, c.Batch, c.LR, v.Grads, v.TrainTime.Round(time.Second), v.EvalTime.Round(time.Second))
		p("- final-epoch training −ELBO per image: %s; test ELBO per encoder: %s\n", fmtList(v.TrainLoss, "%.2f"), fmtList(v.TestELBO, "%.2f"))
		p("- evaluation: per test image and encoder %d draws (encoder 1: %d); IWELBO_L and MISELBO_L are averaged over the ⌊draws/L⌋ disjoint groups of L draws; NLL = −mean over test images, nats; MISELBO_L of the first S encoders uses S·L draws, the mean IWELBO_L of the same encoders too (each its own L); the last block is encoder 1 alone with S·L draws (the same number of draws as MISELBO)\n\n", c.maxL(), c.maxL()*c.Members)
		p("Claim checked (paper §5.2, Table 3's content): with the same encoders and draws, MISELBO gives a lower (tighter) NLL than the members' IWELBO, and the gain grows with S.\n\n")
		// table writes one L × S grid: a header row of S = 1 … Members, then a row per L.
		table := func(title string, cell func(S, li int) string) {
			p("%s\n\n| L |", title)
			for S := 1; S <= c.Members; S++ {
				p(" S=%d |", S)
			}
			p("\n|---:|")
			for range c.Members {
				p("---:|")
			}
			p("\n")
			for li, L := range c.Ls {
				p("| %d |", L)
				for S := range c.Members {
					p(" %s |", cell(S, li))
				}
				p("\n")
			}
		}
		table("NLL by MISELBO_L (nats)", func(S, li int) string { return fmt.Sprintf("%.3f", v.MIS[S][li]) })
		table("\nNLL by the mean IWELBO_L of the same S encoders (nats)", func(S, li int) string { return fmt.Sprintf("%.3f", v.IW[S][li]) })
		table("\nNLL_MIS − NLL_IW ± paired standard error over test images (negative: MISELBO tighter)", func(S, li int) string {
			return fmt.Sprintf("%.3f ± %.3f", v.MIS[S][li]-v.IW[S][li], v.MISSE[S][li])
		})
		table("\nNLL by encoder 1's IWELBO with S·L draws ± se over test images (the same draw budget as MISELBO_L with S encoders)", func(S, li int) string {
			return fmt.Sprintf("%.3f ± %.3f", v.IW1[S][li], v.IW1SE[S][li])
		})
		p("\nJSD of the first S encoders (Monte Carlo, mean over test images; log S beside it): ")
		for S := range c.Members {
			p("S=%d: %.3f (log S %.3f); ", S+1, v.JSD[S], math.Log(float64(S+1)))
		}
		p("\n")
	}
	p("\n## §5.3 Phylogenetic inference (VBPI)\n\nNot run: the DS1–DS8 alignments and the VBPI models are not on this machine (papers.md §5.2 item 4); there is nothing to compare with.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// firstWord is the init method named in a ToyRun's Fitting ("" for U₂'s protocol).
func firstWord(fitting string) string {
	for _, m := range []string{fit.InitMethodLaplace, fit.InitMethodZero} {
		if strings.Contains(fitting, "init.method = "+m) {
			return "init " + m
		}
	}
	return "means only, sd 0.8"
}

func fmtList(x []float64, f string) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmt.Sprintf(f, v)
	}
	return strings.Join(s, ", ")
}
