package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
	"github.com/vigo-bayes/vigo/stan"
	"github.com/vigo-bayes/vigo/zoo"
)

// The Stan gradient benchmark (issue 15 item 2): the gradient of each public posteriordb
// posterior as the hand-written zoo model and as its Stan program compiled by package stan,
// timed in one run on the same unconstrained points, with — when rstan is installed — Stan's
// own C++ gradient timed inside its sampler (bench/stan/grad_time.R) in the same run.
//
// Points: StanGradPoints draws z ~ uniform(−2, 2)^d (Stan's default initialisation region)
// with a fixed seed; both models are evaluated on the same points, cycled. The two
// unconstrained parameterisations may order coordinates differently, so the points are the
// same in distribution, not coordinate by coordinate; the corpus test (stan/corpus_test.go)
// is what proves the compiled log density equal to Stan's. Timing: the best of Rounds
// testing.Benchmark runs per model, zoo and Stan alternating, so that load drift hits both.

// StanGradPoints is the number of points each gradient is timed on.
const StanGradPoints = 10

// StanGradConfig configures RunStanGrad.
type StanGradConfig struct {
	PosteriorDB string // ../shared/data/posteriordb (data, reference posteriors)
	Full        string // ../shared/data/posteriordb-full (the Stan programs in models/)
	Rounds      int    // timing repetitions per model, best taken; default 3
	// RStan is the path of bench/stan/grad_time.R; "" skips Stan's own gradient.
	RStan   string
	Rscript string // default "Rscript"
	Models  []string
}

// StanGradRow is one posterior of RunStanGrad.
type StanGradRow struct {
	Name, Program string
	Dim           int
	Zoo, Stan     float64 // seconds per gradient
	ZooAllocs     int64
	StanAllocs    int64
	RStan         float64 // seconds per gradient inside Stan's sampler; 0 when not run
	Err           string  // why the Stan program could not be timed ("" when it was)
}

// StanGradReport holds the rows of RunStanGrad.
type StanGradReport struct {
	Config StanGradConfig
	Rows   []StanGradRow
}

// RunStanGrad times every public posterior's gradient, zoo and compiled Stan, in one run (see
// the comment at the top of this file). A program that does not compile is a row with Err; a
// cancelled context returns the rows so far with its error.
func RunStanGrad(ctx context.Context, cfg StanGradConfig) (*StanGradReport, error) {
	if cfg.Rounds < 0 {
		return nil, fmt.Errorf("bench: RunStanGrad: Rounds must not be negative (Rounds=%d)", cfg.Rounds)
	}
	setDefault(&cfg.Rounds, 3)
	setDefault(&cfg.Rscript, "Rscript")
	if cfg.PosteriorDB == "" || cfg.Full == "" {
		return nil, fmt.Errorf("bench: RunStanGrad: PosteriorDB and Full must be set (PosteriorDB=%q, Full=%q)", cfg.PosteriorDB, cfg.Full)
	}
	names := cfg.Models
	if len(names) == 0 {
		names = zoo.Names()
	}
	rep := &StanGradReport{Config: cfg}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		row, err := stanGradRow(cfg, name)
		if err != nil {
			return rep, err
		}
		rep.Rows = append(rep.Rows, row)
	}
	if cfg.RStan != "" {
		if err := rstanGrad(ctx, cfg, rep.Rows); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func stanGradRow(cfg StanGradConfig, name string) (StanGradRow, error) {
	zm, err := zoo.Load(name, cfg.PosteriorDB)
	if err != nil {
		return StanGradRow{}, fmt.Errorf("bench: RunStanGrad: %w", err)
	}
	row := StanGradRow{Name: zm.Posterior, Dim: zm.Dim()}
	prog, err := posteriorProgram(cfg.Full, zm.Posterior)
	if err != nil {
		return StanGradRow{}, fmt.Errorf("bench: RunStanGrad: %w", err)
	}
	row.Program = filepath.Base(prog)
	src, err := os.ReadFile(prog)
	if err != nil {
		return StanGradRow{}, fmt.Errorf("bench: RunStanGrad: %w", err)
	}
	d, err := model.LoadData(zm.DataPath(cfg.PosteriorDB))
	if err != nil {
		return StanGradRow{}, fmt.Errorf("bench: RunStanGrad: %w", err)
	}
	sm, err := stan.Compile(prog, src, d)
	if err != nil {
		row.Err = firstLine(err.Error())
		return row, nil
	}
	if sm.Dim() != zm.Dim() {
		row.Err = fmt.Sprintf("unconstrained dimension %d, zoo model's %d", sm.Dim(), zm.Dim())
		return row, nil
	}
	pts := uniformPoints(zm.Dim(), StanGradPoints)
	for _, tg := range []model.Target{zm, sm} {
		if err := finiteGradients(tg, pts); err != nil {
			row.Err = err.Error()
			return row, nil
		}
	}
	for r := 0; r < cfg.Rounds; r++ {
		z, za := timeIt(gradLoop(zm, pts), 1)
		s, sa := timeIt(gradLoop(sm, pts), 1)
		if r == 0 || z < row.Zoo {
			row.Zoo = z
		}
		if r == 0 || s < row.Stan {
			row.Stan = s
		}
		row.ZooAllocs, row.StanAllocs = za, sa
	}
	return row, nil
}

// posteriorProgram returns the Stan program of a posteriordb posterior: models/NAME.stan of
// the posterior's model_name in posteriors/POSTERIOR.json.
func posteriorProgram(full, posterior string) (string, error) {
	b, err := os.ReadFile(filepath.Join(full, "posteriors", posterior+".json"))
	if err != nil {
		return "", err
	}
	var p struct {
		Model string `json:"model_name"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("posterior %s: %v", posterior, err)
	}
	if p.Model == "" {
		return "", fmt.Errorf("posterior %s: no model_name", posterior)
	}
	return filepath.Join(full, "models", p.Model+".stan"), nil
}

func uniformPoints(d, n int) [][]float64 {
	s := rng.New(20261202, 0)
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = make([]float64, d)
		for j := range pts[i] {
			pts[i][j] = -2 + 4*s.Float64()
		}
	}
	return pts
}

func finiteGradients(tg model.Target, pts [][]float64) error {
	var t ad.Tape
	g := make([]float64, tg.Dim())
	for i, z := range pts {
		lp := model.Gradient(&t, tg, z, g)
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			return fmt.Errorf("log density %g at point %d", lp, i)
		}
		for _, v := range g {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("gradient not finite at point %d", i)
			}
		}
	}
	return nil
}

// gradLoop returns a function that evaluates the next point's gradient on a reused tape.
func gradLoop(tg model.Target, pts [][]float64) func() {
	var t ad.Tape
	g := make([]float64, tg.Dim())
	i := 0
	return func() {
		model.Gradient(&t, tg, pts[i], g)
		if i++; i == len(pts) {
			i = 0
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// rstanGrad runs bench/stan/grad_time.R on the rows' posteriors and fills RStan. Its output
// lines are posterior, gradient evaluations, wall seconds, µs per gradient (tab-separated).
func rstanGrad(ctx context.Context, cfg StanGradConfig, rows []StanGradRow) error {
	if _, err := os.Stat(cfg.RStan); err != nil {
		return fmt.Errorf("bench: RunStanGrad: RStan: %w", err)
	}
	args := []string{cfg.RStan}
	for _, r := range rows {
		args = append(args, r.Name)
	}
	cmd := exec.CommandContext(ctx, cfg.Rscript, args...)
	cmd.Env = append(os.Environ(), "POSTERIORDB="+cfg.PosteriorDB)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("bench: RunStanGrad: %s %s: %v: %s", cfg.Rscript, cfg.RStan, err, firstLine(stderr.String()))
	}
	got := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			continue
		}
		us, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			return fmt.Errorf("bench: RunStanGrad: rstan output %q: %v", sc.Text(), err)
		}
		got[f[0]] = us * 1e-6
	}
	for i := range rows {
		rows[i].RStan = got[rows[i].Name]
	}
	return nil
}

// Markdown writes the report as bench/results/stan_grad.md.
func (r *StanGradReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	resultmd.Write(&b, "Gradient of a compiled Stan program vs the hand-written zoo model (and Stan's own)", h)
	fmt.Fprintf(&b, "\nEach gradient is timed on the same %d points z ~ uniform(−2, 2)^d, best of %d rounds, zoo and "+
		"compiled Stan alternating. Stan's own C++ gradient is timed inside its sampler (bench/stan/grad_time.R: one "+
		"chain, 1000 warmup + 1000 draws; sampler wall time / leapfrog steps). Goal (issue 15): compiled ≤ 2× zoo.\n\n", StanGradPoints, r.Config.Rounds)
	fmt.Fprintln(&b, "| posterior | program | d | zoo (Go) | compiled Stan | Stan / zoo | allocs/op (zoo, Stan) | rstan in-sampler | compiled / rstan | goal ≤ 2× |")
	fmt.Fprintln(&b, "|---|---|---:|---:|---:|---:|---|---:|---:|---|")
	met, n := 0, 0
	for _, row := range r.Rows {
		if row.Err != "" {
			fmt.Fprintf(&b, "| %s | %s | %d | — | — | — | — | %s | — | not timed: %s |\n", row.Name, row.Program, row.Dim, durOrDash(row.RStan), row.Err)
			continue
		}
		ratio := row.Stan / row.Zoo
		n++
		goal := "met"
		if ratio <= 2 {
			met++
		} else {
			goal = "missed"
		}
		vs := "—"
		if row.RStan > 0 {
			vs = fmt.Sprintf("%.2f", row.Stan/row.RStan)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %.2f | %d, %d | %s | %s | %s |\n", row.Name, row.Program, row.Dim,
			fmtDur(row.Zoo), fmtDur(row.Stan), ratio, row.ZooAllocs, row.StanAllocs, durOrDash(row.RStan), vs, goal)
	}
	fmt.Fprintf(&b, "\nCompiled Stan within 2× of the zoo model on %d of %d timed posteriors (%d rows in all).\n", met, n, len(r.Rows))
	_, err := io.WriteString(w, b.String())
	return err
}

func durOrDash(s float64) string {
	if s <= 0 {
		return "—"
	}
	return fmtDur(s)
}
