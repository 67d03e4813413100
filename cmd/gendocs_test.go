package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenDocsIsDeterministicAndChecks(t *testing.T) {
	dir := t.TempDir()
	// A hand-written page in another section is left alone.
	os.MkdirAll(filepath.Join(dir, "man"), 0o755)
	os.WriteFile(filepath.Join(dir, "man", "ctxfold-format.5"), []byte("hand written\n"), 0o644)
	// A page no command generates any more is removed.
	os.WriteFile(filepath.Join(dir, "man", "ctxfold-gone.1"), []byte("old\n"), 0o644)

	if r := cliRun(t, nil, false, "gen-docs", "--dir", dir); r.Code != 0 {
		t.Fatalf("gen-docs: exit %d %s", r.Code, r.Stderr)
	}
	first := readTree(t, dir)
	for _, name := range []string{"completions/ctxfold.bash", "completions/_ctxfold", "completions/ctxfold.fish", "completions/ctxfold.ps1",
		"man/ctxfold.1", "man/ctxfold-search.1", "man/ctxfold-config.1", "man/ctxfold-completion.1", "man/ctxfold-version.1"} {
		if len(first[filepath.FromSlash(name)]) == 0 {
			t.Errorf("%s not generated", name)
		}
	}
	if _, ok := first[filepath.Join("man", "ctxfold-gone.1")]; ok {
		t.Errorf("stale page kept")
	}
	if string(first[filepath.Join("man", "ctxfold-format.5")]) != "hand written\n" {
		t.Errorf("hand-written page touched")
	}
	if _, ok := first[filepath.Join("man", "ctxfold-gen-docs.1")]; ok {
		t.Errorf("hidden command got a man page")
	}
	page := string(first[filepath.Join("man", "ctxfold-search.1")])
	for _, want := range []string{`.TH "CTXFOLD-SEARCH" "1" "Nov 2026" "ctxfold" "ctxfold manual"`, ".SH EXIT STATUS", ".SH EXAMPLE", `\fBctxfold-format(5)\fP`} {
		if !strings.Contains(page, want) {
			t.Errorf("search page lacks %q", want)
		}
	}
	root := string(first[filepath.Join("man", "ctxfold.1")])
	for _, want := range []string{".SH ENVIRONMENT", "CTXFOLD_CONFIG", ".SH FILES"} {
		if !strings.Contains(root, want) {
			t.Errorf("ctxfold.1 lacks %q", want)
		}
	}
	for name, b := range first {
		if bytes.Contains(b, []byte("Auto generated")) {
			t.Errorf("%s carries the auto-generated tag", name)
		}
	}

	// A second run, with a different environment, writes the same bytes.
	if r := cliRun(t, map[string]string{"CTXFOLD_LOCK_TIMEOUT": "1m", "SOURCE_DATE_EPOCH": "0"}, false, "gen-docs", "--dir", dir); r.Code != 0 {
		t.Fatalf("second gen-docs: exit %d", r.Code)
	}
	second := readTree(t, dir)
	for name, b := range first {
		if !bytes.Equal(b, second[name]) {
			t.Errorf("%s changed between runs", name)
		}
	}

	// --check: clean, then each kind of staleness is named, exit 1.
	if r := cliRun(t, nil, false, "gen-docs", "--dir", dir, "--check"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("check on fresh docs: exit %d %s", r.Code, r.Stderr)
	}
	os.WriteFile(filepath.Join(dir, "man", "ctxfold-search.1"), []byte("edited\n"), 0o644)
	os.Remove(filepath.Join(dir, "completions", "ctxfold.fish"))
	os.WriteFile(filepath.Join(dir, "man", "ctxfold-gone.1"), []byte("old\n"), 0o644)
	r := cliRun(t, nil, false, "gen-docs", "--dir", dir, "--check")
	if r.Code != ExitCheckFailed {
		t.Fatalf("check on stale docs: exit %d", r.Code)
	}
	for _, want := range []string{"stale: man/ctxfold-search.1: differs", "stale: completions/ctxfold.fish: missing", "stale: man/ctxfold-gone.1: no command generates it", "hint: run 'go run . gen-docs'"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	// --check writes nothing.
	if b, _ := os.ReadFile(filepath.Join(dir, "man", "ctxfold-search.1")); string(b) != "edited\n" {
		t.Errorf("--check rewrote a file")
	}
}
