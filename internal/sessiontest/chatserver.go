package sessiontest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestKey is the API key a ChatServer expects; tests assert it never
// leaks into output or a session.
const TestKey = "sk-test-0123456789-secret"

// ChatServer speaks Chat Completions: reply decides each response from the
// prompt and the 1-based call number.
type ChatServer struct {
	URL     string
	t       testing.TB
	mu      sync.Mutex
	calls   int
	prompts []string
	reply   func(call int, prompt string) (status int, body string)
}

func (c *ChatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		c.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+TestKey {
		c.t.Errorf("Authorization header %q", got)
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 1 || req.Model != "summary-model" {
		c.t.Errorf("bad request body %s", body)
	}
	c.mu.Lock()
	c.calls++
	call := c.calls
	prompt := req.Messages[0].Content
	c.prompts = append(c.prompts, prompt)
	c.mu.Unlock()
	status, out := c.reply(call, prompt)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, out)
}

// Completion is a Chat Completions response carrying text.
func Completion(text string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "summary-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
	})
	return string(b)
}

// APIError is an OpenAI-style error body.
func APIError(msg, typ, code string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
	return string(b)
}

// NewChatServer starts a ChatServer on loopback for the test's lifetime.
func NewChatServer(t testing.TB, reply func(call int, prompt string) (status int, body string)) *ChatServer {
	cs := &ChatServer{t: t, reply: reply}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	cs.URL = srv.URL
	return cs
}

// Calls is how many requests the server has answered.
func (c *ChatServer) Calls() int { c.mu.Lock(); defer c.mu.Unlock(); return c.calls }

// Prompts are the prompts received, in order.
func (c *ChatServer) Prompts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.prompts...)
}

// AssertNoKey fails the test when TestKey appears in texts or in the
// session files of dir.
func AssertNoKey(t testing.TB, dir string, texts ...string) {
	t.Helper()
	for _, f := range []string{"nodes.jsonl", "events.jsonl", "session.json"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		for _, form := range KeyForms() {
			if strings.Contains(strings.ToLower(s), strings.ToLower(form)) {
				t.Fatalf("the API key leaked into output or the session as %q", form)
			}
		}
	}
}

// KeyForms are the ways an endpoint has been seen to echo TestKey: whole,
// its first 20 characters, upper-cased, base64 of the key, of its bearer
// header and of a user:key pair (compared without case, so the upper-cased
// form is the first two).
func KeyForms() []string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	return []string{TestKey, TestKey[:20], strings.TrimRight(b64(TestKey), "="), strings.TrimRight(b64("Bearer "+TestKey), "="),
		strings.TrimRight(b64("user:"+TestKey), "="), base64.RawURLEncoding.EncodeToString([]byte(TestKey))}
}
