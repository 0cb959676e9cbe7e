package bench

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // PNG
)

var miselboColors = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// densityGrid is exp(logp) on an n×n grid over [−lim, lim]².
type densityGrid struct {
	n   int
	lim float64
	z   []float64
}

func newDensityGrid(logp func(z, g []float64) float64, n int, lim float64) densityGrid {
	g := densityGrid{n: n, lim: lim, z: make([]float64, n*n)}
	for r := range n {
		for c := range n {
			g.z[r*n+c] = math.Exp(logp([]float64{g.X(c), g.Y(r)}, nil))
		}
	}
	return g
}

func (g densityGrid) Dims() (int, int)   { return g.n, g.n }
func (g densityGrid) Z(c, r int) float64 { return g.z[r*g.n+c] }
func (g densityGrid) X(c int) float64    { return -g.lim + (float64(c)+0.5)*2*g.lim/float64(g.n) }
func (g densityGrid) Y(r int) float64    { return -g.lim + (float64(r)+0.5)*2*g.lim/float64(g.n) }

// plot writes the report's figures into dir and returns their paths.
func (r *MISELBOReport) plot(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: MISELBO plots: %w", err)
	}
	var out []string
	save := func(p *plot.Plot, w, h vg.Length, name string) error {
		path := filepath.Join(dir, name)
		if err := p.Save(w, h, path); err != nil {
			return fmt.Errorf("bench: MISELBO plots: %w", err)
		}
		out = append(out, path)
		return nil
	}
	for _, t := range r.Toy {
		// Figure 2: the target and the members' 1- and 2-sd ellipses.
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s: exp(−U) and the %d Gaussian members (1 and 2 sd)", t.Target, len(t.Members))
		p.X.Label.Text, p.Y.Label.Text = "z₁", "z₂"
		logp := logU1
		if t.Target == "U2" {
			logp = logU2
		}
		hm := plotter.NewHeatMap(newDensityGrid(logp, 200, 4), palette.Heat(64, 1))
		p.Add(hm)
		for s, q := range t.Members {
			for _, k := range []float64{1, 2} {
				xy := make(plotter.XYs, 101)
				for i := range xy {
					a := 2 * math.Pi * float64(i) / 100
					xy[i] = plotter.XY{X: q.mu[0] + k*q.sd[0]*math.Cos(a), Y: q.mu[1] + k*q.sd[1]*math.Sin(a)}
				}
				l, err := plotter.NewLine(xy)
				if err != nil {
					return nil, err
				}
				l.Color, l.Width = miselboColors[s%len(miselboColors)], vg.Points(2)
				p.Add(l)
				if k == 1 {
					p.Legend.Add(fmt.Sprintf("q%d", s+1), l)
				}
			}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -4, 4, -4, 4
		name := "toy2d_" + t.Target
		if w := firstWord(t.Fitting); strings.HasPrefix(w, "init ") {
			name += "_" + strings.TrimPrefix(w, "init ")
		}
		if err := save(p, 5*vg.Inch, 5*vg.Inch, name+".png"); err != nil {
			return nil, err
		}
	}
	if len(r.Delta) > 0 {
		// Figure 3 (left): Δ_L against the JSD, one line per L, and log S.
		p := plot.New()
		p.Title.Text = "Δ_L = MISELBO_L − mean IWELBO_L against JSD(q₁, q₂)"
		p.X.Label.Text, p.Y.Label.Text = "JSD (quadrature)", "Δ_L"
		for i, L := range deltaLs {
			var xy plotter.XYs
			for _, d := range r.Delta {
				if d.L == L {
					xy = append(xy, plotter.XY{X: d.JSD, Y: d.Delta})
				}
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color, pts.Radius = miselboColors[i], miselboColors[i], vg.Points(1.5)
			p.Add(l, pts)
			p.Legend.Add(fmt.Sprintf("L = %d", L), l)
		}
		ls := plotter.NewFunction(func(float64) float64 { return math.Log(2) })
		ls.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(ls)
		p.Legend.Add("log S", ls)
		p.Legend.Top, p.Legend.Left = true, true
		if err := save(p, 6*vg.Inch, 4*vg.Inch, "delta_vs_jsd.png"); err != nil {
			return nil, err
		}
	}
	if v := r.VAE; v != nil {
		// Table 3 as a figure: NLL against S, MISELBO solid, mean IWELBO dashed.
		p := plot.New()
		p.Title.Text = "VAE on MNIST: test NLL by MISELBO_L (solid) and mean IWELBO_L (dashed)"
		p.X.Label.Text, p.Y.Label.Text = "S (encoders)", "NLL (nats)"
		for li, L := range v.Cfg.Ls {
			for k, tab := range [][][]float64{v.MIS, v.IW} {
				xy := make(plotter.XYs, v.Cfg.Members)
				for S := range v.Cfg.Members {
					xy[S] = plotter.XY{X: float64(S + 1), Y: tab[S][li]}
				}
				l, pts, err := plotter.NewLinePoints(xy)
				if err != nil {
					return nil, err
				}
				c := miselboColors[li%len(miselboColors)]
				l.Color, pts.Color, pts.Radius = c, c, vg.Points(1.5)
				if k == 1 {
					l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
					pts.Shape = draw.CrossGlyph{}
				} else {
					p.Legend.Add(fmt.Sprintf("L = %d", L), l)
				}
				p.Add(l, pts)
			}
		}
		p.Legend.Top = true
		if err := save(p, 6*vg.Inch, 4.5*vg.Inch, "vae_nll.png"); err != nil {
			return nil, err
		}
	}
	return out, nil
}
