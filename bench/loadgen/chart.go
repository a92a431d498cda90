package loadgen

import (
	"fmt"
	"image/color"
	"io"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chartFloor is the lowest latency drawn (ms): the axis is logarithmic.
const chartFloor = 0.01

// NewLogPlot is the frame of the benchmarks' latency charts: a title,
// axis labels, a logarithmic y axis (latency spans orders of magnitude
// across rates) and a grid.
func NewLogPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	return p
}

// WritePNG draws the all-copies p50, p95 and p99 latency (log scale)
// against the offered rate: solid while the rate goes up, dashed on the
// way down.
func WritePNG(w io.Writer, title string, steps []StepResult) error {
	p := NewLogPlot(title, "offered publications/s", "publish-to-receive latency, ms (log)")
	series := []struct {
		name string
		get  func(StepResult) time.Duration
		col  color.RGBA
	}{
		{"p50", func(s StepResult) time.Duration { return s.All.P50 }, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"p95", func(s StepResult) time.Duration { return s.All.P95 }, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
		{"p99", func(s StepResult) time.Duration { return s.All.P99 }, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
	}
	for _, down := range []bool{false, true} {
		for _, se := range series {
			var pts plotter.XYs
			for _, s := range steps {
				if s.Down != down || s.All.Count == 0 {
					continue
				}
				v := max(float64(se.get(s))/float64(time.Millisecond), chartFloor)
				pts = append(pts, plotter.XY{X: s.Rate, Y: v})
			}
			if len(pts) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return fmt.Errorf("chart: %w", err)
			}
			l.Color, sc.Color = se.col, se.col
			sc.Shape = draw.CircleGlyph{}
			sc.Radius = vg.Points(2)
			name := se.name + " up"
			if down {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				name = se.name + " down"
			}
			p.Add(l, sc)
			p.Legend.Add(name, l)
		}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	c := vgimg.PngCanvas{Canvas: vgimg.New(9*vg.Inch, 5*vg.Inch)}
	p.Draw(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("chart: write PNG: %w", err)
	}
	return nil
}
