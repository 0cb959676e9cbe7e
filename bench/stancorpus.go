package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/stan"
)

// StanCorpusConfig configures RunStanCorpus.
type StanCorpusConfig struct {
	// Root is the posteriordb-full snapshot (posteriors/, models/, data/, rstan-logprob/).
	Root string
	// Posteriors restricts the run to these names (nil: all).
	Posteriors []string
	// Progress, when set, receives each posterior's result as it is checked.
	Progress func(stan.CorpusResult)
}

// StanCorpusReport is the outcome of RunStanCorpus: one stan.CorpusResult per posterior.
type StanCorpusReport struct {
	Root    string
	Results []stan.CorpusResult
}

// RunStanCorpus compiles every posterior of the snapshot from its Stan program and data and
// compares its log density (with and without Jacobian), gradient and constrained values with
// rstan's at the reference points (stan.CheckPosterior). It stops early, with the results so
// far, when ctx is cancelled.
func RunStanCorpus(ctx context.Context, cfg StanCorpusConfig) (*StanCorpusReport, error) {
	names := cfg.Posteriors
	if names == nil {
		var err error
		if names, err = stan.Posteriors(cfg.Root); err != nil {
			return nil, fmt.Errorf("bench: RunStanCorpus: %w", err)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("bench: RunStanCorpus: no posteriors in %s/posteriors", cfg.Root)
		}
	}
	rep := &StanCorpusReport{Root: cfg.Root}
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("bench: RunStanCorpus: %w", context.Cause(ctx))
		}
		r := stan.CheckPosterior(cfg.Root, n)
		rep.Results = append(rep.Results, r)
		if cfg.Progress != nil {
			cfg.Progress(r)
		}
	}
	return rep, nil
}

func yn(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Markdown writes bench/results/stan_corpus.md: the counts per stage and one row per
// posterior with the first failure (the unsupported construct, the error or the mismatch).
func (r *StanCorpusReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	resultmd.Write(&b, "Stan programs of posteriordb against rstan 2.21.7's log_prob", h)
	var parsed, checked, loaded, lp, grad, pass, ref int
	for _, x := range r.Results {
		for _, c := range []struct {
			ok bool
			n  *int
		}{{x.Parsed, &parsed}, {x.Checked, &checked}, {x.Loaded, &loaded}, {x.LP, &lp}, {x.Grad, &grad}, {x.Pass(), &pass}} {
			if c.ok {
				*c.n++
			}
		}
		if x.Skip == "" {
			ref++
		}
	}
	n := len(r.Results)
	fmt.Fprintf(&b, "\nEach posterior's Stan program (models/) is compiled with its data (data/) and evaluated at rstan's\n"+
		"10 unconstrained points (rstan-logprob/): log density with and without Jacobian (differences\n"+
		"between points, so that the constants `~` drops cancel) to %g relative, gradient to %g, constrained\n"+
		"parameters and transformed parameters to %g.\n\n", stan.LPTol, stan.GradTol, stan.ValueTol)
	fmt.Fprintf(&b, "| stage | posteriors (of %d) |\n|---|---|\n", n)
	fmt.Fprintf(&b, "| parses | %d |\n| type-checks | %d |\n| compiles and loads data | %d |\n| with an rstan reference | %d |\n| lp matches | %d |\n| gradient matches | %d |\n| all (lp, gradient, values) | %d |\n\n",
		parsed, checked, loaded, ref, lp, grad, pass)
	b.WriteString("| posterior | dim | parses | checks | data | lp | grad | values | max rel. lp err | max rel. grad err | seconds | first failure |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.Results {
		msg := x.Err
		if x.Skip != "" {
			msg = "skipped: " + x.Skip + "; " + msg
		}
		msg = strings.ReplaceAll(strings.ReplaceAll(msg, "|", "\\|"), "\n", " ")
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		e := func(v float64) string {
			if math.IsNaN(v) {
				return ""
			}
			return fmt.Sprintf("%.1e", v)
		}
		checkedRef := x.Loaded && x.Skip == ""
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s |\n", x.Posterior, x.Dim, yn(x.Parsed), yn(x.Checked), yn(x.Loaded),
			yn(checkedRef && x.LP), yn(checkedRef && x.Grad), yn(checkedRef && x.Values), e(x.MaxLP), e(x.MaxGrad), x.Seconds, msg)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
