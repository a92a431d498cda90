package docs_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestProFeatureTable checks compatibility.md's table of Centrifugo PRO
// features against the rest of the documents: every link reaches a
// heading that exists, and every API method a row names is in api.md's
// method table, served where the row says "available" and described as
// not in Herald (error 108) where it says so.
func TestProFeatureTable(t *testing.T) {
	rows := markdownTable(t, "compatibility.md", "<!-- pro-table -->")
	if len(rows) < 9 {
		t.Fatalf("compatibility.md's PRO table has %d rows", len(rows))
	}
	methods := apiMethodDescriptions(t)
	link := regexp.MustCompile(`\]\(([a-z]+\.md)#([a-z0-9-]+)\)`)
	name := regexp.MustCompile("`([a-z_]+)`")
	for _, r := range rows {
		if len(r) != 4 {
			t.Fatalf("row %q: want 4 cells", r)
		}
		feature, status, apiCell, where := r[0], r[1], r[2], r[3]
		m := link.FindStringSubmatch(where)
		if m == nil {
			t.Errorf("%s: no link to a section of the docs in %q", feature, where)
		} else if !slices.Contains(headingSlugs(t, m[1]), m[2]) {
			t.Errorf("%s: %s has no heading #%s", feature, m[1], m[2])
		}
		available := status == "available"
		if !available && !strings.Contains(status, "error 108") {
			t.Errorf("%s: status %q is neither 'available' nor a refusal with error 108", feature, status)
		}
		for _, mm := range name.FindAllStringSubmatch(apiCell, -1) {
			desc, ok := methods[mm[1]]
			if !ok {
				t.Errorf("%s: method %s is not in api.md's method table", feature, mm[1])
				continue
			}
			if refused := strings.Contains(desc, "not in Herald"); refused == available {
				t.Errorf("%s: method %s is described as %q in api.md, against %q here", feature, mm[1], desc, status)
			}
		}
	}
}

// markdownTable returns the cells of the body rows of the first table
// after marker in file.
func markdownTable(t *testing.T, file, marker string) [][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s: no %s", file, marker)
	}
	var rows [][]string
	started := false
	for _, line := range strings.Split(after, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		if strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows[1:] // without the header
}

// apiMethodDescriptions is api.md's method table: method -> what it does.
func apiMethodDescriptions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range markdownTable(t, "api.md", "<!-- api-table: index -->") {
		out[strings.Trim(r[0], "`")] = r[1]
	}
	return out
}

// headingSlugs is the anchors of file's headings, as GitHub makes them.
func headingSlugs(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^a-z0-9 -]`)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		out = append(out, strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-"))
	}
	return out
}
