package summarize

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

func newOpenAI(t *testing.T, reply func(int, string) (int, string)) (*OpenAI, *sessiontest.ChatServer) {
	cs := sessiontest.NewChatServer(t, reply)
	return &OpenAI{BaseURL: cs.URL + "/v1", APIKey: sessiontest.TestKey, Model: "summary-model", Backoff: time.Millisecond, Timeout: 5 * time.Second}, cs
}

func TestOpenAIRetriesRateLimit(t *testing.T) {
	o, cs := newOpenAI(t, func(call int, _ string) (int, string) {
		if call == 1 {
			return 429, sessiontest.APIError("Rate limit reached", "requests", "rate_limit_exceeded")
		}
		return 200, sessiontest.Completion("## Objective\nretried fine")
	})
	got, err := o.Summarize(context.Background(), Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 2)), MaxTokens: 500})
	if err != nil || got != "## Objective\nretried fine" || cs.Calls() != 2 {
		t.Fatalf("%q %v after %d calls", got, err, cs.Calls())
	}
}

func TestOpenAIContextLengthChunksAndMerges(t *testing.T) {
	const limit = 2500 // bytes of prompt the fake model accepts
	o, cs := newOpenAI(t, func(_ int, prompt string) (int, string) {
		if len(prompt) > limit {
			return 400, sessiontest.APIError("This model's maximum context length is 1000 tokens.", "invalid_request_error", "context_length_exceeded")
		}
		if strings.Contains(prompt, "<transcript-part>") {
			return 200, sessiontest.Completion(fmt.Sprintf("partial %d", strings.Count(prompt, "### ")))
		}
		return 200, sessiontest.Completion("## Objective\nmerged from " + fmt.Sprint(strings.Count(prompt, "(a partial summary)")) + " parts")
	})
	nodes := sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 6))
	got, err := o.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	for _, p := range cs.Prompts() {
		if strings.Contains(p, "<transcript-part>") && len(p) <= limit {
			chunks++
		}
	}
	if chunks < 2 || !strings.HasPrefix(got, "## Objective\nmerged from ") || strings.HasSuffix(got, "from 0 parts") {
		t.Fatalf("summary %q after %d calls (%d chunk summaries)", got, cs.Calls(), chunks)
	}
	// Every covered message reached some chunk.
	seen := strings.Join(cs.Prompts(), "\n")
	for _, n := range nodes {
		if !strings.Contains(seen, "["+n.ID+"]") {
			t.Fatalf("node %s never reached the model", n.ID)
		}
	}
}

func TestOpenAICallBudget(t *testing.T) {
	o, cs := newOpenAI(t, func(int, string) (int, string) {
		return 503, sessiontest.APIError("overloaded", "server_error", "")
	})
	o.MaxCalls, o.Retries = 2, 5
	_, err := o.Summarize(context.Background(), Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 1)), MaxTokens: 100})
	if err == nil || !strings.Contains(err.Error(), "call budget of 2") || cs.Calls() != 2 {
		t.Fatalf("%v after %d calls", err, cs.Calls())
	}
}

func TestOpenAIDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	o, _ := newOpenAI(t, func(int, string) (int, string) {
		<-release // the endpoint never answers in time
		return 200, sessiontest.Completion("late")
	})
	o.Deadline = 50 * time.Millisecond
	_, err := o.Summarize(context.Background(), Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 1)), MaxTokens: 100})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "openai: deadline of 50ms exceeded") {
		t.Fatalf("%v", err)
	}
}

// Limited hands a caller's remaining budget to one Summarize: at most
// that many HTTP attempts, retries included, each reported by used.
func TestOpenAILimited(t *testing.T) {
	o, cs := newOpenAI(t, func(int, string) (int, string) {
		return 503, sessiontest.APIError("overloaded", "server_error", "")
	})
	o.Retries = 10
	s, used := o.Limited(3, time.Now().Add(time.Minute))
	_, err := s.Summarize(context.Background(), Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 1)), MaxTokens: 100})
	if err == nil || cs.Calls() != 3 || used() != 3 {
		t.Fatalf("%v: the server saw %d calls, used() says %d; want 3", err, cs.Calls(), used())
	}
	if o.MaxCalls != 0 || o.onCall != nil {
		t.Fatal("Limited changed the original")
	}
}

// The cache key changes with every setting that shapes a summary, and
// never holds the API key.
func TestCacheKeys(t *testing.T) {
	base := OpenAI{BaseURL: "http://localhost:1/v1", APIKey: sessiontest.TestKey, Model: "m"}
	keys := map[string]string{}
	add := func(name string, s Summarizer) {
		k := s.CacheKey()
		if strings.Contains(k, sessiontest.TestKey) {
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
	add("exec env", &Exec{Command: "llm -m a", Env: []string{"TOKEN=" + sessiontest.TestKey}})
	add("extractive", Extractive{})
}

// TestOpenAIRedactsTransformedKey: an error body that echoes the key cut
// to a prefix, upper-cased or base64-encoded (alone, as a bearer header, as
// basic auth) reaches the error text redacted in every form.
func TestOpenAIRedactsTransformedKey(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	echoes := []string{
		sessiontest.TestKey[:20],
		strings.ToUpper(sessiontest.TestKey),
		b64(sessiontest.TestKey),
		b64("Bearer " + sessiontest.TestKey),
		"Basic " + b64("user:"+sessiontest.TestKey),
		base64.RawURLEncoding.EncodeToString([]byte(`{"auth":"` + sessiontest.TestKey + `"}`)),
	}
	for _, echo := range echoes {
		o, _ := newOpenAI(t, func(int, string) (int, string) {
			return 401, sessiontest.APIError("invalid key "+echo+" given", "invalid_request_error", "invalid_api_key")
		})
		_, err := o.Summarize(context.Background(), Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 2)), MaxTokens: 500})
		if err == nil || !strings.Contains(err.Error(), "[redacted]") || !strings.Contains(err.Error(), "given") {
			t.Fatalf("echo %q: %v", echo, err)
		}
		sessiontest.AssertNoKey(t, t.TempDir(), err.Error())
	}
	// Ordinary text is not redacted, nor a mention of the provider's
	// public key prefix.
	for _, text := range []string{"a 500 from https://api.example.test/v1 after 3 attempts", "keys look like sk-test-XXXX; rotate yours", "sk-test-0123"} {
		if got := redactKey(text, sessiontest.TestKey); strings.Contains(got, "[redacted]") {
			t.Fatalf("redacted ordinary text: %q", got)
		}
	}
}

func TestOpenAIRefusesSummaryHoldingKey(t *testing.T) {
	for _, form := range []string{sessiontest.TestKey, strings.ToUpper(sessiontest.TestKey[:16]), base64.StdEncoding.EncodeToString([]byte(sessiontest.TestKey))} {
		o, _ := newOpenAI(t, func(int, string) (int, string) {
			return 200, sessiontest.Completion("## Objective\nthe key was " + form)
		})
		got, err := o.Summarize(context.Background(), Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 2)), MaxTokens: 500})
		if !errors.Is(err, ErrSummaryHoldsKey) || got != "" {
			t.Fatalf("form %q: %q %v", form, got, err)
		}
	}
}

func TestOpenAIRefusesUserinfoInBaseURL(t *testing.T) {
	cs := sessiontest.NewChatServer(t, func(int, string) (int, string) { return 200, sessiontest.Completion("x") })
	u := strings.Replace(cs.URL, "http://", "http://user:"+sessiontest.TestKey+"@", 1) + "/v1"
	o := &OpenAI{BaseURL: u, APIKey: sessiontest.TestKey, Model: "summary-model", Timeout: 5 * time.Second}
	_, err := o.Summarize(context.Background(), Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 2)), MaxTokens: 500})
	if err == nil || !strings.Contains(err.Error(), "must not hold credentials") || cs.Calls() != 0 {
		t.Fatalf("%v after %d calls", err, cs.Calls())
	}
	sessiontest.AssertNoKey(t, t.TempDir(), err.Error())
}

// TestOpenAIDoesNotFollowRedirectToAnotherOrigin: net/http keeps the
// Authorization header on a redirect to another port of the same host; the
// key must not reach it. A redirect within the origin is still followed.
func TestOpenAIDoesNotFollowRedirectToAnotherOrigin(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, sessiontest.Completion("## Objective\nfrom the other origin"))
	}))
	defer other.Close()
	cs := sessiontest.NewChatServer(t, func(int, string) (int, string) { return 200, sessiontest.Completion("## Objective\nsame origin") })
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/chat/completions", http.StatusTemporaryRedirect)
	}))
	defer front.Close()
	req := Request{Nodes: sessiontest.Pointers(sessiontest.Generate(sessiontest.NewRand(), 2)), MaxTokens: 500}
	o := &OpenAI{BaseURL: front.URL + "/v1", APIKey: sessiontest.TestKey, Model: "summary-model", Timeout: 5 * time.Second, Backoff: time.Millisecond}
	if got, err := o.Summarize(context.Background(), req); !errors.Is(err, ErrCrossOriginRedirect) || got != "" || leaked.Load() != 0 {
		t.Fatalf("%q %v; the other origin saw the key %d times", got, err, leaked.Load())
	}
	// A redirect within one server (scheme, host and port) is followed.
	mux := http.NewServeMux()
	mux.HandleFunc("/old/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/chat/completions", http.StatusTemporaryRedirect)
	})
	mux.Handle("/v1/", cs)
	same := httptest.NewServer(mux)
	defer same.Close()
	o.BaseURL = same.URL + "/old"
	if got, err := o.Summarize(context.Background(), req); err != nil || got != "## Objective\nsame origin" {
		t.Fatalf("same-origin redirect: %q %v", got, err)
	}
}
