package cnp

import (
	"errors"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// GridConfig configures the on-the-grid ConvCNP for one-channel images. A zero field takes
// the thesis's value (apovi.md §1.6, experiment_two_i.ipynb cell 8).
type GridConfig struct {
	Height, Width int // image size; default 28×28
	Channels      int // embedding and residual-block channels; default 256
	ConvKernel    int // odd encoder kernel size; default 5
	CNNKernel     int // odd depthwise kernel size in the residual blocks; default 3
	Blocks        int // residual blocks; default 3
	MLPWidth      int // hidden width of the per-pixel output MLP; default 128
}

func (c GridConfig) withDefaults() GridConfig {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Height, 28)
	def(&c.Width, 28)
	def(&c.Channels, 256)
	def(&c.ConvKernel, 5)
	def(&c.CNNKernel, 3)
	def(&c.Blocks, 3)
	def(&c.MLPWidth, 128)
	return c
}

func (c GridConfig) validate() error {
	for _, f := range []struct {
		n string
		v int
	}{{"Height", c.Height}, {"Width", c.Width}, {"Channels", c.Channels}, {"MLPWidth", c.MLPWidth}} {
		if f.v < 1 {
			return fmt.Errorf("cnp: GridConfig: %s must be ≥ 1 (%s=%d)", f.n, f.n, f.v)
		}
	}
	if c.Blocks < 0 {
		return fmt.Errorf("cnp: GridConfig: Blocks must be ≥ 0 (Blocks=%d)", c.Blocks)
	}
	if c.ConvKernel < 1 || c.ConvKernel%2 == 0 {
		return fmt.Errorf("cnp: GridConfig: ConvKernel must be odd and ≥ 1 (ConvKernel=%d)", c.ConvKernel)
	}
	if c.CNNKernel < 1 || c.CNNKernel%2 == 0 {
		return fmt.Errorf("cnp: GridConfig: CNNKernel must be odd and ≥ 1 (CNNKernel=%d)", c.CNNKernel)
	}
	return nil
}

// Grid is the on-the-grid ConvCNP (Gordon et al. 2020) for one-channel images as the thesis's
// code builds it (GridConvCNP; apovi.md §1.6, discrepancy D7), with y the image and m the
// mask (1 = observed), and two positivity constraints of the Neural Process Family code it
// derives from (Dubois et al., npf GridConvCNP and NeuralProcessFamily) where the thesis's
// code leaves the quantity unconstrained:
//
//   - encoder: a depthwise ConvKernel² convolution whose weights are exp(raw) and whose bias
//     is softplus(raw), both positive, so that conv(m) is a density: z = conv(y⊙m) /
//     max(conv(m), 1e-8), density = conv(m) (bias included in both), then a per-pixel
//     Linear(2 → Channels) on [z, density];
//   - Blocks residual blocks h ← pw(ReLU(h + dw(ReLU(h)))), dw a depthwise CNNKernel²
//     convolution with bias and pw a pointwise (1×1) Channels → Channels convolution;
//   - a per-pixel MLP Channels → MLPWidth → 2 with ReLU, giving (loc, s);
//   - likelihood N(y; sigmoid(loc), σ) per pixel with σ = 0.01 + 0.99·softplus(s).
//
// Why the two constraints. The thesis's code uses the encoder bias as is (PyTorch's default
// bias = True; npf builds this convolution with bias = False): with a negative bias a window
// with no observed pixel has conv(m) = bias < 0, the denominator is clamped to 1e-8 and z =
// bias·10⁸, which overflows the network on the first step. And the thesis's σ = exp(s) has
// no floor: on binarised (exactly 0/1) targets the log likelihood is unbounded as σ → 0, so
// training drives s to −∞ until σ underflows (apovi.md §5 E3's hypothesis for the thesis's
// ConvCNP trouble; bench/results/apovi_baselines.md records both failures). With the
// floor each pixel's log likelihood is at most −½ log 2π − log 0.01. A non-finite loss or
// gradient still stops Train with an error, and Predict refuses a non-finite prediction.
//
// All convolutions are "same"-padded with zeros. Initialisation: PyTorch's defaults
// U(±1/√fan_in) for every weight and bias (fan_in = kernel area for the depthwise ones).
// Cost per image: O(H·W·(ConvKernel² + Blocks·(CNNKernel² + Channels)·Channels +
// Channels·MLPWidth)) forward, about twice that backward.
type Grid struct {
	cfg       GridConfig
	enc, dw   *depthwise2
	offLin    int   // Linear(2 → C): weights 2×C, bias C
	offBlocks []int // per block: dw weights K²×C, bias C, pw weights C×C, bias C
	offMLP    int   // W1 C×M, b1 M, W2 M×2, b2 2
	Params    []float64
}

// NewGrid builds the model and initialises its parameters from seed.
func NewGrid(cfg GridConfig, seed uint64) (*Grid, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	C, M, k2, c2 := cfg.Channels, cfg.MLPWidth, cfg.ConvKernel*cfg.ConvKernel, cfg.CNNKernel*cfg.CNNKernel
	m := &Grid{
		cfg: cfg,
		enc: &depthwise2{H: cfg.Height, W: cfg.Width, C: 1, K: cfg.ConvKernel},
		dw:  &depthwise2{H: cfg.Height, W: cfg.Width, C: C, K: cfg.CNNKernel},
	}
	n := k2 + 1
	m.offLin = n
	n += 3 * C
	for range cfg.Blocks {
		m.offBlocks = append(m.offBlocks, n)
		n += c2*C + C + C*C + C
	}
	m.offMLP = n
	n += C*M + M + 2*M + 2
	m.Params = make([]float64, n)
	r := rng.New(seed, 0)
	uni := func(lo, hi, fanIn int) {
		a := 1 / math.Sqrt(float64(fanIn))
		for i := lo; i < hi; i++ {
			m.Params[i] = a * (2*r.Float64() - 1)
		}
	}
	uni(0, k2+1, k2)
	uni(m.offLin, m.offLin+3*C, 2)
	for _, o := range m.offBlocks {
		uni(o, o+c2*C+C, c2)
		uni(o+c2*C+C, o+c2*C+C+C*C+C, C)
	}
	uni(m.offMLP, m.offMLP+C*M+M, C)
	uni(m.offMLP+C*M+M, n, M)
	return m, nil
}

// NumParams returns the number of trained parameters.
func (m *Grid) NumParams() int { return len(m.Params) }

// Config returns the model's configuration with the defaults filled in.
func (m *Grid) Config() GridConfig { return m.cfg }

// Pixels returns Height·Width.
func (m *Grid) Pixels() int { return m.cfg.Height * m.cfg.Width }

func (m *Grid) check(fn string, y []float64, mask []bool) error {
	P := m.Pixels()
	if len(y) != P {
		return fmt.Errorf("cnp: %s: image has %d values, want %d (Height·Width)", fn, len(y), P)
	}
	if len(mask) != P {
		return fmt.Errorf("cnp: %s: mask has %d values, want %d (Height·Width)", fn, len(mask), P)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cnp: %s: image[%d]=%v is not finite", fn, i, v)
		}
	}
	return nil
}

// forward returns the per-pixel loc and raw scale s nodes (σ = 0.01 + 0.99·softplus(s)).
func (m *Grid) forward(t *ad.Tape, p ad.Var, y []float64, mask []bool) (loc, logSig ad.Var) {
	cfg := m.cfg
	P, C, M := m.Pixels(), cfg.Channels, cfg.MLPWidth
	k2, c2 := cfg.ConvKernel*cfg.ConvKernel, cfg.CNNKernel*cfg.CNNKernel
	ym, mm := make([]float64, P), make([]float64, P)
	for i, o := range mask {
		if o {
			ym[i], mm[i] = y[i], 1
		}
	}
	w := t.Exp(t.Slice(p, 0, k2))
	b := t.Softplus(t.Slice(p, k2, k2+1))
	num := m.enc.conv(t, t.AsMatrix(t.ConstRef(ym), P, 1), w, b)
	den := m.enc.conv(t, t.AsMatrix(t.ConstRef(mm), P, 1), w, b)
	z := t.Div(num, clampMin(t, den, 1e-8))
	feat := t.Transpose(t.AsMatrix(t.Concat(z, den), 2, P)) // P×2: [z, density]
	o := m.offLin
	h := t.Dense(feat, t.AsMatrix(t.Slice(p, o, o+2*C), 2, C), t.Slice(p, o+2*C, o+3*C), ad.Linear)
	for _, o := range m.offBlocks {
		a := m.dw.conv(t, t.Relu(h), t.Slice(p, o, o+c2*C), t.Slice(p, o+c2*C, o+c2*C+C))
		a = t.Relu(t.Add(a, h))
		o2 := o + c2*C + C
		h = t.Dense(t.AsMatrix(a, P, C), t.AsMatrix(t.Slice(p, o2, o2+C*C), C, C), t.Slice(p, o2+C*C, o2+C*C+C), ad.Linear)
	}
	o = m.offMLP
	h = t.Dense(h, t.AsMatrix(t.Slice(p, o, o+C*M), C, M), t.Slice(p, o+C*M, o+C*M+M), ad.ReLU)
	o += C*M + M
	h = t.Dense(h, t.AsMatrix(t.Slice(p, o, o+2*M), M, 2), t.Slice(p, o+2*M, o+2*M+2), ad.Linear)
	return columns2(t, h)
}

// Loss records the thesis's grid NPML loss of one image on t (apovi.md §2,
// GridConvCNP.npml_loss): −Σ over ALL pixels (context and target) of log N(y_p; μ_p, σ_p),
// divided by the number of context pixels |C|. y is the training target (the binarised image
// in the thesis) and mask the fixed context; p is the tape's copy of Params. An empty mask is
// an error (|C| = 0).
func (m *Grid) Loss(t *ad.Tape, p ad.Var, y []float64, mask []bool) (ad.Var, error) {
	if err := m.check("Grid.Loss", y, mask); err != nil {
		return ad.Var{}, err
	}
	nc := 0
	for _, o := range mask {
		if o {
			nc++
		}
	}
	if nc == 0 {
		return ad.Var{}, errors.New("cnp: Grid.Loss: the mask observes no pixel (|C|=0)")
	}
	if t.Size(p) != len(m.Params) {
		return ad.Var{}, fmt.Errorf("cnp: Grid.Loss: %d parameters on the tape, the model has %d", t.Size(p), len(m.Params))
	}
	loc, ls := m.forward(t, p, y, mask)
	return t.MulC(gaussLogLik(t, loc, ls, y, true, true), -1/float64(nc)), nil
}

// Predict returns the predictive mean sigmoid(loc) and standard deviation 0.01 +
// 0.99·softplus(s) at every pixel given the observed pixels of y, with the current Params.
// Only y's observed values are read. A non-finite prediction is an error naming the pixel.
func (m *Grid) Predict(y []float64, mask []bool) (mean, std []float64, err error) {
	if err := m.check("Grid.Predict", y, mask); err != nil {
		return nil, nil, err
	}
	var t ad.Tape
	loc, ls := m.forward(&t, t.ConstRef(m.Params), y, mask)
	P := m.Pixels()
	mean, std = make([]float64, P), make([]float64, P)
	for i, v := range t.Value(loc) {
		mean[i] = sigmoid(v)
	}
	for i, v := range t.Value(ls) {
		std[i], _ = scaleOf(v, true)
	}
	for i := range mean {
		if math.IsNaN(mean[i]) || math.IsNaN(std[i]) || math.IsInf(std[i], 0) {
			return nil, nil, fmt.Errorf("cnp: Grid.Predict: non-finite prediction at pixel %d (mean=%v, std=%v)", i, mean[i], std[i])
		}
	}
	return mean, std, nil
}
