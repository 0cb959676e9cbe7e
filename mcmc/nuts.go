package mcmc

import (
	"math"

	"github.com/vigo-bayes/vigo/rng"
)

// Stats are the sampler's diagnostics of one iteration: CmdStan's sampler columns.
type Stats struct {
	// LogDensity is log π(q) of the draw, the target's log density on the unconstrained scale
	// with the log-Jacobian (lp__).
	LogDensity float64
	// AcceptStat is the mean Metropolis acceptance probability min(1, e^{H₀−H}) over every
	// state of the trajectory (NUTS) or of the proposal (static HMC) (accept_stat__).
	AcceptStat float64
	StepSize   float64 // stepsize__
	TreeDepth  int     // treedepth__: doublings of the NUTS trajectory (0 for static HMC)
	NLeapfrog  int     // n_leapfrog__: leapfrog steps, one gradient each
	Divergent  bool    // divergent__: an energy error above MaxDeltaH ended the trajectory
	Energy     float64 // energy__: H(q, p) of the draw
}

// kernel is a transition of a chain: from the current point cur (q, g, lp set) to the next,
// written back into cur.
type kernel interface {
	transition(cur *point, eps float64) Stats
}

// nuts is Stan's NUTS transition with multinomial sampling and the generalised no-U-turn
// criterion with the extra checks across subtrees (base_nuts). All vectors are allocated
// once; the recursion uses one workspace per depth.
type nuts struct {
	sys       *system
	r         *rng.Stream
	maxDepth  int
	maxDeltaH float64

	z                         point // the integrator's state
	zFwd, zBck                point // ends of the trajectory
	zSample, zPropose         point
	pFwdFwd, pFwdBck          []float64 // momenta at the ends of the forward subtree
	pBckFwd, pBckBck          []float64 // … and of the backward subtree
	sFwdFwd, sFwdBck          []float64 // p♯ at the same places
	sBckFwd, sBckBck          []float64
	rho, rhoFwd, rhoBck, rhoX []float64
	lv                        []level

	eps       float64
	h0        float64
	nLeapfrog int
	sumMetro  float64
	divergent bool
}

// level is the workspace of one depth of build_tree.
type level struct {
	pInitEnd, sInitEnd, rhoInit    []float64
	pFinalBeg, sFinalBeg, rhoFinal []float64
	rhoSub                         []float64
	zProposeFinal                  point
}

func newNUTS(sys *system, r *rng.Stream, maxDepth int, maxDeltaH float64) *nuts {
	d := sys.met.d
	vec := func() []float64 { return make([]float64, d) }
	n := &nuts{sys: sys, r: r, maxDepth: maxDepth, maxDeltaH: maxDeltaH,
		z: newPoint(d), zFwd: newPoint(d), zBck: newPoint(d), zSample: newPoint(d), zPropose: newPoint(d),
		pFwdFwd: vec(), pFwdBck: vec(), pBckFwd: vec(), pBckBck: vec(),
		sFwdFwd: vec(), sFwdBck: vec(), sBckFwd: vec(), sBckBck: vec(),
		rho: vec(), rhoFwd: vec(), rhoBck: vec(), rhoX: vec(),
		lv: make([]level, maxDepth+1),
	}
	for i := range n.lv {
		n.lv[i] = level{pInitEnd: vec(), sInitEnd: vec(), rhoInit: vec(), pFinalBeg: vec(), sFinalBeg: vec(),
			rhoFinal: vec(), rhoSub: vec(), zProposeFinal: newPoint(d)}
	}
	return n
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// noUTurn is the generalised criterion: the trajectory with summed momentum ρ and sharp
// momenta sMinus, sPlus at its ends has not turned back on itself.
func noUTurn(sMinus, sPlus, rho []float64) bool {
	return dot(sPlus, rho) > 0 && dot(sMinus, rho) > 0
}

func logAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a > b {
		return a + math.Log1p(math.Exp(b-a))
	}
	return b + math.Log1p(math.Exp(a-b))
}

func (n *nuts) transition(cur *point, eps float64) Stats {
	n.eps = eps
	sys := n.sys
	copy(n.z.q, cur.q)
	copy(n.z.g, cur.g)
	n.z.lp = cur.lp
	sys.met.sampleP(n.r, n.z.p)

	n.zFwd.set(&n.z)
	n.zBck.set(&n.z)
	n.zSample.set(&n.z)
	n.zPropose.set(&n.z)
	sys.met.sharp(n.sFwdFwd, n.z.p)
	for _, v := range [][]float64{n.pFwdFwd, n.pFwdBck, n.pBckFwd, n.pBckBck} {
		copy(v, n.z.p)
	}
	for _, v := range [][]float64{n.sFwdBck, n.sBckFwd, n.sBckBck} {
		copy(v, n.sFwdFwd)
	}
	copy(n.rho, n.z.p)

	logSumWeight := 0.0 // log e^{H₀−H₀}
	n.h0 = sys.energy(&n.z)
	n.nLeapfrog = 0
	n.sumMetro = 0
	n.divergent = false
	depth := 0

	for depth < n.maxDepth {
		clear(n.rhoFwd)
		clear(n.rhoBck)
		lswSub := math.Inf(-1)
		var valid bool
		if n.r.Float64() > 0.5 {
			// Extend forward: the old trajectory becomes the backward subtree.
			n.z.set(&n.zFwd)
			copy(n.rhoBck, n.rho)
			copy(n.pBckFwd, n.pFwdFwd)
			copy(n.sBckFwd, n.sFwdFwd)
			valid = n.buildTree(depth, &n.zPropose, n.sFwdBck, n.sFwdFwd, n.rhoFwd, n.pFwdBck, n.pFwdFwd, 1, &lswSub)
			n.zFwd.set(&n.z)
		} else {
			// Extend backward: the old trajectory becomes the forward subtree.
			n.z.set(&n.zBck)
			copy(n.rhoFwd, n.rho)
			copy(n.pFwdBck, n.pBckBck)
			copy(n.sFwdBck, n.sBckBck)
			valid = n.buildTree(depth, &n.zPropose, n.sBckFwd, n.sBckBck, n.rhoBck, n.pBckFwd, n.pBckBck, -1, &lswSub)
			n.zBck.set(&n.z)
		}
		if !valid {
			break
		}
		depth++

		// Biased progressive sampling: move to the new subtree with probability
		// min(1, w_new/w_old).
		if lswSub > logSumWeight {
			n.zSample.set(&n.zPropose)
		} else if n.r.Float64() < math.Exp(lswSub-logSumWeight) {
			n.zSample.set(&n.zPropose)
		}
		logSumWeight = logAddExp(logSumWeight, lswSub)

		for i := range n.rho {
			n.rho[i] = n.rhoBck[i] + n.rhoFwd[i]
		}
		// Around the merged trajectory, then across the boundary between its halves.
		ok := noUTurn(n.sBckBck, n.sFwdFwd, n.rho)
		for i := range n.rhoX {
			n.rhoX[i] = n.rhoBck[i] + n.pFwdBck[i]
		}
		ok = ok && noUTurn(n.sBckBck, n.sFwdBck, n.rhoX)
		for i := range n.rhoX {
			n.rhoX[i] = n.rhoFwd[i] + n.pBckFwd[i]
		}
		ok = ok && noUTurn(n.sBckFwd, n.sFwdFwd, n.rhoX)
		if !ok {
			break
		}
	}

	cur.set(&n.zSample)
	return Stats{
		LogDensity: cur.lp,
		AcceptStat: n.sumMetro / float64(n.nLeapfrog),
		StepSize:   eps,
		TreeDepth:  depth,
		NLeapfrog:  n.nLeapfrog,
		Divergent:  n.divergent,
		Energy:     sys.energy(cur),
	}
}

// buildTree extends the trajectory from n.z by 2^depth leapfrog steps in direction sign. It
// returns false when a divergence or a U-turn inside the new subtree invalidates it. On
// return zPropose is a state drawn from the subtree with probability ∝ e^{−H}, sBeg/sEnd and
// pBeg/pEnd hold the (sharp) momenta at its two ends, its summed momentum was added to rho and
// the log of its summed weights e^{H₀−H} to *logSumWeight.
func (n *nuts) buildTree(depth int, zPropose *point, sBeg, sEnd, rho, pBeg, pEnd []float64, sign float64, logSumWeight *float64) bool {
	sys := n.sys
	if depth == 0 {
		sys.leapfrog(&n.z, sign*n.eps)
		n.nLeapfrog++
		h := sys.energy(&n.z)
		if h-n.h0 > n.maxDeltaH {
			n.divergent = true
		}
		*logSumWeight = logAddExp(*logSumWeight, n.h0-h)
		if n.h0-h > 0 {
			n.sumMetro++
		} else {
			n.sumMetro += math.Exp(n.h0 - h)
		}
		zPropose.set(&n.z)
		sys.met.sharp(sBeg, n.z.p)
		copy(sEnd, sBeg)
		for i, p := range n.z.p {
			rho[i] += p
		}
		copy(pBeg, n.z.p)
		copy(pEnd, n.z.p)
		return !n.divergent
	}

	w := &n.lv[depth]
	// The initial half.
	lswInit := math.Inf(-1)
	clear(w.rhoInit)
	if !n.buildTree(depth-1, zPropose, sBeg, w.sInitEnd, w.rhoInit, pBeg, w.pInitEnd, sign, &lswInit) {
		return false
	}
	// The final half.
	lswFinal := math.Inf(-1)
	clear(w.rhoFinal)
	if !n.buildTree(depth-1, &w.zProposeFinal, w.sFinalBeg, sEnd, w.rhoFinal, w.pFinalBeg, pEnd, sign, &lswFinal) {
		return false
	}

	// Uniform progressive sampling: the final half's proposal with probability
	// w_final/(w_init + w_final).
	lswSub := logAddExp(lswInit, lswFinal)
	*logSumWeight = logAddExp(*logSumWeight, lswSub)
	if lswFinal > lswSub {
		zPropose.set(&w.zProposeFinal)
	} else if n.r.Float64() < math.Exp(lswFinal-lswSub) {
		zPropose.set(&w.zProposeFinal)
	}

	for i := range w.rhoSub {
		w.rhoSub[i] = w.rhoInit[i] + w.rhoFinal[i]
		rho[i] += w.rhoSub[i]
	}
	ok := noUTurn(sBeg, sEnd, w.rhoSub)
	for i := range w.rhoSub {
		w.rhoSub[i] = w.rhoInit[i] + w.pFinalBeg[i]
	}
	ok = ok && noUTurn(sBeg, w.sFinalBeg, w.rhoSub)
	for i := range w.rhoSub {
		w.rhoSub[i] = w.rhoFinal[i] + w.pInitEnd[i]
	}
	return ok && noUTurn(w.sInitEnd, sEnd, w.rhoSub)
}

// staticHMC is HMC with a fixed number of leapfrog steps and a Metropolis correction.
type staticHMC struct {
	sys       *system
	r         *rng.Stream
	steps     int
	maxDeltaH float64
	z         point
}

func newStaticHMC(sys *system, r *rng.Stream, steps int, maxDeltaH float64) *staticHMC {
	return &staticHMC{sys: sys, r: r, steps: steps, maxDeltaH: maxDeltaH, z: newPoint(sys.met.d)}
}

func (s *staticHMC) transition(cur *point, eps float64) Stats {
	sys := s.sys
	copy(s.z.q, cur.q)
	copy(s.z.g, cur.g)
	s.z.lp = cur.lp
	sys.met.sampleP(s.r, s.z.p)
	h0 := sys.energy(&s.z)
	copy(cur.p, s.z.p)
	for range s.steps {
		sys.leapfrog(&s.z, eps)
	}
	h := sys.energy(&s.z)
	accept := math.Min(1, math.Exp(h0-h))
	if accept >= 1 || s.r.Float64() < accept {
		cur.set(&s.z)
	}
	return Stats{
		LogDensity: cur.lp,
		AcceptStat: accept,
		StepSize:   eps,
		NLeapfrog:  s.steps,
		Divergent:  h-h0 > s.maxDeltaH,
		Energy:     sys.energy(cur),
	}
}
