package apovi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
)

// LikelihoodKind names an observation model.
type LikelihoodKind string

// The likelihoods of apovi.md §1.1.
const (
	// Gaussian is y ~ N(f, σ²) with σ = Likelihood.NoiseStd (stored as log σ).
	Gaussian LikelihoodKind = "gaussian"
	// Bernoulli is y ~ Bernoulli(sigmoid(f)), y ∈ {0, 1}.
	Bernoulli LikelihoodKind = "bernoulli"
)

// Likelihood is the observation model p(y | f) of every output dimension.
type Likelihood struct {
	Kind LikelihoodKind `json:"kind"`
	// NoiseStd is the Gaussian noise standard deviation σ: the fixed value, or the initial one
	// when TrainNoise is set (then log σ is the last entry of the parameter vector).
	NoiseStd   float64 `json:"noise_std,omitempty"`
	TrainNoise bool    `json:"train_noise,omitempty"`
}

func (l Likelihood) validate(fn string) error {
	switch l.Kind {
	case Gaussian:
		if !(l.NoiseStd > 0) || math.IsInf(l.NoiseStd, 0) {
			return fmt.Errorf("apovi: %s: Likelihood.NoiseStd must be positive and finite (NoiseStd=%v)", fn, l.NoiseStd)
		}
	case Bernoulli:
		if l.NoiseStd != 0 || l.TrainNoise {
			return fmt.Errorf("apovi: %s: Likelihood.NoiseStd and TrainNoise are for the Gaussian likelihood only", fn)
		}
	default:
		return fmt.Errorf("apovi: %s: unknown Likelihood.Kind %q (want %q or %q)", fn, l.Kind, Gaussian, Bernoulli)
	}
	return nil
}

// Objective is a per-dataset training objective (apovi.md §2).
type Objective int

// The objectives as the thesis's code implements them.
const (
	// ELBO: q from all of D = ctx ∪ tgt, loss −(E_q log p(y_D|F) − KL(q‖p))/N.
	ELBO Objective = iota
	// NPML: q from the context, loss −E_q[log p(y_T | F_T)]/|T| (log likelihoods averaged
	// over the S samples, apovi.md D3).
	NPML
	// NPVI: loss −(E_{q(·|C∪T)} log p(y_T|F_T) − KL(q_{C∪T} ‖ q_C))/|T|, with the two
	// posteriors sampled independently as the thesis's code does (apovi.md §2, caveat).
	NPVI
)

// String returns "elbo", "npml" or "npvi".
func (o Objective) String() string {
	switch o {
	case ELBO:
		return "elbo"
	case NPML:
		return "npml"
	case NPVI:
		return "npvi"
	}
	return fmt.Sprintf("Objective(%d)", int(o))
}

// ParseObjective is the inverse of Objective.String (case-insensitive).
func ParseObjective(s string) (Objective, error) {
	switch strings.ToLower(s) {
	case "elbo":
		return ELBO, nil
	case "npml":
		return NPML, nil
	case "npvi":
		return NPVI, nil
	}
	return 0, fmt.Errorf("apovi: ParseObjective: unknown objective %q (want elbo, npml or npvi)", s)
}

// Config describes an APOVI or AMFVI model.
type Config struct {
	DX int `json:"dx"`
	DY int `json:"dy"`
	// Hidden are the BNN's hidden widths: the network is [DX, Hidden…, DY].
	Hidden []int `json:"hidden"`
	// InferenceHidden are the hidden widths of every layer's inference MLP
	// [DX+DY, InferenceHidden…, out] (ReLU between layers).
	InferenceHidden []int      `json:"inference_hidden"`
	Likelihood      Likelihood `json:"likelihood"`
	// PriorVar is σ_p², the prior variance of every weight and bias; 0 means 1.
	PriorVar float64 `json:"prior_var,omitempty"`
}

// POVIConfig describes a POVI (global inducing point) model.
type POVIConfig struct {
	DX     int   `json:"dx"`
	DY     int   `json:"dy"`
	Hidden []int `json:"hidden"`
	// M is the number of inducing points.
	M int `json:"m"`
	// Inducing, if not nil, is the initial U⁰ (M×DX, row-major); otherwise U⁰ is drawn N(0, 1).
	Inducing []float64 `json:"-"`
	// HiddenPrec and FinalPrec are the initial pseudo-precisions of the hidden layers and of
	// the last layer; 0 means 1e-2 (apovi.md §1.2; the ELBO experiment uses FinalPrec = 1).
	HiddenPrec float64    `json:"hidden_prec,omitempty"`
	FinalPrec  float64    `json:"final_prec,omitempty"`
	Likelihood Likelihood `json:"likelihood"`
	PriorVar   float64    `json:"prior_var,omitempty"`
}

// Prediction holds S function samples at NTest test inputs and their summary.
type Prediction struct {
	NTest, DY, S int
	// F[s] are the latent outputs F_test^{(s)} (NTest×DY, row-major) of sample s.
	F [][]float64
	// Mean and Std (NTest×DY) are the sample mean and the unbiased sample standard deviation
	// over the S samples of the response: F itself for the Gaussian likelihood (the observation
	// noise is not added, apovi.md D10) and sigmoid(F) for Bernoulli.
	Mean, Std []float64
}

// Model is what the three models share: a flat parameter vector an optim.Optimizer can drive,
// a per-dataset loss on an ad.Tape, and posterior predictions.
type Model interface {
	// Dims returns the input and output dimensions.
	Dims() (dx, dy int)
	// Params returns the live parameter vector (an optimiser may update it in place).
	Params() []float64
	// SetParams copies p into the parameter vector; len(p) must equal len(Params()).
	SetParams(p []float64) error
	// Loss records the per-dataset loss of obj (apovi.md §2) with S Monte Carlo samples on t,
	// with p = t.Input(Params()) (or any Var of that size) as the parameters. For ELBO the
	// dataset is ctx ∪ tgt (either may be empty); NPML and NPVI need both. POVI supports ELBO
	// only (its q does not depend on data). A conditional precision that rounding makes
	// indefinite (pseudo-precisions near the NormalActivation's 1e16 ceiling) is refactorised
	// with diagonal jitter of 1e-12 up to 1e-4 of its largest diagonal entry; if that fails
	// too, the loss is NaN rather than an error, and the caller decides whether to skip the step.
	Loss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, r *rand.Rand) (ad.Var, error)
	// Predict draws S weight samples from q given ctx (ignored by POVI; may be empty there) and
	// pushes the test inputs xTest (NTest×DX, row-major) through the same weights.
	Predict(ctx Dataset, xTest []float64, S int, r *rand.Rand) (*Prediction, error)
}

func checkWidths(fn, field string, w []int) error {
	for i, v := range w {
		if v < 1 {
			return fmt.Errorf("apovi: %s: %s[%d]=%d must be ≥ 1", fn, field, i, v)
		}
	}
	return nil
}

func (c Config) validate(fn string) error {
	switch {
	case c.DX < 1:
		return fmt.Errorf("apovi: %s: Config.DX=%d must be ≥ 1", fn, c.DX)
	case c.DY < 1:
		return fmt.Errorf("apovi: %s: Config.DY=%d must be ≥ 1", fn, c.DY)
	case c.PriorVar < 0 || math.IsNaN(c.PriorVar) || math.IsInf(c.PriorVar, 0):
		return fmt.Errorf("apovi: %s: Config.PriorVar=%v must be positive (0 means 1)", fn, c.PriorVar)
	}
	if err := checkWidths(fn, "Config.Hidden", c.Hidden); err != nil {
		return err
	}
	if err := checkWidths(fn, "Config.InferenceHidden", c.InferenceHidden); err != nil {
		return err
	}
	return c.Likelihood.validate(fn)
}

func (c POVIConfig) validate(fn string) error {
	switch {
	case c.DX < 1:
		return fmt.Errorf("apovi: %s: POVIConfig.DX=%d must be ≥ 1", fn, c.DX)
	case c.DY < 1:
		return fmt.Errorf("apovi: %s: POVIConfig.DY=%d must be ≥ 1", fn, c.DY)
	case c.M < 1:
		return fmt.Errorf("apovi: %s: POVIConfig.M=%d must be ≥ 1", fn, c.M)
	case c.Inducing != nil && len(c.Inducing) != c.M*c.DX:
		return fmt.Errorf("apovi: %s: len(POVIConfig.Inducing)=%d, want M·DX=%d", fn, len(c.Inducing), c.M*c.DX)
	case c.PriorVar < 0 || math.IsNaN(c.PriorVar) || math.IsInf(c.PriorVar, 0):
		return fmt.Errorf("apovi: %s: POVIConfig.PriorVar=%v must be positive (0 means 1)", fn, c.PriorVar)
	case c.HiddenPrec < 0 || math.IsNaN(c.HiddenPrec) || math.IsInf(c.HiddenPrec, 0):
		return fmt.Errorf("apovi: %s: POVIConfig.HiddenPrec=%v must be positive (0 means 1e-2)", fn, c.HiddenPrec)
	case c.FinalPrec < 0 || math.IsNaN(c.FinalPrec) || math.IsInf(c.FinalPrec, 0):
		return fmt.Errorf("apovi: %s: POVIConfig.FinalPrec=%v must be positive (0 means 1e-2)", fn, c.FinalPrec)
	}
	for i, v := range c.Inducing {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("apovi: %s: POVIConfig.Inducing[%d]=%v is not finite", fn, i, v)
		}
	}
	if err := checkWidths(fn, "POVIConfig.Hidden", c.Hidden); err != nil {
		return err
	}
	return c.Likelihood.validate(fn)
}

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// widths returns [dx, hidden…, dy].
func widths(dx int, hidden []int, dy int) []int {
	return append(append([]int{dx}, hidden...), dy)
}

// torchInit fills an nn.MLP's parameters like PyTorch's nn.Linear: weights and biases
// U(−1/√fan_in, 1/√fan_in).
func torchInit(sizes []int, params []float64, r *rand.Rand) {
	off := 0
	for l := 0; l+1 < len(sizes); l++ {
		n := sizes[l]*sizes[l+1] + sizes[l+1]
		a := 1 / math.Sqrt(float64(sizes[l]))
		for i := range params[off : off+n] {
			params[off+i] = a * (2*r.Float64() - 1)
		}
		off += n
	}
}
