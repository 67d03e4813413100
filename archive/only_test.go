package archive

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
)

// Options.Only archives just the named transcript (a hook's), and says
// so of a file the clients' folders do not hold.
func TestArchiveOnlyTheNamedTranscript(t *testing.T) {
	env, _ := testHome(t)
	all, _ := importer.Find(env, "codex")
	var found []input.Found
	for _, f := range all {
		if strings.Contains(f.File, "rollout-2026-01-01") {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("codex sessions %v", all)
	}
	dir := t.TempDir()
	stray := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	c, errs, err := Run(context.Background(), Options{Dir: dir, Env: env, Only: []string{found[0].File, stray}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Files != 1 || c.New != 1 || len(errs) != 1 || !strings.Contains(errs[0].Error(), stray) {
		t.Fatalf("only one file: %+v %v", c, errs)
	}
	sessions, err := Sessions(dir)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("archived %v %v", sessions, err)
	}
	hits, err := Search(context.Background(), dir, SearchOptions{Query: `"hello from the tool"`})
	if err != nil || len(hits) == 0 || hits[0].Client != "codex" {
		t.Fatalf("search: %+v %v", hits, err)
	}
}
