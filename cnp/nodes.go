package cnp

import (
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// im2col1 is the geometry of a "same"-padded 1-D convolution over a G-point grid with C
// channels (channels last: X is G×C row-major) and an odd kernel size K.
type im2col1 struct{ G, C, K int }

// im2col returns the G×(K·C) matrix whose row g holds, for tap j = 0…K−1, the input row
// g + j − (K−1)/2 (zeros outside the grid): column j·C + c is X[g + j − (K−1)/2, c]. A
// convolution with weights W ((K·C)×Cout, row j·C + c = PyTorch's weight[out, c, j]) is then
// the matrix product im2col(X)·W. Backward scatters the adjoint back (col2im). Cost O(G·K·C)
// both ways.
func (g *im2col1) im2col(t *ad.Tape, x ad.Var) ad.Var {
	c := t.Custom(g, g.G*g.K*g.C, 0, x)
	out := c.Value()
	xv := t.Value(x)
	pad := (g.K - 1) / 2
	row := g.K * g.C
	for p := range g.G {
		for j := range g.K {
			q := p + j - pad
			if q < 0 || q >= g.G {
				continue
			}
			copy(out[p*row+j*g.C:p*row+(j+1)*g.C], xv[q*g.C:(q+1)*g.C])
		}
	}
	return t.AsMatrix(c.Var(), g.G, row)
}

func (g *im2col1) Backward(c ad.Custom) {
	gx := c.Tape().Grad(c.Arg(0))
	if gx == nil {
		return
	}
	gy := c.Grad()
	pad := (g.K - 1) / 2
	row := g.K * g.C
	for p := range g.G {
		for j := range g.K {
			q := p + j - pad
			if q < 0 || q >= g.G {
				continue
			}
			src := gy[p*row+j*g.C : p*row+(j+1)*g.C]
			dst := gx[q*g.C : (q+1)*g.C]
			for i, v := range src {
				dst[i] += v
			}
		}
	}
}

// depthwise2 is the geometry of a "same"-padded depthwise 2-D convolution (PyTorch Conv2d
// with groups = channels) over an H×W image with C channels (channels last: X is (H·W)×C,
// pixel index = W·row + col) and an odd K×K kernel.
type depthwise2 struct{ H, W, C, K int }

// conv returns Y with Y[p, c] = b[c] + Σ_{i,j<K} w[(i·K + j)·C + c] · X[p + (i − r, j − r), c],
// r = (K−1)/2, zero outside the image (w is (K²)×C: tap-major, channel last). Backward: X̄
// by the transposed stencil, w̄ and b̄ by correlation with Ȳ. Cost O(H·W·K²·C) both ways.
func (g *depthwise2) conv(t *ad.Tape, x, w, b ad.Var) ad.Var {
	c := t.Custom(g, g.H*g.W*g.C, 0, x, w, b)
	out := c.Value()
	xv, wv, bv := t.Value(x), t.Value(w), t.Value(b)
	r := (g.K - 1) / 2
	C := g.C
	for y := range g.H {
		for xx := range g.W {
			p := y*g.W + xx
			o := out[p*C : (p+1)*C]
			copy(o, bv)
			for i := range g.K {
				yy := y + i - r
				if yy < 0 || yy >= g.H {
					continue
				}
				for j := range g.K {
					xj := xx + j - r
					if xj < 0 || xj >= g.W {
						continue
					}
					q := yy*g.W + xj
					in := xv[q*C : (q+1)*C]
					wt := wv[(i*g.K+j)*C : (i*g.K+j+1)*C]
					for k := range o {
						o[k] += wt[k] * in[k]
					}
				}
			}
		}
	}
	return t.AsMatrix(c.Var(), g.H*g.W, C)
}

func (g *depthwise2) Backward(c ad.Custom) {
	t := c.Tape()
	x, w, b := c.Arg(0), c.Arg(1), c.Arg(2)
	gx, gw, gb := t.Grad(x), t.Grad(w), t.Grad(b)
	xv, wv := t.Value(x), t.Value(w)
	gy := c.Grad()
	r := (g.K - 1) / 2
	C := g.C
	for y := range g.H {
		for xx := range g.W {
			p := y*g.W + xx
			gyp := gy[p*C : (p+1)*C]
			if gb != nil {
				for k, v := range gyp {
					gb[k] += v
				}
			}
			for i := range g.K {
				yy := y + i - r
				if yy < 0 || yy >= g.H {
					continue
				}
				for j := range g.K {
					xj := xx + j - r
					if xj < 0 || xj >= g.W {
						continue
					}
					q := yy*g.W + xj
					tap := (i*g.K + j) * C
					if gx != nil {
						dst := gx[q*C : (q+1)*C]
						wt := wv[tap : tap+C]
						for k, v := range gyp {
							dst[k] += wt[k] * v
						}
					}
					if gw != nil {
						dst := gw[tap : tap+C]
						in := xv[q*C : (q+1)*C]
						for k, v := range gyp {
							dst[k] += in[k] * v
						}
					}
				}
			}
		}
	}
}

// clampMin returns max(a, lo) elementwise (derivative 1 above lo, 0 at or below it), the
// torch.clamp(min=lo) of the grid ConvCNP's density normalisation.
func clampMin(t *ad.Tape, a ad.Var, lo float64) ad.Var {
	y, val, d := t.Map(a)
	for i, v := range t.Value(a) {
		if v > lo {
			val[i], d[i] = v, 1
		} else {
			val[i], d[i] = lo, 0
		}
	}
	return y
}

// gaussLogLik returns Σ_i log N(y_i; μ_i, σ_i) with μ_i = loc_i, or μ_i = sigmoid(loc_i) when
// sigmoidMean (the HeteroscedasticNormal likelihood with image = True), as one scalar node.
// The scale is σ_i = exp(s_i) (floored = false: the thesis's code), or σ_i = σ_min + (1 −
// σ_min)·softplus(s_i) with σ_min = minStd (floored = true: the Neural Process Family's
// default, after Le et al. 2018), which bounds every term above by −½ log 2π − log σ_min.
// With e_i = (y_i − μ_i)/σ_i: the term is −½ log 2π − log σ_i − ½e_i²; ∂/∂σ_i = (e_i² − 1)/σ_i
// times dσ_i/ds_i (σ_i for exp, (1 − σ_min)·sigmoid(s_i) for the floor); ∂/∂μ_i = e_i/σ_i,
// times μ_i(1 − μ_i) through the sigmoid. Cost O(n).
func gaussLogLik(t *ad.Tape, loc, s ad.Var, y []float64, sigmoidMean, floored bool) ad.Var {
	lv, sv := t.Value(loc), t.Value(s)
	n := len(y)
	dl, ds := make([]float64, n), make([]float64, n)
	total := 0.0
	for i, yi := range y {
		mu, dmu := lv[i], 1.0
		if sigmoidMean {
			mu = sigmoid(lv[i])
			dmu = mu * (1 - mu)
		}
		sig, dsig := scaleOf(sv[i], floored)
		e := (yi - mu) / sig
		total += -0.5*math.Log(2*math.Pi) - math.Log(sig) - 0.5*e*e
		dl[i] = e / sig * dmu
		ds[i] = (e*e - 1) / sig * dsig
	}
	return t.FusedVec(total, []ad.Var{loc, s}, [][]float64{dl, ds})
}

// minStd is the floor of the floored scale σ = minStd + (1 − minStd)·softplus(s): the Neural
// Process Family's default (Dubois et al., npf NeuralProcessFamily p_y_scale_transformer,
// after Le et al. 2018, "Empirical Evaluation of Neural Process Objectives").
const minStd = 0.01

// scaleOf returns σ and dσ/ds for the raw output s: exp(s), or minStd + (1 − minStd)·softplus(s)
// when floored.
func scaleOf(s float64, floored bool) (sig, dsig float64) {
	if !floored {
		sig = math.Exp(s)
		return sig, sig
	}
	return minStd + (1-minStd)*softplus(s), (1 - minStd) * sigmoid(s)
}

// softplus is log(1 + eˣ) without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// columns2 returns the two columns of the matrix node m (rows×2) as vector nodes.
func columns2(t *ad.Tape, m ad.Var) (ad.Var, ad.Var) {
	rows, _ := t.Shape(m)
	tr := t.Transpose(m)
	return t.Slice(tr, 0, rows), t.Slice(tr, rows, 2*rows)
}
