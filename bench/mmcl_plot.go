package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgsvg" // SVG
)

// plot writes one figure per training subset into dir — train (solid) and test (dashed) log
// p(x) against training wall time, one colour per method — and returns their paths.
func (r *MMCLReport) plot(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: MMCL plots: %w", err)
	}
	var out []string
	for _, n := range r.Config.Subsets {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("MNIST, %d training images: log p(x) (train solid, test dashed)", n)
		p.X.Label.Text, p.Y.Label.Text = "training CPU time (s)", "mean log p(x) (nats)"
		k := 0
		for _, run := range r.Runs {
			if run.Subset != n {
				continue
			}
			c := miselboColors[k%len(miselboColors)]
			k++
			for set := range 2 {
				xy := make(plotter.XYs, len(run.Points))
				for i, q := range run.Points {
					y := q.TrainLL
					if set == 1 {
						y = q.TestLL
					}
					xy[i] = plotter.XY{X: q.Train, Y: y}
				}
				l, pts, err := plotter.NewLinePoints(xy)
				if err != nil {
					return nil, fmt.Errorf("bench: MMCL plots: %w", err)
				}
				l.Color, pts.Color, pts.Radius = c, c, vg.Points(1.5)
				if set == 1 {
					l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
					pts.Shape = draw.CrossGlyph{}
				} else {
					p.Legend.Add(fmt.Sprintf("%s (%.0f s)", run.Method, run.Budget), l)
				}
				p.Add(l, pts)
			}
		}
		p.Legend.Top, p.Legend.Left = false, false
		p.Add(plotter.NewGrid())
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, fmt.Sprintf("curves_%d%s", n, ext))
			if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
				return nil, fmt.Errorf("bench: MMCL plots: %w", err)
			}
			out = append(out, path)
		}
	}
	return out, nil
}
