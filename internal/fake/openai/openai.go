// Package openai is a fake OpenAI provider for the interop tests
// (docs/INTEROP-codex.md): the Responses API as Codex CLI streams it
// (server-sent events) and Chat Completions (plain and streaming). It
// listens on loopback only, answers from a script chosen by markers in the
// last user message, records every request body it receives, and reports a
// deterministic usage computed from the request's size. Those counts test
// the structure of a transcript (which request a count belongs to), never
// tokenization, which the reference vectors of estimate prove.
//
// It must not reach the network, and no wait in it is unbounded.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Markers in the user's text that script the reply; anything else gets a
// short text reply.
const (
	// MarkerShell asks for one shell call: [[shell: COMMAND]].
	MarkerShell = "[[shell:"
	// MarkerParallel asks for several calls in one response:
	// [[parallel: CMD1 ;; CMD2]].
	// [[patch: FILE]] asks for a freeform apply_patch call adding FILE.
	// [[spawn: TASK]] asks for a sub-agent (Codex's multi_agent_v1
	// spawn_agent, then wait_agent on the id it returns).
	MarkerParallel = "[[parallel:"
	// MarkerReason makes every response to this user message start with a
	// reasoning item (a summary and opaque encrypted content), as
	// reasoning models answer.
	MarkerReason = "[[reason]]"
	// MarkerInflate makes the reply report InflatedInput input tokens, so a
	// client whose auto-compaction limit is below it compacts.
	MarkerInflate = "[[inflate]]"
	// CompactionCue is what Codex's compaction prompt says; a request whose
	// last user message contains it gets a summary.
	CompactionCue = "CONTEXT CHECKPOINT"
)

// InflatedInput is the input token count reported for MarkerInflate.
const InflatedInput = 900000

// SummaryText is the fake's answer to a compaction request.
const SummaryText = "Summary for the next model: the user ran shell commands in a scratch directory and asked for short replies. Nothing is pending."

// Server is the fake provider. Create it with New, then Serve.
type Server struct {
	dir     string // where request bodies are recorded ("" = not recorded)
	mu      sync.Mutex
	seq     int
	callSeq int
	// requests holds every request in arrival order.
	requests []Recorded
	// IgnoreKeep makes the fake a summariser that drops a ctxfold-keep
	// block too (keep.go): what a client's summary drops despite the
	// ledger is then for the hook's injection after it.
	IgnoreKeep bool
}

// Recorded is one request as received.
type Recorded struct {
	Seq  int             `json:"seq"`
	Path string          `json:"path"`
	Body json.RawMessage `json:"body"`
}

// New returns a server that records request bodies under dir (created if
// needed; "" records in memory only).
func New(dir string) (*Server, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	return &Server{dir: dir}, nil
}

// Requests returns a copy of what was recorded so far.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

// Listen opens a loopback listener on port (0 picks one).
func Listen(port int) (net.Listener, error) {
	return net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

// Serve answers on l until ctx ends; it returns after the server shut down
// (at most 5 s after ctx ends).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second, WriteTimeout: 60 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ServeHTTP routes /v1/responses, /v1/chat/completions and /v1/models (the
// /v1 prefix is optional, as base URLs differ).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	if r.Method == http.MethodGet && strings.HasPrefix(path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !json.Valid(body) {
		http.Error(w, "request body is not JSON", http.StatusBadRequest)
		return
	}
	seq := s.record(path, body)
	switch path {
	case "/responses":
		s.responses(w, body, seq)
	case "/chat/completions":
		s.chat(w, body, seq)
	default:
		http.Error(w, "unknown endpoint "+r.URL.Path, http.StatusNotFound)
	}
}

func (s *Server) record(path string, body []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.requests = append(s.requests, Recorded{Seq: s.seq, Path: path, Body: append(json.RawMessage(nil), body...)})
	if s.dir != "" {
		var buf bytes.Buffer
		if json.Indent(&buf, body, "", "  ") == nil {
			body = buf.Bytes()
		}
		name := filepath.Join(s.dir, fmt.Sprintf("request-%03d.json", s.seq))
		_ = os.WriteFile(name, append(body, '\n'), 0o644)
	}
	return s.seq
}

func (s *Server) nextCallID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callSeq++
	return fmt.Sprintf("call_fake_%03d", s.callSeq)
}

// Reply is what the script decided: text, or tool calls.
type Reply struct {
	Text  string
	Calls []Call
	// Input is the reported input token count.
	Input int64
	// Reasoning is the summary of a reasoning item sent first ("" = none).
	Reasoning string
}

// Call is one function call of a reply.
type Call struct {
	ID, Name, Arguments string
	// Namespace names the tool namespace of Name ("" = none).
	Namespace string
	// Custom: a custom (freeform) tool call; Arguments is its raw input.
	Custom bool
	// ToolSearch: a client-executed tool_search call; Arguments is its
	// JSON object (query, limit).
	ToolSearch bool
}

// Usage is the deterministic count reported for a request body: a quarter
// of its size in bytes, at least 1 (structure, not tokenization).
func Usage(body []byte) int64 {
	n := int64(len(body)) / 4
	if n < 1 {
		n = 1
	}
	return n
}

var markerRE = regexp.MustCompile(`\[\[(shell|parallel|spawn|patch):\s*(.*?)\]\]`)

// Script decides the reply from the conversation so far: lastUser is the
// text of the last user message, callsAfter whether the model already
// called tools after it (then it answers in text), tools the function
// names the request offers.
func (s *Server) Script(lastUser string, callsAfter bool, outputs []string, tools []string, body []byte) Reply {
	r := Reply{Input: Usage(body)}
	if strings.Contains(lastUser, MarkerInflate) {
		r.Input = InflatedInput
	}
	if strings.Contains(lastUser, MarkerReason) {
		r.Reasoning = "**Planning the reply**"
	}
	if t := crushReply(lastUser); t != "" {
		r.Text = t
		return r
	}
	if t := droidSummary(lastUser); t != "" {
		r.Text = t
		return r
	}
	if isCompactionRequest(lastUser) || isPiCompaction(lastUser) {
		r.Text = SummaryText
		if !s.IgnoreKeep {
			r.Text = summaryOf(lastUser)
		}
		return r
	}
	if strings.Contains(lastUser, QwenCompressionCue) {
		r.Text = QwenSnapshot
		return r
	}
	if strings.Contains(lastUser, CopilotCompactionCue) {
		r.Text = CopilotSummaryText
		return r
	}
	if m := markerRE.FindStringSubmatch(lastUser); m != nil && !callsAfter {
		if m[1] == "patch" {
			// A freeform apply_patch call that adds the file m[2].
			patch := "*** Begin Patch\n*** Add File: " + strings.TrimSpace(m[2]) + "\n+written by apply_patch\n*** End Patch\n"
			r.Calls = append(r.Calls, Call{ID: s.nextCallID(), Name: "apply_patch", Arguments: patch, Custom: true})
			return r
		}
		if m[1] == "spawn" && hasTool(tools, "task") { // GitHub Copilot CLI's sub-agent
			r.Calls = append(r.Calls, copilotTask(s.nextCallID(), m[2]))
			return r
		}
		if m[1] == "spawn" {
			if c, ok := s.qwenAgentCall(m[2], tools); ok {
				r.Calls = append(r.Calls, c)
				return r
			}
			args, _ := json.Marshal(map[string]any{"message": m[2]})
			r.Calls = append(r.Calls, Call{ID: s.nextCallID(), Name: "spawn_agent", Namespace: "multi_agent_v1", Arguments: string(args)})
			return r
		}
		cmds := []string{m[2]}
		if m[1] == "parallel" {
			cmds = strings.Split(m[2], ";;")
		}
		for _, c := range cmds {
			name, args := shellCall(strings.TrimSpace(c), tools)
			r.Calls = append(r.Calls, Call{ID: s.nextCallID(), Name: name, Arguments: args})
		}
		return r
	}
	if m := markerRE.FindStringSubmatch(lastUser); m != nil && m[1] == "spawn" && len(outputs) == 1 {
		// The spawn returned the agent's id: wait for it, so the sub-agent
		// runs its turn before the parent's turn ends.
		var spawned struct {
			AgentID string `json:"agent_id"`
		}
		var text string
		if json.Unmarshal([]byte(outputs[0]), &text) == nil && json.Unmarshal([]byte(text), &spawned) == nil && spawned.AgentID != "" {
			args, _ := json.Marshal(map[string]any{"targets": []string{spawned.AgentID}, "timeout_ms": 30000})
			r.Calls = append(r.Calls, Call{ID: s.nextCallID(), Name: "wait_agent", Namespace: "multi_agent_v1", Arguments: string(args)})
			return r
		}
	}
	if len(outputs) > 0 {
		r.Text = fmt.Sprintf("Done: %d tool output(s) read.", len(outputs))
		return r
	}
	if t := padReply(lastUser); t != "" {
		r.Text = t
		return r
	}
	r.Text = "OK."
	return r
}

// shellCall builds a call of whichever shell tool the client offers.
func shellCall(cmd string, tools []string) (name, args string) {
	has := map[string]bool{}
	for _, t := range tools {
		has[t] = true
	}
	enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch {
	case has["exec_command"]:
		return "exec_command", enc(map[string]any{"cmd": cmd, "yield_time_ms": 10000})
	case has["Execute"]: // Factory Droid
		return "Execute", enc(map[string]any{"command": cmd, "summary": "Run the requested command", "riskLevel": "low", "riskLevelReason": "It only prints text."})
	case has["shell_command"]:
		return "shell_command", enc(map[string]any{"command": cmd, "timeout_ms": 10000})
	case has["bash"] && has["job_output"]: // Crush's (it requires a description, crush.go)
		return "bash", enc(map[string]any{"command": cmd, "description": "Run the command"})
	case has["bash"] && has["read_bash"]: // GitHub Copilot CLI's (it takes a description)
		return "bash", enc(map[string]any{"command": cmd, "description": "Run the command"})
	case has["bash"]: // OpenCode's, Kilo's and pi's
		return "bash", enc(map[string]any{"command": cmd})
	case has["run_shell_command"]:
		return "run_shell_command", enc(map[string]any{"command": cmd, "is_background": false})
	case has["exec"]: // OpenClaw's (piscript.go)
		return "exec", enc(map[string]any{"command": cmd})
	default:
		return "shell", enc(map[string]any{"command": []string{"bash", "-lc", cmd}, "timeout_ms": 10000})
	}
}
