package cnp

import (
	"errors"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// OffGridConfig configures the 1-D (off-the-grid) ConvCNP. A zero field takes the thesis's
// value (apovi.md §1.5, workshop_experiments.ipynb cells 12–13).
type OffGridConfig struct {
	EmbedDim    int     // channels of the encoder's Linear(2 → EmbedDim); default 32
	Channels    []int   // hidden CNN channels; default [16, 32, 16] (a 2-channel conv is appended)
	Kernel      int     // odd Conv1d kernel size; default 11
	Granularity float64 // grid points per unit of x; default 125
	Margin      float64 // the grid spans [min x − Margin, max x + Margin]; default 0.1
	EncScale    float64 // encoder SetConv lengthscale σ (fixed); default 12/125 = 0.096
	DecScale    float64 // decoder SetConv lengthscale σ (fixed); default 12/125
}

func (c OffGridConfig) withDefaults() OffGridConfig {
	if c.EmbedDim == 0 {
		c.EmbedDim = 32
	}
	if c.Channels == nil {
		c.Channels = []int{16, 32, 16}
	}
	if c.Kernel == 0 {
		c.Kernel = 11
	}
	if c.Granularity == 0 {
		c.Granularity = 125
	}
	if c.Margin == 0 {
		c.Margin = 0.1
	}
	if c.EncScale == 0 {
		c.EncScale = 12.0 / 125
	}
	if c.DecScale == 0 {
		c.DecScale = 12.0 / 125
	}
	return c
}

func (c OffGridConfig) validate() error {
	pos := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("cnp: OffGridConfig: %s must be positive and finite (%s=%v)", name, name, v)
		}
		return nil
	}
	switch {
	case c.EmbedDim < 1:
		return fmt.Errorf("cnp: OffGridConfig: EmbedDim must be ≥ 1 (EmbedDim=%d)", c.EmbedDim)
	case c.Kernel < 1 || c.Kernel%2 == 0:
		return fmt.Errorf("cnp: OffGridConfig: Kernel must be odd and ≥ 1 (Kernel=%d)", c.Kernel)
	}
	for i, ch := range c.Channels {
		if ch < 1 {
			return fmt.Errorf("cnp: OffGridConfig: Channels[%d] must be ≥ 1 (Channels[%d]=%d)", i, i, ch)
		}
	}
	for _, f := range []struct {
		n string
		v float64
	}{{"Granularity", c.Granularity}, {"Margin", c.Margin}, {"EncScale", c.EncScale}, {"DecScale", c.DecScale}} {
		if err := pos(f.n, f.v); err != nil {
			return err
		}
	}
	return nil
}

// OffGrid is the off-the-grid convolutional conditional neural process of Gordon et al.
// (2020, "Convolutional conditional neural processes", ICLR) as the thesis's code builds it
// (Rochussen 2023; apovi.md §1.5, discrepancies D5, D6, D8):
//
//   - grid g_1…g_G: G = ⌊(x_max − x_min)·Granularity⌋ equally spaced points from x_min = min(x_c
//     ∪ x_t) − Margin to x_max = max(…) + Margin;
//   - encoder SetConv with w(x, g) = exp(−½|x − g|/σ²) (the distance is NOT squared, D6) and a
//     fixed σ = EncScale (D5): density_g = Σ_c w(x_c, g), conv_g = Σ_c w(x_c, g) y_c /
//     (density_g + 1e-8), then Linear(2 → EmbedDim) per grid point on [density, conv] (a
//     version of the code repeats y over EmbedDim channels and maps 1 + EmbedDim inputs: the
//     same functions, a different initial scale; apovi.md's count of 17,410 parameters is
//     this 2-input form);
//   - decoder: ReLU, then for each of the CNN layers (Channels + [2]) a ReLU and a "same"
//     Conv1d(Kernel), giving (mean, log σ) channels on the grid;
//   - per output channel a SetConv from the grid to the targets with σ = DecScale, giving
//     [density_t, normalised conv_t], and a Linear(2 → 1). These two maps sit in a plain Python
//     list in the thesis's code, so they are never trained: here too they are drawn once at
//     construction (PyTorch's default U(±1/√2)) and kept fixed (D8: follow the code);
//   - likelihood N(y_t; μ_t, exp(log σ_t)), no floor.
//
// The trained parameters (Params) are the encoder Linear and the convolutions, PyTorch's
// default initialisation U(±1/√fan_in) for weights and biases. Cost per dataset: O(G·(n_c +
// n_t)) for the SetConvs and O(G·Kernel·Σ C_in·C_out) for the CNN, forward and backward.
type OffGrid struct {
	cfg    OffGridConfig
	convs  []convLayer
	dec    [2][3]float64
	Params []float64
}

type convLayer struct{ in, out, off int } // weights (K·in)×out at off, bias out after

// NewOffGrid builds the model and initialises its parameters and fixed decoder maps from
// seed.
func NewOffGrid(cfg OffGridConfig, seed uint64) (*OffGrid, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &OffGrid{cfg: cfg}
	n := 2*cfg.EmbedDim + cfg.EmbedDim
	chans := append(append([]int{cfg.EmbedDim}, cfg.Channels...), 2)
	for i := 0; i+1 < len(chans); i++ {
		l := convLayer{in: chans[i], out: chans[i+1], off: n}
		m.convs = append(m.convs, l)
		n += cfg.Kernel*l.in*l.out + l.out
	}
	m.Params = make([]float64, n)
	r := rng.New(seed, 0)
	uni := func(dst []float64, fanIn int) {
		a := 1 / math.Sqrt(float64(fanIn))
		for i := range dst {
			dst[i] = a * (2*r.Float64() - 1)
		}
	}
	uni(m.Params[:3*cfg.EmbedDim], 2) // the encoder Linear: weights 2×EmbedDim, then the bias
	for _, l := range m.convs {
		uni(m.Params[l.off:l.off+cfg.Kernel*l.in*l.out+l.out], cfg.Kernel*l.in)
	}
	for c := range m.dec {
		uni(m.dec[c][:], 2)
	}
	return m, nil
}

// NumParams returns the number of trained parameters.
func (m *OffGrid) NumParams() int { return len(m.Params) }

// checkXY validates a context or target set: equal lengths (y may be nil for targets of a
// prediction), finite values.
func checkXY(fn, xn, yn string, x, y []float64, needY bool) error {
	if needY && len(y) != len(x) {
		return fmt.Errorf("cnp: %s: len(%s)=%d but len(%s)=%d", fn, yn, len(y), xn, len(x))
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cnp: %s: %s[%d]=%v is not finite", fn, xn, i, v)
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cnp: %s: %s[%d]=%v is not finite", fn, yn, i, v)
		}
	}
	return nil
}

// forward records the model on t for context (xc, yc) and targets xt and returns the
// target means and log standard deviations.
func (m *OffGrid) forward(t *ad.Tape, p ad.Var, xc, yc, xt []float64) (mu, logSig ad.Var) {
	cfg := m.cfg
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range xc {
		lo, hi = min(lo, v), max(hi, v)
	}
	for _, v := range xt {
		lo, hi = min(lo, v), max(hi, v)
	}
	lo -= cfg.Margin
	hi += cfg.Margin
	G := max(int((hi-lo)*cfg.Granularity), 2)
	grid := make([]float64, G)
	for j := range grid {
		grid[j] = lo + (hi-lo)*float64(j)/float64(G-1)
	}
	// Encoder SetConv (constant: data and fixed lengthscale).
	enc := make([]float64, 2*G)
	ie := 0.5 / (cfg.EncScale * cfg.EncScale)
	for j, g := range grid {
		d, s := 0.0, 0.0
		for i, x := range xc {
			w := math.Exp(-ie * math.Abs(x-g))
			d += w
			s += w * yc[i]
		}
		enc[2*j] = d
		enc[2*j+1] = s / (d + 1e-8)
	}
	E := cfg.EmbedDim
	W := t.AsMatrix(t.Slice(p, 0, 2*E), 2, E)
	h := t.DenseC(ad.Mat{Rows: G, Cols: 2, Data: enc}, W, t.Slice(p, 2*E, 3*E), ad.Linear)
	for _, l := range m.convs {
		h = t.Relu(h)
		g := &im2col1{G: G, C: l.in, K: cfg.Kernel}
		col := g.im2col(t, h)
		kw := cfg.Kernel * l.in * l.out
		Wc := t.AsMatrix(t.Slice(p, l.off, l.off+kw), cfg.Kernel*l.in, l.out)
		h = t.Dense(col, Wc, t.Slice(p, l.off+kw, l.off+kw+l.out), ad.Linear)
	}
	gm, gs := columns2(t, h)
	// Decoder SetConvs: A[t, g] = w(x_t, g)/(density_t + 1e-8), constants.
	nt := len(xt)
	A := make([]float64, nt*G)
	dens := make([]float64, nt)
	id := 0.5 / (cfg.DecScale * cfg.DecScale)
	for i, x := range xt {
		row := A[i*G : (i+1)*G]
		d := 0.0
		for j, g := range grid {
			w := math.Exp(-id * math.Abs(x-g))
			row[j] = w
			d += w
		}
		for j := range row {
			row[j] /= d + 1e-8
		}
		dens[i] = d
	}
	out := func(c int, v ad.Var) ad.Var {
		a := m.dec[c]
		base := make([]float64, nt)
		for i, d := range dens {
			base[i] = a[0]*d + a[2]
		}
		return t.Add(t.MulC(t.MatVecC(ad.Mat{Rows: nt, Cols: G, Data: A}, v), a[1]), t.Const(base...))
	}
	return out(0, gm), out(1, gs)
}

// Loss records the thesis's NPML loss of one split dataset on t (apovi.md §2, BaseNP.npml_loss):
// −(1/|T|) Σ_{t∈T} log N(y_t; μ_t, σ_t), the targets predicted from the context (xc, yc)
// only, with p the tape's copy of Params. Errors name the bad argument: mismatched lengths,
// non-finite values, no targets.
func (m *OffGrid) Loss(t *ad.Tape, p ad.Var, xc, yc, xt, yt []float64) (ad.Var, error) {
	if err := checkXY("OffGrid.Loss", "xc", "yc", xc, yc, true); err != nil {
		return ad.Var{}, err
	}
	if err := checkXY("OffGrid.Loss", "xt", "yt", xt, yt, true); err != nil {
		return ad.Var{}, err
	}
	if len(xt) == 0 {
		return ad.Var{}, errors.New("cnp: OffGrid.Loss: no targets (len(xt)=0)")
	}
	if t.Size(p) != len(m.Params) {
		return ad.Var{}, fmt.Errorf("cnp: OffGrid.Loss: %d parameters on the tape, the model has %d", t.Size(p), len(m.Params))
	}
	mu, ls := m.forward(t, p, xc, yc, xt)
	return t.MulC(gaussLogLik(t, mu, ls, yt, false, false), -1/float64(len(xt))), nil
}

// Predict returns the predictive mean and standard deviation at xt given the context (xc,
// yc), with the current Params.
func (m *OffGrid) Predict(xc, yc, xt []float64) (mean, std []float64, err error) {
	if err := checkXY("OffGrid.Predict", "xc", "yc", xc, yc, true); err != nil {
		return nil, nil, err
	}
	if err := checkXY("OffGrid.Predict", "xt", "", xt, nil, false); err != nil {
		return nil, nil, err
	}
	if len(xt) == 0 {
		return nil, nil, nil
	}
	var t ad.Tape
	p := t.ConstRef(m.Params)
	mu, ls := m.forward(&t, p, xc, yc, xt)
	mean = append([]float64(nil), t.Value(mu)...)
	std = make([]float64, len(xt))
	for i, v := range t.Value(ls) {
		std[i] = math.Exp(v)
	}
	return mean, std, nil
}

// ContextTargetSplit is the thesis's split of one dataset for NP training (apovi.md §2,
// context_target_split with min_context 3, max_context 20): n_c uniform on {lo, …, min(hi,
// N−1) − 1} (exclusive upper bound, as torch.randint), a random permutation, the first n_c
// points the context and all the others the targets. It needs N ≥ lo + 2 so that the range is
// non-empty; else an error naming N.
func ContextTargetSplit(x, y []float64, lo, hi int, r *rng.Stream) (xc, yc, xt, yt []float64, err error) {
	n := len(x)
	if len(y) != n {
		return nil, nil, nil, nil, fmt.Errorf("cnp: ContextTargetSplit: len(y)=%d but len(x)=%d", len(y), n)
	}
	top := min(hi, n-1)
	if lo < 0 || top <= lo {
		return nil, nil, nil, nil, fmt.Errorf("cnp: ContextTargetSplit: no context size in [%d, min(%d, N−1)) (N=%d)", lo, hi, n)
	}
	nc := lo + r.IntN(top-lo)
	perm := r.Perm(n)
	for k, i := range perm {
		if k < nc {
			xc, yc = append(xc, x[i]), append(yc, y[i])
		} else {
			xt, yt = append(xt, x[i]), append(yt, y[i])
		}
	}
	return xc, yc, xt, yt, nil
}
