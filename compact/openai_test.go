package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "sk-test-0123456789-secret"

// chatServer speaks Chat Completions: reply decides each response from the
// prompt and the 1-based call number.
type chatServer struct {
	t       *testing.T
	mu      sync.Mutex
	calls   int
	prompts []string
	reply   func(call int, prompt string) (status int, body string)
}

func (c *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		c.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
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

func completion(text string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "summary-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
	})
	return string(b)
}

func apiError(msg, typ, code string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code}})
	return string(b)
}

func newOpenAI(t *testing.T, reply func(int, string) (int, string)) (*OpenAI, *chatServer) {
	cs := &chatServer{t: t, reply: reply}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	return &OpenAI{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "summary-model", Backoff: time.Millisecond, Timeout: 5 * time.Second}, cs
}

func assertNoKey(t *testing.T, dir string, texts ...string) {
	t.Helper()
	for _, f := range []string{"nodes.jsonl", "events.jsonl", "session.json"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		if strings.Contains(s, testKey) {
			t.Fatal("the API key leaked into output or the session")
		}
	}
}

func TestOpenAISuccess(t *testing.T) {
	o, cs := newOpenAI(t, func(int, string) (int, string) {
		return 200, completion("## Objective\nFix TestParseDuration in internal/timeutil/parse_test.go.")
	})
	dir := copyFixture(t, "tools")
	res, err := Compact(context.Background(), opts(dir, o, 300))
	if err != nil || res.Outcome != OutcomeSucceeded || res.Summarizer != "openai" {
		t.Fatalf("%v %+v", err, res)
	}
	if cs.calls != 1 {
		t.Fatalf("%d calls", cs.calls)
	}
	p := cs.prompts[0]
	for _, want := range []string{"## ", "Constraints and user preferences", "verbatim", "call_run1", "internal/timeutil/parse.go", "Turns to summarize"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if !strings.Contains(storedNode(t, dir, res.SummaryID).Content.PlainText(), "Fix TestParseDuration") {
		t.Fatal("the model's summary was not stored")
	}
	assertNoKey(t, dir)
}

func TestOpenAIRetriesRateLimit(t *testing.T) {
	o, cs := newOpenAI(t, func(call int, _ string) (int, string) {
		if call == 1 {
			return 429, apiError("Rate limit reached", "requests", "rate_limit_exceeded")
		}
		return 200, completion("## Objective\nretried fine")
	})
	got, err := o.Summarize(context.Background(), Request{Nodes: ptrs(genSession(newRand(), 2)), MaxTokens: 500})
	if err != nil || got != "## Objective\nretried fine" || cs.calls != 2 {
		t.Fatalf("%q %v after %d calls", got, err, cs.calls)
	}
}

func TestOpenAIServerErrorFailsAndKeepsHistory(t *testing.T) {
	o, cs := newOpenAI(t, func(int, string) (int, string) {
		return 500, apiError("internal error; key "+testKey, "server_error", "")
	})
	o.Retries = 2
	dir := copyFixture(t, "tools")
	files := snapshotFiles(t, dir)
	res, err := Compact(context.Background(), opts(dir, o, 300))
	var failed *FailedError
	if !errors.As(err, &failed) || failed.ExitCode() != 3 || res.Outcome != OutcomeFailed {
		t.Fatalf("%v %+v", err, res)
	}
	if cs.calls != 3 {
		t.Fatalf("%d calls, want 1 + 2 retries", cs.calls)
	}
	ev := unchanged(t, dir, files)
	if !strings.Contains(fmt.Sprint(ev["error"]), "500") {
		t.Fatalf("failed event %v", ev)
	}
	assertNoKey(t, dir, err.Error())
}

func TestOpenAIContextLengthChunksAndMerges(t *testing.T) {
	const limit = 2500 // bytes of prompt the fake model accepts
	o, cs := newOpenAI(t, func(_ int, prompt string) (int, string) {
		if len(prompt) > limit {
			return 400, apiError("This model's maximum context length is 1000 tokens.", "invalid_request_error", "context_length_exceeded")
		}
		if strings.Contains(prompt, "<transcript-part>") {
			return 200, completion(fmt.Sprintf("partial %d", strings.Count(prompt, "### ")))
		}
		return 200, completion("## Objective\nmerged from " + fmt.Sprint(strings.Count(prompt, "(a partial summary)")) + " parts")
	})
	nodes := ptrs(genSession(newRand(), 6))
	got, err := o.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	for _, p := range cs.prompts {
		if strings.Contains(p, "<transcript-part>") && len(p) <= limit {
			chunks++
		}
	}
	if chunks < 2 || !strings.HasPrefix(got, "## Objective\nmerged from ") || strings.HasSuffix(got, "from 0 parts") {
		t.Fatalf("summary %q after %d calls (%d chunk summaries)", got, cs.calls, chunks)
	}
	// Every covered message reached some chunk.
	seen := strings.Join(cs.prompts, "\n")
	for _, n := range nodes {
		if !strings.Contains(seen, "["+n.ID+"]") {
			t.Fatalf("node %s never reached the model", n.ID)
		}
	}
}

func TestOpenAICallBudget(t *testing.T) {
	o, cs := newOpenAI(t, func(int, string) (int, string) {
		return 503, apiError("overloaded", "server_error", "")
	})
	o.MaxCalls, o.Retries = 2, 5
	_, err := o.Summarize(context.Background(), Request{Nodes: ptrs(genSession(newRand(), 1)), MaxTokens: 100})
	if err == nil || !strings.Contains(err.Error(), "call budget of 2") || cs.calls != 2 {
		t.Fatalf("%v after %d calls", err, cs.calls)
	}
}

func TestOpenAIDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	o, _ := newOpenAI(t, func(int, string) (int, string) {
		<-release // the endpoint never answers in time
		return 200, completion("late")
	})
	o.Deadline = 50 * time.Millisecond
	_, err := o.Summarize(context.Background(), Request{Nodes: ptrs(genSession(newRand(), 1)), MaxTokens: 100})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "openai: deadline of 50ms exceeded") {
		t.Fatalf("%v", err)
	}
}

// Limited hands a caller's remaining budget to one Summarize: at most
// that many HTTP attempts, retries included, each reported by used.
func TestOpenAILimited(t *testing.T) {
	o, cs := newOpenAI(t, func(int, string) (int, string) {
		return 503, apiError("overloaded", "server_error", "")
	})
	o.Retries = 10
	s, used := o.Limited(3, time.Now().Add(time.Minute))
	_, err := s.Summarize(context.Background(), Request{Nodes: ptrs(genSession(newRand(), 1)), MaxTokens: 100})
	if err == nil || cs.calls != 3 || used() != 3 {
		t.Fatalf("%v: the server saw %d calls, used() says %d; want 3", err, cs.calls, used())
	}
	if o.MaxCalls != 0 || o.onCall != nil {
		t.Fatal("Limited changed the original")
	}
}

// The cache key changes with every setting that shapes a summary, and
// never holds the API key.
func TestCacheKeys(t *testing.T) {
	base := OpenAI{BaseURL: "http://localhost:1/v1", APIKey: testKey, Model: "m"}
	keys := map[string]string{}
	add := func(name string, s Summarizer) {
		k := s.CacheKey()
		if strings.Contains(k, testKey) {
			t.Fatalf("%s: the API key is in the cache key", name)
		}
		for other, ok := range keys {
			if ok == k {
				t.Fatalf("%s and %s share a cache key %q", name, other, k)
			}
		}
		keys[name] = k
	}
	add("openai", &base)
	for name, edit := range map[string]func(*OpenAI){
		"base url": func(o *OpenAI) { o.BaseURL = "http://localhost:2/v1" },
		"model":    func(o *OpenAI) { o.Model = "m2" },
		"calls":    func(o *OpenAI) { o.MaxCalls = 3 },
		"chunks":   func(o *OpenAI) { o.ChunkTokens = 1000 },
	} {
		o := base
		edit(&o)
		add(name, &o)
	}
	other := base
	other.APIKey = "sk-another-key"
	if other.CacheKey() != base.CacheKey() {
		t.Fatal("the API key changes the cache key")
	}
	add("exec a", &Exec{Command: "llm -m a"})
	add("exec b", &Exec{Command: "llm -m b"})
	add("exec env", &Exec{Command: "llm -m a", Env: []string{"TOKEN=" + testKey}})
	add("extractive", Extractive{})
}
