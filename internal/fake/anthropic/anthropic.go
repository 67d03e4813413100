// Package anthropic is a fake Anthropic Messages provider for driving real
// agent clients (Claude Code) offline in interop recordings and tests.
//
// It listens on loopback only, answers POST /v1/messages (SSE when the
// request asks for "stream": true, plain JSON otherwise),
// POST /v1/messages/count_tokens and GET /v1/models, and records every
// request body it receives, in arrival order, to a directory. What it answers
// is scripted by the request: a marker in the newest user text asks for a
// tool call the client really executes (see Script), a compaction request
// gets a summary, anything else a short reply.
//
// The usage it reports is deterministic (a function of the request's byte
// size, see Usage): those figures test structure — that an importer carries
// usage to the right node — not tokenization, which estimate's reference
// vectors prove.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Server is a running fake provider.
type Server struct {
	// URL is the base URL a client puts in ANTHROPIC_BASE_URL.
	URL string

	dir   string
	canon func([]byte) []byte
	srv   *http.Server
	ln    net.Listener
	mu    sync.Mutex
	seq   int // requests recorded so far
	msgs  int // message ids handed out
	done  chan struct{}
}

// Options configure Start.
type Options struct {
	// RecordDir receives one file per request, NNNN-<kind>.json; it is
	// created if missing. Empty records nothing.
	RecordDir string
	// Addr is the loopback address to listen on; empty picks a free port.
	Addr string
	// Canonical, when set, rewrites a body before Usage measures it, so a
	// recorder can take out what differs between machines (temp paths, the
	// kernel release) and the reported usage stays the same everywhere.
	Canonical func([]byte) []byte
}

// maxBody bounds one request body; Claude Code's largest requests (system
// prompt, every tool definition, the whole view) stay far below it.
const maxBody = 64 << 20

// Start listens on loopback and serves until Close.
func Start(opts Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("fake anthropic: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("fake anthropic: address %q is not loopback", addr)
	}
	if opts.RecordDir != "" {
		if err := os.MkdirAll(opts.RecordDir, 0o755); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), dir: opts.RecordDir, canon: opts.Canonical, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("/", s.other)
	// Every wait is bounded: a stuck client cannot hold the recorder.
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       30 * time.Second,
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server, waiting at most five seconds for open requests.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

// Requests reports how many requests have been recorded.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// record writes one request body (pretty-printed when it is JSON, so the
// committed fixtures diff line by line) as NNNN-kind.json.
func (s *Server) record(kind string, body []byte) int {
	s.mu.Lock()
	s.seq++
	n := s.seq
	s.mu.Unlock()
	if s.dir == "" {
		return n
	}
	var buf bytes.Buffer
	if json.Indent(&buf, body, "", "  ") != nil {
		buf.Reset()
		buf.Write(body)
	}
	buf.WriteByte('\n')
	_ = os.WriteFile(filepath.Join(s.dir, fmt.Sprintf("%04d-%s.json", n, kind)), buf.Bytes(), 0o644)
	return n
}

func (s *Server) canonical(b []byte) []byte {
	if s.canon == nil {
		return b
	}
	return s.canon(b)
}

func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs++
	return fmt.Sprintf("%s_fake%04d", prefix, s.msgs)
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+err.Error())
		return nil, false
	}
	return body, true
}

func apiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": msg},
	})
}

func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if len(body) > 0 {
		s.record("other", body)
	}
	apiError(w, http.StatusNotFound, "not_found_error", r.Method+" "+r.URL.Path+" is not faked")
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var data []map[string]any
	for _, m := range []string{"claude-opus-5-5", "claude-sonnet-4-5", "claude-haiku-4-5"} {
		data = append(data, map[string]any{"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "has_more": false, "first_id": data[0]["id"], "last_id": data[len(data)-1]["id"]})
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	s.record("count_tokens", body)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]int{"input_tokens": Usage(s.canonical(body))})
}

// Usage is the input_tokens figure reported for a request body: one token
// per four bytes, at least one. Deterministic, and growing with the request
// as a real count does; nothing more.
func Usage(body []byte) int {
	return max(1, len(body)/4)
}

// Request is the part of a Messages request the script reads.
type Request struct {
	Model     string    `json:"model"`
	Stream    bool      `json:"stream"`
	Messages  []Message `json:"messages"`
	MaxTokens int       `json:"max_tokens"`
	Tools     []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// Message is one request message; content is a string or a block list.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Block is one content block of a message.
type Block struct {
	Type    string          `json:"type"`
	Text    string          `json:"text,omitempty"`
	ID      string          `json:"id,omitempty"`
	Name    string          `json:"name,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Content is a tool_result's content (a string or text blocks).
	Content json.RawMessage `json:"content,omitempty"`
	// Signature is a thinking block's (its thinking omitted: thinking.go).
	Signature string `json:"signature,omitempty"`
}

// Blocks decodes a message's content, a plain string becoming one text block.
func (m Message) Blocks() []Block {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var bs []Block
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	seq := s.record("messages", body)
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "body is not a Messages request: "+err.Error())
		return
	}
	reply := Script(req)
	for i := range reply.Content {
		if reply.Content[i].Type == "tool_use" {
			reply.Content[i].ID = s.nextID("toolu")
		}
	}
	// The message id names the recorded request it answers (NNNN of
	// NNNN-messages.json), so a test finds the node that answered request k.
	msgID := fmt.Sprintf("msg_fake_req%04d", seq)
	in := Usage(s.canonical(body))
	out := 0
	for _, b := range reply.Content {
		out += max(1, (len(b.Text)+len(b.Input)+len(b.Signature))/4)
	}
	if req.Stream {
		writeSSE(w, msgID, req.Model, reply, in, out)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
		"content": reply.Content, "stop_reason": reply.StopReason, "stop_sequence": nil,
		"usage": usageObj(in, out),
	})
}

func usageObj(in, out int) map[string]any {
	return map[string]any{
		"input_tokens": in, "output_tokens": out,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
	}
}

// Reply is what the script answers.
type Reply struct {
	Content    []Block
	StopReason string
	// UsageDelay is how long the stream waits, after its last block,
	// before the final usage (message_delta): thinking.go.
	UsageDelay time.Duration
}

func text(s string) Reply {
	return Reply{Content: []Block{{Type: "text", Text: s}}, StopReason: "end_turn"}
}

func toolUse(name string, input map[string]any) Block {
	b, _ := json.Marshal(input)
	return Block{Type: "tool_use", Name: name, Input: b}
}

// Markers a scenario writes into its prompt. Each asks the fake for one
// assistant step; the client then really runs the tool and sends the result,
// which gets a short closing reply.
const (
	// MarkBash asks for one Bash call running the text up to "]]".
	MarkBash = "[[bash:"
	// MarkParallel asks for two Bash calls in one assistant message.
	MarkParallel = "[[parallel]]"
	// MarkToolError asks for a Bash call that exits non-zero.
	MarkToolError = "[[toolerror]]"
	// MarkAgent asks for a sub-agent through the Agent tool (Task in older
	// clients), whose own request gets a short reply.
	MarkAgent = "[[agent]]"
	// MarkAgentBash asks for a sub-agent, as MarkAgent, whose prompt asks
	// it for one Bash call before its reply: a sub-agent's second request.
	// "[[agent-bash:Explore]]" names the agent type (general-purpose
	// otherwise).
	MarkAgentBash = "[[agent-bash"
	// MarkSkillBash asks for one assistant message with two calls: the
	// Skill tool on the skill named up to "]]", and a Bash echo.
	MarkSkillBash = "[[skill-bash:"
	// MarkRead asks for one Read call of the path up to "]]".
	MarkRead = "[[read:"
	// MarkRecall asks for ctxfold's MCP recall (docs/HOOKS.md): a
	// search_history call for the text up to "]]", then read_turns on the
	// first hit its result says is covered by a summary, then a short reply.
	MarkRecall = "[[recall:"
)

// The MCP tools MarkRecall calls, as Claude Code names a server's tools.
const (
	toolSearchHistory = "mcp__ctxfold__search_history"
	toolReadTurns     = "mcp__ctxfold__read_turns"
)

// Script decides the answer to a request from its messages alone, so a
// re-recording gets the same answers in the same places.
func Script(req Request) Reply {
	if len(req.Messages) == 0 {
		return text("ok")
	}
	// Claude Code sends system-role messages (environment, reminders) after
	// the user's turn; the script answers the newest user or tool message.
	last := req.Messages[len(req.Messages)-1]
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != "system" {
			last = req.Messages[i]
			break
		}
	}
	blocks := last.Blocks()
	if r, ok := recallStep(req, blocks); ok {
		return r
	}
	var all strings.Builder
	for _, b := range blocks {
		if b.Type == "tool_result" {
			// The tool ran: close the step.
			return text(fmt.Sprintf("Tool step finished (%d result(s)).", countType(blocks, "tool_result")))
		}
		if b.Type == "text" && !strings.HasPrefix(b.Text, "<system-reminder>") {
			all.WriteString(b.Text)
			all.WriteByte('\n')
		}
	}
	t := all.String()
	switch {
	case strings.HasPrefix(t, crushTitleCue):
		return text("Fake session title")
	case isCompaction(t):
		return text("<analysis>The user ran a short scripted session.</analysis>\n<summary>\n1. Primary Request and Intent: the user exercised a scripted fake provider.\n2. Pending Tasks: none.\n3. Current Work: waiting for the next prompt.\n</summary>")
	case strings.Contains(t, MarkParallel):
		return Reply{StopReason: "tool_use", Content: []Block{
			{Type: "text", Text: "Running two commands at once."},
			toolUse("Bash", map[string]any{"command": "echo parallel-one", "description": "First parallel echo"}),
			toolUse("Bash", map[string]any{"command": "echo parallel-two", "description": "Second parallel echo"}),
		}}
	case strings.Contains(t, MarkToolError):
		return Reply{StopReason: "tool_use", Content: []Block{
			toolUse("Bash", map[string]any{"command": "echo failing >&2; exit 3", "description": "A command that fails"}),
		}}
	case strings.Contains(t, MarkAgent), strings.Contains(t, MarkAgentBash):
		prompt, agentType := "Reply with one short sentence: the sub-agent ran.", "general-purpose"
		if at := strings.Index(t, MarkAgentBash); at >= 0 {
			prompt = "Run one command, then reply. " + MarkBash + "echo from-the-sub-agent]]"
			if rest, ok := strings.CutPrefix(t[at+len(MarkAgentBash):], ":"); ok {
				if end := strings.Index(rest, "]]"); end > 0 {
					agentType = rest[:end]
				}
			}
		}
		return agentCall(req, prompt, agentType)
	case strings.Contains(t, MarkAgentThinking):
		return agentCall(req, "Think, then run one command. "+MarkThinkingBash+"echo thought-through]]", "general-purpose")
	case strings.Contains(t, MarkThinkingBash):
		return thinkingBash(markArg(t, MarkThinkingBash))
	case strings.Contains(t, MarkRecall) && hasTool(req, toolSearchHistory):
		q := markArg(t, MarkRecall)
		return Reply{StopReason: "tool_use", Content: []Block{toolUse(toolSearchHistory, map[string]any{"query": q})}}
	case strings.Contains(t, MarkSkillBash):
		skill := markArg(t, MarkSkillBash)
		return Reply{StopReason: "tool_use", Content: []Block{
			toolUse("Skill", map[string]any{"skill": skill}),
			toolUse("Bash", map[string]any{"command": "echo beside-the-skill", "description": "A command beside the skill"}),
		}}
	case strings.Contains(t, MarkRead):
		path := markArg(t, MarkRead)
		return Reply{StopReason: "tool_use", Content: []Block{toolUse("Read", map[string]any{"file_path": path})}}
	case strings.Contains(t, MarkBash):
		cmd := markArg(t, MarkBash)
		name, args := "Bash", map[string]any{"command": cmd, "description": "Scripted command"}
		if !hasTool(req, "Bash") && hasTool(req, "bash") {
			// GitHub Copilot CLI's bash (beside its read_bash) and
			// Crush's (beside its job_output) take a description; pi's
			// (picue.go) the command alone.
			name = "bash"
			if !hasTool(req, "read_bash") && !hasTool(req, "job_output") {
				args = map[string]any{"command": cmd}
			}
		}
		return Reply{StopReason: "tool_use", Content: []Block{toolUse(name, args)}}
	}
	return text(shortReply(t))
}

// markArg is what t, which holds mark, says after it: the text up to
// "]]" (to the end without one).
func markArg(t, mark string) string {
	arg := t[strings.Index(t, mark)+len(mark):]
	if end := strings.Index(arg, "]]"); end >= 0 {
		arg = arg[:end]
	}
	return arg
}

// isCompaction recognises a client's summarisation request by its
// instructions (Claude Code's /compact prompt asks for "a detailed summary of
// the conversation").
func isCompaction(t string) bool {
	l := strings.ToLower(t)
	return strings.Contains(l, "detailed summary of the conversation") ||
		strings.Contains(l, "summary of the conversation so far") ||
		strings.Contains(l, "create a detailed summary") || isPiCompaction(l)
}

// shortReply answers a plain prompt. Side requests a client makes (a
// session title, a topic check) get the same kind of short text.
func shortReply(t string) string {
	t = strings.TrimSpace(t)
	if i := strings.LastIndex(t, "\n"); i >= 0 {
		t = strings.TrimSpace(t[i+1:])
	}
	if len(t) > 40 {
		t = t[:40]
	}
	return "Fake reply to: " + t
}

func countType(bs []Block, typ string) int {
	n := 0
	for _, b := range bs {
		if b.Type == typ {
			n++
		}
	}
	return n
}

func hasTool(req Request, name string) bool {
	for _, t := range req.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// recallStep continues MarkRecall when the newest message answers one of
// its calls: after search_history, read_turns on the first hit covered by
// a summary (the hit lines of ctxfold's result: "- ID · role · covered by
// summary S …"); after read_turns, a closing reply.
func recallStep(req Request, blocks []Block) (Reply, bool) {
	var result *Block
	for i := range blocks {
		if blocks[i].Type == "tool_result" {
			result = &blocks[i]
		}
	}
	if result == nil || len(req.Messages) < 2 {
		return Reply{}, false
	}
	called := ""
	for i := len(req.Messages) - 2; i >= 0 && called == ""; i-- {
		if req.Messages[i].Role != "assistant" {
			continue
		}
		for _, b := range req.Messages[i].Blocks() {
			if b.Type == "tool_use" {
				called = b.Name
			}
		}
	}
	switch called {
	case toolSearchHistory:
		// Claude Code sends the tool's structured result (JSON) when there
		// is one, else its text.
		var structured struct {
			Hits []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"hits"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(resultText(result.Content))), &structured) == nil {
			for _, h := range structured.Hits {
				if h.Status == "covered" {
					return Reply{StopReason: "tool_use", Content: []Block{toolUse(toolReadTurns, map[string]any{"ids": []string{h.ID}})}}, true
				}
			}
		}
		for _, line := range strings.Split(resultText(result.Content), "\n") {
			if strings.HasPrefix(line, "- ") && strings.Contains(line, "covered by summary") {
				id := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(line, "- "), " · ", 2)[0])
				return Reply{StopReason: "tool_use", Content: []Block{toolUse(toolReadTurns, map[string]any{"ids": []string{id}})}}, true
			}
		}
		return text("Recall found no covered turn."), true
	case toolReadTurns:
		return text("Recalled the covered turn."), true
	}
	return Reply{}, false
}

// resultText is a tool_result's text: a string or a list of text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []Block
	_ = json.Unmarshal(raw, &bs)
	var b strings.Builder
	for _, x := range bs {
		b.WriteString(x.Text)
		b.WriteByte('\n')
	}
	return b.String()
}
