package bench

import "testing"

// TestMLPFloorDesigns: MLPGrad picks one of two hand-written designs by build; both must give
// the same value and gradient (1e-12 relative: the same sums in another order).
func TestMLPFloorDesigns(t *testing.T) {
	for _, n := range []int{40, 1100} { // one block, and blocks with a remainder
		md := MLPRegression(n, MLPIn)
		th := ParamPoint(MLPLayout{In: MLPIn, Hidden: MLPHidden}.Dim())
		s := make([]float64, MLPScratchLen(md.N, MLPHidden))
		g1, g2 := make([]float64, len(th)), make([]float64, len(th))
		lp1 := mlpGradDense(md, MLPHidden, th, g1, s)
		lp2 := mlpGradGEMV(md, MLPHidden, th, g2, s)
		if ref := MLPLogDensity(md, MLPHidden, th); !closeRel(lp1, ref, 1e-12) || !closeRel(lp2, ref, 1e-12) {
			t.Errorf("N=%d: value %v (Dense), %v (GEMV), want %v", n, lp1, lp2, ref)
		}
		for i := range g1 {
			if !closeRel(g1[i], g2[i], 1e-12) {
				t.Errorf("N=%d: ∂θ[%d] = %v (Dense), %v (GEMV)", n, i, g1[i], g2[i])
			}
		}
	}
}
