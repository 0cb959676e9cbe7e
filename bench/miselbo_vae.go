package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// vae is a variational autoencoder for binary images (Kingma & Welling 2014): prior
// p(z) = N(0, I_D), Bernoulli decoder p(x|z) with logits dec(z), Gaussian encoder
// q(z|x) = N(μ(x), diag σ(x)²) with [μ, log σ] = enc(x). Both networks are nn.MLPs with tanh
// hidden layers; the encoder's output row is [μ_1..μ_D, log σ_1..log σ_D].
type vae struct {
	enc, dec *nn.MLP
	D, P     int // latent dimension, pixels
}

func newVAE(pixels, hidden, latent int) *vae {
	return &vae{
		enc: nn.NewMLP([]int{pixels, hidden, 2 * latent}, ad.Tanh),
		dec: nn.NewMLP([]int{latent, hidden, pixels}, ad.Tanh),
		D:   latent, P: pixels,
	}
}

// vaeTape is one worker's tape and index buffers.
type vaeTape struct {
	t            ad.Tape
	muIdx, lsIdx []int
}

func (vt *vaeTape) indices(n, D int) {
	if len(vt.muIdx) == n*D {
		return
	}
	vt.muIdx, vt.lsIdx = make([]int, n*D), make([]int, n*D)
	for i := range n {
		for k := range D {
			vt.muIdx[i*D+k] = i*2*D + k
			vt.lsIdx[i*D+k] = i*2*D + D + k
		}
	}
}

// loss records −ELBO/n of a batch X (n×P, binary) with base noise eps (n×D) — the
// reconstruction term by one reparameterised draw z = μ + σ⊙ε, the KL to the prior in closed
// form, ½Σ(μ² + σ² − 1 − 2 log σ) — and returns its value; with gradients, the encoder's
// gradient goes to ge and the decoder's to gd (gd nil: the decoder is held fixed, its
// parameters enter as constants).
func (v *vae) loss(vt *vaeTape, pe, pd []float64, X []float64, eps []float64, ge, gd []float64) float64 {
	n := len(X) / v.P
	vt.indices(n, v.D)
	t := &vt.t
	t.Reset()
	Pe := t.Input(pe)
	var Pd ad.Var
	if gd != nil {
		Pd = t.Input(pd)
	} else {
		Pd = t.ConstRef(pd)
	}
	H := v.enc.ForwardC(t, Pe, ad.Mat{Rows: n, Cols: v.P, Data: X})
	mu := t.Gather(H, vt.muIdx)
	ls := t.Gather(H, vt.lsIdx)
	sig := t.Exp(ls)
	z := t.AsMatrix(t.Add(mu, t.Mul(sig, t.ConstRef(eps))), n, v.D)
	logits := v.dec.Forward(t, Pd, z)
	rec := t.Sum(t.Sub(t.Mul(t.AsMatrix(t.ConstRef(X), n, v.P), logits), t.Softplus(logits)))
	kl := t.AddC(t.MulC(t.Sum(t.Sub(t.Add(t.Square(mu), t.Square(sig)), t.MulC(ls, 2))), 0.5), -0.5*float64(n*v.D))
	out := t.MulC(t.Sub(kl, rec), 1/float64(n))
	if ge == nil {
		return t.Float(out)
	}
	t.Backward(out)
	copy(ge, t.Grad(Pe))
	if gd != nil {
		copy(gd, t.Grad(Pd))
	}
	return t.Float(out)
}

// encode writes μ and log σ (n×D each) of q(z|x) for the images X.
func (v *vae) encode(vt *vaeTape, pe, X, mu, ls []float64) {
	n := len(X) / v.P
	t := &vt.t
	t.Reset()
	H := t.Value(v.enc.ForwardC(t, t.ConstRef(pe), ad.Mat{Rows: n, Cols: v.P, Data: X}))
	for i := range n {
		copy(mu[i*v.D:(i+1)*v.D], H[i*2*v.D:i*2*v.D+v.D])
		copy(ls[i*v.D:(i+1)*v.D], H[i*2*v.D+v.D:(i+1)*2*v.D])
	}
}

// logLik writes log p(x_i|z_r) for the rows z_r of Z (m×D), image index img[r] of X.
func (v *vae) logLik(vt *vaeTape, pd, Z []float64, X []float64, img []int, out []float64) {
	m := len(Z) / v.D
	t := &vt.t
	t.Reset()
	L := t.Value(v.dec.ForwardC(t, t.ConstRef(pd), ad.Mat{Rows: m, Cols: v.D, Data: Z}))
	for r := range m {
		x := X[img[r]*v.P : (img[r]+1)*v.P]
		l := L[r*v.P : (r+1)*v.P]
		s := 0.0
		for j, lj := range l {
			// x·l − softplus(l), softplus(l) = max(l, 0) + log1p(e^{−|l|})
			s += x[j]*lj - max(lj, 0) - math.Log1p(math.Exp(-math.Abs(lj)))
		}
		out[r] = s
	}
}

// VAEConfig is the §5.2 experiment: a VAE on binarised MNIST, five encoders sharing one
// decoder, test NLL by IWELBO and MISELBO.
type VAEConfig struct {
	Train, Test         int // images: the first Train for training, the next Test for testing
	Hidden, Latent      int
	Epochs, ExtraEpochs int // joint training of encoder 1 + decoder; each extra encoder (decoder fixed)
	Batch               int
	LR                  float64
	Members             int   // encoders (5)
	Ls                  []int // L values (1, 2, 3, 5, 10, 50)
	Seed                uint64
	Progress            io.Writer
}

// VAEResult holds the §5.2 numbers: NLL estimates in nats (−mean over test images of the
// bound) for S = 1..Members and each L.
type VAEResult struct {
	Cfg       VAEConfig
	TrainLoss []float64 // final-epoch training −ELBO per image, per encoder
	TestELBO  []float64 // test ELBO (L = 1, mean over 50 draws) per encoder
	// MIS[S-1][li], IW[S-1][li]: NLL by MISELBO_L of the first S encoders and by the mean
	// IWELBO_L of the same encoders; MISSE the paired standard error of MIS − IW over test
	// images. IW1[S-1][li]: NLL by encoder 1's IWELBO with S·L draws (the same number of
	// draws as MISELBO's); NaN where S·L exceeds the draws kept for encoder 1.
	MIS, IW, MISSE, IW1, IW1SE [][]float64
	JSD                        []float64 // MC JSD of the first S encoders (mean over test images)
	TrainTime, EvalTime        time.Duration
	Grads                      int // image-gradient evaluations (images × epochs)
}

// vaeMaxDraws are the draws per test image and encoder; encoder 1 keeps Members times as
// many for the same-budget IWELBO baseline.
func (c VAEConfig) maxL() int {
	m := 0
	for _, L := range c.Ls {
		m = max(m, L)
	}
	return m
}

// runVAE trains the VAE and its extra encoders on binarised images X (rows of P pixels in
// [0, 1], binarised at 0.5) and evaluates the test NLL.
func runVAE(ctx context.Context, cfg VAEConfig, Xall []float64, P int) (*VAEResult, error) {
	if (cfg.Train+cfg.Test)*P > len(Xall) {
		return nil, fmt.Errorf("bench: runVAE: %d train + %d test images exceed the %d images", cfg.Train, cfg.Test, len(Xall)/P)
	}
	X := make([]float64, (cfg.Train+cfg.Test)*P)
	for i := range X {
		if Xall[i] >= 0.5 {
			X[i] = 1
		}
	}
	Xtr, Xte := X[:cfg.Train*P], X[cfg.Train*P:]
	v := newVAE(P, cfg.Hidden, cfg.Latent)
	res := &VAEResult{Cfg: cfg}
	encs := make([][]float64, cfg.Members)
	pd := make([]float64, v.dec.NumParams())
	var vt vaeTape
	t0 := time.Now()
	for s := range cfg.Members {
		encs[s] = make([]float64, v.enc.NumParams())
		r := rng.New(rng.Derive(cfg.Seed, 52, uint64(s)), 0)
		v.enc.Init(encs[s], r.Rand)
		epochs := cfg.ExtraEpochs
		if s == 0 {
			v.dec.Init(pd, r.Rand)
			epochs = cfg.Epochs
		}
		loss, err := v.train(ctx, &vt, encs[s], pd, s == 0, Xtr, epochs, cfg, r, s)
		if err != nil {
			return nil, err
		}
		res.TrainLoss = append(res.TrainLoss, loss)
		res.Grads += epochs * cfg.Train
	}
	res.TrainTime = time.Since(t0)
	t1 := time.Now()
	if err := v.evaluate(ctx, &vt, res, encs, pd, Xte); err != nil {
		return nil, err
	}
	res.EvalTime = time.Since(t1)
	return res, nil
}

// train runs Adam on −ELBO over shuffled minibatches; joint trains the decoder too. It returns
// the last epoch's mean training loss.
func (v *vae) train(ctx context.Context, vt *vaeTape, pe, pd []float64, joint bool, X []float64, epochs int, cfg VAEConfig, r *rng.Stream, s int) (float64, error) {
	n := len(X) / v.P
	ge := make([]float64, len(pe))
	var gd []float64
	oe := optim.NewAdam(len(pe), optim.AdamConfig{LR: cfg.LR})
	var od *optim.Adam
	if joint {
		gd = make([]float64, len(pd))
		od = optim.NewAdam(len(pd), optim.AdamConfig{LR: cfg.LR})
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	xb := make([]float64, cfg.Batch*v.P)
	eb := make([]float64, cfg.Batch*v.D)
	last := 0.0
	for ep := range epochs {
		r.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		tot, cnt := 0.0, 0
		for b := 0; b < n; b += cfg.Batch {
			if err := ctx.Err(); err != nil {
				return 0, fmt.Errorf("bench: VAE training: %w", context.Cause(ctx))
			}
			m := min(cfg.Batch, n-b)
			for i := range m {
				copy(xb[i*v.P:(i+1)*v.P], X[perm[b+i]*v.P:(perm[b+i]+1)*v.P])
			}
			for i := range m * v.D {
				eb[i] = r.NormFloat64()
			}
			l := v.loss(vt, pe, pd, xb[:m*v.P], eb[:m*v.D], ge, gd)
			oe.Step(pe, ge)
			if joint {
				od.Step(pd, gd)
			}
			tot += l * float64(m)
			cnt += m
		}
		last = tot / float64(cnt)
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "miselbo vae: encoder %d (%s) epoch %d/%d: train −ELBO %.3f\n", s+1, map[bool]string{true: "joint with decoder", false: "decoder fixed"}[joint], ep+1, epochs, last)
		}
	}
	return last, nil
}

// evaluate fills res's NLL tables on the test images: per image and encoder s, maxL draws
// (encoder 1: Members·maxL), log p(x, z) and every encoder's log q(z|x); IWELBO_L and
// MISELBO_L average over the ⌊draws/L⌋ disjoint groups of L draws.
func (v *vae) evaluate(ctx context.Context, vt *vaeTape, res *VAEResult, encs [][]float64, pd, X []float64) error {
	cfg := res.Cfg
	A := len(encs)
	n := len(X) / v.P
	D := v.D
	mus, lss := make([][]float64, A), make([][]float64, A)
	for s := range A {
		mus[s], lss[s] = make([]float64, n*D), make([]float64, n*D)
		v.encode(vt, encs[s], X, mus[s], lss[s])
	}
	Lmax := cfg.maxL()
	nL := len(cfg.Ls)
	// per-image bounds: iw[s][li], mis[S-1][s][li], iw1[S-1][li], jsd[S-1]
	alloc := func() [][]float64 {
		m := make([][]float64, A)
		for i := range m {
			m[i] = make([]float64, nL)
		}
		return m
	}
	sumMIS, sumIW, sumD, sumD2, sumIW1, sumIW12 := alloc(), alloc(), alloc(), alloc(), alloc(), alloc()
	sumJSD := make([]float64, A)
	res.TestELBO = make([]float64, A)
	r := rng.New(rng.Derive(cfg.Seed, 53), 0)
	const imgBatch = 10
	rowsMax := imgBatch * Lmax * A
	Z := make([]float64, rowsMax*D)
	img := make([]int, rowsMax)
	ll := make([]float64, rowsMax)
	for b := 0; b < n; b += imgBatch {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bench: VAE evaluation: %w", context.Cause(ctx))
		}
		m := min(imgBatch, n-b)
		for i := range m {
			ii := b + i
			// draws: member s has ds draws
			lq := make([][]float64, A) // lq[s]: draws × A log q_j
			lp := make([][]float64, A) // log p(x, z) of member s's draws
			for s := range A {
				ds := Lmax
				if s == 0 {
					ds = Lmax * A
				}
				for d := range ds {
					for k := range D {
						Z[d*D+k] = mus[s][ii*D+k] + math.Exp(lss[s][ii*D+k])*r.NormFloat64()
					}
					img[d] = ii
				}
				v.logLik(vt, pd, Z[:ds*D], X, img[:ds], ll[:ds])
				lq[s] = make([]float64, ds*A)
				lp[s] = make([]float64, ds)
				for d := range ds {
					z := Z[d*D : (d+1)*D]
					prior := 0.0
					for _, zk := range z {
						prior += -0.5*zk*zk - 0.5*log2Pi
					}
					lp[s][d] = ll[d] + prior
					for j := range A {
						q := 0.0
						for k, zk := range z {
							u := (zk - mus[j][ii*D+k]) / math.Exp(lss[j][ii*D+k])
							q += -0.5*u*u - lss[j][ii*D+k] - 0.5*log2Pi
						}
						lq[s][d*A+j] = q
					}
				}
			}
			// own log weights (first Lmax draws of each member) and test ELBO
			own := make([][]float64, A)
			for s := range A {
				own[s] = make([]float64, Lmax)
				for d := range Lmax {
					own[s][d] = lp[s][d] - lq[s][d*A+s]
				}
				res.TestELBO[s] += objective.ELBO(own[s]) / float64(n)
			}
			mix := make([]float64, Lmax)
			sub := make([]float64, Lmax*A)
			for S := 1; S <= A; S++ {
				diff := make([]float64, nL) // this image's NLL_MIS − NLL_IW
				for s := range S {
					for d := range Lmax {
						copy(sub[d*S:(d+1)*S], lq[s][d*A:d*A+S])
					}
					objective.MixtureLogWeights(mix, lp[s][:Lmax], sub[:Lmax*S], S)
					for d := range Lmax {
						// log q_s − log q_mix = mix − own
						sumJSD[S-1] += (mix[d] - own[s][d]) / float64(Lmax*S)
					}
					for li, L := range cfg.Ls {
						g := (Lmax / L) * L
						a := objective.IWELBO(mix[:g], L)
						w := objective.IWELBO(own[s][:g], L)
						sumMIS[S-1][li] -= a / float64(S)
						sumIW[S-1][li] -= w / float64(S)
						diff[li] += (w - a) / float64(S)
					}
				}
				for li := range nL {
					sumD[S-1][li] += diff[li]
					sumD2[S-1][li] += diff[li] * diff[li]
				}
			}
			// encoder 1 with S·L draws
			w1 := make([]float64, Lmax*A)
			for d := range Lmax * A {
				w1[d] = lp[0][d] - lq[0][d*A]
			}
			for S := 1; S <= A; S++ {
				for li, L := range cfg.Ls {
					K := S * L
					g := (Lmax * A / K) * K
					val := -objective.IWELBO(w1[:g], K)
					sumIW1[S-1][li] += val
					sumIW12[S-1][li] += val * val
				}
			}
		}
	}
	fn := float64(n)
	res.MIS, res.IW, res.MISSE, res.IW1, res.IW1SE = alloc(), alloc(), alloc(), alloc(), alloc()
	res.JSD = make([]float64, A)
	for S := range A {
		res.JSD[S] = sumJSD[S] / fn
		for li := range cfg.Ls {
			res.MIS[S][li] = sumMIS[S][li] / fn
			res.IW[S][li] = sumIW[S][li] / fn
			res.IW1[S][li] = sumIW1[S][li] / fn
			md := sumD[S][li] / fn
			res.MISSE[S][li] = math.Sqrt(max(sumD2[S][li]/fn-md*md, 0) / fn)
			res.IW1SE[S][li] = math.Sqrt(max(sumIW12[S][li]/fn-sq(res.IW1[S][li]), 0) / fn)
		}
	}
	return nil
}
