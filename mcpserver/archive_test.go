package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfold/ctxfold/archive"
	"github.com/ctxfold/ctxfold/format/input"
)

// An agent recalls a turn of another session, one its client has deleted:
// search_history with scope archive finds it, read_turns quotes it from
// the hit's session.
func TestSearchArchiveAndReadItsSession(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	b, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(home, ".claude", "projects", "-old", filepath.Base(recorded))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := input.Env{Home: home, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
	if _, errs, err := archive.Run(context.Background(), archive.Options{Dir: dir, Env: env}); err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, Options{Locate: Locate{Home: t.TempDir(), Cwd: t.TempDir()}, CacheDir: t.TempDir(), ArchiveDir: dir})
	var out SearchOutput
	call(t, cs, ToolSearch, map[string]any{"query": `"turn two"`, "scope": "archive"}, &out)
	var hit *SearchHit
	for i, h := range out.Hits {
		if h.Role == "user" && h.Client == "claude-code" && h.Session != "" {
			hit = &out.Hits[i]
		}
	}
	if hit == nil || hit.Status != "covered" {
		t.Fatalf("no covered user hit in the archive: %+v", out)
	}
	var read ReadOutput
	call(t, cs, ToolRead, map[string]any{"ids": []string{hit.ID}, "session": hit.Session}, &read)
	if len(read.Turns) != 1 || !strings.Contains(read.Turns[0].Text, "Before compaction, turn two.") {
		t.Fatalf("read_turns of the archived session: %+v", read)
	}
	// Only the archive's sessions are served.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolRead,
		Arguments: map[string]any{"ids": []string{hit.ID}, "session": filepath.Join(dir, "..")}})
	if err != nil || !res.IsError {
		t.Fatalf("a session outside the archive was read: %+v %v", res, err)
	}
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"query": "x", "scope": "everywhere"}})
	if !res.IsError {
		t.Fatal("an unknown scope is not an error")
	}
}
