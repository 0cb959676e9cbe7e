package family

import (
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
)

// FlowFixedOutput fixes the family's elementwise output layer at the identity (μ = 0, ω = 0),
// so that q is the flow T pushed forward from the base alone, as in the BF-VI reference code,
// whose flow has no such layer. The 2d output parameters stay in the parameter vector, so the
// layout and a saved fit are those of a Flow with μ = 0, ω = 0 (the same map: such a file
// reloads without the option), but no method reads them: their gradient is zero, an optimiser
// leaves them at 0, Init writes zeros whatever loc and scale say, and SetMoments fails (it
// would have to move the output layer). Use it for flows that place q themselves (the paper's
// coefficient initialisation), not with a warm start.
func FlowFixedOutput() FlowOption { return func(f *Flow) { f.fixedOut = true } }

// FixedOutput reports whether the output layer is fixed at the identity (FlowFixedOutput).
func (q *Flow) FixedOutput() bool { return q.fixedOut }

// unusedIdentity is the identity map on ℝ^d with 2d parameters it does not read: the output
// layer of a Flow with FlowFixedOutput.
type unusedIdentity struct{ d int }

func (a unusedIdentity) Dim() int       { return a.d }
func (a unusedIdentity) NumParams() int { return 2 * a.d }

func (a unusedIdentity) Forward(t *ad.Tape, _, u ad.Var) (z, logdet ad.Var) { return u, t.Const(0) }

func (a unusedIdentity) InverseTape(t *ad.Tape, _, z ad.Var) (u, logdet ad.Var) {
	return z, t.Const(0)
}

func (a unusedIdentity) Inverse(_, z, u []float64) (float64, error) {
	copy(u, z)
	return 0, nil
}

func (a unusedIdentity) Init(params []float64, _ *rand.Rand) { clear(params) }

// Spec is that of the affine layer it stands for (at μ = 0, ω = 0 the same map).
func (a unusedIdentity) Spec() flow.Spec { return flow.Spec{Type: flow.SpecAffine, Dim: a.d} }
