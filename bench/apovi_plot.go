package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vigo-bayes/vigo/imagecomp"
	"github.com/vigo-bayes/vigo/output"
)

// plot writes the report's figures into dir and returns their paths.
func (r *APOVIReport) plot(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: APOVI plots: %w", err)
	}
	var out []string
	save := func(p *plot.Plot, w, h vg.Length, name string) error {
		path := filepath.Join(dir, name)
		if err := p.Save(w, h, path); err != nil {
			return fmt.Errorf("bench: APOVI plots: %w", err)
		}
		out = append(out, path)
		return nil
	}
	if e := r.E1; e != nil {
		p := plot.New()
		p.Title.Text = "E1 (Table 1): test-set ELBO against |Ξ| (ours: mean ± sd over repetitions)"
		p.X.Label.Text, p.Y.Label.Text = "|Ξ| (training datasets)", "total ELBO (nats, S = 100)"
		var ours, thesis plotter.XYs
		var errs plotter.YErrors
		for _, c := range e1Cols[1:] {
			var x float64
			fmt.Sscan(c, &x)
			ours = append(ours, plotter.XY{X: x, Y: meanOf(e.ELBO[c])})
			sd := sdOf(e.ELBO[c])
			if math.IsNaN(sd) {
				sd = 0
			}
			errs = append(errs, struct{ Low, High float64 }{sd, sd})
			thesis = append(thesis, plotter.XY{X: x + 0.15, Y: thesisTable1[c][0]})
		}
		l, pts, err := plotter.NewLinePoints(ours)
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = miselboColors[0], miselboColors[0]
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{ours, errs})
		if err != nil {
			return nil, err
		}
		eb.Color = miselboColors[0]
		tp, err := plotter.NewScatter(thesis)
		if err != nil {
			return nil, err
		}
		tp.Color, tp.Shape = miselboColors[1], draw.CrossGlyph{}
		povi := meanOf(e.ELBO["POVI"])
		pl := plotter.NewFunction(func(float64) float64 { return povi })
		pl.Color, pl.Dashes = miselboColors[2], []vg.Length{vg.Points(4), vg.Points(3)}
		tpl := plotter.NewFunction(func(float64) float64 { return thesisTable1["POVI"][0] })
		tpl.Color, tpl.Dashes = miselboColors[3], []vg.Length{vg.Points(1), vg.Points(3)}
		p.Add(l, pts, eb, tp, pl, tpl)
		p.Legend.Add("APOVI (ours)", l)
		p.Legend.Add("APOVI (thesis)", tp)
		p.Legend.Add("POVI on each test set (ours)", pl)
		p.Legend.Add("POVI (thesis)", tpl)
		p.Legend.Top = false
		p.X.Min, p.X.Max = -0.5, 10.5
		if err := save(p, 6*vg.Inch, 4*vg.Inch, "e1_elbo_vs_xi.png"); err != nil {
			return nil, err
		}
	}
	if e := r.E2; e != nil {
		sizes := []int{}
		for _, run := range e.Runs {
			if !slices.Contains(sizes, run.Size) {
				sizes = append(sizes, run.Size)
			}
		}
		for _, set := range e2Sets {
			for _, size := range sizes {
				p := plot.New()
				p.Title.Text = fmt.Sprintf("E2: %s test set, models meta-trained on |Ξ| = %d (mean ± 1.96 sd, S = 100)", set, size)
				p.X.Label.Text, p.Y.Label.Text = "x", "y"
				for mi, name := range e2Models {
					for _, run := range e.Runs {
						if run.Model != name || run.Set != set || run.Size != size {
							continue
						}
						c := miselboColors[mi]
						band := make(plotter.XYs, 0, 2*len(e.Grid))
						for i, x := range e.Grid {
							band = append(band, plotter.XY{X: x, Y: run.Mean[i] + 1.96*run.Std[i]})
						}
						for i := len(e.Grid) - 1; i >= 0; i-- {
							band = append(band, plotter.XY{X: e.Grid[i], Y: run.Mean[i] - 1.96*run.Std[i]})
						}
						poly, err := plotter.NewPolygon(band)
						if err != nil {
							return nil, err
						}
						rc, gc, bc, _ := c.RGBA()
						poly.Color = color.NRGBA{R: uint8(rc >> 8), G: uint8(gc >> 8), B: uint8(bc >> 8), A: 0x40}
						poly.LineStyle.Width = 0
						mean := make(plotter.XYs, len(e.Grid))
						for i, x := range e.Grid {
							mean[i] = plotter.XY{X: x, Y: run.Mean[i]}
						}
						ml, err := plotter.NewLine(mean)
						if err != nil {
							return nil, err
						}
						ml.Color, ml.Width = c, vg.Points(1.5)
						p.Add(poly, ml)
						p.Legend.Add(name, ml)
					}
				}
				d := e.Sets[set]
				pts := make(plotter.XYs, d.N)
				for i := range pts {
					pts[i] = plotter.XY{X: d.X[i], Y: d.Y[i]}
				}
				sc, err := plotter.NewScatter(pts)
				if err != nil {
					return nil, err
				}
				sc.Color, sc.Radius = color.Black, vg.Points(2)
				p.Add(sc)
				p.Legend.Add("test data (context)", sc)
				p.Legend.Top = true
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, y := range d.Y {
					lo, hi = math.Min(lo, y), math.Max(hi, y)
				}
				pad := 1.0 * (hi - lo)
				p.Y.Min, p.Y.Max = lo-pad, hi+pad
				name := fmt.Sprintf("e2_%s_xi%d.png", map[string]string{"SE-GP": "se", "cubic": "cubic"}[set], size)
				if err := save(p, 6*vg.Inch, 4*vg.Inch, name); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, f := range []struct {
		name string
		e    *E3Result
	}{{"e3_digit0.png", r.E3}, {"e3_fashion_image0.png", r.E3F}} {
		name, e := f.name, f.e
		if e == nil || len(e.Regimes) == 0 {
			continue
		}
		path := filepath.Join(dir, name)
		if err := writeDigitStrip(path, e); err != nil {
			return nil, fmt.Errorf("bench: APOVI plots: %w", err)
		}
		out = append(out, path)
	}
	return out, nil
}

// writeDigitStrip writes Figure 7's panels for test digit 0, left to right: the grey-scale
// original, the binarised context (unobserved pixels blue), then for each regime APOVI's mean
// and its sd (scaled to the strip's largest sd), each 28×28 pixel drawn as a 4×4 block.
func writeDigitStrip(path string, e *E3Result) error {
	const sc, gap = 4, 4
	panels := 2 + 2*len(e.Regimes)
	w := panels*imagecomp.Side*sc + (panels-1)*gap
	img := image.NewNRGBA(image.Rect(0, 0, w, imagecomp.Side*sc))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	grey := func(v float64) color.NRGBA {
		g := uint8(math.Round(255 * math.Max(0, math.Min(1, v))))
		return color.NRGBA{R: g, G: g, B: g, A: 0xff}
	}
	panel := func(k int, col func(i int) color.NRGBA) {
		x0 := k * (imagecomp.Side*sc + gap)
		for i := range imagecomp.Pixels {
			r, c := i/imagecomp.Side, i%imagecomp.Side
			for dy := range sc {
				for dx := range sc {
					img.SetNRGBA(x0+c*sc+dx, r*sc+dy, col(i))
				}
			}
		}
	}
	panel(0, func(i int) color.NRGBA { return grey(e.Example[i]) })
	bin := imagecomp.Binarise(e.Example)
	panel(1, func(i int) color.NRGBA {
		if !e.ExampleMask[i] {
			return color.NRGBA{R: 0x40, G: 0x60, B: 0xd0, A: 0xff}
		}
		return grey(bin[i])
	})
	maxSD := 1e-12
	for _, r := range e.Regimes {
		for _, s := range r.Std {
			maxSD = math.Max(maxSD, s)
		}
	}
	for k, r := range e.Regimes {
		panel(2+2*k, func(i int) color.NRGBA { return grey(r.Mean[i]) })
		panel(3+2*k, func(i int) color.NRGBA { return grey(r.Std[i] / maxSD) })
	}
	return output.WriteFile(path, func(wr io.Writer) error { return png.Encode(wr, img) })
}
