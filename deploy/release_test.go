package deploy_test

import (
	"os"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestReleaseTargets holds release/goreleaser.yaml to the six targets and
// their archive formats: release/check.sh builds only two of them
// (linux/amd64 and windows/arm64), so this is what checks the other four
// are still released.
func TestReleaseTargets(t *testing.T) {
	data, err := os.ReadFile("release/goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct {
			ID     string   `yaml:"id"`
			GOOS   []string `yaml:"goos"`
			GOARCH []string `yaml:"goarch"`
			Ignore []any    `yaml:"ignore"`
		} `yaml:"builds"`
		Archives []struct {
			Formats         []string `yaml:"formats"`
			FormatOverrides []struct {
				GOOS    string   `yaml:"goos"`
				Formats []string `yaml:"formats"`
			} `yaml:"format_overrides"`
		} `yaml:"archives"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("release/goreleaser.yaml: %v", err)
	}
	if len(cfg.Builds) != 1 || len(cfg.Archives) != 1 {
		t.Fatalf("release/goreleaser.yaml: %d builds and %d archives, want 1 and 1 (check.sh limits the one build)", len(cfg.Builds), len(cfg.Archives))
	}
	b := cfg.Builds[0]
	if !slices.Equal(b.GOOS, []string{"linux", "darwin", "windows"}) || !slices.Equal(b.GOARCH, []string{"amd64", "arm64"}) || len(b.Ignore) > 0 {
		t.Errorf("build %q: goos %v, goarch %v, ignore %v; want [linux darwin windows] × [amd64 arm64], nothing ignored", b.ID, b.GOOS, b.GOARCH, b.Ignore)
	}
	a := cfg.Archives[0]
	zipOn := map[string]bool{}
	for _, o := range a.FormatOverrides {
		zipOn[o.GOOS] = slices.Equal(o.Formats, []string{"zip"})
	}
	if !slices.Equal(a.Formats, []string{"tar.gz"}) || len(zipOn) != 1 || !zipOn["windows"] {
		t.Errorf("archives: formats %v, overrides %+v; want tar.gz, and zip for windows only", a.Formats, a.FormatOverrides)
	}
}
