package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"github.com/heraldhq/herald/bench/loadgen"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// series is one line of a chart's panel: the median first-copy p99 (ms)
// against the offered rate.
type series struct {
	name string
	xy   plotter.XYs
}

// The series of a panel, in the order they are drawn and named in the
// legend.
const (
	seriesHerald     = "Herald"
	seriesCentrifugo = "Centrifugo"
	seriesTarget     = "half of Centrifugo (the target)"
	seriesFloor      = "floor"
)

// panelSeries are the lines of column c's panel: each server's median
// p99 at the rates some run of it reached (the table's cells, without the
// count of runs), half of Centrifugo's (Herald's line must stay under it
// for the p99 target), and the floor of the same condition when the run
// measured it.
func panelSeries(points []point, l layout, c column) []series {
	line := func(col column, s string, scale float64) plotter.XYs {
		var xy plotter.XYs
		for _, r := range l.rates {
			if vs, _ := p99s(points, col, s, r); len(vs) > 0 {
				xy = append(xy, plotter.XY{X: r, Y: scale * median(vs)})
			}
		}
		return xy
	}
	// The floor's line: its best round interval's median at each rate
	// (floor.go), of the floor that c is held against.
	floorLine := func() plotter.XYs {
		var xy plotter.XYs
		fc := floorOf(points, c)
		for _, r := range l.rates {
			if f, ok := bestFloorP99(points, fc, r); ok {
				xy = append(xy, plotter.XY{X: r, Y: f.v})
			}
		}
		return xy
	}
	if c.floor {
		return []series{{name: seriesFloor, xy: floorLine()}}
	}
	var out []series
	for _, s := range c.servers(l.servers) {
		out = append(out, series{name: serverName(s), xy: line(c, s, 1)})
		if s == "centrifugo" {
			out = append(out, series{name: seriesTarget, xy: line(c, s, targetP99Share)})
		}
	}
	if l.floor {
		out = append(out, series{name: seriesFloor, xy: floorLine()})
	}
	return out
}

// The look of each series: colour, dashes (none: solid) and glyph.
var seriesStyle = map[string]struct {
	col    color.RGBA
	dashes []vg.Length
	glyph  draw.GlyphDrawer
}{
	seriesHerald:     {color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, nil, draw.CircleGlyph{}},
	seriesCentrifugo: {color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, nil, draw.SquareGlyph{}},
	seriesTarget:     {color.RGBA{R: 0xf0, G: 0x90, B: 0x90, A: 0xff}, []vg.Length{vg.Points(2), vg.Points(2)}, nil},
	seriesFloor:      {color.RGBA{R: 0x60, G: 0x60, B: 0x60, A: 0xff}, []vg.Length{vg.Points(5), vg.Points(3)}, draw.PlusGlyph{}},
}

// Panel size, the height of the legend's strip above the panels, and the
// lowest latency drawn (ms; the axis is logarithmic).
const (
	panelWidth   = 3.4 * vg.Inch
	panelHeight  = 2.6 * vg.Inch
	legendHeight = 0.3 * vg.Inch
	chartMin     = 0.5
)

// writeChart draws a panel per column of an engine (the floor's points
// are drawn in the panels of their condition, not in panels of their
// own), a row per engine and a column per condition, every panel on the
// same logarithmic p99 axis so that engines and conditions compare at a
// glance. A run of the floor alone gets a panel per condition.
func writeChart(w io.Writer, points []point) error {
	l := layoutOf(points)
	drawn := slices.DeleteFunc(slices.Clone(l.cols), func(c column) bool { return c.floor })
	if len(drawn) == 0 {
		drawn = l.cols
	}
	var rows [][]column
	conds := map[string]int{}
	for _, c := range drawn {
		if _, ok := conds[c.condition]; !ok {
			conds[c.condition] = len(conds)
		}
		if len(rows) == 0 || rows[len(rows)-1][0].engine != c.engine || rows[len(rows)-1][0].floor != c.floor {
			rows = append(rows, nil)
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], c)
	}
	if len(rows) == 0 {
		return fmt.Errorf("chart: no columns")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	panels := make([][]series, 0)
	for _, row := range rows {
		for _, c := range row {
			ss := panelSeries(points, l, c)
			for _, s := range ss {
				for _, p := range s.xy {
					lo, hi = min(lo, p.Y), max(hi, p.Y)
				}
			}
			panels = append(panels, ss)
		}
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("chart: no rate reached in any point")
	}
	lo = max(chartMin, math.Pow(10, math.Floor(math.Log10(max(lo, chartMin)))))
	hi = math.Pow(10, math.Ceil(math.Log10(max(hi, lo*10))))

	grid := make([][]*plot.Plot, len(rows))
	drawnSeries := map[string]bool{}
	k := 0
	for i, row := range rows {
		grid[i] = make([]*plot.Plot, len(conds))
		for _, c := range row {
			p, err := panel(c.title(), panels[k], lo, hi, l.rates)
			if err != nil {
				return fmt.Errorf("chart: %s: %w", c.title(), err)
			}
			for _, s := range panels[k] {
				drawnSeries[s.name] = drawnSeries[s.name] || len(s.xy) > 0
			}
			grid[i][conds[c.condition]] = p
			k++
		}
	}
	// The legend is a strip above the panels, an entry per series drawn in
	// any panel, side by side (each as wide as its thumbnail and name), so
	// that it covers no line; the chart is at least as wide as the strip.
	var legend []plot.Legend
	var entryWidths []vg.Length
	strip := vg.Length(0)
	for _, name := range []string{seriesHerald, seriesCentrifugo, seriesTarget, seriesFloor} {
		if !drawnSeries[name] {
			continue
		}
		e := plot.NewLegend()
		e.Add(name, thumbnails(name)...)
		e.Top, e.Left = true, true
		em := e.TextStyle.Width(" ")
		legend = append(legend, e)
		entryWidths = append(entryWidths, e.ThumbnailWidth+em+e.TextStyle.Width(name)+3*em)
		strip += entryWidths[len(entryWidths)-1]
	}
	width := max(vg.Length(len(conds))*panelWidth, strip+vg.Inch/2)
	img := vgimg.New(width, vg.Length(len(rows))*panelHeight+legendHeight)
	dc := draw.New(img)
	x := vg.Inch / 4
	for i, e := range legend {
		e.Draw(draw.Crop(dc, x, -(width - x - entryWidths[i]), dc.Max.Y-dc.Min.Y-legendHeight, 0))
		x += entryWidths[i]
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: len(conds), PadX: 2 * vg.Millimeter, PadY: 5 * vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: 2 * vg.Millimeter}
	canvases := plot.Align(grid, tiles, draw.Crop(dc, 0, 0, 0, -legendHeight))
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("chart: write PNG: %w", err)
	}
	return nil
}

// panel is one column's plot: its series' lines, styled by seriesStyle,
// on the chart's common p99 axis.
func panel(title string, ss []series, lo, hi float64, rates []float64) (*plot.Plot, error) {
	p := loadgen.NewLogPlot(title, "publications/s", "first-copy p99, ms")
	p.Y.Min, p.Y.Max = lo, hi
	if len(rates) > 0 {
		p.X.Min, p.X.Max = 0, rates[len(rates)-1]*1.05
	}
	for _, s := range ss {
		if len(s.xy) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(s.xy))
		for i, v := range s.xy {
			xy[i] = plotter.XY{X: v.X, Y: min(max(v.Y, lo), hi)}
		}
		ps, err := styled(s.name, xy)
		if err != nil {
			return nil, err
		}
		p.Add(ps...)
	}
	return p, nil
}

// styled is series name's line through xy, and its glyphs when it has
// any, in seriesStyle's look.
func styled(name string, xy plotter.XYs) ([]plot.Plotter, error) {
	st := seriesStyle[name]
	ln, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	ln.Color, ln.Dashes = st.col, st.dashes
	if st.glyph == nil {
		return []plot.Plotter{ln}, nil
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	sc.Color, sc.Shape, sc.Radius = st.col, st.glyph, vg.Points(2)
	return []plot.Plotter{ln, sc}, nil
}

// thumbnails are series name's marks in the legend: its line and glyph.
func thumbnails(name string) []plot.Thumbnailer {
	ps, _ := styled(name, plotter.XYs{{X: 0, Y: 1}}) // one point: no error
	var out []plot.Thumbnailer
	for _, p := range ps {
		out = append(out, p.(plot.Thumbnailer))
	}
	return out
}
