package test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/heraldhq/herald"

// testSupport lists the import paths that only tests may import: the
// helpers under internal/test, and hub/hubtest, the in-memory connection
// that applications embedding the hub use in their own tests, as they use
// net/http/httptest.
var testSupport = []string{module + "/internal/test", module + "/hub/hubtest"}

func isTestSupport(path string) bool {
	for _, p := range testSupport {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// TestProductImportsNoTestHelper parses the imports of every Go file of
// the repository, every module and build constraint included, and fails
// for a non-test file outside the test support packages that imports one
// of them: a test helper may import product code, never the reverse, so
// that a helper's dependencies (gorilla's WebSocket client, the testing
// package) never reach the binary and the layers keep pointing down.
func TestProductImportsNoTestHelper(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	fset := token.NewFileSet()
	var product, testsUsingHelpers int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		isTest := strings.HasSuffix(rel, "_test.go")
		helper := isTestSupport(module + "/" + filepath.ToSlash(filepath.Dir(rel)))
		if !isTest && !helper {
			product++
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if !isTestSupport(imp) {
				continue
			}
			if isTest {
				testsUsingHelpers++
				continue
			}
			if !helper {
				t.Errorf("%s: product code imports the test helper %s", rel, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A walk that found nothing would pass; these floors catch a wrong
	// root or a parse that read no imports.
	if product < 100 || testsUsingHelpers < 100 {
		t.Fatalf("read %d product files and %d test files importing a helper: the walk missed the repository", product, testsUsingHelpers)
	}
}
