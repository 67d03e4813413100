// Package gemini is a fake Gemini API (generateContent and
// streamGenerateContent with alt=sse) for driving the real Gemini CLI
// offline. It answers by script, from the request alone, so a re-recording
// gets the same answers: a JSON-schema request (the CLI's model router and
// next-speaker check) gets an object filled from the schema, a compression
// request (its system instruction asks for a <state_snapshot>) gets a
// snapshot, a user text holding the marker "RUN: <command>" gets a
// run_shell_command function call the CLI really executes, a function
// response gets a short reply naming the output, anything else a short
// reply. Every request body is recorded.
//
// usageMetadata is deterministic and derived from the request's structure
// (100 per content, 10 per part; 10 per answer part), not from any
// tokenizer or byte length, so a re-recording on another day reports the
// same numbers: the interop tests check structure; the estimator's
// reference vectors check tokenization (docs/INTEROP-gemini-cli.md).
//
// It listens on 127.0.0.1 only, and every wait is bounded.
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Marker in a user's text asking for a shell command; the rest of the line
// is the command.
const Marker = "RUN: "

// AgentMarker in a user's text asks for a sub-agent: "AGENT: <name> <task>"
// on one line becomes an invoke_agent call.
const AgentMarker = "AGENT: "

// Request is one recorded request.
type Request struct {
	Seq    int             `json:"seq"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Query  string          `json:"query,omitempty"`
	Model  string          `json:"model,omitempty"`
	Kind   string          `json:"kind"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// Options tune the server.
type Options struct {
	// PromptTokens, when non-zero, is reported as every main-model
	// answer's promptTokenCount (to push the CLI past its compression
	// threshold).
	PromptTokens int
	// Record, when set, receives each request as it arrives (one JSON
	// line each), before it is answered.
	Record io.Writer
}

// Server is a running fake.
type Server struct {
	opts Options
	ln   net.Listener
	srv  *http.Server
	mu   sync.Mutex
	reqs []Request
}

// Start listens on a free loopback port.
func Start(opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, ln: ln}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the base URL to give the client (GOOGLE_GEMINI_BASE_URL).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Requests returns what was recorded so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Close stops the server, waiting at most five seconds for open requests.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// body is the part of a generateContent request the script reads.
type body struct {
	Contents          []content `json:"contents"`
	SystemInstruction *content  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parametersJsonSchema"`
			Schema     json.RawMessage `json:"parameters"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
}

type content struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             *string          `json:"text,omitempty"`
	FunctionCall     *json.RawMessage `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	path := r.URL.Path
	model, method := "", ""
	if i := strings.Index(path, "/models/"); i >= 0 {
		model, method, _ = strings.Cut(path[i+len("/models/"):], ":")
	}
	var b body
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &b); err != nil {
			http.Error(w, "fake gemini: request body is not JSON: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	kind, answer := s.script(method, b)
	s.record(Request{Method: r.Method, Path: path, Query: r.URL.RawQuery, Model: model, Kind: kind, Body: compact(raw)})
	switch method {
	case "countTokens":
		writeJSON(w, map[string]any{"totalTokens": promptTokens(b)})
	case "generateContent":
		writeJSON(w, answer)
	case "streamGenerateContent":
		w.Header().Set("Content-Type", "text/event-stream")
		data, _ := json.Marshal(answer)
		fmt.Fprintf(w, "data: %s\r\n\r\n", data)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"code":404,"message":"fake gemini: %s not scripted","status":"NOT_FOUND"}}`, method)
	}
}

func (s *Server) record(q Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, q)
	if s.opts.Record != nil {
		// Not json.Marshal: it would escape the prompts' <tags>.
		enc := json.NewEncoder(s.opts.Record)
		enc.SetEscapeHTML(false)
		enc.Encode(q)
	}
}

func compact(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return nil
	}
	return buf.Bytes()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// script decides the answer from the request alone.
func (s *Server) script(method string, b body) (string, map[string]any) {
	if method == "countTokens" {
		return "count", nil
	}
	schema := b.GenerationConfig.ResponseJSONSchema
	if len(schema) == 0 {
		schema = b.GenerationConfig.ResponseSchema
	}
	if len(schema) > 0 || b.GenerationConfig.ResponseMimeType == "application/json" {
		v := fill(schema)
		out, _ := json.Marshal(v)
		return "json", s.reply(b, []map[string]any{{"text": string(out)}}, false)
	}
	if sys := b.SystemInstruction; sys != nil && strings.Contains(texts(*sys), "<state_snapshot>") {
		snap := fmt.Sprintf("<state_snapshot>\n<overall_goal>fake summary of %d earlier contents</overall_goal>\n</state_snapshot>", len(b.Contents))
		return "compress", s.reply(b, []map[string]any{{"text": snap}}, false)
	}
	if kind, answer, ok := s.recallStep(b); ok {
		return kind, answer
	}
	if n := len(b.Contents); n > 0 {
		last := b.Contents[n-1]
		// A sub-agent's loop ends only through complete_task: answer its
		// first request with that call.
		if params, ok := b.tool("complete_task"); ok && last.Role == "user" && !hasResponse(last) {
			call := map[string]any{"name": "complete_task", "args": fill(params)}
			return "subagent-done", s.reply(b, []map[string]any{{"functionCall": call}}, true)
		}
		for _, p := range last.Parts {
			if fr := p.FunctionResponse; fr != nil {
				return "after-tool", s.reply(b, []map[string]any{{"text": "The command " + fr.Name + " returned: " + summary(fr.Response)}}, true)
			}
		}
		if last.Role == "user" {
			t := promptText(last)
			if i := strings.LastIndex(t, AgentMarker); i >= 0 {
				line, _, _ := strings.Cut(t[i+len(AgentMarker):], "\n")
				name, task, _ := strings.Cut(strings.TrimSpace(line), " ")
				call := map[string]any{"name": "invoke_agent", "args": map[string]any{"agent_name": name, "prompt": task}}
				return "agent-call", s.reply(b, []map[string]any{{"functionCall": call}}, true)
			}
			if i := strings.LastIndex(t, Marker); i >= 0 {
				cmd, _, _ := strings.Cut(t[i+len(Marker):], "\n")
				cmd = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cmd), `"`))
				call := map[string]any{"name": "run_shell_command", "args": map[string]any{"command": cmd, "description": "run the requested command"}}
				return "tool-call", s.reply(b, []map[string]any{{"functionCall": call}}, true)
			}
			return "chat", s.reply(b, []map[string]any{{"text": "Fake reply to: " + shorten(lastLine(t), 60)}}, true)
		}
	}
	return "chat", s.reply(b, []map[string]any{{"text": "Fake reply."}}, true)
}

func (s *Server) reply(b body, parts []map[string]any, main bool) map[string]any {
	prompt := promptTokens(b)
	if main && s.opts.PromptTokens > 0 {
		prompt = s.opts.PromptTokens
	}
	if main && inflated(b) {
		prompt = InflatedTokens
	}
	cand := 10 * len(parts)
	return map[string]any{
		"candidates": []map[string]any{{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": cand, "totalTokenCount": prompt + cand},
		"modelVersion":  "fake-gemini",
	}
}

// promptTokens is the structural count: 100 per content, 10 per part.
func promptTokens(b body) int {
	n := 0
	for _, c := range b.Contents {
		n += 100 + 10*len(c.Parts)
	}
	return n
}

func texts(c content) string {
	var out []string
	for _, p := range c.Parts {
		if p.Text != nil {
			out = append(out, *p.Text)
		}
	}
	return strings.Join(out, "\n")
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// summary is the output's "Output: …" line (the shell tool's), else its
// first line: never the process group id that follows it, which differs
// from run to run.
func summary(resp json.RawMessage) string {
	var o struct {
		Output string `json:"output"`
		Error  string `json:"error"`
	}
	json.Unmarshal(resp, &o)
	t := o.Output
	if o.Error != "" {
		t = "error: " + o.Error
	}
	if t == "" {
		t = string(resp)
	}
	lines := strings.Split(t, "\n")
	pick := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "Output:") {
			pick = l
			break
		}
		if pick == "" && l != "" && !strings.HasPrefix(l, "<") {
			pick = l
		}
	}
	return shorten(pick, 80)
}

// fill builds a value matching a JSON schema: the first enum value, the
// smallest number, an empty-ish string; objects get every property.
func fill(raw json.RawMessage) any {
	var sc struct {
		Type       any                        `json:"type"`
		Enum       []any                      `json:"enum"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		Minimum    *float64                   `json:"minimum"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &sc) != nil {
		return map[string]any{}
	}
	if len(sc.Enum) > 0 {
		return sc.Enum[0]
	}
	typ, _ := sc.Type.(string)
	switch strings.ToLower(typ) {
	case "object", "":
		o := map[string]any{}
		for k, v := range sc.Properties {
			o[k] = fill(v)
		}
		return o
	case "array":
		return []any{}
	case "integer", "number":
		if sc.Minimum != nil {
			return *sc.Minimum
		}
		return 1
	case "boolean":
		return false
	default:
		return "fake"
	}
}

func (b body) tool(name string) (json.RawMessage, bool) {
	for _, t := range b.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == name {
				if len(d.Parameters) == 0 {
					return d.Schema, true
				}
				return d.Parameters, true
			}
		}
	}
	return nil, false
}

func hasResponse(c content) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}
