package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	// RStan is the path of bench/stan/grad_time.R: Stan's own C++ gradient, timed inside its
	// sampler in the same run ("": not run). Rscript is the R interpreter (default "Rscript").
	RStan, Rscript string
}

// StanSpeedRow is one zoo model: the time of one gradient of the hand-written zoo model and
// of the Stan-compiled program on the same data.
type StanSpeedRow struct {
	Name, Posterior string
	Dim             int
	Zoo, Stan       time.Duration // per gradient
	// RStan is rstan's gradient inside its sampler (sampler wall time / leapfrog steps, one
	// chain of 300 warmup + 300 draws); 0 when not run.
	RStan time.Duration
	Err   string
}

// StanSpeedReport is RunStanSpeed's table.
type StanSpeedReport struct {
	Budget time.Duration
	RStan  bool // the rstan column was measured
	Rows   []StanSpeedRow
}

// timeGradPair times one gradient of a and of b at z (one tape each, reused as a fit does),
// alternating chunks of 64 gradients until each has had half the budget, by the process's CPU
// time where the system reports it (else wall time): load from other processes that comes and
// goes then falls on both alike.
func timeGradPair(a, b model.Target, z []float64, budget time.Duration) (da, db time.Duration) {
	const chunk = 64
	var ta, tb ad.Tape
	ga, gb := make([]float64, a.Dim()), make([]float64, b.Dim())
	model.Gradient(&ta, a, z, ga)
	model.Gradient(&tb, b, z, gb)
	clock := func() time.Duration {
		if c, ok := processCPU(); ok {
			return c
		}
		return time.Duration(time.Now().UnixNano())
	}
	var sa, sb time.Duration
	n := 0
	for start := time.Now(); time.Since(start) < budget || n < 3; n++ {
		c0 := clock()
		for range chunk {
			model.Gradient(&ta, a, z, ga)
		}
		c1 := clock()
		for range chunk {
			model.Gradient(&tb, b, z, gb)
		}
		sa, sb = sa+c1-c0, sb+clock()-c1
	}
	return sa / time.Duration(n*chunk), sb / time.Duration(n*chunk)
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
			pinfo, err := model.LoadPosteriorInfo(filepath.Join(cfg.Root, "posteriors", zm.Posterior+".json"))
			if err != nil {
				return err
			}
			prog := pinfo.ModelName
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
			row.Zoo, row.Stan = timeGradPair(zm, sm, z, 2*cfg.Budget)
			return nil
		}()
		if err != nil {
			row.Err = err.Error()
		}
		rep.Rows = append(rep.Rows, row)
	}
	if cfg.RStan != "" {
		if err := rstanGrad(ctx, cfg, rep.Rows); err != nil {
			return rep, err
		}
		rep.RStan = true
	}
	return rep, nil
}

// rstanGrad runs bench/stan/grad_time.R on the rows' posteriors and fills RStan. Its output
// lines are posterior, gradient evaluations, wall seconds, µs per gradient (tab-separated).
func rstanGrad(ctx context.Context, cfg StanSpeedConfig, rows []StanSpeedRow) error {
	if _, err := os.Stat(cfg.RStan); err != nil {
		return fmt.Errorf("bench: RunStanSpeed: RStan: %w", err)
	}
	rscript := cfg.Rscript
	if rscript == "" {
		rscript = "Rscript"
	}
	args := []string{cfg.RStan}
	for _, r := range rows {
		if r.Posterior != "" {
			args = append(args, r.Posterior)
		}
	}
	cmd := exec.CommandContext(ctx, rscript, args...)
	cmd.Env = append(os.Environ(), "POSTERIORDB="+cfg.Dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return fmt.Errorf("bench: RunStanSpeed: %s %s: %v: %s", rscript, cfg.RStan, err, msg)
	}
	got := map[string]time.Duration{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			continue
		}
		us, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			return fmt.Errorf("bench: RunStanSpeed: rstan output %q: %v", line, err)
		}
		got[f[0]] = time.Duration(us * 1e3)
	}
	for i := range rows {
		rows[i].RStan = got[rows[i].Posterior]
	}
	return nil
}

// Markdown writes the table: per model the two gradient times and their ratio.
func (r *StanSpeedReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	resultmd.Write(&b, "Gradient cost: Stan programs compiled by vigo vs the hand-written zoo models", h)
	fmt.Fprintf(&b, "\nOne gradient (one tape reused, as a fit does) at the same random point: the zoo model and the Stan\n"+
		"program alternate in chunks of 64 gradients for %v each, timed by the process's CPU time (so load from other\n"+
		"processes falls on both alike); the goal is Stan/zoo ≤ 2 on every model.", r.Budget)
	if r.RStan {
		b.WriteString(" rstan: Stan's own C++ gradient timed inside its sampler in the same run (bench/stan/grad_time.R: " +
			"one chain, 300 warmup + 300 draws, the sampler's elapsed time — rstan 2.21 measures it with clock(), CPU time — " +
			"over its leapfrog steps, so NUTS's own bookkeeping is included).")
	}
	b.WriteString("\n\n| model | posterior | dim | zoo µs/grad | Stan program µs/grad | Stan/zoo | ≤ 2? | rstan µs/grad | Stan program / rstan |\n|---|---|---|---|---|---|---|---|---|\n")
	met, timed := 0, 0
	for _, x := range r.Rows {
		if x.Err != "" {
			fmt.Fprintf(&b, "| %s | %s | | | | | error: %s | | |\n", x.Name, x.Posterior, strings.ReplaceAll(x.Err, "|", "\\|"))
			continue
		}
		ratio := float64(x.Stan) / float64(x.Zoo)
		timed++
		if ratio <= 2 {
			met++
		}
		rs, vs := "—", "—"
		if x.RStan > 0 {
			rs = fmt.Sprintf("%.2f", float64(x.RStan.Nanoseconds())/1e3)
			vs = fmt.Sprintf("%.2f", float64(x.Stan)/float64(x.RStan))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %.2f | %.2f | %s | %s | %s |\n", x.Name, x.Posterior, x.Dim,
			float64(x.Zoo.Nanoseconds())/1e3, float64(x.Stan.Nanoseconds())/1e3, ratio, yn(ratio <= 2), rs, vs)
	}
	fmt.Fprintf(&b, "\nStan program within 2× of the zoo model on %d of %d timed models.\n", met, timed)
	_, err := io.WriteString(w, b.String())
	return err
}
