package fit

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/nn"
)

// KindFlow is the family kind of a saved normalizing-flow fit (family.Flow); FamilySpec.Flow
// then describes the flow's structure.
const KindFlow = "flow"

// flowVersion is the first save version that can hold a flow family.
const flowVersion = 2

// Flow part types in a FlowSpec.
const (
	flowCompose     = "compose"
	flowMAF         = "maf"
	flowCoupling    = "coupling"
	flowBernstein   = "bernstein"
	flowBernsteinAR = "bernstein_ar"
	flowPermute     = "permute"
	flowAffine      = "affine"
)

// FlowSpec describes the structure of a flow (never its parameter values, which are the
// saved fit's params): enough to rebuild the same flow.Flow, whose parameter vector then has
// the saved layout. It is a tree: a compose node lists its parts in application order.
//
//	compose       parts
//	maf           made (K = 2), condition_on_output, scale_clamp
//	coupling      keep, hidden, activation, scale_clamp (the conditioner MLP; none when keep is empty)
//	bernstein     degree, tails
//	bernstein_ar  made (K = degree + 1), degree, tails, frozen_affine
//	permute       perm
//	affine        —
//
// scale_clamp 0 means no clamp.
type FlowSpec struct {
	Type              string     `json:"type"`
	Dim               int        `json:"dim"`
	Parts             []FlowSpec `json:"parts,omitempty"`
	MADE              *MADESpec  `json:"made,omitempty"`
	ConditionOnOutput bool       `json:"condition_on_output,omitempty"`
	ScaleClamp        float64    `json:"scale_clamp,omitempty"`
	Keep              []int      `json:"keep,omitempty"`
	Hidden            []int      `json:"hidden,omitempty"`
	Activation        string     `json:"activation,omitempty"`
	Degree            int        `json:"degree,omitempty"`
	Tails             string     `json:"tails,omitempty"`
	FrozenAffine      bool       `json:"frozen_affine,omitempty"`
	Perm              []int      `json:"perm,omitempty"`
}

// MADESpec describes an nn.MADE: dimension, hidden sizes, outputs per dimension, hidden
// activation, input ordering (degrees 1..d) and direct connections.
type MADESpec struct {
	Dim        int    `json:"dim"`
	Hidden     []int  `json:"hidden"`
	K          int    `json:"k"`
	Activation string `json:"activation"`
	Order      []int  `json:"order"`
	Direct     bool   `json:"direct,omitempty"`
}

// DescribeFlow returns the structure of f for saving, or an error for a flow type (or a
// part) that cannot be saved.
func DescribeFlow(f flow.Flow) (FlowSpec, error) {
	d := f.Dim()
	switch g := f.(type) {
	case *flow.Composed:
		s := FlowSpec{Type: flowCompose, Dim: d}
		for _, p := range g.Parts() {
			ps, err := DescribeFlow(p)
			if err != nil {
				return FlowSpec{}, err
			}
			s.Parts = append(s.Parts, ps)
		}
		return s, nil
	case *flow.MAF:
		ms := describeMADE(g.Conditioner())
		return FlowSpec{Type: flowMAF, Dim: d, MADE: &ms, ConditionOnOutput: g.ConditionsOnOutput(), ScaleClamp: clampSpec(g.ScaleClamp())}, nil
	case *flow.Coupling:
		s := FlowSpec{Type: flowCoupling, Dim: d, Keep: clone(g.Keep()), ScaleClamp: clampSpec(g.ScaleClamp())}
		if s.Keep == nil {
			s.Keep = []int{}
		}
		if net := g.Net(); net != nil {
			sz := net.Sizes()
			s.Hidden = clone(sz[1 : len(sz)-1])
			s.Activation = net.Activation().String()
		}
		return s, nil
	case *flow.Bernstein:
		return FlowSpec{Type: flowBernstein, Dim: d, Degree: g.Degree(), Tails: g.Tails().String()}, nil
	case *flow.BernsteinAR:
		ms := describeMADE(g.Conditioner())
		frozen := g.NumParams() == g.Conditioner().NumParams()
		return FlowSpec{Type: flowBernsteinAR, Dim: d, MADE: &ms, Degree: g.Degree(), Tails: g.Tails().String(), FrozenAffine: frozen}, nil
	case *flow.Permutation:
		return FlowSpec{Type: flowPermute, Dim: d, Perm: clone(g.Perm())}, nil
	case *flow.Affine:
		return FlowSpec{Type: flowAffine, Dim: d}, nil
	}
	return FlowSpec{}, fmt.Errorf("fit: DescribeFlow: flow %T cannot be saved", f)
}

func describeMADE(m *nn.MADE) MADESpec {
	h := clone(m.Hidden())
	if h == nil {
		h = []int{}
	}
	return MADESpec{Dim: m.Dim(), Hidden: h, K: m.K(), Activation: m.Activation().String(),
		Order: clone(m.Degrees()), Direct: m.HasDirect()}
}

func clampSpec(c float64) float64 {
	if math.IsInf(c, 1) {
		return 0
	}
	return c
}

// Limits on what a saved flow may describe, so that a corrupt or hostile file cannot make
// Read build an enormous structure: sizes are checked, and the parameter count implied by the
// spec must equal the saved params' length before anything is allocated.
const (
	maxFlowDepth  = 4
	maxFlowParts  = 256
	maxHidden     = 8
	maxUnits      = 1 << 14
	maxFlowDegree = 1000
	maxFlowParams = 1 << 30
)

// flowParams returns the parameter count of the flow spec s on ℝ^d after checking every field
// (the structural rules of the constructors, which panic on misuse). path names the node in
// errors: "family.flow.parts[1].made.order".
func flowParams(s *FlowSpec, d, depth int, path string) (int, error) {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("field %q: %s", path+"."+field, fmt.Sprintf(format, a...))
	}
	if s.Dim != d {
		return 0, bad("dim", "%d, want %d", s.Dim, d)
	}
	switch s.Type {
	case flowCompose:
		if depth >= maxFlowDepth {
			return 0, bad("parts", "nested deeper than %d", maxFlowDepth)
		}
		if len(s.Parts) == 0 || len(s.Parts) > maxFlowParts {
			return 0, bad("parts", "%d parts, want 1 to %d", len(s.Parts), maxFlowParts)
		}
		n := 0
		for i := range s.Parts {
			k, err := flowParams(&s.Parts[i], d, depth+1, fmt.Sprintf("%s.parts[%d]", path, i))
			if err != nil {
				return 0, err
			}
			if n += k; n > maxFlowParams {
				return 0, bad("parts", "more than %d parameters", maxFlowParams)
			}
		}
		return n, nil
	case flowMAF:
		if s.MADE == nil {
			return 0, bad("made", "missing")
		}
		if s.MADE.K != 2 {
			return 0, bad("made.k", "%d, a MAF needs 2", s.MADE.K)
		}
		if err := checkClamp(s.ScaleClamp); err != nil {
			return 0, bad("scale_clamp", "%v", err)
		}
		return madeParams(s.MADE, d, path+".made")
	case flowCoupling:
		if err := checkClamp(s.ScaleClamp); err != nil {
			return 0, bad("scale_clamp", "%v", err)
		}
		seen := make(map[int]bool, len(s.Keep))
		for _, i := range s.Keep {
			if i < 0 || i >= d || seen[i] {
				return 0, bad("keep", "%v: want distinct indices in 0..%d", s.Keep, d-1)
			}
			seen[i] = true
		}
		if len(s.Keep) == d {
			return 0, bad("keep", "holds every coordinate: nothing to transform")
		}
		nb := d - len(s.Keep)
		if len(s.Keep) == 0 {
			return 2 * nb, nil
		}
		if _, err := parseActivation(s.Activation); err != nil {
			return 0, bad("activation", "%v", err)
		}
		sizes := append(append([]int{len(s.Keep)}, s.Hidden...), 2*nb)
		n, err := mlpParams(sizes)
		if err != nil {
			return 0, bad("hidden", "%v", err)
		}
		return n, nil
	case flowBernstein:
		if err := checkBernstein(s); err != nil {
			return 0, fmt.Errorf("field %q: %w", path, err)
		}
		return d * (s.Degree + 3), nil
	case flowBernsteinAR:
		if err := checkBernstein(s); err != nil {
			return 0, fmt.Errorf("field %q: %w", path, err)
		}
		if s.MADE == nil {
			return 0, bad("made", "missing")
		}
		if s.MADE.K != s.Degree+1 {
			return 0, bad("made.k", "%d, degree %d needs %d", s.MADE.K, s.Degree, s.Degree+1)
		}
		n, err := madeParams(s.MADE, d, path+".made")
		if err != nil {
			return 0, err
		}
		if !s.FrozenAffine {
			n += 2 * d
		}
		return n, nil
	case flowPermute:
		if err := checkPerm(s.Perm, d, false); err != nil {
			return 0, bad("perm", "%v", err)
		}
		return 0, nil
	case flowAffine:
		return 2 * d, nil
	}
	return 0, bad("type", "%q, want one of %s", s.Type,
		strings.Join([]string{flowCompose, flowMAF, flowCoupling, flowBernstein, flowBernsteinAR, flowPermute, flowAffine}, ", "))
}

func checkClamp(c float64) error {
	if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return fmt.Errorf("%g, want finite and ≥ 0", c)
	}
	return nil
}

func checkBernstein(s *FlowSpec) error {
	if s.Degree < 1 || s.Degree > maxFlowDegree {
		return fmt.Errorf("degree %d, want 1 to %d", s.Degree, maxFlowDegree)
	}
	if _, err := parseTails(s.Tails); err != nil {
		return err
	}
	if s.FrozenAffine && s.Type != flowBernsteinAR {
		return errors.New("frozen_affine is for bernstein_ar only")
	}
	return nil
}

// checkPerm checks that p is a permutation of 0..d−1 (one-based: of 1..d).
func checkPerm(p []int, d int, oneBased bool) error {
	if len(p) != d {
		return fmt.Errorf("%d entries, want %d", len(p), d)
	}
	off := 0
	if oneBased {
		off = 1
	}
	seen := make([]bool, d)
	for _, v := range p {
		if v-off < 0 || v-off >= d || seen[v-off] {
			return fmt.Errorf("%v is not a permutation of %d..%d", p, off, d-1+off)
		}
		seen[v-off] = true
	}
	return nil
}

// madeParams checks a MADE spec and returns its parameter count.
func madeParams(m *MADESpec, d int, path string) (int, error) {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("field %q: %s", path+"."+field, fmt.Sprintf(format, a...))
	}
	if m.Dim != d {
		return 0, bad("dim", "%d, want %d", m.Dim, d)
	}
	if m.K < 1 || m.K > maxFlowDegree+1 {
		return 0, bad("k", "%d, want 1 to %d", m.K, maxFlowDegree+1)
	}
	if _, err := parseActivation(m.Activation); err != nil {
		return 0, bad("activation", "%v", err)
	}
	if err := checkPerm(m.Order, d, true); err != nil {
		return 0, bad("order", "%v", err)
	}
	out := m.K * d
	n, err := mlpParams(append(append([]int{d}, m.Hidden...), out))
	if err != nil {
		return 0, bad("hidden", "%v", err)
	}
	if m.Direct && len(m.Hidden) > 0 {
		if n += d * out; n > maxFlowParams {
			return 0, bad("hidden", "more than %d parameters", maxFlowParams)
		}
	}
	return n, nil
}

// mlpParams returns Σ (in·out + out) over the layers of an MLP with the given sizes.
func mlpParams(sizes []int) (int, error) {
	if len(sizes)-2 > maxHidden {
		return 0, fmt.Errorf("%d hidden layers, want at most %d", len(sizes)-2, maxHidden)
	}
	n := 0
	for i, s := range sizes {
		if s < 1 || s > maxUnits*maxFlowDegree {
			return 0, fmt.Errorf("layer size %d, want 1 to %d", s, maxUnits*maxFlowDegree)
		}
		if i > 0 && i < len(sizes)-1 && s > maxUnits {
			return 0, fmt.Errorf("hidden size %d, want at most %d", s, maxUnits)
		}
	}
	for l := 0; l+1 < len(sizes); l++ {
		if n += sizes[l]*sizes[l+1] + sizes[l+1]; n > maxFlowParams {
			return 0, fmt.Errorf("more than %d parameters", maxFlowParams)
		}
	}
	return n, nil
}

func parseActivation(s string) (ad.Activation, error) {
	for _, a := range []ad.Activation{ad.Linear, ad.ReLU, ad.Tanh, ad.Sigmoid} {
		if a.String() == s {
			return a, nil
		}
	}
	return 0, fmt.Errorf("%q, want linear, relu, tanh or sigmoid", s)
}

func parseTails(s string) (flow.Tails, error) {
	for _, t := range []flow.Tails{flow.BoundedTails, flow.LinearTails} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("tails %q, want %q or %q", s, flow.BoundedTails, flow.LinearTails)
}

// buildFlow rebuilds the flow of a spec that flowParams accepted.
func buildFlow(s *FlowSpec) flow.Flow {
	switch s.Type {
	case flowCompose:
		parts := make([]flow.Flow, len(s.Parts))
		for i := range s.Parts {
			parts[i] = buildFlow(&s.Parts[i])
		}
		return flow.Compose(parts...)
	case flowMAF:
		opts := []flow.MAFOption{flow.WithScaleClamp(s.ScaleClamp)}
		if s.ConditionOnOutput {
			opts = append(opts, flow.ConditionOnOutput())
		}
		return flow.NewMAF(buildMADE(s.MADE), opts...)
	case flowCoupling:
		act, _ := parseActivation(s.Activation)
		return flow.NewCoupling(s.Dim, s.Keep, s.Hidden, act, s.ScaleClamp)
	case flowBernstein:
		t, _ := parseTails(s.Tails)
		return flow.NewBernstein(s.Dim, s.Degree, flow.BernsteinTails(t))
	case flowBernsteinAR:
		t, _ := parseTails(s.Tails)
		opts := []flow.BernsteinOption{flow.BernsteinTails(t)}
		if s.FrozenAffine {
			opts = append(opts, flow.BernsteinFrozenAffine())
		}
		return flow.NewBernsteinAR(buildMADE(s.MADE), opts...)
	case flowPermute:
		return flow.Permute(s.Perm)
	case flowAffine:
		return flow.NewAffine(s.Dim)
	}
	panic("fit: buildFlow: unchecked flow type " + s.Type)
}

func buildMADE(m *MADESpec) *nn.MADE {
	act, _ := parseActivation(m.Activation)
	opts := []nn.MADEOption{nn.WithActivation(act), nn.WithOrder(m.Order)}
	if m.Direct {
		opts = append(opts, nn.WithDirect())
	}
	return nn.NewMADE(m.Dim, m.Hidden, m.K, opts...)
}

// flowFamily checks the flow spec of a saved family against the number of saved parameters
// and rebuilds the family, with its Student-t base when base_df is set (files without it
// load with the Gaussian base).
func flowFamily(fs FamilySpec, nparams int) (family.Family, error) {
	d := fs.Dim
	n, err := flowParams(fs.Flow, d, 0, "family.flow")
	if err != nil {
		return nil, err
	}
	if n+2*d != nparams {
		return nil, fmt.Errorf("field \"params\": %d values, the flow in d=%d needs %d", nparams, d, n+2*d)
	}
	var opts []family.FlowOption
	switch nu := fs.BaseDF; {
	case nu == 0:
	case nu >= family.MinBaseDF && nu <= family.MaxBaseDF:
		opts = append(opts, family.FlowBaseDF(nu))
	default:
		return nil, fmt.Errorf("field \"family.base_df\": %g, want %d to %d (absent: Gaussian base)", nu, family.MinBaseDF, family.MaxBaseDF)
	}
	q := family.NewFlow(buildFlow(fs.Flow), opts...)
	if q.NumParams() != nparams {
		panic(fmt.Sprintf("fit: flowFamily: rebuilt flow has %d parameters, spec says %d", q.NumParams(), nparams))
	}
	return q, nil
}

// FlowName names a flow for reports: "maf", "realnvp", "bernstein" for the stacks the CLI
// builds (MAFs; coupling layers; Bernstein flows, with permutations between layers and the
// affine autoregressive layer of FlowOptions.Affine allowed), "flow" otherwise.
func FlowName(f flow.Flow) string {
	parts := []flow.Flow{f}
	if c, ok := f.(*flow.Composed); ok {
		parts = c.Parts()
	}
	var maf, nvp, bern bool
	for _, p := range parts {
		switch p.(type) {
		case *flow.MAF:
			maf = true
		case *flow.Coupling:
			nvp = true
		case *flow.Bernstein, *flow.BernsteinAR:
			bern = true
		case *flow.Permutation:
		default:
			return KindFlow
		}
	}
	switch {
	case bern && !nvp:
		return KindBernstein
	case maf && !nvp && !bern:
		return KindMAF
	case nvp && !maf && !bern:
		return KindRealNVP
	}
	return KindFlow
}
