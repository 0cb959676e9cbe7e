package bfvi

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// PaperEightSchools with the Jacobian is the proper posterior: in the non-centred form it
// equals zoo's eight_schools (z = (θ̃, μ, log τ)) at the same point up to the constant log 0.1 +
// the normalising constants, checked at two points (so the constant is the same); without the
// Jacobian it differs by log 0.1 + 0.1·τ′ exactly.
func TestPaperEightSchools(t *testing.T) {
	var tp ad.Tape
	val := func(tg model.Target, z []float64) float64 {
		tp.Reset()
		return tp.Value(tg.LogDensity(&tp, tp.ConstRef(z)))[0]
	}
	zt := zoo.EightSchools()
	var c0 float64
	for i, z := range [][]float64{{3, 1.5, 0.3, -0.2, 1, 0.1, -1, 0.5, 0.7, -0.4}, {-12, 4, -1, 2, 0.3, 0, 0.8, -0.6, 1.1, 0.2}} {
		proper := val(PaperEightSchools{Jacobian: true}, z)
		plain := val(PaperEightSchools{}, z)
		if d := proper - plain - (PaperEightSchools{}).logJacobian(z); math.Abs(d) > 1e-12 {
			t.Errorf("point %d: proper − improper − log Jacobian = %g", i, d)
		}
		zz := append(append(append([]float64{}, z[2:]...), z[1]), 0.1*z[0])
		c := proper - val(zt, zz)
		if i == 0 {
			c0 = c
		} else if math.Abs(c-c0) > 1e-10 {
			t.Errorf("constant differs between points: %g vs %g", c, c0)
		}
		// CP at the matching point θ = μ + τθ̃ differs from NCP by the Jacobian of θ̃ ↦ θ, −8 log τ.
		cz := append([]float64{}, z...)
		out := make([]float64, 10)
		PaperEightSchools{}.Constrain(z, out)
		copy(cz[2:], out[:8])
		cp := val(PaperEightSchools{Centred: true, Jacobian: true}, cz)
		if d := cp - proper + 8*0.1*z[0]; math.Abs(d) > 1e-10 {
			t.Errorf("point %d: CP − NCP + 8 log τ = %g", i, d)
		}
	}
}

// A tiny RunBar (few steps, few draws) runs every row through fit.Run, measures finite
// diagnostics, and the report says the bar cannot be judged on so few draws.
func TestRunBarSmall(t *testing.T) {
	dir := datadir.PosteriorDBOrSkip(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := RunBar(ctx, BarConfig{Restarts: 1, Draws: 400, Boot: 5, PaperSteps: 300, DefaultMaxIter: 200, Dir: dir, Targets: []string{"cp"}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 || rep.RefDraws < 1000 {
		t.Fatalf("%d rows, %d reference draws", len(rep.Rows), rep.RefDraws)
	}
	for _, row := range rep.Rows {
		for _, r := range row.Runs {
			for _, v := range []float64{r.K, r.KProper, r.ELBO, r.W1SD, r.TauMin, r.RefBelow, r.RefOutside} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%s %s seed %d: %+v", row.Target, row.Recipe, r.Seed, r)
				}
			}
			if r.RefOutside < r.RefBelow || r.TauMin > r.TauMax {
				t.Errorf("%s %s: outside %g < below %g or τ range %g–%g", row.Target, row.Recipe, r.RefOutside, r.RefBelow, r.TauMin, r.TauMax)
			}
		}
		if strings.Contains(row.Recipe, "paper") && row.Runs[0].Steps != 300 {
			t.Errorf("paper recipe ran %d steps, want 300", row.Runs[0].Steps)
		}
	}
	if p := rep.Rows[0]; p.Proper || p.Runs[0].K == p.Runs[0].KProper {
		t.Errorf("paper's target row: proper %v, k̂ %g = proper k̂ %g", p.Proper, p.Runs[0].K, p.Runs[0].KProper)
	}
	var b bytes.Buffer
	if err := rep.Markdown(&b, resultmd.Header{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "not judged: 400 draws") || !strings.Contains(b.String(), "restated bar") {
		t.Errorf("report:\n%s", b.String())
	}
}
