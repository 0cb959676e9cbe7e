package fit

import (
	"errors"
	"fmt"

	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
)

// KindFlow is the family kind of a saved normalizing-flow fit (family.Flow); FamilySpec.Flow
// then describes the flow's structure (flow.Spec) and FamilySpec.Name its standard kind.
const KindFlow = "flow"

// flowVersion is the first save version that can hold a flow family.
const flowVersion = 2

// flowFamily checks the flow spec of a saved family against the number of saved parameters
// (before anything is built) and rebuilds the family, with its Student-t base when base_df is
// set (files without it load with the Gaussian base) and its kind from family.name (files
// without one: inferred from the structure, inferFlowKind).
func flowFamily(fs FamilySpec, nparams int) (family.Family, error) {
	d := fs.Dim
	if fs.Flow.Dim != d {
		return nil, fmt.Errorf("field \"family.flow.dim\": %d, want %d", fs.Flow.Dim, d)
	}
	n, err := fs.Flow.NumParams()
	if err != nil {
		return nil, specField(err)
	}
	if n+2*d != nparams {
		return nil, fmt.Errorf("field \"params\": %d values, the flow in d=%d needs %d", nparams, d, n+2*d)
	}
	kind := fs.Name
	if kind == "" {
		kind = inferFlowKind(fs.Flow)
	}
	opts := []family.FlowOption{family.FlowKind(kind)}
	switch nu := fs.BaseDF; {
	case nu == 0:
	case nu >= family.MinBaseDF && nu <= family.MaxBaseDF:
		opts = append(opts, family.FlowBaseDF(nu))
	default:
		return nil, fmt.Errorf("field \"family.base_df\": %g, want %d to %d (absent: Gaussian base)", nu, family.MinBaseDF, family.MaxBaseDF)
	}
	f, err := flow.FromSpec(*fs.Flow)
	if err != nil {
		return nil, specField(err)
	}
	return family.NewFlow(f, opts...), nil
}

// specField names a flow.SpecError's field as a field of fit.json.
func specField(err error) error {
	var se *flow.SpecError
	if errors.As(err, &se) {
		return fmt.Errorf("field %q: %s", "family.flow."+se.Field, se.Msg)
	}
	return err
}

// inferFlowKind is the reader's path for a saved flow without family.name: "maf", "realnvp",
// "bernstein" for the stacks NewFlowFamily builds (MAFs; coupling layers; Bernstein flows,
// with permutations between layers and the affine autoregressive layer of FlowOptions.Affine
// allowed), "flow" otherwise. Files written by this version carry the kind the family was
// built with (family.Flow.Kind).
func inferFlowKind(s *flow.Spec) string {
	parts := []flow.Spec{*s}
	if s.Type == flow.SpecCompose {
		parts = s.Parts
	}
	var maf, nvp, bern bool
	for _, p := range parts {
		switch p.Type {
		case flow.SpecMAF:
			maf = true
		case flow.SpecCoupling:
			nvp = true
		case flow.SpecBernstein, flow.SpecBernsteinAR:
			bern = true
		case flow.SpecPermute:
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
