package cluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walkthroughMarker names the fenced block right after it:
// "<!-- walkthrough: herald.yaml -->".
const walkthroughMarker = "<!-- walkthrough: "

// docBlocks returns the marked fenced blocks of a Markdown file by name.
func docBlocks(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, walkthroughMarker) || !strings.HasSuffix(line, "-->") {
			continue
		}
		name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, walkthroughMarker), "-->"))
		// The next non-blank line opens the block.
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			t.Fatalf("%s: the marker %q (line %d) is not followed by a fenced block", path, name, i+1)
		}
		var body []string
		for j++; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, lines[j])
		}
		if _, dup := out[name]; dup {
			t.Fatalf("%s: two blocks named %q", path, name)
		}
		out[name] = strings.Join(body, "\n") + "\n"
		i = j
	}
	return out
}

// need returns the named block, failing the test if the page lacks it.
func need(t *testing.T, blocks map[string]string, name string) string {
	t.Helper()
	b, ok := blocks[name]
	if !ok {
		t.Fatalf("docs/cluster.md has no block marked %q", name)
	}
	return b
}

// replaceAll replaces each old string of pairs with its new one, failing
// the test if one does not occur: a page that stopped naming an address
// would otherwise run with the page's ports instead of the test's.
func replaceAll(t *testing.T, what, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("the %s of docs/cluster.md no longer contains %q:\n%s", what, pairs[i], s)
		}
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	return s
}

// repoRoot is the module's root, two levels up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// commandArgs turns the one "herald ..." line of a command block into the
// arguments after "herald".
func commandArgs(t *testing.T, name, block string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "herald ") {
		t.Fatalf("block %q: want one `herald ...` line, got %q", name, lines)
	}
	return strings.Fields(lines[0])[1:]
}
