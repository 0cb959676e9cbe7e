package reparam

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/model"
)

// toy is Kingma & Welling's two-latent model: z1 ~ N(0, 1), x1 | z1 ~ N(z1, σx²),
// z2 | z1 ~ N(z1, σz²), x2 | z2 ~ N(z2, σx²), both latents declared as groups.
func toy(t testing.TB, sx, sz float64) *Spec {
	lay, err := model.NewLayout(model.Param{Name: "z1"}, model.Param{Name: "z2"})
	if err != nil {
		t.Fatal(err)
	}
	return &Spec{
		Layout: lay,
		Density: func(t *ad.Tape, p []ad.Var) ad.Var {
			return t.Add(density.Normal(t, t.Const(0.5), p[0], t.Const(sx)), density.Normal(t, t.Const(1.5), p[1], t.Const(sx)))
		},
		Groups: []Group{
			{Param: "z1", Loc: func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(0) }, Scale: func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(1) }},
			{Param: "z2", Loc: func(t *ad.Tape, p []ad.Var) ad.Var { return p[0] }, Scale: func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(sz) }},
		},
	}
}

// TestChooseToy: for z2 the children's curvature is −1/σx² everywhere, so the criterion is
// exactly the paper's rule σz² < σx² ⇒ NCP, and the ratio is σz²/σx² at every pilot point.
func TestChooseToy(t *testing.T) {
	for _, c := range []struct{ sx, sz, want float64 }{{1, 0.5, NCP}, {1, 2, CP}, {0.1, 0.05, NCP}, {0.1, 1, CP}} {
		ch, err := toy(t, c.sx, c.sz).Choose(context.Background(), Pilot{Warmup: 50, Draws: 20, Points: 5})
		if err != nil {
			t.Fatal(err)
		}
		g := ch.Groups[1]
		// β by central differences of an exactly quadratic log density: error ≈ ε·|g|/h ≈ 1e-10.
		if want := c.sz * c.sz / (c.sx * c.sx); g.Lambda != c.want || math.Abs(g.Ratio-want) > 1e-6*want {
			t.Errorf("σx=%g σz=%g: %s", c.sx, c.sz, ch)
		}
	}
}

// TestChooseEightSchools: with the real data (σ_j ≈ 10, τ a few units) the data are weak and
// NCP is chosen; with σ_j = 0.5 every school is pinned by its own data and CP is chosen.
func TestChooseEightSchools(t *testing.T) {
	ch, err := eightSchools(t, Normal).Choose(context.Background(), Pilot{})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Groups[0].Lambda != NCP || !strings.Contains(ch.String(), "theta: NCP") {
		t.Errorf("eight schools: %s", ch)
	}
	old := schoolsSigma
	defer func() { schoolsSigma = old }()
	schoolsSigma = []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
	ch, err = eightSchools(t, Normal).Choose(context.Background(), Pilot{})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Groups[0].Lambda != CP {
		t.Errorf("informative eight schools: %s", ch)
	}
}

// TestLearnLambda: VIP's λ ends on the side the criterion picks — below ½ on the real eight
// schools, above ½ when σ_j = 0.5. The ELBO gap between the two starts' optima is 1.6–2.4
// nats (fit.Run's mean-field ELBO at λ = 0, 0.15, 1: −32.3, −32.6, −34.1 and, informative,
// −39.2, −36.3, −33.7), far above the Monte Carlo error of the tail average (50 steps × 4
// draws: ≈ 0.1 nats), so the winning start is not a coin flip.
func TestLearnLambda(t *testing.T) {
	r0 := fit.DefaultRecipe(fit.KindMeanField)
	r0.MaxIter, r0.Init.Starts, r0.Init.StartsMax = 3000, 4, 4
	cfg := VIPConfig{Steps: 500, Recipe: &r0}
	r, err := eightSchools(t, Normal).LearnLambda(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.Lambda[0] < 0.5) {
		t.Errorf("eight schools: %s", r)
	}
	old := schoolsSigma
	defer func() { schoolsSigma = old }()
	schoolsSigma = []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
	r, err = eightSchools(t, Normal).LearnLambda(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.Lambda[0] > 0.5) {
		t.Errorf("informative eight schools: %s", r)
	}
}
