package claudecode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// A Claude Code 2.1.3xx session in miniature: the request shape, rendered
// attachments (one into the user message, one as a system message), a line
// the client sent wrapped (api-request-blob), and a /compact that kept the
// last assistant message verbatim (compactMetadata.preservedMessages).
const prefixSession = `{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}
{"type":"attachment","uuid":"a1","parentUuid":"u1","attachment":{"type":"environment"},"renderedRole":"system","rendered":[{"content":"<system-reminder>\nENV\n</system-reminder>"}]}
{"type":"attachment","uuid":"a2","parentUuid":"a1","attachment":{"type":"remote_session_change"},"renderedRole":"user","rendered":[{"content":"<system-reminder>\nATTR\n</system-reminder>"}]}
{"type":"attachment","uuid":"a3","parentUuid":"a2","attachment":{"type":"prompt_snapshot"}}
{"type":"api-request-shape","shapeHash":"h0","shape":{"system":[{"type":"text","text":"S1"},{"type":"text","text":"S2"}],"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"}}]}}
{"type":"api-request-blob","hash":"h1","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nATTR\n</system-reminder>\n"},{"type":"text","text":"hi"}]}}
{"type":"api-request-blob","hash":"h2","message":{"role":"system","content":[{"type":"text","text":"ENV"}]}}
{"type":"api-request","id":"r1","keep":0,"tail":["h1","h2"]}
{"type":"assistant","uuid":"x1","parentUuid":"a3","message":{"id":"m1","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":10,"output_tokens":1}}}
{"type":"user","uuid":"u2","parentUuid":"x1","message":{"role":"user","content":"task done"}}
{"type":"api-request-blob","hash":"h3","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]}}
{"type":"api-request-blob","hash":"h4","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nNOTICE\ntask done\n</system-reminder>"}]}}
{"type":"api-request","id":"r2","base":"r1","keep":2,"tail":["h3","h4"]}
{"type":"assistant","uuid":"x2","parentUuid":"u2","message":{"id":"m2","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":20,"output_tokens":1}}}
{"type":"system","subtype":"compact_boundary","uuid":"b1","parentUuid":null,"logicalParentUuid":"x2","compactMetadata":{"trigger":"manual","preservedMessages":{"uuids":["x2"]}}}
{"type":"user","uuid":"s1","parentUuid":"b1","isCompactSummary":true,"message":{"role":"user","content":"the summary"}}
{"type":"user","uuid":"u3","parentUuid":"s1","message":{"role":"user","content":"after"}}
{"type":"assistant","uuid":"x3","parentUuid":"u3","message":{"id":"m3","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"fine"}],"usage":{"input_tokens":30,"output_tokens":1}}}
`

func TestRecordedPromptPrefix(t *testing.T) {
	path := writeTemp(t, "prefix.jsonl", prefixSession)
	tgt, dirs := stored(t, path)
	s := tgt.convs[0]
	sys := s.nodes[0]
	if sys.Role != transcript.RoleSystem || sys.Content.PlainText() != "S1\n\nS2" || sys.Predecessor != "" {
		t.Fatalf("first node %+v, want the system node from api-request-shape", sys)
	}
	var tools []map[string]any
	if err := json.Unmarshal(sys.Metadata["tools"], &tools); err != nil || len(tools) != 1 || tools[0]["name"] != "Bash" {
		t.Errorf("system node tools %s", sys.Metadata["tools"])
	}
	if got := s.countOf("attachment", transcript.OutcomeImported); got != 2 {
		t.Errorf("%d attachments imported, want 2 (the two with rendered content)", got)
	}
	if got := s.countOf("attachment", transcript.OutcomeSkipped); got != 1 {
		t.Errorf("%d attachments skipped, want 1 (prompt_snapshot renders nothing)", got)
	}
	// The raw view is the order Claude Code sent: the user-message
	// attachment moved before the prompt, the system one after it.
	dir := dirs[s.name]
	if got := strings.Join(renderIDs(t, dir, true), " "); got != "claude-code-system a2 u1 a1 x1 u2 x2 u3 x3" {
		t.Errorf("raw view %s", got)
	}
	u2 := nodeByID(t, s, "u2")
	if got := u2.Content.PlainText(); !strings.HasPrefix(got, "<system-reminder>\nNOTICE\n") {
		t.Errorf("u2 content %q, want the text the client sent (api-request-blob)", got)
	}
	if !strings.Contains(string(u2.Metadata["claude_code"]), `"recorded_text":"task done"`) {
		t.Errorf("u2 metadata %s does not keep the recorded text", u2.Metadata["claude_code"])
	}
	a1 := nodeByID(t, s, "a1")
	if a1.Role != transcript.RoleSystem || a1.Content.PlainText() != "ENV" {
		t.Errorf("system attachment %+v, want role system and the unwrapped text", a1)
	}
	// The summary covers up to the preserved message, which follows it.
	if got := strings.Join(renderIDs(t, dir, false), " "); !strings.HasSuffix(got, " x2 u3 x3") || !strings.HasPrefix(got, "claude-code-system summary_") {
		t.Errorf("view %s, want the system node, the summary, then x2 u3 x3", got)
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "u2", true)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := v.LoadNodes()
	if err != nil {
		t.Fatal(err)
	}
	body := render.AnthropicRequest(nodes)
	if body.System != "S1\n\nS2" || len(body.Tools) != 1 {
		t.Errorf("anthropic system %q, %d tools", body.System, len(body.Tools))
	}
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "user system assistant user" {
		t.Errorf("anthropic roles %s, want user system assistant user (as request r2)", got)
	}
}

// A boundary whose preserved message is not on its chain covers the chain
// as before.
func TestPreservedMessageElsewhere(t *testing.T) {
	session := `{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"x1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello"}]}}
{"type":"system","subtype":"compact_boundary","uuid":"b1","parentUuid":null,"logicalParentUuid":"x1","compactMetadata":{"preservedMessages":{"uuids":["nowhere"]}}}
{"type":"user","uuid":"s1","parentUuid":"b1","isCompactSummary":true,"message":{"role":"user","content":"sum"}}
{"type":"user","uuid":"u2","parentUuid":"s1","message":{"role":"user","content":"next"}}
`
	tgt, dirs := stored(t, writeTemp(t, "p.jsonl", session))
	if got := strings.Join(renderIDs(t, dirs[tgt.convs[0].name], false), " "); !strings.HasPrefix(got, "summary_") || !strings.HasSuffix(got, " u2") || strings.Contains(got, "x1") {
		t.Errorf("view %s, want the summary covering u1 x1, then u2", got)
	}
}

// Fields this importer reads only as hints never fail a line when they
// have another shape; rendered content given as text blocks is read.
func TestPrefixFieldShapes(t *testing.T) {
	session := `{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"},"hash":7,"tail":"x","rendered":"odd","compactMetadata":[]}
{"type":"attachment","uuid":"a1","parentUuid":"u1","renderedRole":"user","rendered":[{"content":[{"type":"text","text":"ONE"},{"type":"text","text":"TWO"}]}]}
{"type":"assistant","uuid":"x1","parentUuid":"a1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"ok"}]}}
`
	tgt := importMem(t, writeTemp(t, "shapes.jsonl", session))
	s := tgt.convs[0]
	if got := nodeByID(t, s, "a1").Content.PlainText(); got != "ONE\nTWO" {
		t.Errorf("attachment content %q", got)
	}
	if !hasNode(s, "u1") || !hasNode(s, "x1") {
		t.Errorf("nodes %v", s.ids)
	}
}
