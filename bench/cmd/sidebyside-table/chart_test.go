package main

import (
	"bytes"
	"image/png"
	"math"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// chartPoints are the points of a run with two engines, two conditions
// and the floor, Herald missing 600 in one condition and Centrifugo not
// reaching it at all.
func chartPoints(t *testing.T) []point {
	t.Helper()
	dir := t.TempDir()
	m := func(server, engine, condition string, run int) string {
		return `{"server":"` + server + `","engine":"` + engine + `","condition":"` + condition + `","run":` + string(rune('0'+run)) + `}`
	}
	writePoint(t, dir, "h-mem-plain-1", m("herald", "memory", "plain", 1),
		row("200", "2000", "3000", "0", "200")+row("400", "4000", "5000", "0", "400")+row("600", "6000", "7000", "0", "600"))
	writePoint(t, dir, "h-mem-plain-2", m("herald", "memory", "plain", 2),
		row("200", "4000", "5000", "0", "200")+row("400", "8000", "9000", "0", "400"))
	writePoint(t, dir, "c-mem-plain-1", m("centrifugo", "memory", "plain", 1),
		row("200", "10000", "20000", "0", "200")+row("400", "30000", "40000", "0", "400"))
	writePoint(t, dir, "h-mem-quota-1", m("herald", "memory", "quota", 1), row("200", "5000", "6000", "0", "200"))
	writePoint(t, dir, "c-mem-quota-1", m("centrifugo", "memory", "quota", 1), row("200", "20000", "30000", "0", "200"))
	writePoint(t, dir, "h-redis-plain-1", m("herald", "redis", "plain", 1), row("200", "3000", "4000", "0", "200"))
	writePoint(t, dir, "c-redis-plain-1", m("centrifugo", "redis", "plain", 1), row("200", "9000", "9000", "0", "200"))
	writePoint(t, dir, "floor-none-plain-1", m("floor", "none", "plain", 1),
		row("200", "1000", "2000", "0", "200")+row("400", "3000", "4000", "0", "400"))
	points, err := readPoints(dir, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return points
}

// TestPanelSeries: a panel's lines are the table's medians (over the runs
// that reached each rate), half of Centrifugo's, and the floor of the
// panel's condition; a condition without a floor point has no floor line.
func TestPanelSeries(t *testing.T) {
	points := chartPoints(t)
	l := layoutOf(points)
	got := map[string]plotter.XYs{}
	for _, s := range panelSeries(points, l, column{engine: "memory", condition: "plain"}) {
		got[s.name] = s.xy
	}
	want := map[string]plotter.XYs{
		seriesHerald:     {{X: 200, Y: 3}, {X: 400, Y: 6}, {X: 600, Y: 6}},
		seriesCentrifugo: {{X: 200, Y: 10}, {X: 400, Y: 30}},
		seriesTarget:     {{X: 200, Y: 5}, {X: 400, Y: 15}},
		seriesFloor:      {{X: 200, Y: 1}, {X: 400, Y: 3}},
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: %v, want %v", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("series %v, want those of %v", got, want)
	}
	for _, s := range panelSeries(points, l, column{engine: "memory", condition: "quota"}) {
		if s.name == seriesFloor && len(s.xy) > 0 {
			t.Errorf("quota panel has a floor line %v, and the run has no floor point under the quota", s.xy)
		}
	}
}

// TestChart: the PNG decodes, with a panel per engine (rows) and
// condition (columns) and the legend's strip above them: two engines by
// two conditions here, the floor drawn inside the panels; a run of the
// floor alone gets a panel per condition of its own.
func TestChart(t *testing.T) {
	const dpi = 96 // vgimg's default
	size := func(points []point) (int, int) {
		t.Helper()
		var b bytes.Buffer
		if err := writeChart(&b, points); err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		return cfg.Width, cfg.Height
	}
	px := func(l vg.Length) int { return int(math.Round(float64(l/vg.Inch) * dpi)) }
	points := chartPoints(t)
	if w, h := size(points); w != px(2*panelWidth) || h != px(2*panelHeight+legendHeight) {
		t.Errorf("chart is %d×%d px, want %d×%d (2 conditions × 2 engines)", w, h, px(2*panelWidth), px(2*panelHeight+legendHeight))
	}
	floorOnly := slices.DeleteFunc(points, func(p point) bool { return p.Server != floorServer })
	if w, h := size(floorOnly); w != px(panelWidth) || h != px(panelHeight+legendHeight) {
		t.Errorf("chart of the floor alone is %d×%d px, want %d×%d (one condition)", w, h, px(panelWidth), px(panelHeight+legendHeight))
	}
}

// TestChartNeedsARate: points that reached no rate get an error, not an
// empty chart.
func TestChartNeedsARate(t *testing.T) {
	dir := t.TempDir()
	writePoint(t, dir, "h", `{"server":"herald","engine":"memory","condition":"plain","run":1}`, "")
	points, err := readPoints(dir, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeChart(&bytes.Buffer{}, points); err == nil {
		t.Error("chart of points without a step: no error")
	}
}
