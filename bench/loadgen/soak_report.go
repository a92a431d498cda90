package loadgen

import (
	"fmt"
	"image/color"
	"io"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// soakGauge is one thing a soak watches for growth, with how much growth
// between the first and the last third of the run (after warm-up) is
// still flat: a factor of the first third's mean plus an absolute slack,
// since a short run's means are noisy around small numbers.
type soakGauge struct {
	name   string
	unit   string
	scale  float64 // divides the raw value for display
	get    func(SoakSample) float64
	factor float64
	slack  float64 // in raw units
}

var soakGauges = []soakGauge{
	{"RSS", "MiB", 1 << 20, func(s SoakSample) float64 { return s.RSS }, 1.2, 16 << 20},
	{"goroutines", "", 1, func(s SoakSample) float64 { return s.Goroutines }, 1.1, 50},
	{"open files", "", 1, func(s SoakSample) float64 { return s.OpenFDs }, 1.1, 50},
}

// SoakTrend is one gauge of one node: its mean in the first and last
// third of the run after warm-up, and whether that counts as flat.
type SoakTrend struct {
	Node        int
	Gauge, Unit string
	First, Last float64 // display units
	Flat        bool
}

// SoakTrends compares the first and last thirds of each node's samples
// taken after warmup. Too few samples (under 6 per node) give no trend.
func SoakTrends(samples []SoakSample, warmup time.Duration) []SoakTrend {
	byNode := map[int][]SoakSample{}
	var nodes []int
	for _, s := range samples {
		if s.At < warmup {
			continue
		}
		if _, ok := byNode[s.Node]; !ok {
			nodes = append(nodes, s.Node)
		}
		byNode[s.Node] = append(byNode[s.Node], s)
	}
	var out []SoakTrend
	for _, n := range nodes {
		ss := byNode[n]
		if len(ss) < 6 {
			continue
		}
		third := len(ss) / 3
		for _, g := range soakGauges {
			first, last := meanOf(ss[:third], g.get), meanOf(ss[len(ss)-third:], g.get)
			out = append(out, SoakTrend{
				Node: n, Gauge: g.name, Unit: g.unit,
				First: first / g.scale, Last: last / g.scale,
				Flat: last <= first*g.factor+g.slack,
			})
		}
	}
	return out
}

func meanOf(ss []SoakSample, get func(SoakSample) float64) float64 {
	sum := 0.0
	for _, s := range ss {
		sum += get(s)
	}
	return sum / float64(len(ss))
}

// FormatSoak writes the run's verdict as Markdown: counts, errors, trends.
func FormatSoak(w io.Writer, res SoakResult, trends []SoakTrend) {
	c := res.Counts
	fmt.Fprintf(w, "| sessions | recovered | publications acknowledged | publications received | errors |\n|---|---|---|---|---|\n")
	fmt.Fprintf(w, "| %d | %d | %d | %d | %d |\n\n", c.Sessions, c.Recovered, c.Published, c.Received, c.Errors())
	if c.Errors() > 0 {
		fmt.Fprintf(w, "errors: dial %d, connect %d, subscribe %d, recovery %d, gaps %d, duplicates %d, publish %d, read %d, server closes %d\n\n",
			c.DialErrors, c.ConnectErrors, c.SubscribeErrors, c.RecoveryFailures, c.Gaps, c.Duplicates, c.PublishErrors, c.ReadErrors, c.ServerCloses)
		for _, e := range res.FirstErrors {
			fmt.Fprintf(w, "    %s\n", e)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| node | gauge | first third | last third | flat |\n|---|---|---|---|---|\n")
	for _, t := range trends {
		unit := ""
		if t.Unit != "" {
			unit = " " + t.Unit
		}
		fmt.Fprintf(w, "| %d | %s | %.1f%s | %.1f%s | %s |\n", t.Node, t.Gauge, t.First, unit, t.Last, unit, map[bool]string{true: "yes", false: "**no**"}[t.Flat])
	}
}

// SoakOK reports whether a run had no error and every trend is flat.
func SoakOK(res SoakResult, trends []SoakTrend) bool {
	if res.Counts.Errors() > 0 || len(trends) == 0 {
		return false
	}
	for _, t := range trends {
		if !t.Flat {
			return false
		}
	}
	return true
}

// WriteSoakCSV writes the samples, one row per node and time.
func WriteSoakCSV(w io.Writer, samples []SoakSample) error {
	var b strings.Builder
	b.WriteString("seconds,node,rss_bytes,goroutines,open_fds,clients\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%.1f,%d,%.0f,%.0f,%.0f,%.0f\n", s.At.Seconds(), s.Node, s.RSS, s.Goroutines, s.OpenFDs, s.Clients)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var soakColors = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

// WriteSoakPNG draws RSS, goroutines and open files against time, one
// line per node, stacked.
func WriteSoakPNG(w io.Writer, title string, samples []SoakSample) error {
	plots := make([][]*plot.Plot, len(soakGauges))
	for gi, g := range soakGauges {
		p := plot.New()
		if gi == 0 {
			p.Title.Text = title
		}
		p.X.Label.Text = "minutes"
		p.Y.Label.Text = strings.TrimSpace(g.name + " " + g.unit)
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
		byNode := map[int]plotter.XYs{}
		var nodes []int
		for _, s := range samples {
			if _, ok := byNode[s.Node]; !ok {
				nodes = append(nodes, s.Node)
			}
			byNode[s.Node] = append(byNode[s.Node], plotter.XY{X: s.At.Minutes(), Y: g.get(s) / g.scale})
		}
		for i, n := range nodes {
			l, err := plotter.NewLine(byNode[n])
			if err != nil {
				return fmt.Errorf("soak chart: %w", err)
			}
			l.Color = soakColors[i%len(soakColors)]
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("node %d", n), l)
		}
		p.Legend.Top = false
		plots[gi] = []*plot.Plot{p}
	}
	img := vgimg.New(8*vg.Inch, 9*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(8), PadTop: vg.Points(4), PadBottom: vg.Points(4)}
	canvases := plot.Align(plots, tiles, dc)
	for r := range plots {
		plots[r][0].Draw(canvases[r][0])
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("soak chart: %w", err)
	}
	return nil
}
