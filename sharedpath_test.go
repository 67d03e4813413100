package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSharedTranscriptsThroughSessiontest: a test that needs the shared
// real transcripts finds them through sessiontest.External (or the
// scripts' $SHARED from sessiontest.SharedRoot), which honour
// CTXFOLD_SHARED_DIR and, in a plain clone, skip saying why. No other Go
// file names the shared directory in a string (issue 29 item 12: tests
// hard-coded ../shared and skipped with no reason, or not at all).
func TestSharedTranscriptsThroughSessiontest(t *testing.T) {
	var bad []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") || path == "sharedpath_test.go" || filepath.ToSlash(filepath.Dir(path)) == "internal/sessiontest" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit: // a path spelled out
				if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && strings.Contains(s, "shared/fixtures") {
					bad = append(bad, path+": "+n.Value)
				}
			case *ast.CallExpr: // or joined: filepath.Join("..", "shared", …)
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Join" {
					for _, a := range n.Args {
						if lit, ok := a.(*ast.BasicLit); ok && lit.Value == `"shared"` {
							bad = append(bad, path+": filepath.Join(…, "+lit.Value+", …)")
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: reach the shared transcripts through sessiontest.External (it says why it skips)", b)
	}
}
