package output

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // PNG
	_ "gonum.org/v1/plot/vg/vgsvg" // SVG

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
)

var (
	colVI   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // approximation
	colFill = color.RGBA{R: 0x9e, G: 0xc5, B: 0xe5, A: 0xff}
	colRef  = color.RGBA{A: 0xff} // reference draws
	colCut  = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// PlotELBO draws the ELBO trace of a fit — the tracking estimates (common random numbers, so
// the curve shows parameter changes, not Monte Carlo noise) against the iteration — with the
// step-size cuts of the stopping rule as vertical lines and the final ELBO on fresh draws as
// a horizontal line. The file format (PNG, SVG, PDF) follows path's extension. The y axis
// starts at the lowest estimate after the first fifth of the trace, so one bad start does not
// flatten the rest.
func PlotELBO(path, title string, trace []fit.TracePoint, finalELBO float64) (err error) {
	defer recoverPlot("PlotELBO", path, &err)
	if len(trace) == 0 {
		return fmt.Errorf("output: PlotELBO %s: empty trace", path)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "iteration"
	p.Y.Label.Text = "ELBO (tracking estimate)"
	xy := make(plotter.XYs, len(trace))
	for i, tp := range trace {
		xy[i] = plotter.XY{X: float64(tp.Iter), Y: tp.ELBO}
	}
	line, pts, err := plotter.NewLinePoints(xy)
	if err != nil {
		return fmt.Errorf("output: PlotELBO %s: %w", path, err)
	}
	line.Color, pts.Color, pts.Radius = colVI, colVI, vg.Points(1.5)
	p.Add(line, pts)
	p.Legend.Add("tracking ELBO", line)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, tp := range trace {
		if i >= len(trace)/5 || len(trace) < 5 {
			ymin = min(ymin, tp.ELBO)
		}
		ymax = max(ymax, tp.ELBO)
	}
	if !math.IsNaN(finalELBO) && !math.IsInf(finalELBO, 0) {
		ymin, ymax = min(ymin, finalELBO), max(ymax, finalELBO)
		h, err := plotter.NewLine(plotter.XYs{{X: 0, Y: finalELBO}, {X: float64(trace[len(trace)-1].Iter), Y: finalELBO}})
		if err == nil {
			h.Color, h.Dashes = colRef, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(h)
			p.Legend.Add("final ELBO (fresh draws)", h)
		}
	}
	pad := 0.05 * (ymax - ymin)
	if pad == 0 {
		pad = 1
	}
	p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
	first := true
	for i := 1; i < len(trace); i++ {
		if trace[i].LR == trace[i-1].LR {
			continue
		}
		x := float64(trace[i].Iter)
		v, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			continue
		}
		v.Color, v.Dashes = colCut, []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(v)
		if first {
			p.Legend.Add("step size cut", v)
			first = false
		}
	}
	p.Legend.Top = false
	p.X.Tick.Marker = plainTicks{}
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("output: PlotELBO: %w", err)
	}
	if err := WriteFile(path, func(w io.Writer) error { _, err := wt.WriteTo(w); return err }); err != nil {
		return fmt.Errorf("output: PlotELBO: %w", err)
	}
	return nil
}

// Marginal is one panel of PlotMarginals: a variable's draws and, optionally, reference draws.
type Marginal struct {
	Name  string
	Draws []float64
	Ref   []float64
}

// PlotMarginals draws one panel per variable: a density-normalised histogram of the draws with
// their Gaussian kernel density estimate, and the reference draws' kernel density estimate
// over it when given (bandwidth by Silverman's rule, 0.9·min(sd, IQR/1.34)·n^(−1/5)). At most
// maxPanels panels are drawn (0: all). The file format follows path's extension. Cost:
// O(n·200) per density curve.
func PlotMarginals(path, title string, vars []Marginal, maxPanels int) (err error) {
	defer recoverPlot("PlotMarginals", path, &err)
	if maxPanels > 0 && len(vars) > maxPanels {
		vars = vars[:maxPanels]
	}
	if len(vars) == 0 {
		return fmt.Errorf("output: PlotMarginals %s: no variables", path)
	}
	cols := int(math.Ceil(math.Sqrt(float64(len(vars)))))
	cols = min(cols, 6)
	rows := (len(vars) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	legendAt := -1 // the legend goes into the first panel with reference draws
	for k, v := range vars {
		if legendAt < 0 && len(v.Ref) > 0 {
			legendAt = k
		}
	}
	for k, v := range vars {
		p, err := marginalPanel(v, k == legendAt)
		if err != nil {
			return fmt.Errorf("output: PlotMarginals %s: variable %s: %w", path, v.Name, err)
		}
		plots[k/cols][k%cols] = p
	}
	const pw, ph = 2.6 * vg.Inch, 2 * vg.Inch
	titleH := vg.Length(0)
	if title != "" {
		titleH = 0.4 * vg.Inch
	}
	W, H := vg.Length(cols)*pw, vg.Length(rows)*ph+titleH
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	c, err := draw.NewFormattedCanvas(W, H, ext)
	if err != nil {
		return fmt.Errorf("output: PlotMarginals %s: %w", path, err)
	}
	dc := draw.New(c)
	if title != "" {
		sty := plot.New().Title.TextStyle
		dc.FillText(sty, vg.Point{X: W / 2, Y: H - titleH/2}, title)
		dc.Max.Y -= titleH
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for r := range plots {
		for k, p := range plots[r] {
			if p != nil {
				p.Draw(canvases[r][k])
			}
		}
	}
	if err := WriteFile(path, func(w io.Writer) error { _, err := c.WriteTo(w); return err }); err != nil {
		return fmt.Errorf("output: PlotMarginals: %w", err)
	}
	return nil
}

// recoverPlot turns a panic of the plotting library into fn's error: gonum/plot panics on some
// extreme inputs (its histogram binning, for values of magnitude 1e130 beside values of order
// 1, from a diverged fit), and a plot is not worth a crash.
func recoverPlot(fn, path string, err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("output: %s %s: the plotting library failed on these values: %v", fn, path, v)
	}
}

func marginalPanel(v Marginal, legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = v.Name
	p.Y.Tick.Marker = plot.TickerFunc(func(float64, float64) []plot.Tick { return nil })
	x := finite(v.Draws)
	ref := finite(v.Ref)
	if len(x) == 0 {
		return p, nil
	}
	// Zoom to where the draws (and the reference) have their central 99.8%, so that a long
	// tail does not hide the bulk.
	lo, hi := diag.Quantile(x, 0.001), diag.Quantile(x, 0.999)
	if len(ref) > 0 {
		lo, hi = min(lo, diag.Quantile(ref, 0.001)), max(hi, diag.Quantile(ref, 0.999))
	}
	if !(hi > lo) {
		lo, hi = slices.Min(x)-0.5, slices.Max(x)+0.5
	}
	p.X.Min, p.X.Max = lo, hi
	p.X.Tick.Marker = plainTicks{}
	if hi > lo {
		h, err := plotter.NewHist(plotter.Values(inRange(x, lo, hi)), 30)
		if err != nil {
			return nil, err
		}
		h.Normalize(1)
		h.FillColor, h.LineStyle.Width = colFill, 0
		p.Add(h)
	}
	if l := kdeLine(x, lo, hi); l != nil {
		l.Color = colVI
		p.Add(l)
		if legend {
			p.Legend.Add("vigo", l)
		}
	}
	if l := kdeLine(ref, lo, hi); l != nil {
		l.Color, l.Width = colRef, vg.Points(1.2)
		p.Add(l)
		if legend {
			p.Legend.Add("reference", l)
		}
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return p, nil
}

func finite(x []float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

func inRange(x []float64, lo, hi float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if v >= lo && v <= hi {
			out = append(out, v)
		}
	}
	return out
}

// kdeLine is the Gaussian kernel density estimate of x on 200 points of [lo, hi], or nil when
// x is empty or constant.
func kdeLine(x []float64, lo, hi float64) *plotter.Line {
	n := len(x)
	if n < 2 || !(hi > lo) {
		return nil
	}
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(n)
	ss := 0.0
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	sd := math.Sqrt(ss / float64(n-1))
	spread := sd
	if iqr := (diag.Quantile(x, 0.75) - diag.Quantile(x, 0.25)) / 1.34; iqr > 0 {
		spread = min(sd, iqr)
	}
	bw := 0.9 * spread * math.Pow(float64(n), -0.2)
	if !(bw > 0) {
		return nil
	}
	const points = 200
	xy := make(plotter.XYs, points)
	norm := 1 / (float64(n) * bw * math.Sqrt(2*math.Pi))
	for i := range xy {
		g := lo + (hi-lo)*float64(i)/(points-1)
		s := 0.0
		for _, v := range x {
			u := (g - v) / bw
			if u < 8 && u > -8 {
				s += math.Exp(-0.5 * u * u)
			}
		}
		xy[i] = plotter.XY{X: g, Y: s * norm}
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil
	}
	return l
}

// plainTicks are gonum's default ticks labelled with the shortest decimal ("2500", not
// "2500.00").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}
