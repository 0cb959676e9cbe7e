package bench

import (
	"context"
	"fmt"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bnn"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/nn"
)

// semiDraws is the number of posterior draws of the coefficients per fit.
const semiDraws = 4000

// UCISemiConfig says what RunUCISemi runs: y = g(x_rest) + x_lin·γ + ε on UCI splits, g a
// 50-unit ReLU network with point-estimated weights and γ the coefficients of the Linear
// columns with a flow posterior (bnn.SemiStructured). Zero fields take the defaults in
// parentheses.
type UCISemiConfig struct {
	// Dir is the UCI directory (required); Dataset a short or folder name (boston).
	Dir, Dataset string
	// Linear are the data columns modelled linearly (5 and 12: boston's RM and LSTAT).
	Linear []int
	// Split is the first split (0), whose posterior is tabled and plotted; Splits the number of
	// splits from Split on (1).
	Split, Splits int
	// Epochs per fit (2000); Degree the Bernstein polynomial degree M (10).
	Epochs, Degree int
	// Seed is the seed of every fit.
	Seed uint64
	// SVGName is the file name the report cites for the density plot (Markdown's last line;
	// "": none). Writing the file (UCISemiReport.SVG) is the caller's.
	SVGName string
	// Progress receives one line per fit (nil: none).
	Progress io.Writer
}

// semiPost is one posterior kind on one split.
type semiPost struct {
	name     string
	draws    []float64 // semiDraws × len(lin), original units
	ll, rmse float64
	condMu   []float64 // exact conditional posterior of γ given the fitted g and σ, original units
	condSD   []float64 // marginal and conditional sd per column, original units
}

// UCISemiReport holds the fits of RunUCISemi.
type UCISemiReport struct {
	Config UCISemiConfig // with the defaults filled in
	set    uciSet
	kinds  []string
	first  []semiPost   // the first split, per kind
	all    [][]semiPost // [kind][split]
}

// RunUCISemi fits a Gaussian (affine flow), a Bernstein flow and, with more than one linear
// column, a multivariate Bernstein flow posterior for γ on each split, jointly with the
// network on the ELBO (Adam 0.01 annealed to 1%, minibatch 32).
func RunUCISemi(ctx context.Context, cfg UCISemiConfig) (*UCISemiReport, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("bench: RunUCISemi: Dir is empty: the UCI directory is needed")
	}
	setDefault(&cfg.Dataset, "boston")
	setDefaultSlice(&cfg.Linear, []int{5, 12})
	setDefault(&cfg.Splits, 1)
	setDefault(&cfg.Epochs, 2000)
	setDefault(&cfg.Degree, 10)
	setDefault[io.Writer](&cfg.Progress, io.Discard)
	d, err := openUCI("RunUCISemi", cfg.Dir, cfg.Dataset)
	if err != nil {
		return nil, err
	}
	s := d.set
	for _, c := range cfg.Linear {
		if !slices.Contains(d.features, c) {
			return nil, fmt.Errorf("bench: RunUCISemi: Linear: column %d is not a feature column of %s (Linear=%v)", c, s.name, cfg.Linear)
		}
	}
	switch {
	case len(cfg.Linear) == 0:
		return nil, fmt.Errorf("bench: RunUCISemi: Linear is empty (Linear=[])")
	case cfg.Split < 0 || cfg.Split >= len(d.train):
		return nil, fmt.Errorf("bench: RunUCISemi: Split must be in [0, %d) (Split=%d)", len(d.train), cfg.Split)
	case cfg.Splits < 1 || cfg.Split+cfg.Splits > len(d.train):
		return nil, fmt.Errorf("bench: RunUCISemi: Splits %d from Split %d: %s has %d splits (Splits=%d)", cfg.Splits, cfg.Split, s.name, len(d.train), cfg.Splits)
	case cfg.Epochs < 1:
		return nil, fmt.Errorf("bench: RunUCISemi: Epochs must be at least 1 (Epochs=%d)", cfg.Epochs)
	case cfg.Degree < 1:
		return nil, fmt.Errorf("bench: RunUCISemi: Degree must be at least 1 (Degree=%d)", cfg.Degree)
	}
	r := &UCISemiReport{Config: cfg, set: s, kinds: []string{"Gaussian (affine flow)", fmt.Sprintf("Bernstein flow, M = %d", cfg.Degree)}}
	if len(cfg.Linear) > 1 {
		r.kinds = append(r.kinds, fmt.Sprintf("multivariate Bernstein flow, M = %d, MADE 10×10", cfg.Degree))
	}
	r.all = make([][]semiPost, len(r.kinds))
	for sp := cfg.Split; sp < cfg.Split+cfg.Splits; sp++ {
		posts, err := fitUCISemi(ctx, cfg, d, sp, r.kinds)
		if err != nil {
			return nil, err
		}
		if r.first == nil {
			r.first = posts
		}
		for k := range r.kinds {
			r.all[k] = append(r.all[k], posts[k])
		}
	}
	return r, nil
}

// fitUCISemi fits each posterior kind on one split.
func fitUCISemi(ctx context.Context, cfg UCISemiConfig, d *uciData, split int, kinds []string) ([]semiPost, error) {
	lin := cfg.Linear
	Xall, ytr, nz := d.matrix(d.train[split], nil)
	Xte, yte, _ := d.matrix(d.test[split], nz)
	sx, sy := nz.sx, nz.sy
	in := len(d.features)
	var nnCols, linCols []int
	for j, c := range d.features {
		if slices.Contains(lin, c) {
			linCols = append(linCols, j)
		} else {
			nnCols = append(nnCols, j)
		}
	}
	cols := func(X []float64, rows int, which []int) []float64 {
		o := make([]float64, rows*len(which))
		for i := range rows {
			for k, j := range which {
				o[i*len(which)+k] = X[i*in+j]
			}
		}
		return o
	}
	ntr, nte := len(ytr), len(yte)
	Xnn, Xlin := cols(Xall, ntr, nnCols), cols(Xall, ntr, linCols)
	Tnn, Tlin := cols(Xte, nte, nnCols), cols(Xte, nte, linCols)
	var posts []semiPost
	for _, kind := range kinds {
		var fl flow.Flow = flow.NewAffine(len(lin))
		switch {
		case strings.HasPrefix(kind, "Bernstein"):
			fl = flow.NewBernstein(len(lin), cfg.Degree, flow.BernsteinTails(flow.LinearTails))
		case strings.HasPrefix(kind, "multivariate"):
			made := nn.NewMADE(len(lin), []int{10, 10}, cfg.Degree+1, nn.WithDirect(), nn.WithActivation(ad.Tanh))
			fl = flow.NewBernsteinAR(made, flow.BernsteinTails(flow.LinearTails))
		}
		m := bnn.SemiStructured{Hidden: 50, Flow: fl}
		fit, err := bnn.FitSemiStructured(ctx, m, Xnn, len(nnCols), Xlin, ytr, ntr, bnn.FitConfig{Epochs: cfg.Epochs, BatchSize: 32, Seed: cfg.Seed})
		if err != nil {
			return nil, err
		}
		cm, cc, err := fit.ConditionalPosterior(Xnn, Xlin, ytr, ntr)
		if err != nil {
			return nil, fmt.Errorf("bench: RunUCISemi: split %d: %w", split, err)
		}
		D := len(lin)
		// Marginal sd √Σ_jj and conditional sd 1/√(Σ⁻¹)_jj of each coefficient, original units.
		var ch mat.Cholesky
		var precision mat.SymDense
		if !ch.Factorize(mat.NewSymDense(D, slices.Clone(cc))) || ch.InverseTo(&precision) != nil {
			return nil, fmt.Errorf("bench: RunUCISemi: split %d: conditional covariance of γ is not positive definite", split)
		}
		condSD := make([]float64, 2*D) // marginal, conditional per column
		for k, j := range linCols {
			u := sy / sx[j]
			cm[k] *= u
			condSD[2*k] = math.Sqrt(cc[k*D+k]) * u
			condSD[2*k+1] = u / math.Sqrt(precision.At(k, k))
		}
		g := fit.Coefficients(semiDraws, cfg.Seed+1)
		for i := range semiDraws { // to original units: Δy per unit of the column
			for k, j := range linCols {
				g[i*len(lin)+k] *= sy / sx[j]
			}
		}
		mean, v := fit.Predict(Tnn, Tlin, nte, 400, cfg.Seed+2)
		ll, se := 0.0, 0.0
		for i := range nte {
			e := yte[i] - mean[i]
			ll += -0.5*(math.Log(2*math.Pi*v[i])+e*e/v[i]) - math.Log(sy)
			se += e * e * sy * sy
		}
		posts = append(posts, semiPost{name: kind, draws: g, ll: ll / float64(nte), rmse: math.Sqrt(se / float64(nte)), condMu: cm, condSD: condSD})
		fmt.Fprintf(cfg.Progress, "split %d, %s: test LL %.3f, RMSE %.3f\n", split, kind, ll/float64(nte), math.Sqrt(se/float64(nte)))
	}
	return posts, nil
}

// column returns the draws of coefficient k of p.
func (p semiPost) column(k, D int) []float64 {
	x := make([]float64, semiDraws)
	for i := range x {
		x[i] = p.draws[i*D+k]
	}
	return x
}

// Markdown writes the first split's posterior of the coefficients beside the exact
// conditional posterior, and the test scores and coefficient means over all splits.
func (r *UCISemiReport) Markdown(w io.Writer, h resultmd.Header) error {
	cfg := r.Config
	lin := cfg.Linear
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	resultmd.Write(&b, "Semi-structured regression on "+r.set.name, h)
	p("- model: y = g(x_rest) + Σ γ_j x_j + ε with g a 50-unit ReLU network (point estimate, N(0, 1/10) weight prior), σ point-estimated, q(γ) a flow with prior N(0, 1) on the normalised scale; trained jointly on the ELBO, %d epochs, Adam 0.01 annealed by a cosine to 1%%, minibatch 32; 4,000 posterior draws; coefficients in original units (change of the target per unit of the column).\n", cfg.Epochs)
	p("- check: \"exact | g, σ\" is the exact posterior of γ with the network and σ fixed at their fitted values (the model is then linear-Gaussian in γ; bnn.SemiFit.ConditionalPosterior), the optimum a q(γ) should reach. Elementwise (mean-field) forms — the affine and the 1-D Bernstein flow — can match its means and its conditional sds 1/√(Σ⁻¹)_jj, not its marginal sds when the columns are correlated; the multivariate (triangular, BF-VI) Bernstein flow can match the marginal sds.\n\n")
	p("## Split %d: posterior of the coefficients\n\n", cfg.Split)
	p("| posterior | column | mean | sd | 5%% | 95%% | exact \\| g, σ: mean | sd | conditional sd |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, post := range r.first {
		for k, c := range lin {
			x := post.column(k, len(lin))
			mu, sd := meanSE(x)
			sd *= math.Sqrt(float64(len(x))) // meanSE gives sd/√n
			slices.Sort(x)
			p("| %s | %d | %.4g | %.3g | %.4g | %.4g | %.4g | %.3g | %.3g |\n", post.name, c, mu, sd, x[semiDraws/20], x[semiDraws-semiDraws/20], post.condMu[k], post.condSD[2*k], post.condSD[2*k+1])
		}
	}
	p("\n## Test scores")
	if cfg.Splits > 1 {
		p(" over splits %d–%d (mean ± standard error)", cfg.Split, cfg.Split+cfg.Splits-1)
	}
	p("\n\n| posterior | test log-likelihood | test RMSE |")
	for _, c := range lin {
		p(" γ_%d mean |", c)
	}
	p("\n|---|---:|---:|%s\n", strings.Repeat("---:|", len(lin)))
	pmf := func(v []float64, f string) string {
		m, se := meanSE(v)
		if len(v) == 1 {
			return fmt.Sprintf(f, m)
		}
		return fmt.Sprintf(f+" ± %.2g", m, se)
	}
	for k, name := range r.kinds {
		var ll, rmse []float64
		coef := make([][]float64, len(lin))
		for _, post := range r.all[k] {
			ll, rmse = append(ll, post.ll), append(rmse, post.rmse)
			for c := range lin {
				s := 0.0
				for i := range semiDraws {
					s += post.draws[i*len(lin)+c]
				}
				coef[c] = append(coef[c], s/semiDraws)
			}
		}
		p("| %s | %s | %s |", name, pmf(ll, "%.3f"), pmf(rmse, "%.3f"))
		for c := range lin {
			p(" %s |", pmf(coef[c], "%.4g"))
		}
		p("\n")
	}
	if cfg.SVGName != "" {
		p("\nPosterior densities (split %d): `%s`.\n", cfg.Split, cfg.SVGName)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SVG draws the first split's posterior densities: one panel per linear column with a
// Gaussian kernel density estimate (Silverman's bandwidth 1.06·sd·n^(−1/5)) of each posterior's
// draws on a 200-point grid. Cost O(kinds · columns · 200 · draws).
func (r *UCISemiReport) SVG(w io.Writer) error {
	const pw, ph, mg = 360.0, 240.0, 40.0
	colors := []string{"#1f77b4", "#d62728", "#2ca02c"}
	cols := r.Config.Linear
	var b strings.Builder
	W := pw*float64(len(cols)) + mg
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", W, ph+2*mg)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for k, c := range cols {
		series := make([][]float64, len(r.first))
		lo, hi := math.Inf(1), math.Inf(-1)
		for si, post := range r.first {
			series[si] = post.column(k, len(cols))
			v := slices.Clone(series[si])
			slices.Sort(v)
			lo, hi = min(lo, v[len(v)/200]), max(hi, v[len(v)-1-len(v)/200])
		}
		pad := 0.15 * (hi - lo)
		lo, hi = lo-pad, hi+pad
		const G = 200
		curves := make([][]float64, len(series))
		ymax := 0.0
		for si, x := range series {
			_, se := meanSE(x)
			sd := se * math.Sqrt(float64(len(x)))
			bw := 1.06 * sd * math.Pow(float64(len(x)), -0.2)
			curves[si] = make([]float64, G)
			for g := range G {
				t := lo + (hi-lo)*float64(g)/(G-1)
				acc := 0.0
				for _, xi := range x {
					z := (t - xi) / bw
					acc += math.Exp(-0.5 * z * z)
				}
				curves[si][g] = acc / (float64(len(x)) * bw * math.Sqrt(2*math.Pi))
				ymax = max(ymax, curves[si][g])
			}
		}
		x0 := mg + pw*float64(k)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x0, mg+ph, x0+pw-mg, mg+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%.3g</text><text x="%.1f" y="%.1f" text-anchor="end">%.3g</text>`+"\n", x0, mg+ph+15, lo, x0+pw-mg, mg+ph+15, hi)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s: coefficient of column %d</text>`+"\n", x0+(pw-mg)/2, mg-10, r.set.name, c)
		for si, cv := range curves {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="`, colors[si%len(colors)])
			for g, v := range cv {
				px := x0 + (pw-mg)*float64(g)/(G-1)
				py := mg + ph - ph*0.95*v/ymax
				fmt.Fprintf(&b, "%.1f,%.1f ", px, py)
			}
			fmt.Fprintf(&b, "\"/>\n")
		}
	}
	for si, n := range r.kinds {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n", mg, ph+2*mg-5-14*float64(len(r.kinds)-1-si), colors[si%len(colors)], n)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
