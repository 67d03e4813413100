package claudecode

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"

	"github.com/ctxfold/ctxfold/transcript"
)

// externalDir holds the real public Claude Code transcripts
// (../shared/fixtures/external/MANIFEST.md); read in place, never copied.
func externalDir(t *testing.T) string {
	t.Helper()
	return sessiontest.External(t, "claude-code")
}

// independentCount counts, straight from the raw JSON of a session's
// files, what the import must produce: nodes (user and assistant lines by
// distinct uuid, assistant lines of one message.id+requestId per file
// counted once, a compact_boundary's summary line folded into its summary),
// user turns (user nodes carrying no tool_result), and tool pairs (tool_use
// ids answered by a tool_result id).
type counts struct{ nodes, turns, pairs, summaries int }

func independentCount(t *testing.T, files ...string) counts {
	t.Helper()
	var c counts
	uuids := map[string]bool{}
	calls := map[string]bool{}
	answered := map[string]bool{}
	for fi, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		msgs := map[string]bool{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			typ, _ := l["type"].(string)
			uuid, _ := l["uuid"].(string)
			if typ == "system" && l["subtype"] == "compact_boundary" {
				c.nodes++
				c.summaries++
				continue
			}
			if typ != "user" && typ != "assistant" || uuids[uuid] {
				continue
			}
			uuids[uuid] = true
			if l["isCompactSummary"] == true {
				continue
			}
			msg, _ := l["message"].(map[string]any)
			blocks, _ := msg["content"].([]any)
			if typ == "assistant" {
				key := string(rune('0'+fi)) + "|" + toS(msg["id"]) + "|" + toS(l["requestId"])
				if !msgs[key] {
					c.nodes++
				}
				msgs[key] = true
				for _, b := range blocks {
					if bm, _ := b.(map[string]any); bm["type"] == "tool_use" {
						calls[toS(bm["id"])] = true
					}
				}
				continue
			}
			c.nodes++
			isResult := false
			for _, b := range blocks {
				if bm, _ := b.(map[string]any); bm["type"] == "tool_result" {
					isResult = true
					answered[toS(bm["tool_use_id"])] = true
				}
			}
			if !isResult {
				c.turns++
			}
		}
		f.Close()
	}
	for id := range answered {
		if calls[id] {
			c.pairs++
		}
	}
	return c
}

func toS(v any) string { s, _ := v.(string); return s }

// importedCount counts the same three figures on imported nodes.
func importedCount(nodes []transcript.Node) counts {
	var c counts
	calls := map[string]bool{}
	results := map[string]bool{}
	for _, n := range nodes {
		c.nodes++
		if n.IsSummary() {
			c.summaries++
			continue
		}
		for _, tc := range n.AllToolCalls() {
			calls[tc.ID] = true
		}
		rs := n.ToolResults()
		for _, r := range rs {
			results[r.ToolCallID] = true
		}
		if n.Role == transcript.RoleUser && len(rs) == 0 {
			c.turns++
		}
	}
	for id := range results {
		if calls[id] {
			c.pairs++
		}
	}
	return c
}

func TestExternalClaudeCode(t *testing.T) {
	dir := externalDir(t)
	marot := filepath.Join(dir, "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	sub := filepath.Join(dir, "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d", "subagents")
	cases := []struct {
		name string
		file string
		// every file of the session, for the independent count
		all []string
	}{
		{"viewer-streaming", filepath.Join(dir, "d-kimuson-claude-code-viewer", "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"), nil},
		{"viewer-inline-sidechains", filepath.Join(dir, "d-kimuson-claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"), nil},
		{"marot-compacted", marot, []string{marot, filepath.Join(sub, "agent-a881341.jsonl"), filepath.Join(sub, "agent-acompact-fffbd0.jsonl")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			all := tc.all
			if all == nil {
				all = []string{tc.file}
			}
			tgt, dirs := stored(t, tc.file)
			if len(tgt.convs) != 1 {
				t.Fatalf("got %d conversations, want 1", len(tgt.convs))
			}
			c := tgt.convs[0]
			lines := 0
			for _, f := range all {
				lines += countLines(t, f)
			}
			if c.lines != lines {
				t.Errorf("counted %d records, the files have %d lines", c.lines, lines)
			}
			want := independentCount(t, all...)
			got := importedCount(c.nodes)
			if got != want {
				t.Errorf("imported %+v, independent count %+v", got, want)
			}
			ids := renderIDs(t, dirs[c.name], false)
			if len(ids) == 0 || ids[len(ids)-1] != c.head {
				t.Errorf("render does not end at HEAD %q", c.head)
			}
			for _, w := range c.warnings {
				t.Log("warning:", w)
			}
		})
	}
}

func countLines(t *testing.T, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(data), "\n")
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}
