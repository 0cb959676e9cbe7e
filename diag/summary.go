package diag

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vigo-bayes/vigo/internal/textsafe"
)

// Row is one variable's line of a Summary. Missing values are NaN.
type Row struct {
	Variable string
	Mean     float64
	Median   float64
	SD       float64
	MAD      float64 // 1.4826 × median absolute deviation from the median (R's mad)
	Q5       float64
	Q95      float64
	ESSBulk  float64
	ESSTail  float64
	Rhat     float64
}

// Summary is the per-variable table of DESIGN.md §4, with the columns (and definitions) of
// R's posterior::summarise_draws: variable mean median sd mad q5 q95 rhat ess_bulk ess_tail.
type Summary struct {
	Rows []Row
	// Weighted is true when the summary used importance weights; the ESS and R̂ columns are
	// then NaN (they are defined for unweighted draws).
	Weighted bool
	// Notes are free-form footer lines (k̂ verdict, ELBO, …) carried into every format.
	Notes []string
}

// Columns are the summary's column names, as posterior and ArviZ spell them.
var Columns = []string{"variable", "mean", "median", "sd", "mad", "q5", "q95", "ess_bulk", "ess_tail", "rhat"}

func (r *Row) values() []float64 {
	return []float64{r.Mean, r.Median, r.SD, r.MAD, r.Q5, r.Q95, r.ESSBulk, r.ESSTail, r.Rhat}
}

// Summarize returns the summary of every variable in d. Quantiles are R's type 7, sd uses
// n − 1, ess_bulk/ess_tail/rhat are ESSBulk/ESSTail/Rhat over d's chains.
//
// With logWeights (one per draw, chains concatenated in order; e.g. PSISResult.LogWeights)
// the location and scale columns are importance-weighted with w = softmax(logWeights):
// mean Σwθ, sd √(Σw(θ − mean)²/(1 − Σw²)), quantiles by weightedQuantile (type 7 for equal
// weights), mad from the weighted median of |θ − median|; the ESS and R̂ columns are NaN.
// Cost O(D·N log N).
func Summarize(d *Draws, logWeights []float64) (*Summary, error) {
	if err := d.Check(); err != nil {
		return nil, fmt.Errorf("diag: Summarize: %w", err)
	}
	n := d.Len()
	var w []float64
	if logWeights != nil {
		if len(logWeights) != n {
			return nil, fmt.Errorf("diag: Summarize: %d log weights for %d draws", len(logWeights), n)
		}
		for i, v := range logWeights {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return nil, fmt.Errorf("diag: Summarize: log weight %d is %v", i, v)
			}
		}
		w = make([]float64, n)
		if lse := normalise(w, logWeights); math.IsInf(lse, -1) {
			return nil, fmt.Errorf("diag: Summarize: all log weights are -Inf")
		}
	}
	s := &Summary{Rows: make([]Row, d.Dim()), Weighted: w != nil}
	sorted := make([]float64, n)
	buf := make([]float64, n)
	type pair struct{ x, w float64 }
	var pairs []pair
	if w != nil {
		pairs = make([]pair, n)
	}
	sw := make([]float64, n)
	for j, name := range d.Names {
		chains := d.Var(j)
		flat := concat(chains)
		r := Row{Variable: name}
		if w == nil {
			r.Mean = mean(flat)
			r.SD = sd(flat)
			copy(sorted, flat)
			slices.Sort(sorted)
			r.Median = quantileSorted(sorted, 0.5)
			r.Q5 = quantileSorted(sorted, 0.05)
			r.Q95 = quantileSorted(sorted, 0.95)
			r.MAD = madSorted(sorted, buf)
			r.ESSBulk = ESSBulk(chains)
			r.ESSTail = ESSTail(chains)
			r.Rhat = Rhat(chains)
		} else {
			var m, ss, w2 float64
			for i, x := range flat {
				m += w[i] * x
			}
			for i, x := range flat {
				ss += w[i] * (x - m) * (x - m)
				w2 += w[i] * w[i]
			}
			r.Mean = m
			r.SD = math.Sqrt(ss / (1 - w2))
			for i, x := range flat {
				pairs[i] = pair{x, w[i]}
			}
			slices.SortFunc(pairs, func(a, b pair) int {
				switch {
				case a.x < b.x:
					return -1
				case a.x > b.x:
					return 1
				}
				return 0
			})
			for i, p := range pairs {
				sorted[i], sw[i] = p.x, p.w
			}
			r.Median = weightedQuantileSorted(sorted, sw, 0.5)
			r.Q5 = weightedQuantileSorted(sorted, sw, 0.05)
			r.Q95 = weightedQuantileSorted(sorted, sw, 0.95)
			for i := range pairs {
				pairs[i] = pair{math.Abs(sorted[i] - r.Median), sw[i]}
			}
			slices.SortFunc(pairs, func(a, b pair) int {
				switch {
				case a.x < b.x:
					return -1
				case a.x > b.x:
					return 1
				}
				return 0
			})
			for i, p := range pairs {
				buf[i], sw[i] = p.x, p.w
			}
			r.MAD = 1.4826 * weightedQuantileSorted(buf, sw, 0.5)
			r.ESSBulk, r.ESSTail, r.Rhat = math.NaN(), math.NaN(), math.NaN()
		}
		s.Rows[j] = r
	}
	return s, nil
}

// WeightedQuantile returns the p-quantile of x under normalised weights w (same length):
// values sorted, each placed at the midpoint of its weight interval rescaled to [0, 1],
// linear interpolation between (R's type 7 when the weights are equal). Cost O(n log n).
func WeightedQuantile(x, w []float64, p float64) float64 {
	if len(x) != len(w) {
		panic(fmt.Sprintf("diag: WeightedQuantile: length mismatch (x=%d, w=%d)", len(x), len(w)))
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	s, sw := make([]float64, len(x)), make([]float64, len(x))
	for i, j := range idx {
		s[i], sw[i] = x[j], w[j]
	}
	return weightedQuantileSorted(s, sw, p)
}

// fmtSig formats x with 3 significant digits, in fixed notation for 1e-4 ≤ |x| < 1e6
// (like R's summary print), "NA" for NaN.
func fmtSig(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NA"
	case math.IsInf(x, 1):
		return "Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	case x == 0:
		return "0"
	}
	e := int(math.Floor(math.Log10(math.Abs(x))))
	if e >= 6 || e < -4 {
		return strconv.FormatFloat(x, 'e', 2, 64)
	}
	return strconv.FormatFloat(x, 'f', max(0, 2-e), 64)
}

func fmtCell(col string, x float64) string {
	if math.IsNaN(x) {
		return "NA"
	}
	switch col {
	case "ess_bulk", "ess_tail":
		if math.IsInf(x, 0) {
			return fmtSig(x)
		}
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	case "rhat":
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return fmtSig(x)
}

// WriteText writes the summary as an aligned text table (3 significant digits, ESS rounded,
// R̂ to 3 decimals, NaN as NA) followed by the notes. Variable names and notes often come
// from a file (a CSV header); like every format here, they are written through
// internal/textsafe, which replaces terminal control characters by visible escapes.
func (s *Summary) WriteText(w io.Writer) error {
	cells := make([][]string, 0, len(s.Rows)+1)
	cells = append(cells, Columns)
	for i := range s.Rows {
		r := &s.Rows[i]
		line := []string{textsafe.String(r.Variable)}
		for k, v := range r.values() {
			line = append(line, fmtCell(Columns[k+1], v))
		}
		cells = append(cells, line)
	}
	width := make([]int, len(Columns))
	for _, line := range cells {
		for k, c := range line {
			width[k] = max(width[k], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, line := range cells {
		for k, c := range line {
			pad := strings.Repeat(" ", width[k]-len([]rune(c)))
			if k == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteByte('\n')
	}
	if len(s.Notes) > 0 {
		b.WriteByte('\n')
		for _, n := range s.Notes {
			b.WriteString(textsafe.Text(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes the summary as CSV with a header row of Columns, full-precision numbers
// (shortest representation that round-trips) and NA for missing values. Notes are not
// written. Variable names are written through textsafe.String, as in WriteText.
func (s *Summary) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		line := []string{textsafe.String(r.Variable)}
		for _, v := range r.values() {
			line = append(line, fmtFull(v))
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func fmtFull(x float64) string {
	if math.IsNaN(x) {
		return "NA"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// jnum is a float64 that marshals NaN and ±Inf as JSON null.
type jnum float64

func (x jnum) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func (x *jnum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = jnum(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("diag: summary JSON: bad number %s", b)
	}
	*x = jnum(f)
	return nil
}

type jsonRow struct {
	Variable string `json:"variable"`
	Mean     jnum   `json:"mean"`
	Median   jnum   `json:"median"`
	SD       jnum   `json:"sd"`
	MAD      jnum   `json:"mad"`
	Q5       jnum   `json:"q5"`
	Q95      jnum   `json:"q95"`
	ESSBulk  jnum   `json:"ess_bulk"`
	ESSTail  jnum   `json:"ess_tail"`
	Rhat     jnum   `json:"rhat"`
}

type jsonSummary struct {
	Variables []jsonRow `json:"variables"`
	Weighted  bool      `json:"weighted"`
	Notes     []string  `json:"notes,omitempty"`
}

// MarshalJSON encodes {"variables": [{"variable", "mean", …, "rhat"}], "weighted", "notes"},
// with missing values as null. Variable names and notes are written through textsafe, as in
// WriteText (encoding/json would escape C0 controls but pass C1 and bidirectional controls,
// which a consumer printing the decoded string would emit raw).
func (s *Summary) MarshalJSON() ([]byte, error) {
	js := jsonSummary{Variables: make([]jsonRow, len(s.Rows)), Weighted: s.Weighted}
	for _, n := range s.Notes {
		js.Notes = append(js.Notes, textsafe.Text(n))
	}
	for i, r := range s.Rows {
		js.Variables[i] = jsonRow{textsafe.String(r.Variable), jnum(r.Mean), jnum(r.Median), jnum(r.SD), jnum(r.MAD),
			jnum(r.Q5), jnum(r.Q95), jnum(r.ESSBulk), jnum(r.ESSTail), jnum(r.Rhat)}
	}
	return json.Marshal(js)
}

// UnmarshalJSON decodes what MarshalJSON writes (null becomes NaN).
func (s *Summary) UnmarshalJSON(b []byte) error {
	var js jsonSummary
	if err := json.Unmarshal(b, &js); err != nil {
		return fmt.Errorf("diag: Summary.UnmarshalJSON: %w", err)
	}
	s.Rows = make([]Row, len(js.Variables))
	for i, r := range js.Variables {
		s.Rows[i] = Row{r.Variable, float64(r.Mean), float64(r.Median), float64(r.SD), float64(r.MAD),
			float64(r.Q5), float64(r.Q95), float64(r.ESSBulk), float64(r.ESSTail), float64(r.Rhat)}
	}
	s.Weighted, s.Notes = js.Weighted, js.Notes
	return nil
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
