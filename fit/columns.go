package fit

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/vigo-bayes/vigo/model"
)

// Columns is what the writers of a fit's draws need of a model: the names of its output
// columns — the constrained parameters, then the derived quantities — and the row of one
// unconstrained draw, each value computed once. *model.Model implements it.
type Columns interface {
	Columns() []string
	Row(dst, z []float64) []float64
}

// Constrained returns the diagnostic draws of r (Result.Draws, DiagDraws × Dim) mapped to
// cols' output columns: the names and the draws × len(names) values, row-major. Cost: one
// cols.Row per draw.
func (r *Result) Constrained(cols Columns) (names []string, rows []float64, err error) {
	d := r.Family.Dim()
	if d == 0 || len(r.Draws)%d != 0 {
		return nil, nil, fmt.Errorf("fit: Result.Constrained: %d draw values for dimension %d", len(r.Draws), d)
	}
	names = cols.Columns()
	k, n := len(names), len(r.Draws)/d
	rows = make([]float64, n*k)
	for i := range n {
		cols.Row(rows[i*k:(i+1)*k], r.Draws[i*d:(i+1)*d])
	}
	return names, rows, nil
}

// StanCSVNote documents the two method columns of the Stan CSV files vigo writes.
const StanCSVNote = `lp__ = log p(z): the model's log density at the unconstrained draw z, Jacobian of the
constraining transforms and all normalising constants included (CmdStan's ADVI writes 0
here; vigo writes the value, as Stan's Pathfinder does). lp_approx__ = log q(z), the
normalised log density of the approximation at z. lp__ - lp_approx__ are the PSIS log weights.`

// StanCSV returns the draws of r as a Stan CSV document: the columns lp__ (log p of the
// unconstrained draw), lp_approx__ (log q) and cols' output columns, one row per draw picked
// by rows (indices into the diagnostic draws; nil: all of them, in order), with header as its
// comment lines followed by StanCSVNote. vigo summary and CmdStan's tools read it.
func (r *Result) StanCSV(cols Columns, rows []int, header []string) (*model.StanCSV, error) {
	d := r.Family.Dim()
	if d == 0 || len(r.Draws) != len(r.LogP)*d || len(r.LogQ) != len(r.LogP) {
		return nil, errors.New("fit: Result.StanCSV: the result has no diagnostic draws")
	}
	if rows == nil {
		rows = make([]int, len(r.LogP))
		for i := range rows {
			rows[i] = i
		}
	}
	names := append([]string{"lp__", "lp_approx__"}, cols.Columns()...)
	k := len(names)
	vals := make([]float64, len(rows)*k)
	for i, j := range rows {
		if j < 0 || j >= len(r.LogP) {
			return nil, fmt.Errorf("fit: Result.StanCSV: row %d picks draw %d of %d", i, j, len(r.LogP))
		}
		row := vals[i*k : (i+1)*k]
		row[0], row[1] = r.LogP[j], r.LogQ[j]
		cols.Row(row[2:], r.Draws[j*d:(j+1)*d])
	}
	h := slices.Clone(header)
	h = append(h, strings.Split(StanCSVNote, "\n")...)
	return &model.StanCSV{Config: h, Names: names, Draws: vals}, nil
}

// WriteStanCSV writes r.StanCSV(cols, nil, header) to w.
func (r *Result) WriteStanCSV(w io.Writer, cols Columns, header []string) error {
	doc, err := r.StanCSV(cols, nil, header)
	if err != nil {
		return err
	}
	return model.WriteStanCSV(w, doc)
}
