package compact

import (
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// A real Codex session's apply_patch heredocs (through the shell tool)
// give change facts: the patched file and the definition its hunk's
// context names (issue 46).
func TestChangeFactsOfARealCodexPatch(t *testing.T) {
	dir := importExternal(t, "codex", "AcidicSoil-codex-session-view", "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl")
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	var nodes []*transcript.Node
	for i := 0; i < g.Len(); i++ {
		n, err := g.S.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	var got string
	for _, f := range audit.Extract(nodes, nil) {
		if p, _, _ := audit.ParseChange(f.Text); f.Kind == audit.KindChange && p == "components/chat/chat-helpers/index.ts" {
			got = f.Text
		}
	}
	_, syms, _ := audit.ParseChange(got)
	if !strings.Contains(","+strings.Join(syms, ",")+",", ",handleLocalChat,") {
		t.Errorf("change of index.ts = %q, want handleLocalChat among its symbols", got)
	}
}
