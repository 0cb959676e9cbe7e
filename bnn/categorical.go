package bnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// CategoricalLogLik returns scale · Σ_n E_q[log softmax(f(x_n))_{y_n}] over a minibatch of rows
// data points with labels y_n ∈ [0, K) (K = the network's outputs) and, when grad is not nil,
// adds its gradient with respect to params to grad.
//
// VBP and DVI use the second-order (delta-method) approximation of papers.md §2.1 (VBP's
// reference code, after Wu et al. 2019), with m = E[f], v = var[f] and p = softmax(m):
//
//	E[log softmax(f)_y] ≈ m_y − logsumexp(m) − ½ Σ_j v_j (p_j − p_j²),
//
// exact to O(v²) for a diagonal-Gaussian f. MonteCarlo and VarDrop draw f once per data point
// (noise from r) and evaluate log softmax at the draw (unbiased). Cost: one forward and one
// backward pass plus O(K) per row.
func (n *Net) CategoricalLogLik(ws *Workspace, params, X []float64, y []int, rows int, scale float64, r *rand.Rand, grad []float64) float64 {
	K := n.Sizes[len(n.Sizes)-1]
	if len(y) < rows {
		panic(fmt.Sprintf("bnn: CategoricalLogLik: %d labels for %d rows", len(y), rows))
	}
	for _, c := range y[:rows] {
		if c < 0 || c >= K {
			panic(fmt.Sprintf("bnn: CategoricalLogLik: label %d outside [0, %d)", c, K))
		}
	}
	n.forward(ws, params, X, rows, r)
	w := &ws.ls[len(ws.ls)-1]
	ll := 0.0
	sampling := n.Method.Sampling()
	for i := range rows {
		ll += categoricalRow(sampling, w.Mf[i*K:(i+1)*K], w.Vf[i*K:(i+1)*K], w.gM[i*K:(i+1)*K], w.gV[i*K:(i+1)*K], y[i], r)
	}
	if grad != nil {
		if len(grad) != len(params) {
			panic(fmt.Sprintf("bnn: CategoricalLogLik: len(grad)=%d, len(params)=%d", len(grad), len(params)))
		}
		n.backward(ws, params, grad, scale)
	}
	return scale * ll
}

// CategoricalLogLikNode records CategoricalLogLik on t as one fused node of params.
func (n *Net) CategoricalLogLikNode(t *ad.Tape, ws *Workspace, params ad.Var, X []float64, y []int, rows int, scale float64, r *rand.Rand) ad.Var {
	fb := t.Fused()
	d := fb.Partial(params)
	v := n.CategoricalLogLik(ws, t.Value(params), X, y, rows, scale, r, d)
	return fb.Done(v)
}

// categoricalRow returns one data point's term of CategoricalLogLik for output moments m, v
// and label y, and writes its gradient with respect to (m, v) into gM, gV. The sampling methods
// draw f = m + √v·ε (K normals from r); the moment methods use the Taylor approximation.
func categoricalRow(sampling bool, m, v, gM, gV []float64, y int, r *rand.Rand) float64 {
	if sampling {
		// f = m + √v ε; ∂/∂f_j = δ_jy − softmax(f)_j; ∂f/∂v = ε/(2√v).
		for j := range m {
			eps := r.NormFloat64()
			s := math.Sqrt(v[j])
			gV[j] = 0
			if s > 0 {
				gV[j] = eps / (2 * s)
			}
			gM[j] = m[j] + s*eps // the draw f, temporarily
		}
		lse := mathx.LogSumExp(gM)
		ll := gM[y] - lse
		for j := range m {
			g := -math.Exp(gM[j] - lse)
			if j == y {
				g++
			}
			gM[j] = g
			gV[j] *= g
		}
		return ll
	}
	lse := mathx.LogSumExp(m)
	U, corr := 0.0, 0.0
	for j := range m {
		p := math.Exp(m[j] - lse)
		gM[j] = p // p_j, temporarily
		corr += v[j] * (p - p*p)
		U += v[j] * p * (1 - 2*p)
	}
	ll := m[y] - lse - 0.5*corr
	for j := range m {
		p := gM[j]
		g := -p - 0.5*(v[j]*p*(1-2*p)-p*U)
		if j == y {
			g++
		}
		gM[j] = g
		gV[j] = -0.5 * (p - p*p)
	}
	return ll
}
