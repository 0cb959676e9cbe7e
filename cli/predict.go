package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/apovi"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/output"
	"github.com/vigo-bayes/vigo/rng"
)

// Files vigo predict writes into --out.
const (
	predictCSV  = "predictive.csv"
	predictJSON = "predict.json"
)

type predictFlags struct {
	data, grid, out string
	samples         int
	seed            uint64
}

func newPredictCmd() *cobra.Command {
	var f predictFlags
	cmd := &cobra.Command{
		Use:   "predict MODEL.json --data NEW.csv",
		Short: "Posterior predictive of a saved amortised BNN (APOVI or AMFVI) for a new dataset, in one forward pass",
		Long: `vigo predict loads an amortised model saved by package apovi (one JSON file: the
configuration and the inference networks' weights, no training data) and conditions it on a
new dataset in one forward pass: the inference networks map each (x, y) of --data to its
pseudo-observations, S weight samples are drawn from the resulting q, and the test inputs are
pushed through the same sampled weights. Nothing is trained.

--data is CSV with a header line naming the columns: x (or x1 … xD for D inputs) and y (or
y1 … yD), the saved model's input and output dimensions, one row per datapoint.
--x is CSV with the x columns only, the test inputs (default: the inputs of --data).

--out DIR receives, atomically, predictive.csv — per test input the x columns and, per output
y, its predictive mean, standard deviation and band mean ± 1.96·sd (over the S function
samples; the observation noise is not added, as in the thesis's plots; for a Bernoulli model
the statistics are those of sigmoid(f)) — and predict.json (the model kind, N, the number of
test inputs, S, the seed and the forward pass's wall time).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPredict(cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.data, "data", "", "CSV of the new dataset (columns x… and y…); required")
	fl.StringVar(&f.grid, "x", "", "CSV of the test inputs (columns x…; default: the inputs of --data)")
	fl.IntVar(&f.samples, "samples", 100, "Monte Carlo function samples S")
	fl.StringVar(&f.out, "out", "predict", "output directory")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the weight draws")
	return cmd
}

// predictSummary is predict.json.
type predictSummary struct {
	Model          string  `json:"model"`
	Kind           string  `json:"kind"`
	DX             int     `json:"dx"`
	DY             int     `json:"dy"`
	N              int     `json:"n"`
	NTest          int     `json:"n_test"`
	Samples        int     `json:"samples"`
	Seed           uint64  `json:"seed"`
	ForwardSeconds float64 `json:"forward_seconds"`
}

func runPredict(stderr io.Writer, path string, f predictFlags) error {
	if f.data == "" {
		return fmt.Errorf("predict: --data: required (a CSV of the new dataset)")
	}
	if f.samples < 2 {
		return fmt.Errorf("predict: --samples: %d, want at least 2 (the standard deviation needs two samples)", f.samples)
	}
	if f.out == "" {
		return fmt.Errorf("predict: --out: empty directory name")
	}
	if err := output.CheckDir(f.out); err != nil {
		return fmt.Errorf("predict: --out %s: %w", f.out, err)
	}
	m, kind, err := loadAmortised(path)
	if err != nil {
		return err
	}
	dx, dy := m.Dims()
	d, err := readPredictData(f.data, dx, dy)
	if err != nil {
		return err
	}
	xTest := d.X
	if f.grid != "" {
		if xTest, err = readPredictGrid(f.grid, dx); err != nil {
			return err
		}
	}
	start := time.Now()
	pred, err := m.Predict(d, xTest, f.samples, rng.New(f.seed, 0).Rand)
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	sum := predictSummary{Model: path, Kind: kind, DX: dx, DY: dy, N: d.N, NTest: len(xTest) / dx,
		Samples: f.samples, Seed: f.seed, ForwardSeconds: wall.Seconds()}
	set, err := output.NewSet(f.out)
	if err != nil {
		return fmt.Errorf("predict: --out %s: %w", f.out, err)
	}
	defer set.Close()
	if err := writePredictCSV(set.Path(predictCSV), xTest, dx, pred); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	if err := output.WriteFile(set.Path(predictJSON), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	paths, err := set.Commit()
	if err != nil {
		return fmt.Errorf("predict: --out %s: %w", f.out, err)
	}
	fmt.Fprintf(stderr, "predict: %s model, N = %d, %d test inputs, S = %d: forward pass %v\n", kind, d.N, sum.NTest, f.samples, wall.Round(time.Microsecond))
	for _, p := range paths {
		fmt.Fprintln(stderr, "wrote", p)
	}
	return nil
}

// loadAmortised reads a saved model and checks it is amortised (APOVI or AMFVI): a POVI model's
// posterior does not depend on data, so it cannot be conditioned on a new dataset.
func loadAmortised(path string) (apovi.Model, string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("predict: MODEL.json: %w", err)
	}
	defer fh.Close()
	m, err := apovi.Load(fh)
	if err != nil {
		return nil, "", fmt.Errorf("predict: MODEL.json %s: %w", path, err)
	}
	switch m.(type) {
	case *apovi.APOVI:
		return m, "apovi", nil
	case *apovi.AMFVI:
		return m, "amfvi", nil
	}
	return nil, "", fmt.Errorf("predict: MODEL.json %s: a %T is not amortised (its posterior does not depend on data); want an APOVI or AMFVI model", path, m)
}

// columnNames are the CSV columns of d dimensions named p: "p" for one, else p1 … pd.
func columnNames(p string, d int) []string {
	if d == 1 {
		return []string{p}
	}
	out := make([]string, d)
	for i := range out {
		out[i] = p + strconv.Itoa(i+1)
	}
	return out
}

// readColumns reads the columns want from a CSV file (flag names it in errors), all of the same
// length n ≥ 1 and finite; any other column is an error (the file's dimensions differ from the
// saved model's). It returns the rows interleaved, row-major (n × len(want)).
func readColumns(flag, path string, want []string, dims string) ([]float64, int, error) {
	data, err := model.LoadCSV(path)
	if err != nil {
		return nil, 0, fmt.Errorf("predict: %s: %w", flag, err)
	}
	for _, name := range data.Names() {
		if !slices.Contains(want, name) {
			return nil, 0, fmt.Errorf("predict: %s %s: column %q is not one of the saved model's (%s: columns %s)", flag, path, name, dims, strings.Join(want, ", "))
		}
	}
	n := -1
	cols := make([][]float64, len(want))
	for j, name := range want {
		if !data.Has(name) {
			return nil, 0, fmt.Errorf("predict: %s %s: no column %q (%s: columns %s)", flag, path, name, dims, strings.Join(want, ", "))
		}
		shape, err := data.Shape(name)
		if err != nil {
			return nil, 0, fmt.Errorf("predict: %s: %w", flag, err)
		}
		if n < 0 {
			n = shape[0]
		}
		if cols[j], err = data.Vector(name, n); err != nil {
			return nil, 0, fmt.Errorf("predict: %s: %w", flag, err)
		}
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("predict: %s %s: no rows (N=0)", flag, path)
	}
	out := make([]float64, 0, n*len(want))
	for i := range n {
		for j := range want {
			out = append(out, cols[j][i])
		}
	}
	return out, n, nil
}

func readPredictData(path string, dx, dy int) (apovi.Dataset, error) {
	xn, yn := columnNames("x", dx), columnNames("y", dy)
	dims := fmt.Sprintf("DX=%d, DY=%d", dx, dy)
	rows, n, err := readColumns("--data", path, append(append([]string{}, xn...), yn...), dims)
	if err != nil {
		return apovi.Dataset{}, err
	}
	d := apovi.Dataset{N: n, DX: dx, DY: dy, X: make([]float64, 0, n*dx), Y: make([]float64, 0, n*dy)}
	for i := range n {
		r := rows[i*(dx+dy) : (i+1)*(dx+dy)]
		d.X = append(d.X, r[:dx]...)
		d.Y = append(d.Y, r[dx:]...)
	}
	if err := d.Validate(); err != nil {
		return apovi.Dataset{}, fmt.Errorf("predict: --data %s: %w", path, err)
	}
	return d, nil
}

func readPredictGrid(path string, dx int) ([]float64, error) {
	x, _, err := readColumns("--x", path, columnNames("x", dx), fmt.Sprintf("DX=%d", dx))
	return x, err
}

// writePredictCSV writes, per test input, the x columns then mean_, sd_, lower_ and upper_ of
// every output column (lower/upper = mean ∓ 1.96·sd).
func writePredictCSV(path string, xTest []float64, dx int, p *apovi.Prediction) error {
	return output.WriteFile(path, func(w io.Writer) error {
		xn, yn := columnNames("x", dx), columnNames("y", p.DY)
		head := append([]string{}, xn...)
		for _, y := range yn {
			head = append(head, "mean_"+y, "sd_"+y, "lower_"+y, "upper_"+y)
		}
		if _, err := fmt.Fprintln(w, strings.Join(head, ",")); err != nil {
			return err
		}
		var b []byte
		for i := range p.NTest {
			b = b[:0]
			for j := range dx {
				b = appendCell(b, j > 0, xTest[i*dx+j])
			}
			for k := range p.DY {
				m, s := p.Mean[i*p.DY+k], p.Std[i*p.DY+k]
				b = appendCell(b, true, m)
				b = appendCell(b, true, s)
				b = appendCell(b, true, m-1.96*s)
				b = appendCell(b, true, m+1.96*s)
			}
			b = append(b, '\n')
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

func appendCell(b []byte, comma bool, v float64) []byte {
	if comma {
		b = append(b, ',')
	}
	if math.IsNaN(v) {
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
