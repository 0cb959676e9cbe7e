package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/stan"
	"github.com/vigo-bayes/vigo/zoo"
)

// StanSpeedConfig configures RunStanSpeed.
type StanSpeedConfig struct {
	// Root is the posteriordb-full snapshot (models/ for the Stan programs, data/).
	Root string
	// Dir is the public posteriordb directory the zoo models load from.
	Dir string
	// Budget is the time spent timing each gradient (default 1 s).
	Budget time.Duration
}

// StanSpeedRow is one zoo model: the time of one gradient of the hand-written zoo model and
// of the Stan-compiled program on the same data.
type StanSpeedRow struct {
	Name, Posterior string
	Dim             int
	Zoo, Stan       time.Duration // per gradient
	Err             string
}

// StanSpeedReport is RunStanSpeed's table.
type StanSpeedReport struct {
	Budget time.Duration
	Rows   []StanSpeedRow
}

// timeGrad returns the mean time of one gradient of tg at z, over at least budget (after
// one warm-up gradient), reusing one tape as a fit does.
func timeGrad(tg model.Target, z []float64, budget time.Duration) time.Duration {
	var t ad.Tape
	g := make([]float64, tg.Dim())
	model.Gradient(&t, tg, z, g)
	n := 0
	start := time.Now()
	for time.Since(start) < budget || n < 3 {
		model.Gradient(&t, tg, z, g)
		n++
	}
	return time.Since(start) / time.Duration(n)
}

// RunStanSpeed times, in one run, the gradient of each zoo model and of its posteriordb Stan
// program compiled by package stan, at the same random point u ~ U(−2, 2)^d (fixed seed; the
// two unconstrained orders may differ, which does not change the cost).
func RunStanSpeed(ctx context.Context, cfg StanSpeedConfig) (*StanSpeedReport, error) {
	if cfg.Budget <= 0 {
		cfg.Budget = time.Second
	}
	rep := &StanSpeedReport{Budget: cfg.Budget}
	for _, name := range zoo.Names() {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("bench: RunStanSpeed: %w", context.Cause(ctx))
		}
		row := StanSpeedRow{Name: name}
		err := func() error {
			zm, err := zoo.Load(name, cfg.Dir)
			if err != nil {
				return err
			}
			row.Posterior = zm.Posterior
			prog := strings.TrimPrefix(zm.Posterior, zm.Info.Data+"-")
			src, err := os.ReadFile(filepath.Join(cfg.Root, "models", prog+".stan"))
			if err != nil {
				return err
			}
			d, err := model.LoadData(zm.Info.DataPath(cfg.Dir))
			if err != nil {
				return err
			}
			sm, err := stan.Compile(prog+".stan", src, d)
			if err != nil {
				return err
			}
			if sm.Dim() != zm.Dim() {
				return fmt.Errorf("dimension %d, zoo %d", sm.Dim(), zm.Dim())
			}
			row.Dim = sm.Dim()
			r := rand.New(rand.NewPCG(20261202, 1))
			z := make([]float64, row.Dim)
			for i := range z {
				z[i] = 4*r.Float64() - 2
			}
			row.Zoo = timeGrad(zm, z, cfg.Budget)
			row.Stan = timeGrad(sm, z, cfg.Budget)
			return nil
		}()
		if err != nil {
			row.Err = err.Error()
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// Markdown writes the table: per model the two gradient times and their ratio.
func (r *StanSpeedReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	resultmd.Write(&b, "Gradient cost: Stan programs compiled by vigo vs the hand-written zoo models", h)
	fmt.Fprintf(&b, "\nOne gradient (one tape reused, as a fit does) at the same random point, timed for %v each; the\n"+
		"goal is Stan/zoo ≤ 2 on every model.\n\n", r.Budget)
	b.WriteString("| model | posterior | dim | zoo µs/grad | Stan program µs/grad | Stan/zoo | ≤ 2? |\n|---|---|---|---|---|---|---|\n")
	for _, x := range r.Rows {
		if x.Err != "" {
			fmt.Fprintf(&b, "| %s | %s | | | | | error: %s |\n", x.Name, x.Posterior, strings.ReplaceAll(x.Err, "|", "\\|"))
			continue
		}
		ratio := float64(x.Stan) / float64(x.Zoo)
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %.2f | %.2f | %s |\n", x.Name, x.Posterior, x.Dim,
			float64(x.Zoo.Nanoseconds())/1e3, float64(x.Stan.Nanoseconds())/1e3, ratio, yn(ratio <= 2))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
