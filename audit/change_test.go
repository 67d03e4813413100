package audit

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

func changeFacts(t *testing.T, nodes ...*transcript.Node) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range Extract(nodes, nil) {
		if f.Kind == KindChange {
			p, _, _ := ParseChange(f.Text)
			out[p] = f.Text
		}
	}
	return out
}

func TestChangeClaudeCodeEditAndWrite(t *testing.T) {
	got := changeFacts(t,
		assistant("a1", "", call("c1", "Edit", map[string]any{"file_path": "/p/lib/chat/messages.ex",
			"old_string": "def old, do: 1",
			"new_string": "def validate_session_message_ids(session, ids) do\n  create_message_refs(ids)\nend\nfield :selection_source, :string"})),
		assistant("a2", "", call("c2", "Write", map[string]any{"file_path": "/p/assets/js/hooks.js",
			"content": "export const TranscriptSelection = {\n  mounted() {\n    const s = window.getSelection()\n  }\n}\nfunction pushSelection(el) {}\n"})),
		assistant("a3", "", call("c3", "MultiEdit", map[string]any{"file_path": "/p/lib/web/live.html.heex",
			"edits": []any{map[string]any{"old_string": "<div>", "new_string": `<div id="t" phx-hook="TranscriptSelection">`}}})),
	)
	want := map[string]string{
		"/p/lib/chat/messages.ex":   "/p/lib/chat/messages.ex → validate_session_message_ids/2, selection_source, create_message_refs",
		"/p/assets/js/hooks.js":     "/p/assets/js/hooks.js → TranscriptSelection, mounted, pushSelection, window.getSelection",
		"/p/lib/web/live.html.heex": `/p/lib/web/live.html.heex → phx-hook="TranscriptSelection"`,
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: got %q, want %q", p, got[p], w)
		}
	}
}

func TestChangeCodexApplyPatch(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: internal/net/retry.go\n@@ func retry\n-\treturn d\n+\treturn backoffDelay(d)\n*** Add File: internal/net/backoff.go\n+package net\n+\n+func backoffDelay(d int) int { return d * 2 }\n+type Policy struct {\n+\tMaxRetries int `json:\"max_retries\"`\n+}\n*** End Patch"
	raw, _ := json.Marshal(patch)
	custom := transcript.ToolCall{ID: "c1", Name: "apply_patch", Arguments: raw}
	got := changeFacts(t, assistant("a1", "", custom))
	if w := "internal/net/retry.go → retry, backoffDelay"; got["internal/net/retry.go"] != w {
		t.Errorf("update: %q, want %q", got["internal/net/retry.go"], w)
	}
	if w := "internal/net/backoff.go → backoffDelay, Policy, MaxRetries"; got["internal/net/backoff.go"] != w {
		t.Errorf("add: %q, want %q", got["internal/net/backoff.go"], w)
	}
	// The same patch through the shell tool (function_call, argv).
	shell := call("c2", "shell", map[string]any{"command": []any{"apply_patch", patch}})
	if got := changeFacts(t, assistant("a2", "", shell)); len(got) != 2 {
		t.Errorf("shell apply_patch: %v", got)
	}
}

func TestChangeGeminiReplaceAndOthers(t *testing.T) {
	got := changeFacts(t,
		assistant("a1", "", call("c1", "replace", map[string]any{"file_path": "/w/app.py", "old_string": "x = 1", "new_string": "def load_config(path):\n    return parse_yaml(path)\n"})),
		assistant("a2", "", call("c2", "write_file", map[string]any{"file_path": "/w/src/lib.rs", "content": "pub struct Cache {}\nimpl Cache {\n    pub fn evict(&mut self) {}\n}\n"})),
		assistant("a3", "", call("c3", "edit", map[string]any{"filePath": "/w/web/routes.go", "oldString": "", "newString": "func Routes() {\n\thttp.HandleFunc(\"/api/items\", items)\n}\n"})),
		assistant("a4", "", call("c4", "edit", map[string]any{"path": "/w/site.css", "oldText": "a{}", "newText": ".transcript-selection { color: red }\n"})),
		assistant("a5", "", call("c5", "Read", map[string]any{"file_path": "/w/README.md"})),
	)
	want := map[string]string{
		"/w/app.py":        "/w/app.py → load_config, parse_yaml",
		"/w/src/lib.rs":    "/w/src/lib.rs → Cache, evict",
		"/w/web/routes.go": "/w/web/routes.go → Routes, /api/items, http.HandleFunc",
		"/w/site.css":      "/w/site.css → .transcript-selection",
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: got %q, want %q", p, got[p], w)
		}
	}
	if _, ok := got["/w/README.md"]; ok || len(got) != len(want) {
		t.Errorf("a read is no change: %v", got)
	}
}

func TestChangeRevertedAndSuperseded(t *testing.T) {
	edit := func(id, p, old, nw string) *transcript.Node {
		return assistant(id, "", call("c"+id, "Edit", map[string]any{"file_path": p, "old_string": old, "new_string": nw}))
	}
	got := changeFacts(t,
		edit("a1", "/p/a.go", "x := 1", "func tryCache() {}"),
		edit("a2", "/p/a.go", "func tryCache() {}", "x := 1"),
		edit("a3", "/p/b.go", "y", "func keep() {}"),
		assistant("a4", "", call("c4", "Bash", map[string]any{"command": "git checkout -- b.go && go test ./..."})),
		edit("a5", "/p/c.go", "z", "func first() {}"),
		assistant("a6", "", call("c6", "Write", map[string]any{"file_path": "/p/c.go", "content": "package p\nfunc second() {}\n"})),
	)
	if w := "/p/a.go → tryCache (reverted)"; got["/p/a.go"] != w {
		t.Errorf("inverse edit: %q, want %q", got["/p/a.go"], w)
	}
	if w := "/p/b.go → keep (reverted)"; got["/p/b.go"] != w {
		t.Errorf("git checkout: %q, want %q", got["/p/b.go"], w)
	}
	if w := "/p/c.go → second"; got["/p/c.go"] != w {
		t.Errorf("superseded edit: %q, want %q (the live write's symbols only)", got["/p/c.go"], w)
	}
}

func TestMatcherChange(t *testing.T) {
	f := Fact{Kind: KindChange, Text: "/home/u/p/lib/chat/messages.ex → validate_session_message_ids/2, create_message_refs"}
	for text, want := range map[string]bool{
		"Edited lib/chat/messages.ex: added `validate_session_message_ids/2` and create_message_refs": true,
		"lib/chat/messages.ex: validate_session_message_ids(session, ids), create_message_refs":       true,
		"lib/chat/messages.ex: validate_session_message_ids/2":                                        false,
		"validate_session_message_ids/2 and create_message_refs":                                      false,
	} {
		if got := NewMatcher(text).Has(f); got != want {
			t.Errorf("Has in %q = %v, want %v", text, got, want)
		}
	}
	if !slices.Contains(Kinds, KindChange) || rankOf(f) >= rankOf(Fact{Kind: KindCommand}) {
		t.Error("change is a reported kind ranked before commands")
	}
}

// A model's summary that names the file but not what changed in it lacks
// the change: Survive lists it missing, for the LLM summarisers' ledger.
func TestSurviveListsAChangeAModelDropped(t *testing.T) {
	nodes := []*transcript.Node{
		user("u1", "Add the refs."),
		assistant("a1", "", call("c1", "Edit", map[string]any{"file_path": "lib/refs.ex", "old_string": "x", "new_string": "def create_message_refs(a, b), do: :ok"})),
	}
	facts := Extract(nodes, nil)
	sv := Survive(facts, []*transcript.Node{assistant("s", "Edited lib/refs.ex. Add the refs.")})
	if len(sv.Missing) != 1 || sv.Missing[0].Kind != KindChange || sv.Missing[0].Text != "lib/refs.ex → create_message_refs/2" {
		t.Errorf("missing %+v", sv.Missing)
	}
	if k := sv.Figures.Kinds[string(KindChange)]; k.Total != 1 || k.Kept != 0 {
		t.Errorf("change figures %+v", k)
	}
}

// A file a patch adds and a later patch deletes is marked deleted.
func TestChangeDeleted(t *testing.T) {
	add := call("c1", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: tmp/probe.py\n+def probe():\n+    pass\n*** End Patch"})
	del := call("c2", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Delete File: tmp/probe.py\n*** End Patch"})
	got := changeFacts(t, assistant("a1", "", add), assistant("a2", "", del))
	if w := "tmp/probe.py → probe (deleted)"; got["tmp/probe.py"] != w {
		t.Errorf("got %q, want %q", got["tmp/probe.py"], w)
	}
}
