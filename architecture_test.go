package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/ctxfold/ctxfold"

// layerTable reads the layer table of docs/ARCHITECTURE.md: each row is a
// layer number and the packages in it, each named exactly (no `pkg/...`:
// a new package gets a row of its own choosing). The document is the
// specification, so the test and the page cannot drift apart.
func layerTable(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join("docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| (\\d+) \\| (.*) \\|$")
	name := regexp.MustCompile("`([^`]+)`")
	layers := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, p := range name.FindAllStringSubmatch(m[2], -1) {
			if strings.HasSuffix(p[1], "/...") {
				t.Fatalf("docs/ARCHITECTURE.md: layer %d names %s: name every package on a row of its own choosing", n, p[1])
			}
			layers[p[1]] = n
		}
	}
	if len(layers) == 0 {
		t.Fatal("docs/ARCHITECTURE.md has no layer table")
	}
	return layers
}

// layerOf finds a package's layer: its row in the table.
func layerOf(layers map[string]int, pkg string) (int, bool) {
	n, ok := layers[pkg]
	return n, ok
}

// checkLayers returns every import that goes against the table: a package
// the table does not list, an import of its own or a lower layer, and any import of
// internal/ (test support) from a package outside it. imports maps a
// module-relative package path ("main" for the root) to the module-relative
// packages it imports.
func checkLayers(layers map[string]int, imports map[string][]string) []string {
	var bad []string
	for pkg, deps := range imports {
		if isSupport(pkg) {
			continue
		}
		from, ok := layerOf(layers, pkg)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is in no layer of docs/ARCHITECTURE.md", pkg))
			continue
		}
		for _, dep := range deps {
			if strings.HasPrefix(dep, "internal/") {
				bad = append(bad, fmt.Sprintf("%s imports test support %s", pkg, dep))
				continue
			}
			to, ok := layerOf(layers, dep)
			if ok && to >= from {
				// Same row included: a row is one step of the flow, and an
				// import between two of its packages is one running back up.
				bad = append(bad, fmt.Sprintf("%s (layer %d) imports %s (layer %d)", pkg, from, dep, to))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// isSupport: test support, the interop recorders, generators and
// benchmarks sit outside the flow.
func isSupport(pkg string) bool {
	for _, p := range []string{"internal/", "interop/", "bench/", "fixtures"} {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return false
}

// moduleImports lists the module's packages and their non-test imports
// within the module, from go list.
func moduleImports(t *testing.T) (map[string][]string, map[string][]string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	files := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		pkg := rel(f[0])
		imports[pkg] = []string{}
		for _, dep := range strings.Fields(f[1]) {
			if strings.HasPrefix(dep, modulePath+"/") || dep == modulePath {
				imports[pkg] = append(imports[pkg], rel(dep))
			} else {
				imports[pkg] = append(imports[pkg], dep)
			}
		}
		for _, g := range strings.Fields(f[3]) {
			files[pkg] = append(files[pkg], filepath.Join(f[2], g))
		}
	}
	return imports, files
}

func rel(importPath string) string {
	if importPath == modulePath {
		return "main"
	}
	return strings.TrimPrefix(importPath, modulePath+"/")
}

func TestLayers(t *testing.T) {
	imports, _ := moduleImports(t)
	for _, v := range checkLayers(layerTable(t), imports) {
		t.Error(v)
	}
}

// TestLayerCheckerRejects shows the checker failing on the imports it must
// refuse: render reaching up into compact, a format reaching into the
// store, one format importing another (same row), a library importing test
// support, and packages the table does not list.
func TestLayerCheckerRejects(t *testing.T) {
	layers := layerTable(t)
	got := checkLayers(layers, map[string][]string{
		"render":        {"dag", "compact"},
		"estimate":      {"internal/sessiontest"},
		"newthing":      {"transcript"},
		"transcript":    {},
		"cmd":           {"verify", "fit", "report/graph"},
		"format/codex":  {"transcript", "format/input", "store"},
		"format/gemini": {"format/claudecode"},
		"format/x":      {"transcript"},
		"importer":      {"store", "format/codex"},
	})
	want := []string{
		"estimate imports test support internal/sessiontest",
		"format/codex (layer 3) imports store (layer 4)",
		"format/gemini (layer 3) imports format/claudecode (layer 3)",
		"format/x is in no layer of docs/ARCHITECTURE.md",
		"newthing is in no layer of docs/ARCHITECTURE.md",
		"render (layer 8) imports compact (layer 12)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("checker found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestNoCLIBelowCmd: only cmd and main touch cobra, viper or the process's
// standard streams; the libraries take io.Readers and io.Writers.
func TestNoCLIBelowCmd(t *testing.T) {
	imports, files := moduleImports(t)
	for pkg, deps := range imports {
		if pkg == "cmd" || pkg == "main" || isSupport(pkg) {
			continue
		}
		for _, dep := range deps {
			if strings.HasPrefix(dep, "github.com/spf13/") {
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
		for _, v := range stdStreamUses(t, files[pkg]) {
			t.Errorf("%s: %s", pkg, v)
		}
	}
	if v := stdStreamUses(t, []string{writeTemp(t, "package x\nimport \"os\"\nvar w = os.Stderr\n")}); len(v) != 1 {
		t.Fatalf("the stream check does not see os.Stderr: %v", v)
	}
}

// stdStreamUses finds os.Stdin, os.Stdout and os.Stderr in code (not in
// comments) of the given files.
func stdStreamUses(t *testing.T, paths []string) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && strings.HasPrefix(sel.Sel.Name, "Std") {
				found = append(found, fmt.Sprintf("%s uses os.%s", fset.Position(sel.Pos()), sel.Sel.Name))
			}
			return true
		})
	}
	return found
}

func writeTemp(t *testing.T, src string) string {
	p := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSizeLimits: no file of the product, cmd and main included, is over
// 600 lines and no function over 80 (docs/ARCHITECTURE.md): long steps are
// split into named ones — in cmd, a constructor binds flags, a resolve
// step fills the options and the run function runs. Test support
// (internal/, interop/), generators and benchmarks are not the product
// and are not held to it.
func TestSizeLimits(t *testing.T) {
	_, files := moduleImports(t)
	for pkg, paths := range files {
		if isSupport(pkg) {
			continue
		}
		for _, p := range paths {
			for _, v := range sizeViolations(t, p) {
				t.Error(v)
			}
		}
	}
}

// sizeViolations lists the limits one Go file breaks.
func sizeViolations(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	if n := fset.File(f.Pos()).LineCount(); n > 600 {
		bad = append(bad, fmt.Sprintf("%s: %d lines (at most 600)", path, n))
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > 80 {
				bad = append(bad, fmt.Sprintf("%s: func %s is %d lines (at most 80)", path, fd.Name.Name, n))
			}
		}
	}
	return bad
}

// TestSizeLimitsCoverCmd: the limits are checked on cmd's files, and the
// check rejects a command constructor over 80 lines.
func TestSizeLimitsCoverCmd(t *testing.T) {
	_, files := moduleImports(t)
	if len(files["cmd"]) == 0 || isSupport("cmd") {
		t.Fatal("TestSizeLimits sees no file of cmd")
	}
	long := "package cmd\n\nfunc newLongCmd() {\n" + strings.Repeat("\t_ = 1\n", 80) + "}\n"
	p := filepath.Join(t.TempDir(), "long.go")
	if err := os.WriteFile(p, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	if bad := sizeViolations(t, p); len(bad) != 1 || !strings.Contains(bad[0], "func newLongCmd is 82 lines") {
		t.Errorf("a constructor of 82 lines: %v", bad)
	}
}

// TestOneReaderOfTheStore: nothing outside store/ names nodes.jsonl
// (store.NodesFile or the file name), so nothing else opens it
// (docs/ARCHITECTURE.md: the store is the one reader of its files; estimate's
// caches read committed bytes through store.OpenNodes and friends).
func TestOneReaderOfTheStore(t *testing.T) {
	_, files := moduleImports(t)
	for pkg, paths := range files {
		if isSupport(pkg) || pkg == "store" {
			continue
		}
		for _, p := range paths {
			if names := namesNodesFile(t, p); names != "" {
				t.Errorf("%s names the store's %s: read it through the store (store.OpenNodes)", p, names)
			}
		}
	}
}

// namesNodesFile is how the Go file at path names nodes.jsonl ("" when it
// does not): the store's constant, or a string that is the file's name or
// ends with it.
func namesNodesFile(t *testing.T, path string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := ""
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if n.Sel.Name == "NodesFile" {
				found = "store.NodesFile"
			}
		case *ast.BasicLit:
			// A path, not prose: help texts may name the file.
			if v, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && (v == "nodes.jsonl" || strings.HasSuffix(v, "/nodes.jsonl")) {
				found = n.Value
			}
		}
		return found == ""
	})
	return found
}
