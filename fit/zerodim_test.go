package fit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/objective"
)

// noParams is a target without parameters (Dim 0), e.g. a model whose every quantity is data.
type noParams struct{}

func (noParams) Dim() int                               { return 0 }
func (noParams) LogDensity(t *ad.Tape, _ ad.Var) ad.Var { return t.Const(0) }

// TestZeroDimTargetIsAnError: Fit, Run and Auto on a target with no parameters return an
// error naming the dimension instead of panicking in a family constructor (or dividing by
// zero in the diagnostics).
func TestZeroDimTargetIsAnError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := "target dimension 0: a target needs at least one parameter"
	check := func(name string, f func() error) {
		t.Helper()
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic %v, want an error", name, p)
				}
			}()
			err = f()
		}()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	check("Run", func() error { _, err := Run(ctx, noParams{}, DefaultRecipe(KindMeanField)); return err })
	check("Run fullrank", func() error {
		_, err := Run(ctx, noParams{}, DefaultRecipe(KindFullRank))
		return err
	})
	check("Auto", func() error { _, err := Auto(ctx, noParams{}, AutoConfig{}); return err })
	check("NewFamily", func() error { _, err := FamilyRecipe{Kind: KindLowRank}.NewFamily(0, 1); return err })
	check("Fit", func() error {
		_, err := Fit(ctx, noParams{}, family.NewMeanField(1), objective.Options{}, Config{})
		return err
	})
}
