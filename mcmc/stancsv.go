package mcmc

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/model"
)

// SamplerColumns are CmdStan's NUTS sampler columns, in its order.
var SamplerColumns = []string{"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__"}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func itoa01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// StanCSV returns chain c of r as a Stan CSV file in CmdStan's layout: a config header (the
// run's settings, under CmdStan's key names), the sampler columns, then the reported values
// of each draw — constrain(dst, z) maps a draw z to them, named names in bracket notation
// (written dotted) — the adapted step size and inverse metric as CmdStan's adaptation
// comments, and the elapsed times. With constrain nil the draws are written unconstrained
// (names then has Dim entries). modelName goes into the header.
func (r *Result) StanCSV(c int, modelName string, names []string, constrain func(dst, z []float64) []float64) *model.StanCSV {
	if constrain == nil {
		if len(names) != r.Dim {
			panic(fmt.Sprintf("mcmc: Result.StanCSV: %d names for %d dimensions", len(names), r.Dim))
		}
		constrain = func(dst, z []float64) []float64 { copy(dst, z); return dst }
	}
	cfg := r.Config
	ch := &r.Chains[c]
	engine := "nuts"
	if cfg.Algorithm == StaticHMC {
		engine = "static"
	}
	adapt := cfg.Warmup > 0
	conf := []string{
		"model = " + modelName,
		"method = sample",
		"  sample",
		"    num_samples = " + strconv.Itoa(cfg.Draws),
		"    num_warmup = " + strconv.Itoa(cfg.Warmup),
		"    save_warmup = " + itoa01(cfg.SaveWarmup),
		"    thin = " + strconv.Itoa(cfg.Thin),
		"    adapt",
		"      engaged = " + itoa01(adapt),
		"      gamma = " + ftoa(cfg.Gamma),
		"      delta = " + ftoa(cfg.TargetAccept),
		"      kappa = " + ftoa(cfg.Kappa),
		"      t0 = " + ftoa(cfg.T0),
		"      init_buffer = " + strconv.Itoa(cfg.InitBuffer),
		"      term_buffer = " + strconv.Itoa(cfg.TermBuffer),
		"      window = " + strconv.Itoa(cfg.Window),
		"    algorithm = hmc",
		"      hmc",
		"        engine = " + engine,
	}
	if cfg.Algorithm == NUTS {
		conf = append(conf, "          nuts", "            max_depth = "+strconv.Itoa(cfg.MaxDepth))
	} else {
		conf = append(conf, "          static", "            steps = "+strconv.Itoa(cfg.Steps))
	}
	conf = append(conf,
		"        metric = "+cfg.Metric.String(),
		"        stepsize = "+ftoa(cfg.StepSize),
		"        stepsize_jitter = 0",
		"    num_chains = "+strconv.Itoa(cfg.Chains),
		"id = "+strconv.Itoa(c+1),
		"init = "+ftoa(cfg.InitRadius),
		"random",
		"  seed = "+strconv.FormatUint(cfg.Seed, 10),
		"sampler = vigo mcmc (chain c draws from rng stream c of the seed)",
	)

	cols := append(append([]string(nil), SamplerColumns...), names...)
	k := len(cols)
	rows := func(draws []float64, stats []Stats) []float64 {
		out := make([]float64, len(stats)*k)
		for i, s := range stats {
			row := out[i*k : (i+1)*k]
			row[0], row[1], row[2] = s.LogDensity, s.AcceptStat, s.StepSize
			row[3], row[4] = float64(s.TreeDepth), float64(s.NLeapfrog)
			row[5], row[6] = 0, s.Energy
			if s.Divergent {
				row[5] = 1
			}
			constrain(row[len(SamplerColumns):], draws[i*r.Dim:(i+1)*r.Dim])
		}
		return out
	}

	var adaptLines []string
	if adapt {
		adaptLines = append(adaptLines, "Adaptation terminated", "Step size = "+ftoa(ch.StepSize))
		if len(ch.InvMetric) == r.Dim*r.Dim && (r.Dim > 1 || cfg.Metric == Dense) {
			adaptLines = append(adaptLines, "Elements of inverse mass matrix:")
			for i := range r.Dim {
				adaptLines = append(adaptLines, joinFloats(ch.InvMetric[i*r.Dim:(i+1)*r.Dim]))
			}
		} else {
			adaptLines = append(adaptLines, "Diagonal elements of inverse mass matrix:", joinFloats(ch.InvMetric))
		}
	}
	secs := func(d time.Duration) string { return fmt.Sprintf("%.3f seconds", d.Seconds()) }
	pad := strings.Repeat(" ", len(" Elapsed Time: "))
	trailer := []string{"",
		" Elapsed Time: " + secs(ch.WarmupTime) + " (Warm-up)",
		pad + secs(ch.SampleTime) + " (Sampling)",
		pad + secs(ch.WarmupTime+ch.SampleTime) + " (Total)",
		""}
	return &model.StanCSV{
		Config:     conf,
		Names:      cols,
		Warmup:     rows(ch.WarmupDraws, ch.WarmupStats),
		Adaptation: adaptLines,
		Draws:      rows(ch.Draws, ch.Stats),
		Trailer:    trailer,
	}
}

func joinFloats(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = ftoa(v)
	}
	return strings.Join(s, ", ")
}

// StatsFromCSV reads the sampler columns of a Stan CSV file's draws; ok is false when the
// file lacks any of them (not a NUTS/HMC file). The maximum tree depth comes from its config
// (max_depth, 10 when absent; 0 for a static HMC file).
func StatsFromCSV(s *model.StanCSV) (stats []Stats, maxDepth int, ok bool) {
	idx := make([]int, len(SamplerColumns))
	for i, n := range SamplerColumns {
		if idx[i] = s.Index(n); idx[i] < 0 {
			return nil, 0, false
		}
	}
	k := len(s.Names)
	stats = make([]Stats, s.NumDraws())
	for i := range stats {
		row := s.Draws[i*k : (i+1)*k]
		stats[i] = Stats{
			LogDensity: row[idx[0]],
			AcceptStat: row[idx[1]],
			StepSize:   row[idx[2]],
			TreeDepth:  int(row[idx[3]]),
			NLeapfrog:  int(row[idx[4]]),
			Divergent:  row[idx[5]] != 0,
			Energy:     row[idx[6]],
		}
	}
	maxDepth = 10
	if v, ok := s.ConfigValue("max_depth"); ok {
		if d, err := strconv.Atoi(v); err == nil {
			maxDepth = d
		}
	}
	if e, _ := s.ConfigValue("engine"); e == "static" {
		maxDepth = 0
	}
	return stats, maxDepth, true
}
