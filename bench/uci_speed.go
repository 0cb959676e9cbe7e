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
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/bnn"
)

// UCISpeedConfig says what RunUCISpeed times. Zero fields take the defaults in parentheses.
type UCISpeedConfig struct {
	// Dir is the UCI directory (required); Datasets short or folder names (power, protein);
	// Methods (vbp, mfvi).
	Dir      string
	Datasets []string
	Methods  []bnn.Method
	// Batches are the minibatch sizes timed (32, 128); Epochs the epochs per timing, the
	// median of all but the first reported (4; at least 2).
	Batches []int
	Epochs  int
	// Torch is the path of bench/peers/vbp_torch.py, run with /usr/bin/python3 on one thread
	// for vbp and mfvi ("": no peer).
	Torch string
	// Seed is the seed of vigo's fits.
	Seed uint64
	// Progress receives one line per timing (nil: none).
	Progress io.Writer
}

// UCISpeedRow is one timing: data set × method × batch size.
type UCISpeedRow struct {
	Dataset, Method  string
	Rows, Hidden     int // training rows of split 0; hidden units
	Batch            int
	Vigo             float64 // seconds per epoch
	Torch64, Torch32 float64 // PyTorch's seconds per epoch in float64 and float32; NaN when not run
	TorchNote        string  // why the peer failed ("": it did not)
}

// UCISpeedReport holds the timings of RunUCISpeed.
type UCISpeedReport struct {
	Config UCISpeedConfig // with the defaults filled in
	Rows   []UCISpeedRow
}

// RunUCISpeed times training epochs of vigo (one goroutine) and of the PyTorch peer (one
// thread) on split 0 of each data set. A peer failure is recorded in its row.
func RunUCISpeed(ctx context.Context, cfg UCISpeedConfig) (*UCISpeedReport, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("bench: RunUCISpeed: Dir is empty: the UCI directory is needed")
	}
	setDefault(&cfg.Epochs, 4)
	if cfg.Epochs < 2 {
		return nil, fmt.Errorf("bench: RunUCISpeed: Epochs must be at least 2 (Epochs=%d)", cfg.Epochs)
	}
	setDefaultSlice(&cfg.Datasets, []string{"power", "protein"})
	setDefaultSlice(&cfg.Methods, []bnn.Method{bnn.VBP, bnn.MonteCarlo})
	setDefaultSlice(&cfg.Batches, []int{32, 128})
	for _, b := range cfg.Batches {
		if b <= 0 {
			return nil, fmt.Errorf("bench: RunUCISpeed: Batches must be positive (Batches=%v)", cfg.Batches)
		}
	}
	if cfg.Torch != "" {
		if _, err := os.Stat(cfg.Torch); err != nil {
			return nil, fmt.Errorf("bench: RunUCISpeed: Torch: %w", err)
		}
	}
	setDefault[io.Writer](&cfg.Progress, io.Discard)
	rep := &UCISpeedReport{Config: cfg}
	for _, name := range cfg.Datasets {
		d, err := openUCI("RunUCISpeed", cfg.Dir, name)
		if err != nil {
			return nil, err
		}
		Xtr, ytr, _ := d.matrix(d.train[0], nil)
		n := len(ytr)
		for _, m := range cfg.Methods {
			for _, b := range cfg.Batches {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				row := UCISpeedRow{Dataset: d.set.name, Method: m.String(), Rows: n, Hidden: d.hidden, Batch: b, Torch64: math.NaN(), Torch32: math.NaN()}
				net := bnn.Net{Sizes: []int{len(d.features), d.hidden, 1}, Method: m}
				var times []float64
				last := time.Now()
				_, err := bnn.FitRegression(ctx, net, Xtr, ytr, n, bnn.FitConfig{Epochs: cfg.Epochs, BatchSize: b, Seed: cfg.Seed,
					Progress: func(bnn.Progress) {
						now := time.Now()
						times = append(times, now.Sub(last).Seconds())
						last = now
					}})
				if err != nil {
					return nil, err
				}
				row.Vigo = Median(times[1:])
				if cfg.Torch != "" && (m == bnn.VBP || m == bnn.MonteCarlo) {
					for _, dt := range []string{"float64", "float32"} {
						v, err := runTorchPeer(ctx, cfg, d, m, b, dt)
						if err != nil {
							row.TorchNote = err.Error()
							break
						}
						if dt == "float64" {
							row.Torch64 = v
						} else {
							row.Torch32 = v
						}
					}
				}
				fmt.Fprintf(cfg.Progress, "%s %s B=%d: vigo %.4fs/epoch, torch float64 %.4f, float32 %.4f\n", row.Dataset, row.Method, b, row.Vigo, row.Torch64, row.Torch32)
				rep.Rows = append(rep.Rows, row)
			}
		}
	}
	return rep, nil
}

// runTorchPeer runs the PyTorch peer script and returns its median seconds per epoch.
func runTorchPeer(ctx context.Context, cfg UCISpeedConfig, d *uciData, m bnn.Method, batch int, dtype string) (float64, error) {
	method := "vbp"
	if m == bnn.MonteCarlo {
		method = "mfvi"
	}
	c := exec.CommandContext(ctx, "/usr/bin/python3", cfg.Torch, "--data", filepath.Join(cfg.Dir, d.set.dir), "--method", method,
		"--hidden", strconv.Itoa(d.hidden), "--batch", strconv.Itoa(batch), "--epochs", strconv.Itoa(cfg.Epochs), "--dtype", dtype)
	var stderr strings.Builder
	c.Stderr = &stderr
	b, err := c.Output()
	if err != nil {
		return 0, fmt.Errorf("bench: uci speed: torch peer: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res struct {
		Median float64 `json:"median_sec_per_epoch"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.Median <= 0 {
		return 0, fmt.Errorf("bench: uci speed: torch peer: unreadable output %q", strings.TrimSpace(string(b)))
	}
	return res.Median, nil
}

// Markdown writes the timings table and the peer's failures.
func (r *UCISpeedReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	h.Machine = "compare rows measured together, not absolute times"
	resultmd.Write(&b, "UCI BNN training speed: vigo vs PyTorch", h)
	p("- what is timed: one training epoch on split 0 (shuffle, an Adam step per minibatch on −ELBO/N with gradient through every layer, KL, then the Type-II β pass over the training set), median of epochs 2..%d; vigo on one goroutine, float64; PyTorch %s eager, one thread (bench/peers/vbp_torch.py), float64 and float32\n\n",
		r.Config.Epochs, "1.13 (Debian python3-torch)")
	p("| data set | train rows | hidden | method | batch | vigo s/epoch | PyTorch f64 s/epoch | PyTorch f64 / vigo | PyTorch f32 s/epoch |\n|---|---:|---:|---|---:|---:|---:|---:|---:|\n")
	f := func(v float64) string {
		if math.IsNaN(v) {
			return "—"
		}
		return fmt.Sprintf("%.4f", v)
	}
	for _, row := range r.Rows {
		ratio := "—"
		if !math.IsNaN(row.Torch64) {
			ratio = fmt.Sprintf("%.1f×", row.Torch64/row.Vigo)
		}
		p("| %s | %d | %d | %s | %d | %.4f | %s | %s | %s |\n", row.Dataset, row.Rows, row.Hidden, row.Method, row.Batch, row.Vigo, f(row.Torch64), ratio, f(row.Torch32))
	}
	for _, row := range r.Rows {
		if row.TorchNote != "" {
			p("\nPyTorch peer failed for %s %s B=%d: %s\n", row.Dataset, row.Method, row.Batch, row.TorchNote)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
