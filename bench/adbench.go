package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// The AD rows of bench/results/ad.md: the same functions as the analytic floor (analytic.go)
// and the PyTorch peer (peers/torch_grad.py), written the way a vigo user writes them — fused
// density nodes and a fused Dense layer on the tape.

// logisticAD is Bayesian logistic regression: one GLM node plus one prior node.
func logisticAD(ld *LogisticData) ad.Func {
	XT := ad.Mat{Rows: ld.D, Cols: ld.N, Data: ld.XT}
	return func(t *ad.Tape, th ad.Var) ad.Var {
		alpha, beta := t.Index(th, 0), t.Slice(th, 1, ld.D+1)
		lik := density.BernoulliLogitGLM(t, ld.Y, XT, alpha, beta)
		return t.Add(lik, density.Normal(t, th, t.Const(0), t.Const(1)))
	}
}

// mlpAD is the 8→50→1 ReLU MLP with a Gaussian likelihood (σ = 1) and N(0, 1) priors, in the
// analytic floor's parameter layout (W1 is hidden×in; Dense wants in×hidden, hence the
// transpose of 400 numbers).
func mlpAD(md *MLPData, hidden int) ad.Func {
	in := md.In
	X := ad.Mat{Rows: md.N, Cols: in, Data: md.X}
	return func(t *ad.Tape, th ad.Var) ad.Var {
		W1 := t.Transpose(t.AsMatrix(t.Slice(th, 0, hidden*in), hidden, in))
		b1 := t.Slice(th, hidden*in, hidden*in+hidden)
		W2 := t.AsMatrix(t.Slice(th, hidden*in+hidden, hidden*in+2*hidden), hidden, 1)
		b2 := t.Slice(th, hidden*in+2*hidden, hidden*in+2*hidden+1)
		h := t.DenseC(X, W1, b1, ad.ReLU)
		out := t.Dense(h, W2, b2, ad.Linear)
		lik := density.Normal(t, t.ConstRef(md.Y), out, t.Const(1))
		return t.Add(lik, density.Normal(t, th, t.Const(0), t.Const(1)))
	}
}

// ADRow is one row of the AD benchmark: seconds per gradient for each implementation.
type ADRow struct {
	Key, Name         string
	AD, Analytic      float64 // measured now, seconds
	ADAllocs          int64   // allocations per AD gradient
	Torch             float64 // measured now (0: not run)
	Stan              float64 // rstan's in-sampler gradient, measured now (0: not run or no Stan program)
	StanRef, TorchRef float64 // the figures, measured before the project (seconds)
}

// adCase builds the four rows' closures.
type adCase struct {
	key, name         string
	stanRef, torchRef float64
	ad, analytic      func() func()
}

func adCases() []adCase {
	logistic := func(n, d int) (func() func(), func() func()) {
		ld := Logistic(n, d)
		th := ParamPoint(ld.Dim())
		adf := func() func() {
			var t ad.Tape
			g := make([]float64, len(th))
			f := logisticAD(ld)
			return func() { ad.Gradient(&t, f, th, g) }
		}
		an := func() func() {
			g := make([]float64, len(th))
			s := make([]float64, LogisticChunk)
			return func() { LogisticGrad(ld, th, g, s) }
		}
		return adf, an
	}
	l3a, l3n := logistic(1000, 10)
	l5a, l5n := logistic(100_000, 50)
	md := MLPRegression(10_000, MLPIn)
	mth := ParamPoint(MLPLayout{MLPIn, MLPHidden}.Dim())
	return []adCase{
		{"logistic_1000x10", "logistic regression N=1,000, D=10", 23e-6, 159e-6, l3a, l3n},
		{"logistic_100000x50", "logistic regression N=100,000, D=50", 5.7e-3, 11e-3, l5a, l5n},
		{"mlp_10000", "ReLU MLP 8→50→1, N=10,000", 39e-3, 8.3e-3,
			func() func() {
				var t ad.Tape
				g := make([]float64, len(mth))
				f := mlpAD(md, MLPHidden)
				return func() { ad.Gradient(&t, f, mth, g) }
			},
			func() func() {
				g := make([]float64, len(mth))
				s := make([]float64, MLPScratchLen(md.N, MLPHidden))
				return func() { MLPGrad(md, MLPHidden, mth, g, s) }
			}},
		{"eight_schools", "eight schools, non-centred (10 parameters)", 2.3e-6, 271e-6,
			func() func() {
				var t ad.Tape
				m := zoo.EightSchools()
				u := ParamPoint(10)
				g := make([]float64, 10)
				return func() { model.Gradient(&t, m, u, g) }
			},
			func() func() {
				u := ParamPoint(10)
				g := make([]float64, 10)
				return func() { EightSchoolsGrad(u, g) }
			}},
	}
}

// timeIt returns the least thread CPU time per call of f (seconds) over rounds runs of
// ≈ 0.3 s of CPU each (at most 5 s of wall time each), and the allocations per call. Thread
// CPU time, not wall time: on a shared machine a wall-clock figure counts the time the thread
// waits for a core, which Stan's own timing (clock(), the process's CPU time) and the
// PyTorch peer's (time.thread_time) do not, so the three are compared in the same unit.
func timeIt(f func(), rounds int) (float64, int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f()
	inner := 1 // calls per batch, so that a batch takes ≥ 1 ms of CPU (threadCPU is a system call)
	for {
		c0 := threadCPU()
		for range inner {
			f()
		}
		if threadCPU()-c0 >= time.Millisecond || inner >= 1<<20 {
			break
		}
		inner *= 2
	}
	best := math.Inf(1)
	for range rounds {
		n, c0, w0 := 0, threadCPU(), time.Now()
		for threadCPU()-c0 < 300*time.Millisecond && time.Since(w0) < 5*time.Second {
			for range inner {
				f()
			}
			n += inner
		}
		best = min(best, (threadCPU()-c0).Seconds()/float64(n))
	}
	return best, int64(testing.AllocsPerRun(10, f))
}

// ADConfig configures RunAD.
type ADConfig struct {
	Rounds int    // benchmark repetitions per row, best taken; default 3
	Torch  string // path of peers/torch_grad.py; "" skips the PyTorch peer
	Python string // interpreter with torch; default /usr/bin/python3
	// Stan is the path of bench/stan/ad_grad.R: rstan's gradient timed inside its sampler in
	// the same run, for the rows with a Stan program (logistic regression, eight schools); ""
	// skips it. Rscript is the R interpreter (default "Rscript"); PosteriorDB the posteriordb
	// directory for eight schools' data ("" lets the script use ../shared beside the checkout).
	Stan, Rscript, PosteriorDB string
	Note                       string // a paragraph under the report's header (machine load, build, …; "": none)
}

// ADReport holds the rows of RunAD.
type ADReport struct {
	Config ADConfig // with the defaults filled in
	Rows   []ADRow
}

// Markdown writes the report as the bench/results/ad.md table (WriteADMarkdown).
func (r *ADReport) Markdown(w io.Writer, h resultmd.Header) error {
	return WriteADMarkdown(w, h, r.Rows, r.Config.Note)
}

// RunAD measures every row in one run: vigo's AD gradient, the hand-written analytic floor and,
// when configured, the PyTorch peer (one thread).
// On cancellation it returns the rows measured so far with the context's error.
func RunAD(ctx context.Context, cfg ADConfig) (*ADReport, error) {
	if cfg.Rounds < 0 {
		return nil, fmt.Errorf("bench: RunAD: Rounds must not be negative (Rounds=%d)", cfg.Rounds)
	}
	setDefault(&cfg.Rounds, 3)
	setDefault(&cfg.Python, "/usr/bin/python3")
	var torch map[string]any
	if cfg.Torch != "" {
		if _, err := os.Stat(cfg.Torch); err != nil {
			return nil, fmt.Errorf("bench: RunAD: Torch: %w", err)
		}
		out, err := exec.CommandContext(ctx, cfg.Python, cfg.Torch, "--json").Output()
		if err != nil {
			return nil, fmt.Errorf("bench: RunAD: PyTorch peer %s: %v", cfg.Torch, err)
		}
		if err := json.Unmarshal(out, &torch); err != nil {
			return nil, fmt.Errorf("bench: RunAD: PyTorch peer output: %v", err)
		}
	}
	var stan map[string]float64
	if cfg.Stan != "" {
		var err error
		if stan, err = rstanADGrad(ctx, cfg); err != nil {
			return nil, err
		}
	}
	rep := &ADReport{Config: cfg}
	for _, c := range adCases() {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		r := ADRow{Key: c.key, Name: c.name, StanRef: c.stanRef, TorchRef: c.torchRef}
		r.AD, r.ADAllocs = timeIt(c.ad(), cfg.Rounds)
		r.Analytic, _ = timeIt(c.analytic(), cfg.Rounds)
		if v, ok := torch[c.key].(float64); ok {
			r.Torch = v
		}
		r.Stan = stan[c.key]
		rep.Rows = append(rep.Rows, r)
	}
	return rep, nil
}

// stanADCases are the rows with a Stan program in bench/stan (ad_grad.R's cases).
var stanADCases = []string{"logistic_1000x10", "logistic_100000x50", "eight_schools"}

// rstanADGrad runs bench/stan/ad_grad.R on stanADCases and returns seconds per gradient by
// row key. Its output lines are case, gradient evaluations, wall seconds, µs per gradient
// (tab-separated), as grad_time.R's.
func rstanADGrad(ctx context.Context, cfg ADConfig) (map[string]float64, error) {
	if _, err := os.Stat(cfg.Stan); err != nil {
		return nil, fmt.Errorf("bench: RunAD: Stan: %w", err)
	}
	rscript := cfg.Rscript
	if rscript == "" {
		rscript = "Rscript"
	}
	cmd := exec.CommandContext(ctx, rscript, append([]string{cfg.Stan}, stanADCases...)...)
	if cfg.PosteriorDB != "" {
		cmd.Env = append(os.Environ(), "POSTERIORDB="+cfg.PosteriorDB)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return nil, fmt.Errorf("bench: RunAD: %s %s: %v: %s", rscript, cfg.Stan, err, msg)
	}
	got := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			continue
		}
		us, err := strconv.ParseFloat(f[3], 64)
		if err != nil || !(us > 0) {
			return nil, fmt.Errorf("bench: RunAD: rstan output %q: not a time per gradient", line)
		}
		got[f[0]] = us * 1e-6
	}
	for _, k := range stanADCases {
		if got[k] == 0 {
			return nil, fmt.Errorf("bench: RunAD: rstan printed no time for %s", k)
		}
	}
	return got, nil
}

// WriteADMarkdown writes the rows as the bench/results/ad.md table: the header (the kernels
// build on the machine line), note as a paragraph when not empty, and one row per gradient
// with the ratios to the hand-written floor and the peers and a verdict. A peer measured in
// this run (PyTorch with --torch, Stan with --stan) is shown as such; otherwise the issue's
// figure, measured before the project on another machine, is shown marked "(issue)". The
// verdict names the fastest peer of the row measured in this run (the figures only
// where no peer was run) and, where vigo is slower, by how much.
func WriteADMarkdown(w io.Writer, h resultmd.Header, rows []ADRow, note string) error {
	var b strings.Builder
	h.Machine = "kernels: " + kernel.Impl()
	resultmd.Write(&b, "Gradient speed: vigo AD vs hand-written, PyTorch and Stan", h)
	if note != "" {
		fmt.Fprintf(&b, "\n%s\n", note)
	}
	b.WriteString("\n")
	fmt.Fprintln(&b, "| gradient of | vigo AD | allocs/op | hand-written | AD / hand | PyTorch | AD / PyTorch | Stan | AD / Stan | verdict |")
	fmt.Fprintln(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		torch, tr := peerCell(r.AD, r.Torch, r.TorchRef)
		stan, sr := peerCell(r.AD, r.Stan, r.StanRef)
		// The verdict compares with the peers measured in this run; only where none was, with
		// the figures.
		tv, sv := r.Torch, r.Stan
		if tv == 0 && sv == 0 {
			tv, sv = r.TorchRef, r.StanRef
		}
		best, name := tv, "PyTorch"
		if sv > 0 && (best == 0 || sv < best) {
			best, name = sv, "Stan"
		}
		verdict := "—"
		switch {
		case best == 0:
		case r.AD <= best:
			verdict = fmt.Sprintf("faster than the best peer (%s)", name)
		default:
			verdict = fmt.Sprintf("slower than the best peer (%s) by %.2f×", name, r.AD/best)
		}
		if r.AD > 1.3*r.Analytic {
			verdict += fmt.Sprintf("; %.1f× the hand-written floor (target ≤ 1.3×)", r.AD/r.Analytic)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %.2f | %s | %s | %s | %s | %s |\n",
			r.Name, fmtDur(r.AD), r.ADAllocs, fmtDur(r.Analytic), r.AD/r.Analytic, torch, tr, stan, sr, verdict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pick returns the figure measured now, else the (0: neither).
func pick(now, ref float64) float64 {
	if now > 0 {
		return now
	}
	return ref
}

// peerCell returns a peer's time cell and the ratio vigo/peer: the figure measured now, or
// the marked "(issue)", or dashes.
func peerCell(ad, now, ref float64) (cell, ratio string) {
	v := pick(now, ref)
	if v == 0 {
		return "—", "—"
	}
	cell = fmtDur(v)
	if now == 0 {
		cell += " (issue)"
	}
	return cell, fmt.Sprintf("%.2f", ad/v)
}

func fmtDur(s float64) string {
	switch {
	case s >= 1e-3:
		return fmt.Sprintf("%.2f ms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.1f µs", s*1e6)
	default:
		return fmt.Sprintf("%.0f ns", s*1e9)
	}
}
