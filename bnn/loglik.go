package bnn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
)

const log2Pi = 1.8378770664093453 // log(2π)

// GaussLogLik returns scale · Σ_n E_q[log N(y_n | f(x_n), β⁻¹)] over a minibatch of rows data
// points (X rows×Sizes[0], y rows×Sizes[len−1], row-major) and, when grad is not nil, adds its
// gradient with respect to params to grad. With scale = N/B it is the unbiased minibatch
// estimate of the ELBO's data term.
//
// VBP and DVI use the closed form ½ log(β/2π) − (β/2)[(y − E[f])² + var[f]] of the output
// moments; MonteCarlo and VarDrop draw the hidden activations and the output once per data point
// (local reparameterisation, noise from r) and evaluate log N(y | f, β⁻¹) at the draw.
// Cost: one forward and one backward pass, about 3× (VBP, DVI: 4×) the flops of a plain network.
func (n *Net) GaussLogLik(ws *Workspace, params, X, y []float64, rows int, beta, scale float64, r *rand.Rand, grad []float64) float64 {
	out := n.Sizes[len(n.Sizes)-1]
	if len(y) < rows*out {
		panic(fmt.Sprintf("bnn: GaussLogLik: y has %d values, want %d", len(y), rows*out))
	}
	n.forward(ws, params, X, rows, r)
	w := &ws.ls[len(ws.ls)-1]
	no := rows * out
	mo, vo, gM, gV := w.Mf[:no], w.Vf[:no], w.gM[:no], w.gV[:no]
	c := 0.5 * (math.Log(beta) - log2Pi)
	ll := 0.0
	if n.Method.Sampling() {
		for i, m := range mo {
			e := r.NormFloat64()
			s := math.Sqrt(vo[i])
			d := y[i] - (m + s*e)
			ll += c - 0.5*beta*d*d
			gM[i] = beta * d
			gV[i] = 0 // var[f] = 0: VarDrop with every hidden unit off; nothing depends on it
			if s > 0 {
				gV[i] = beta * d * e / (2 * s)
			}
		}
	} else {
		for i, m := range mo {
			d := y[i] - m
			ll += c - 0.5*beta*(d*d+vo[i])
			gM[i] = beta * d
			gV[i] = -0.5 * beta
		}
	}
	if grad != nil {
		if len(grad) != len(params) {
			panic(fmt.Sprintf("bnn: GaussLogLik: len(grad)=%d, len(params)=%d", len(grad), len(params)))
		}
		n.backward(ws, params, grad, scale)
	}
	return scale * ll
}

// GaussLogLikNode records GaussLogLik on t as one fused node whose argument is params (a vector
// node of length NumParams); the data stay off the tape.
func (n *Net) GaussLogLikNode(t *ad.Tape, ws *Workspace, params ad.Var, X, y []float64, rows int, beta, scale float64, r *rand.Rand) ad.Var {
	fb := t.Fused()
	d := fb.Partial(params)
	v := n.GaussLogLik(ws, t.Value(params), X, y, rows, beta, scale, r, d)
	return fb.Done(v)
}

// KLNode records KL(q‖p) (see KL) on t as one fused node of params.
func (n *Net) KLNode(t *ad.Tape, params ad.Var) ad.Var {
	fb := t.Fused()
	d := fb.Partial(params)
	return fb.Done(n.KL(t.Value(params), d))
}

// Moments computes the output pre-activation moments E[f], var[f] (rows×outputs) for the
// inputs X. VBP and DVI give them in closed form. The sampling methods draw the hidden layers
// once per row from r and return the output layer's moments given that draw, which are exact:
// the output weights are independent of the hidden activations. The slices are owned by ws and
// valid until its next use.
func (n *Net) Moments(ws *Workspace, params, X []float64, rows int, r *rand.Rand) (mean, variance []float64) {
	n.forward(ws, params, X, rows, r)
	w := &ws.ls[len(ws.ls)-1]
	no := rows * n.Sizes[len(n.Sizes)-1]
	return w.Mf[:no], w.Vf[:no]
}
