package apovi

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
	"github.com/vigo-bayes/vigo/rng"
)

// pseudoMode says where a layer's pseudo-likelihood comes from.
type pseudoMode uint8

const (
	// amortised: an N×2D block [a | b] per row, v = a, σ = exp((b−4)/2) + 1e-8, λ = σ⁻².
	amortised pseudoMode = iota
	// free: an M×2D block [v | log λ] per row (POVI's parameters).
	free
	// exact: v = y (a constant), λ = exp(−2 log σ) for every point (the Gaussian last layer).
	exact
)

// net holds the structure shared by the three models: the BNN widths, the prior and the
// likelihood, and where log σ sits in the parameter vector (−1 if the noise is fixed).
type net struct {
	dims     []int // [DX, hidden…, DY]
	alpha    float64
	lik      Likelihood
	logNoise int
	params   []float64
}

func (n *net) Dims() (dx, dy int) { return n.dims[0], n.dims[len(n.dims)-1] }

// Params returns the live parameter vector.
func (n *net) Params() []float64 { return n.params }

// SetParams copies p into the parameter vector.
func (n *net) SetParams(p []float64) error {
	if len(p) != len(n.params) {
		return fmt.Errorf("apovi: SetParams: len(p)=%d, the model has %d parameters", len(p), len(n.params))
	}
	for i, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("apovi: SetParams: p[%d]=%v is not finite", i, v)
		}
	}
	copy(n.params, p)
	return nil
}

// layers returns the number of BNN weight layers L.
func (n *net) layers() int { return len(n.dims) - 1 }

// NoiseStd returns the current Gaussian noise standard deviation (NaN for Bernoulli).
func (n *net) NoiseStd() float64 {
	switch {
	case n.lik.Kind != Gaussian:
		return math.NaN()
	case n.logNoise >= 0:
		return math.Exp(n.params[n.logNoise])
	}
	return n.lik.NoiseStd
}

// APOVI is the amortised global-inducing-point BNN of the thesis (apovi.md §1.3). Parameter
// layout: the inference MLP of each amortised layer in order (nn.MLP layout, widths
// [DX+DY, InferenceHidden…, 2·D^ℓ]), then log σ if Likelihood.TrainNoise. With a Gaussian
// likelihood the last layer is exact and has no network; with Bernoulli every layer has one.
type APOVI struct {
	net
	cfg  Config
	nets []*nn.MLP
	offs []int // offs[l] is where net l's parameters start
}

// AMFVI is the amortised mean-field BNN (apovi.md §1.4). Parameter layout: the inference MLP of
// every layer (widths [DX+DY, InferenceHidden…, 2·K^ℓ·D^ℓ], K^ℓ = D^{ℓ−1}+1), then log σ if
// Likelihood.TrainNoise.
type AMFVI struct {
	net
	cfg  Config
	nets []*nn.MLP
	offs []int
}

// POVI is the global-inducing-point BNN of Ober & Aitchison (2021) (apovi.md §1.2). Parameter
// layout: U⁰ (M×DX, row-major); then for every layer ℓ = 1…L an M×2D^ℓ block whose row m is
// [v_m^ℓ (D^ℓ), log λ_m^ℓ (D^ℓ)]; then log σ if Likelihood.TrainNoise.
type POVI struct {
	net
	cfg  POVIConfig
	offs []int // offs[l] is where layer l's block starts; offs[0] = M·DX
}

func newNet(dims []int, priorVar float64, lik Likelihood, nparams int) net {
	n := net{dims: dims, alpha: 1 / orDefault(priorVar, 1), lik: lik, logNoise: -1}
	if lik.Kind == Gaussian && lik.TrainNoise {
		n.logNoise = nparams
		nparams++
	}
	n.params = make([]float64, nparams)
	if n.logNoise >= 0 {
		n.params[n.logNoise] = math.Log(lik.NoiseStd)
	}
	return n
}

func newAmortisedNets(cfg Config, dims []int, nAmort int, outSize func(l int) int) ([]*nn.MLP, []int) {
	nets := make([]*nn.MLP, nAmort)
	offs := make([]int, nAmort+1)
	for l := range nets {
		sizes := append(append([]int{cfg.DX + cfg.DY}, cfg.InferenceHidden...), outSize(l))
		nets[l] = nn.NewMLP(sizes, ad.ReLU)
		offs[l+1] = offs[l] + nets[l].NumParams()
	}
	return nets, offs
}

// NewAPOVI returns an APOVI model with PyTorch-default initial weights drawn from
// rng.New(seed, 0).
func NewAPOVI(cfg Config, seed uint64) (*APOVI, error) {
	if err := cfg.validate("NewAPOVI"); err != nil {
		return nil, err
	}
	dims := widths(cfg.DX, cfg.Hidden, cfg.DY)
	nAmort := len(dims) - 1
	if cfg.Likelihood.Kind == Gaussian {
		nAmort-- // the exact last layer
	}
	m := &APOVI{cfg: cloneConfig(cfg)}
	m.nets, m.offs = newAmortisedNets(cfg, dims, nAmort, func(l int) int { return 2 * dims[l+1] })
	m.net = newNet(dims, cfg.PriorVar, cfg.Likelihood, m.offs[nAmort])
	r := rng.New(seed, 0)
	for l, nt := range m.nets {
		torchInit(nt.Sizes(), m.params[m.offs[l]:m.offs[l+1]], r.Rand)
	}
	return m, nil
}

// NewAMFVI returns an AMFVI model with PyTorch-default initial weights drawn from
// rng.New(seed, 0).
func NewAMFVI(cfg Config, seed uint64) (*AMFVI, error) {
	if err := cfg.validate("NewAMFVI"); err != nil {
		return nil, err
	}
	dims := widths(cfg.DX, cfg.Hidden, cfg.DY)
	m := &AMFVI{cfg: cloneConfig(cfg)}
	m.nets, m.offs = newAmortisedNets(cfg, dims, len(dims)-1, func(l int) int { return 2 * (dims[l] + 1) * dims[l+1] })
	m.net = newNet(dims, cfg.PriorVar, cfg.Likelihood, m.offs[len(dims)-1])
	r := rng.New(seed, 0)
	for l, nt := range m.nets {
		torchInit(nt.Sizes(), m.params[m.offs[l]:m.offs[l+1]], r.Rand)
	}
	return m, nil
}

// NewPOVI returns a POVI model: U⁰ from cfg.Inducing (or N(0,1) draws), pseudo-outputs
// 0.01·N(0,1) and log-precisions log HiddenPrec / log FinalPrec (apovi.md §1.2), drawn from
// rng.New(seed, 0).
func NewPOVI(cfg POVIConfig, seed uint64) (*POVI, error) {
	if err := cfg.validate("NewPOVI"); err != nil {
		return nil, err
	}
	dims := widths(cfg.DX, cfg.Hidden, cfg.DY)
	L := len(dims) - 1
	m := &POVI{cfg: clonePOVIConfig(cfg), offs: make([]int, L+1)}
	m.offs[0] = cfg.M * cfg.DX
	for l := range L {
		m.offs[l+1] = m.offs[l] + cfg.M*2*dims[l+1]
	}
	m.net = newNet(dims, cfg.PriorVar, cfg.Likelihood, m.offs[L])
	r := rng.New(seed, 0)
	u := m.params[:m.offs[0]]
	if cfg.Inducing != nil {
		copy(u, cfg.Inducing)
	} else {
		for i := range u {
			u[i] = r.NormFloat64()
		}
	}
	hp, fp := math.Log(orDefault(cfg.HiddenPrec, 1e-2)), math.Log(orDefault(cfg.FinalPrec, 1e-2))
	for l := range L {
		D := dims[l+1]
		lp := hp
		if l == L-1 {
			lp = fp
		}
		blk := m.params[m.offs[l]:m.offs[l+1]]
		for i := range cfg.M {
			row := blk[i*2*D : (i+1)*2*D]
			for d := range D {
				row[d] = 0.01 * r.NormFloat64()
				row[D+d] = lp
			}
		}
	}
	return m, nil
}

// countParams returns the length of the parameter vector a configuration implies, or −1 if it
// exceeds limit (so that Load can reject a configuration before allocating for it).
func countParams(kind string, dx, dy int, hidden, inf []int, m int, lik Likelihood, limit int) int {
	total := 0
	add := func(v int) bool {
		if v < 0 || v > limit-total {
			return false
		}
		total += v
		return true
	}
	mul := func(a, b int) int {
		if a < 0 || b < 0 || (a != 0 && b > limit/a) {
			return -1
		}
		return a * b
	}
	dims := widths(dx, hidden, dy)
	L := len(dims) - 1
	mlp := func(out int) bool {
		sizes := append(append([]int{dx + dy}, inf...), out)
		for l := 0; l+1 < len(sizes); l++ {
			if !add(mul(sizes[l]+1, sizes[l+1])) {
				return false
			}
		}
		return true
	}
	for l := range L {
		var ok bool
		switch kind {
		case "apovi":
			if l == L-1 && lik.Kind == Gaussian {
				continue
			}
			ok = mlp(mul(2, dims[l+1]))
		case "amfvi":
			ok = mlp(mul(2, mul(dims[l]+1, dims[l+1])))
		case "povi":
			if l == 0 && !add(mul(m, dx)) {
				return -1
			}
			ok = add(mul(m, mul(2, dims[l+1])))
		}
		if !ok {
			return -1
		}
	}
	if lik.Kind == Gaussian && lik.TrainNoise && !add(1) {
		return -1
	}
	return total
}

// Inducing returns a view of the current inducing inputs U⁰ (M×DX) in the parameter vector.
func (m *POVI) Inducing() []float64 { return m.params[:m.offs[0]] }

func cloneConfig(c Config) Config {
	c.Hidden = append([]int(nil), c.Hidden...)
	c.InferenceHidden = append([]int(nil), c.InferenceHidden...)
	return c
}

func clonePOVIConfig(c POVIConfig) POVIConfig {
	c.Hidden = append([]int(nil), c.Hidden...)
	c.Inducing = nil // the initial values live in the parameter vector
	return c
}

// Config returns a copy of the model's configuration.
func (m *APOVI) Config() Config { return cloneConfig(m.cfg) }

// Config returns a copy of the model's configuration.
func (m *AMFVI) Config() Config { return cloneConfig(m.cfg) }

// Config returns a copy of the model's configuration (Inducing is nil: the current inducing
// inputs are Inducing()).
func (m *POVI) Config() POVIConfig { return clonePOVIConfig(m.cfg) }
