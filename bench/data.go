// Package bench holds vigo's gradient benchmarks: deterministic data sets, hand-written
// analytic gradients (the floor an AD gradient is measured against) and, in bench/peers, the
// PyTorch script that times the same functions (DESIGN.md §3, issue 2 item 7).
//
// Every data set is a closed-form function of the observation and feature index, so Go and the
// Python peer build bit-for-bit the same inputs without shipping files (bench/peers/README.md
// lists the formulas). All indices are 0-based:
//
//	x_ij = sin(0.37·(i·D + j) + 0.1)                         feature j of observation i
//	y_i  = 1 if sin(1.3·i) > 0, else 0                        logistic regression label
//	y_i  = x_i0·x_i1 + 0.5·sin(1.3·i)                         MLP regression target (D = 8)
//	p_k  = 0.3·cos(0.7·k + 0.2)                               fixed parameter point, k = 0..dim−1
//
// Each product and sum is rounded to float64 separately (no fused multiply-add), which is what
// NumPy and PyTorch do elementwise.
package bench

import "math"

// Feature returns x_ij = sin(0.37·(i·d + j) + 0.1), feature j of observation i in a design with
// d features.
func Feature(i, j, d int) float64 {
	k := float64(i*d + j)
	return math.Sin(float64(0.37*k) + 0.1) // float64(·) forbids FMA fusion (Go spec, arithmetic operators)
}

// ParamPoint returns the fixed parameter vector p_k = 0.3·cos(0.7·k + 0.2), k = 0..dim−1, at
// which the benchmarks and the PyTorch cross-check evaluate gradients.
func ParamPoint(dim int) []float64 {
	p := make([]float64, dim)
	for k := range p {
		p[k] = 0.3 * math.Cos(float64(0.7*float64(k))+0.2)
	}
	return p
}

// LogisticData is a logistic-regression data set with N observations and D features, in the
// layouts a Go user (and the ad package's constant matrices) need.
type LogisticData struct {
	N, D int
	// XT is the design matrix feature-major: row-major D×N, XT[j*N+i] = x_ij. As an ad.Mat it
	// is {Rows: D, Cols: N, Data: XT}; X·β is then Aᵀβ (D long axpys) and the gradient
	// Xᵀr is A·r (D long dot products).
	XT []float64
	// Y holds the 0/1 labels; YF is the same as float64 for fused kernels.
	Y  []int
	YF []float64
}

// Logistic builds the logistic-regression data set with n observations and d features:
// x_ij = Feature(i, j, d) and y_i = 1 if sin(1.3·i) > 0. Cost O(n·d) sines.
func Logistic(n, d int) *LogisticData {
	if n < 1 || d < 1 {
		panic("bench: Logistic: n and d must be positive")
	}
	ld := &LogisticData{N: n, D: d, XT: make([]float64, d*n), Y: make([]int, n), YF: make([]float64, n)}
	for i := range n {
		for j := range d {
			ld.XT[j*n+i] = Feature(i, j, d)
		}
		if math.Sin(1.3*float64(i)) > 0 {
			ld.Y[i] = 1
			ld.YF[i] = 1
		}
	}
	return ld
}

// X returns a freshly allocated observation-major copy of the design matrix: row-major N×D,
// X[i*D+j] = x_ij.
func (ld *LogisticData) X() []float64 {
	x := make([]float64, ld.N*ld.D)
	for j := range ld.D {
		row := ld.XT[j*ld.N : (j+1)*ld.N]
		for i, v := range row {
			x[i*ld.D+j] = v
		}
	}
	return x
}

// Dim returns the number of parameters, D+1: θ = (α, β_0, …, β_{D−1}).
func (ld *LogisticData) Dim() int { return ld.D + 1 }

// MLP sizes of the benchmark network: In inputs, Hidden ReLU units, one linear output.
const (
	MLPIn     = 8
	MLPHidden = 50
)

// MLPData is a regression data set for the one-hidden-layer MLP.
type MLPData struct {
	N, In int
	// X is observation-major, row-major N×In (X[i*In+j] = x_ij); XT is the same data
	// feature-major, row-major In×N.
	X, XT []float64
	// Y holds the real-valued targets.
	Y []float64
}

// MLPRegression builds the MLP data set with n observations and in inputs:
// x_ij = Feature(i, j, in) and y_i = x_i0·x_i1 + 0.5·sin(1.3·i) (in must be ≥ 2).
// Cost O(n·in) sines.
func MLPRegression(n, in int) *MLPData {
	if n < 1 || in < 2 {
		panic("bench: MLPRegression: need n ≥ 1 and in ≥ 2")
	}
	md := &MLPData{N: n, In: in, X: make([]float64, n*in), XT: make([]float64, in*n), Y: make([]float64, n)}
	for i := range n {
		for j := range in {
			v := Feature(i, j, in)
			md.X[i*in+j] = v
			md.XT[j*n+i] = v
		}
		md.Y[i] = float64(md.X[i*in]*md.X[i*in+1]) + float64(0.5*math.Sin(1.3*float64(i)))
	}
	return md
}

// MLPLayout is the flat parameter layout of an In→Hidden→1 ReLU network:
//
//	θ = (W1 [Hidden×In row-major: W1[k*In+j] joins input j to unit k], b1 [Hidden],
//	     W2 [Hidden], b2)
//
// so Dim = Hidden·In + 2·Hidden + 1 (501 for 8→50→1).
type MLPLayout struct{ In, Hidden int }

// Dim returns the number of parameters.
func (l MLPLayout) Dim() int { return l.Hidden*l.In + 2*l.Hidden + 1 }

// Split returns the four blocks of θ as subslices (no copy).
func (l MLPLayout) Split(theta []float64) (w1, b1, w2 []float64, b2 float64) {
	if len(theta) != l.Dim() {
		panic("bench: MLPLayout.Split: wrong parameter length")
	}
	h, in := l.Hidden, l.In
	w1 = theta[:h*in]
	b1 = theta[h*in : h*in+h]
	w2 = theta[h*in+h : h*in+2*h]
	return w1, b1, w2, theta[h*in+2*h]
}

// EightSchools is the eight-schools data (Rubin 1981; posteriordb eight_schools, MODELS.md §1):
// estimated coaching effects Y and their standard errors Sigma.
var EightSchools = struct {
	Y, Sigma [8]float64
}{
	Y:     [8]float64{28, 8, -3, 7, -1, 1, 18, 12},
	Sigma: [8]float64{15, 10, 16, 11, 9, 11, 10, 18},
}
