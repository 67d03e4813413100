// Package export writes one branch of a session as an agent client's own
// transcript, so the client resumes it: Claude Code's project JSONL,
// Codex CLI's rollout and Gemini CLI's session file. When the branch carries the active summary, the
// output carries it as the client's own compaction record, with the kept
// tail after it, so the client sends [summary, kept tail, new turns]; the
// covered turns are still written before the compaction record, as the
// client keeps them after its own compaction, and are never sent again
// (docs/EXPORT.md).
//
// What the model reads is decided by render: export takes the branch and
// the substitution from render.Build and only translates nodes.
package export

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Target is a client export writes for.
type Target string

const (
	ClaudeCode Target = "claude-code"
	Codex      Target = "codex"
	Gemini     Target = "gemini"
)

// Targets lists every Target, for help and completion.
var Targets = []Target{ClaudeCode, Codex, Gemini}

// ParseTarget accepts a --to value.
func ParseTarget(s string) (Target, error) {
	for _, t := range Targets {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("--to %q: expected claude-code, codex or gemini", s)
}

// Options shape one export.
type Options struct {
	// Head names the branch tip ("" for the session's HEAD).
	Head string
	// SessionID is the client's session id; "" mints a new UUID so the
	// original transcript is never overwritten.
	SessionID string
	// CWD is the working directory the client resumes in: it is recorded
	// in every line and decides Claude Code's project folder.
	CWD string
	// ProjectHash is Gemini CLI's projectHash ("": the hash of CWD).
	ProjectHash string
	// Now stamps lines whose node has no time (nil: time.Now).
	Now func() time.Time
}

// Result describes what was written. It is the --json output of
// 'ctxfold export'.
type Result struct {
	SchemaVersion int    `json:"schema_version"`
	Session       string `json:"session"`
	To            Target `json:"to"`
	Head          string `json:"head"`
	SessionID     string `json:"session_id"`
	// Path is where the file was written ("-" for stdout); ClientPath is
	// where the client looks for this session id.
	Path       string `json:"path"`
	ClientPath string `json:"client_path"`
	Resume     string `json:"resume"`
	Lines      int    `json:"lines"`
	// Summary is the active summary carried as the client's compaction
	// record ("" when the branch renders raw); Covered and Kept count the
	// nodes before and after it.
	Summary  string    `json:"summary"`
	Covered  int       `json:"covered"`
	Kept     int       `json:"kept"`
	Warnings []Warning `json:"warnings"`
}

// Warning is one kind of content the client's format cannot express, with
// how often it occurred and the first node it occurred at.
type Warning struct {
	Kind    string `json:"kind"`
	Count   int    `json:"count"`
	Node    string `json:"node"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	if w.Node == "" {
		return fmt.Sprintf("%s: %d×", w.Message, w.Count)
	}
	return fmt.Sprintf("%s: %d× (first at node %q)", w.Message, w.Count, w.Node)
}

// UnansweredError refuses a branch with a tool call that has no result:
// the client's API rejects such a history on the next request.
type UnansweredError struct {
	Dir, Node, Call string
}

func (e *UnansweredError) Error() string {
	return fmt.Sprintf("%s: node %q: tool call %q has no result on the exported branch", e.Dir, e.Node, e.Call)
}

func (e *UnansweredError) Hint() string {
	return "append the tool's result, or export an earlier node with --head"
}

// branch is the exported branch: its nodes in order, and where the active
// summary stands in for a run of them.
type branch struct {
	dir   string
	nodes []*transcript.Node
	// summary is the active summary when it substitutes; covered nodes are
	// nodes[at:at+n], the kept tail nodes[at+n:].
	summary *transcript.Node
	at, n   int
	// figures of the compaction, from events.jsonl, when recorded.
	tokensBefore, tokensAfter int
	// callers counts nodes of the session that sit in a caller subtree
	// (sub-agent turns), which no export carries.
	callers int
}

func loadBranch(ctx context.Context, g *dag.Graph, head string) (*branch, error) {
	v, err := render.Build(g, head, false)
	if err != nil {
		return nil, err
	}
	b := &branch{dir: g.S.Dir}
	if v.Head < 0 {
		return b, nil
	}
	for _, i := range g.Spine(v.Head) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := g.S.Node(i)
		if err != nil {
			return nil, err
		}
		b.nodes = append(b.nodes, n)
	}
	if v.Summarized() {
		s, err := g.S.Node(v.Substitution.Summary)
		if err != nil {
			return nil, err
		}
		b.summary, b.at, b.n = s, v.Substitution.At, v.Substitution.Len
		b.tokensBefore, b.tokensAfter = compactionFigures(g.S.Dir, s.ID)
	}
	for i := range g.Len() {
		if g.Caller(i) >= 0 {
			b.callers++
		}
	}
	return b, b.checkAnswered()
}

// checkAnswered refuses a call without a result anywhere after it on the
// branch.
func (b *branch) checkAnswered() error {
	answered := map[string]bool{}
	for _, n := range b.nodes {
		if n.ToolCallID != "" {
			answered[n.ToolCallID] = true
		}
		for _, r := range n.ToolResults() {
			answered[r.ToolCallID] = true
		}
	}
	for _, n := range b.nodes {
		for _, c := range n.AllToolCalls() {
			if !answered[c.ID] {
				return &UnansweredError{Dir: b.dir, Node: n.ID, Call: c.ID}
			}
		}
	}
	return nil
}

// compactionFigures reads the token figures compact recorded for summary
// id (0, 0 when none were).
func compactionFigures(dir, id string) (before, after int) {
	data, err := os.ReadFile(filepath.Join(dir, store.EventsFile))
	if err != nil {
		return 0, 0
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var ev transcript.CompactionEvent
		if json.Unmarshal(line, &ev) == nil && ev.Type == transcript.EventCompactionFinished && ev.SummaryID == id {
			before, after = ev.TokensBefore, ev.TokensAfter
		}
	}
	return before, after
}

// warnings collects one Warning per kind.
type warnings struct {
	byKind map[string]*Warning
}

func (w *warnings) add(kind, node, msg string) {
	if w.byKind == nil {
		w.byKind = map[string]*Warning{}
	}
	if x, ok := w.byKind[kind]; ok {
		x.Count++
		return
	}
	w.byKind[kind] = &Warning{Kind: kind, Count: 1, Node: node, Message: msg}
}

func (w *warnings) list() []Warning {
	out := []Warning{}
	for _, x := range w.byKind {
		out = append(out, *x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Export writes the branch of g named by opts.Head to w in the format of
// to. The result's Path and ClientPath are left to the caller.
func Export(ctx context.Context, g *dag.Graph, w io.Writer, to Target, opts Options) (*Result, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SessionID == "" {
		opts.SessionID = NewUUID()
	} else if !uuidRE.MatchString(opts.SessionID) {
		return nil, fmt.Errorf("--session-id %q: expected a UUID like %s", opts.SessionID, NewUUID())
	}
	b, err := loadBranch(ctx, g, opts.Head)
	if err != nil {
		return nil, err
	}
	res := &Result{SchemaVersion: 1, Session: g.S.Dir, To: to, SessionID: opts.SessionID}
	if len(b.nodes) > 0 {
		res.Head = b.nodes[len(b.nodes)-1].ID
	}
	var ws warnings
	if b.callers > 0 {
		ws.byKind = map[string]*Warning{"sub_agent": {Kind: "sub_agent", Count: b.callers, Message: "sub-agent turns (caller subtrees) are not exported; the client re-runs sub-agents itself"}}
	}
	bw := &countingWriter{w: w}
	switch to {
	case ClaudeCode:
		err = writeClaudeCode(bw, b, opts, &ws)
	case Codex:
		err = writeCodex(bw, b, opts, &ws)
	case Gemini:
		err = writeGemini(bw, b, opts, &ws)
	default:
		err = fmt.Errorf("unknown export target %q", to)
	}
	if err != nil {
		return nil, err
	}
	res.Lines = bw.lines
	if b.summary != nil {
		res.Summary, res.Covered, res.Kept = b.summary.ID, b.n, len(b.nodes)-b.at-b.n
	} else {
		res.Kept = len(b.nodes)
	}
	res.Warnings = ws.list()
	return res, nil
}

type countingWriter struct {
	w     io.Writer
	lines int
	err   error
}

// line writes v as one JSON line; the first error sticks.
func (c *countingWriter) line(v any) {
	if c.err != nil {
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if c.err = enc.Encode(v); c.err != nil {
		return
	}
	_, c.err = c.w.Write(buf.Bytes())
	c.lines++
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// NewUUID returns a random version-4 UUID.
func NewUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u[:])
}

// ClientID keeps an id that already is a UUID (a node imported from the
// client) and maps any other to a stable version-8 UUID derived from it, so
// exporting twice gives the same ids.
func ClientID(id string) string {
	if uuidRE.MatchString(id) {
		return id
	}
	h := sha256.Sum256([]byte("ctxfold export\x00" + id))
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	return formatUUID(h[:16])
}

func formatUUID(u []byte) string {
	s := hex.EncodeToString(u)
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// clientCompactionOutput reports (and warns) whether n is the answer of a
// compaction request a client ran itself, recorded like a turn before its
// compaction record (Codex: metadata.codex_compaction_usage): the client's
// summary, which its compaction record hands on and which is never sent as
// a turn; an export after that compaction was taken back must not send it
// either.
func clientCompactionOutput(n *transcript.Node, ws *warnings) bool {
	if _, ok := n.Metadata["codex_compaction_usage"]; !ok || n.Role != transcript.RoleAssistant {
		return false
	}
	ws.add("client_compaction", n.ID, "the answer of the client's own compaction request (its summary) is not exported as a turn")
	return true
}

// summaryText is a summary's content without the format's prefix.
func summaryText(n *transcript.Node) string {
	return strings.TrimPrefix(n.Content.PlainText(), transcript.SummaryPrefix)
}

// stamp is a node's time, else now, in the clients' RFC 3339 form.
func stamp(n *transcript.Node, now func() time.Time) string {
	if n != nil && n.CreatedAt != "" {
		return n.CreatedAt
	}
	return now().UTC().Format("2006-01-02T15:04:05.000Z")
}

// argumentsObject turns recorded arguments into the JSON object a tool_use
// input must be: an OpenAI-style JSON string is decoded; anything that is
// not an object is wrapped.
func argumentsObject(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}"), true
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = bytes.TrimSpace([]byte(s))
			if len(raw) == 0 {
				return json.RawMessage("{}"), true
			}
		}
	}
	if raw[0] == '{' && json.Valid(raw) {
		return raw, true
	}
	wrapped, _ := json.Marshal(map[string]json.RawMessage{"input": jsonOrString(raw)})
	return wrapped, false
}

func jsonOrString(raw []byte) json.RawMessage {
	if json.Valid(raw) {
		return raw
	}
	s, _ := json.Marshal(string(raw))
	return s
}

// argumentsString is the JSON text a Responses function_call carries.
func argumentsString(raw json.RawMessage) string { return transcript.ArgumentsText(raw) }
