package fit

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/model"
)

// AutoMaxMembers caps the members of the ensemble Auto escalates to: the best mode and the
// modes q misses, in order of Laplace evidence.
const AutoMaxMembers = 8

// note writes the line of stage i (its k̂ against its threshold, its ELBO, what happens next)
// and sends it to the observers.
func (a *AutoResult) note(i int, user float64, done bool, next string, observers []func(Progress)) {
	leader := a.leader(user, false)
	s := &a.Stages[i]
	s.Line = stageLine(s, a.threshold(i, user), a.good(i, user), done, leader, next)
	for _, f := range observers {
		f(Progress{Stage: s.Family, Line: s.Line})
	}
}

// autoEnsemble is Auto's escalation when the starts reached modes the stage's q misses: an
// ensemble (Recipe.Ensemble) of the stage's family with one member started at each of those
// modes and at the best (at most AutoMaxMembers), weights fitted to the evidence (the modes'
// masses differ), run by Run. The ensemble's result reports the stage's mode search, so its
// verdict (Assess) checks that the mixture covers the modes.
func autoEnsemble(ctx context.Context, target model.Target, r Recipe, res *Result, opts []Option) AutoStage {
	best := res.Modes[0]
	starts := [][]float64{clone(best.Z)}
	for _, m := range res.Modes[1:] {
		if s, covered := modeShift(best, m); len(starts) < AutoMaxMembers && !covered && !(s <= ModeShiftTol) {
			starts = append(starts, clone(m.Z))
		}
	}
	er := r.clone()
	er.Ensemble = DefaultEnsemble(len(starts))
	er.Ensemble.Weights, er.Ensemble.Starts = WeightsEvidence, starts
	name := fmt.Sprintf("ensemble of %d %s", len(starts), r.Family.Kind)
	as := AutoStage{Family: name, Recipe: er,
		Note: fmt.Sprintf("one member at each of %d modes the %s fit misses and at the best, weights fitted to the evidence", len(starts)-1, r.Family.Kind)}
	ens, err := Run(ctx, target, er, opts...)
	if ens != nil && errors.Is(err, ctx.Err()) {
		err = nil
	}
	as.Result, as.Err = ens, err
	if ens != nil && err == nil {
		ens.adoptModes(res)
	}
	return as
}

// adoptModes makes res report the mode search of src (its starts and modes, with log q of
// res's own approximation) and judges res again with them (Assess): the verdict then says
// whether res covers the modes src's search found.
func (res *Result) adoptModes(src *Result) {
	res.Starts, res.StartsFailed, res.Modes = src.Starts, src.StartsFailed, cloneModes(src.Modes)
	res.StartsFailedWhy = src.StartsFailedWhy
	for i := range res.Modes {
		res.Modes[i].LogQ = res.Family.LogProb(res.Params, res.Modes[i].Z)
	}
	if res.KHatVerdict == "" {
		res.KHatVerdict = res.Verdict
	}
	res.Verdict = Assess(res).Text
}

// covers reports whether stage i's fit holds every mode its search found and is not rough
// (Assess).
func (a *AutoResult) covers(i int) bool {
	r := a.Stages[i].Result
	if r == nil {
		return false
	}
	as := Assess(r)
	return as.Uncovered == 0 && !as.Rough
}

// modesNote says, for the reason of the choice, what the starts found, when they found more
// than one mode.
func (a *AutoResult) modesNote(i int) string {
	r := a.Stages[i].Result
	if r == nil || len(r.Modes) < 2 {
		return ""
	}
	as := Assess(r)
	if as.Uncovered > 0 {
		return fmt.Sprintf("; the starts found %d modes and %s misses mass at %d of them: the posterior is multimodal, do not trust it", len(r.Modes), a.Stages[i].Family, as.Uncovered)
	}
	return fmt.Sprintf("; the starts found %d modes, %s covers them or the others are negligible", len(r.Modes), a.Stages[i].Family)
}

// finiteELBO reports whether stage i finished with a finite ELBO.
func (a *AutoResult) finiteELBO(i int) bool {
	r := a.Stages[i].Result
	return r != nil && !math.IsNaN(r.ELBO) && !math.IsInf(r.ELBO, 0)
}

// goodLeads reports whether the search can stop: the ELBO leader among the good stages is
// not beaten by any finished stage's ELBO by more than twice their combined Monte Carlo
// standard error (a tie goes to the good stage, as it goes to the simpler family in leader).
func (a *AutoResult) goodLeads(user float64) bool {
	g := a.leader(user, true)
	if g < 0 {
		return false
	}
	b := a.Stages[g].Result
	for j := range a.Stages {
		if r := a.Stages[j].Result; a.finiteELBO(j) && r.ELBO-b.ELBO > 2*math.Hypot(r.ELBOSE, b.ELBOSE) {
			return false
		}
	}
	return true
}
