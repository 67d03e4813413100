package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

var fixedNow = func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }

const sessionID = "0b7e8a52-3c1d-4e2f-9a6b-7c8d9e0f1a2b"

func exportTo(t *testing.T, dir string, to export.Target, opts export.Options) ([]byte, *export.Result) {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	if opts.SessionID == "" {
		opts.SessionID = sessionID
	}
	if opts.CWD == "" {
		opts.CWD = "/work/app"
	}
	opts.Now = fixedNow
	var buf bytes.Buffer
	res, err := export.Export(context.Background(), g, &buf, to, opts)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), res
}

func importFile(t *testing.T, data []byte, name string) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "reimported")
	if _, err := importer.Import(context.Background(), importer.Options{From: "auto", Files: []string{in}, Out: out}); err != nil {
		t.Fatalf("import of the export: %v", err)
	}
	return out
}

// activeCovers is the active summary's coverage, as ids.
func activeCovers(t *testing.T, dir string) []string {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	if g.ActiveSummary() < 0 {
		return nil
	}
	return g.CoverIDs(g.ActiveSummary())
}

func compactSession(t *testing.T, dir string, keep int) {
	t.Helper()
	res, err := compact.Compact(context.Background(), compact.Options{Dir: dir, Summarizer: summarize.Extractive{}, KeepTokens: keep,
		Estimate: estimate.Options{NoCache: true, Model: "gpt-4o"}})
	if err != nil || res.Outcome != compact.OutcomeSucceeded {
		t.Fatalf("compact: %v %+v", err, res)
	}
}

func importShared(t *testing.T, rel string) string {
	t.Helper()
	src := sessiontest.External(t, rel)
	out := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: "auto", Files: []string{src}, Out: out}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTrip: importing an export gives the same rendered view and the
// same coverage, compacted or not, for both clients, on a shipped fixture
// and on real transcripts of each client.
func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		to     export.Target
		format render.Format
		dir    func(t *testing.T) string
		keep   int
	}{
		{"tools/claude-code", export.ClaudeCode, render.FormatAnthropic, func(t *testing.T) string { return sessiontest.CopyFixture(t, "tools") }, 200},
		{"tools/codex", export.Codex, render.FormatOpenAI, func(t *testing.T) string { return sessiontest.CopyFixture(t, "tools") }, 200},
		{"marot/claude-code", export.ClaudeCode, render.FormatAnthropic, func(t *testing.T) string {
			return importShared(t, "claude-code/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl")
		}, 3000},
		{"madshn/codex", export.Codex, render.FormatOpenAI, func(t *testing.T) string {
			return importShared(t, "codex/madshn-localpush/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl")
		}, 3000},
	}
	for _, tc := range cases {
		for _, compacted := range []bool{false, true} {
			name := tc.name
			if compacted {
				name += "/compacted"
			}
			t.Run(name, func(t *testing.T) {
				dir := tc.dir(t)
				if compacted {
					compactSession(t, dir, tc.keep)
				}
				data, res := exportTo(t, dir, tc.to, export.Options{})
				if compacted && res.Summary == "" {
					t.Fatal("the compacted branch exported without its summary")
				}
				back := importFile(t, data, "export.jsonl")
				want, got := sessiontest.Rendered(t, dir, tc.format), sessiontest.Rendered(t, back, tc.format)
				switch tc.to {
				case export.ClaudeCode:
					// Claude Code sends its own system prompt: the export
					// does not carry the fixture's; the messages must agree.
					want, got = dropSystem(t, want), dropSystem(t, got)
				case export.Codex:
					// A system prefix before the summary travels in the
					// replacement history, which a re-import folds into
					// the summary (docs/EXPORT.md): compare from it on.
					want, got = fromSummary(t, want), fromSummary(t, got)
				}
				if got != want {
					t.Fatalf("the re-imported view differs\nwant %.600s\ngot  %.600s", want, got)
				}
				wc, gc := activeCovers(t, dir), activeCovers(t, back)
				if tc.to == export.ClaudeCode {
					wc = slices.DeleteFunc(wc, func(id string) bool { return id == "sys" })
				}
				// Codex items have no ids, so a re-import mints them all:
				// the coverage must agree in size; Claude Code keeps ids.
				// A Codex re-import also covers the system prefix that the
				// replacement history carries (not the base instructions,
				// which session_meta carries and a re-import keeps first).
				if tc.to == export.Codex && compacted {
					wc = append(slices.Repeat([]string{"prefix"}, replacementPrefix(t, data)), wc...)
				}
				if compacted && (len(wc) != len(gc) || tc.to == export.ClaudeCode && !slices.Equal(mapIDs(wc), gc)) {
					t.Fatalf("covers differ: %d vs %d ids", len(wc), len(gc))
				}
			})
		}
	}
}

// mapIDs is what the export makes of ids: UUIDs stay, others become
// stable UUIDs (the only ids a round trip may change).
func mapIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = export.ClientID(id)
	}
	return out
}

// fromSummary is an OpenAI messages array from the summary on, the
// summary's text cut to what follows its last "user: " part.
func fromSummary(t *testing.T, openai string) string {
	t.Helper()
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(openai), &msgs); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		c, _ := m["content"].(string)
		if strings.HasPrefix(c, transcript.SummaryPrefix) {
			if k := strings.LastIndex(c, "\n\nuser: "); k >= 0 {
				m["content"] = transcript.SummaryPrefix + c[k+len("\n\nuser: "):]
			}
			b, _ := json.Marshal(msgs[i:])
			return string(b)
		}
	}
	b, _ := json.Marshal(msgs)
	return string(b)
}

// leadingSystem counts the system messages an OpenAI messages array
// starts with.
// replacementPrefix counts the items a Codex export's compacted record
// carries before the summary.
func replacementPrefix(t *testing.T, rollout []byte) int {
	t.Helper()
	for _, line := range bytes.Split(rollout, []byte("\n")) {
		var rec struct {
			Type    string
			Payload struct {
				ReplacementHistory []json.RawMessage `json:"replacement_history"`
			}
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "compacted" {
			return len(rec.Payload.ReplacementHistory) - 1
		}
	}
	t.Fatal("no compacted record")
	return 0
}

// dropSystem removes the system field of an Anthropic body.
func dropSystem(t *testing.T, anthropic string) string {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(anthropic), &body); err != nil {
		t.Fatal(err)
	}
	return string(body["messages"])
}

// TestClaudeCodeCompactionShape: the summary travels as the client's own
// compaction — a boundary starting a new chain, an isCompactSummary line,
// the kept tail chained after it — and covered turns stay before it.
func TestClaudeCodeCompactionShape(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	compactSession(t, dir, 200)
	data, res := exportTo(t, dir, export.ClaudeCode, export.Options{})
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	b := slices.IndexFunc(lines, func(m map[string]any) bool { return m["subtype"] == "compact_boundary" })
	if b < 1 || b+1 >= len(lines) {
		t.Fatalf("boundary at %d of %d lines", b, len(lines))
	}
	if lines[b]["parentUuid"] != nil || lines[b]["logicalParentUuid"] != lines[b-1]["uuid"] {
		t.Fatalf("boundary links %v / %v", lines[b]["parentUuid"], lines[b]["logicalParentUuid"])
	}
	s := lines[b+1]
	if s["isCompactSummary"] != true || s["parentUuid"] != lines[b]["uuid"] {
		t.Fatalf("summary line %v", s)
	}
	if strings.HasPrefix(s["message"].(map[string]any)["content"].(string), transcript.SummaryPrefix) {
		t.Fatal("the summary keeps ctxfold's prefix")
	}
	if b+2 < len(lines) && lines[b+2]["parentUuid"] != s["uuid"] {
		t.Fatal("the kept tail does not follow the summary")
	}
	if res.Covered != b-0 && res.Covered < 1 {
		t.Fatalf("covered %d", res.Covered)
	}
	for _, m := range lines {
		if m["sessionId"] != sessionID || m["cwd"] != "/work/app" || m["version"] != export.ClaudeCodeVersion {
			t.Fatalf("line without session fields: %v", m)
		}
	}
	// Stable: the same session, id and clock give the same bytes.
	again, _ := exportTo(t, dir, export.ClaudeCode, export.Options{})
	if !bytes.Equal(data, again) {
		t.Fatal("export is not deterministic")
	}
}

// TestCodexCompactionShape: a compacted record whose replacement history
// is the summary alone sits between the covered and the kept items.
func TestCodexCompactionShape(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	compactSession(t, dir, 200)
	data, res := exportTo(t, dir, export.Codex, export.Options{})
	var types []string
	var compacted map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		types = append(types, m["type"].(string))
		if m["type"] == "compacted" {
			compacted = m["payload"].(map[string]any)
		}
	}
	if types[0] != "session_meta" || compacted == nil {
		t.Fatalf("record types %v", types)
	}
	// The system root leads the replacement history, the summary ends it.
	rh := compacted["replacement_history"].([]any)
	first, last := rh[0].(map[string]any), rh[len(rh)-1].(map[string]any)
	if len(rh) != 2 || first["role"] != "developer" || last["role"] != "user" || !strings.Contains(compacted["message"].(string), "## Objective") {
		t.Fatalf("compacted %v", compacted)
	}
	k := slices.Index(types, "compacted")
	if k == len(types)-1 && res.Kept > 0 {
		t.Fatal("the kept tail is missing after the compacted record")
	}
}

// TestUnansweredCallRefused: a branch ending in a call without its result
// is refused with the node named, and nothing is written.
func TestUnansweredCallRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	nodes := []transcript.Node{
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("list files")},
		{ID: "a1", Predecessor: "u1", Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`)}}},
	}
	if _, err := store.Init(dir, "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append(nodes, store.AppendOptions{AsRecorded: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	path := filepath.Join(t.TempDir(), "out.jsonl")
	err = export.WriteFile(path, false, func(w io.Writer) error {
		_, err := export.Export(context.Background(), g, w, export.ClaudeCode, export.Options{CWD: "/x"})
		return err
	})
	var un *export.UnansweredError
	if !errors.As(err, &un) || un.Node != "a1" || un.Call != "call_1" {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatal("a refused export left a file")
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestWriteFileRefusesExisting: an existing file, or a symlink, is never
// replaced without force, and force replaces the link, not its target.
func TestWriteFileRefusesExisting(t *testing.T) {
	d := t.TempDir()
	target := filepath.Join(d, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(d, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }
	var exists *export.ExistsError
	if err := export.WriteFile(link, false, write); !errors.As(err, &exists) {
		t.Fatalf("err = %v", err)
	}
	if err := export.WriteFile(link, true, write); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatal("the symlink's target was written")
	}
	if b, _ := os.ReadFile(link); string(b) != "new\n" {
		t.Fatalf("link now holds %q", b)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink != 0 {
		t.Fatal("the symlink was not replaced")
	}
}

func TestClientPaths(t *testing.T) {
	if got := export.ClaudeCodePath("/h/.claude", "/home/me/my.app", sessionID); got != "/h/.claude/projects/-home-me-my-app/"+sessionID+".jsonl" {
		t.Fatal(got)
	}
	if got := export.CodexPath("/h/.codex", sessionID, fixedNow()); got != "/h/.codex/sessions/2026/12/01/rollout-2026-12-01T09-00-00-"+sessionID+".jsonl" {
		t.Fatal(got)
	}
}

// TestExportEverySharedTranscript: every real transcript in the shared
// fixtures exports to both clients (issue "export": or is refused with one
// clear line; none is refused today).
func TestExportEverySharedTranscript(t *testing.T) {
	root := sessiontest.External(t)
	var files []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, "subagents") && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skip("the shared external fixtures are not present")
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		out := filepath.Join(t.TempDir(), "s")
		if _, err := importer.Import(context.Background(), importer.Options{From: "auto", Files: []string{f}, Out: out}); err != nil {
			t.Fatalf("%s: import: %v", rel, err)
		}
		_ = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.Name() != "session.json" {
				return nil
			}
			for _, to := range export.Targets {
				data, res := exportTo(t, filepath.Dir(p), to, export.Options{})
				if len(data) == 0 || res.Lines == 0 {
					t.Errorf("%s → %s: nothing written", rel, to)
				}
			}
			return nil
		})
	}
}
