package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	initLine  = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	readyLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// response is one line the server wrote.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	line int // its length in bytes
}

// serve runs the server over input through Transport until the input
// ends and every request is answered, and returns what it wrote.
func serve(t *testing.T, opts Options, input string) []response {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := Serve(ctx, opts, &Transport{In: strings.NewReader(input), Out: &out}); err != nil && err != io.EOF && ctx.Err() == nil {
		t.Logf("run: %v", err)
	}
	var rs []response
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("the server wrote a line that is not JSON: %q", sc.Bytes())
		}
		r.line = len(sc.Bytes())
		rs = append(rs, r)
	}
	return rs
}

func byID(rs []response, id string) *response {
	for i := range rs {
		if string(rs[i].ID) == id {
			return &rs[i]
		}
	}
	return nil
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func toolCall(id int, tool string, args any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// Issue 45 #6: each malformed line is answered with its JSON-RPC error and
// the server keeps serving (the SDK's transport ended on 12 of 31 shapes).
func TestMalformedLinesAnswered(t *testing.T) {
	cases := []struct {
		name, line string
		id         string // the id the error names
		code       int
	}{
		{"garbage", "hello there", "null", codeParseError},
		{"truncated", `{"jsonrpc":"2.0","id":5,"method":"tools/li`, "null", codeParseError},
		{"batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, "null", codeInvalidRequest},
		{"empty batch", `[]`, "null", codeInvalidRequest},
		{"missing jsonrpc", `{"id":5,"method":"ping"}`, "5", codeInvalidRequest},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, "5", codeInvalidRequest},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", codeInvalidRequest},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "null", codeInvalidRequest},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", codeInvalidRequest},
		{"NUL after the object", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\x00", "null", codeParseError},
		{"two messages on a line", `{"jsonrpc":"2.0","id":5,"method":"ping"}{"jsonrpc":"2.0","id":6,"method":"ping"}`, "null", codeParseError},
		{"deep nesting", `{"jsonrpc":"2.0","id":5,"method":"ping","params":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}", "null", codeParseError},
		{"50 MB line", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"x":"` + strings.Repeat("a", 50<<20) + `"}}`, "5", codeInvalidRequest},
		{"a string", `"ping"`, "null", codeInvalidRequest},
		{"a number", `42`, "null", codeInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":7}`, "5", codeInvalidRequest},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"\xff\xfe\"}", "5", -32601},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := serve(t, Options{Locate: Locate{Transcript: recorded}, CacheDir: t.TempDir()},
				lines(initLine, readyLine, c.line, `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`))
			var got *response
			for i := range rs {
				if rs[i].Error != nil && string(rs[i].ID) != "99" && string(rs[i].ID) != `"init"` {
					got = &rs[i]
				}
			}
			if got == nil || string(got.ID) != c.id || got.Error.Code != c.code {
				t.Fatalf("want error %d for id %s, got %+v (all: %d responses)", c.code, c.id, got, len(rs))
			}
			if got.line > 1024 {
				t.Fatalf("the error echoes the line: %d bytes", got.line)
			}
			if r := byID(rs, "99"); r == nil || r.Result == nil {
				t.Fatalf("the server stopped serving after the malformed line: %+v", rs)
			}
		})
	}
}

// Issue 45 #7: requests written before stdin closes are all answered
// (the SDK's transport answered tools/list or a tool call in none of 100
// runs).
func TestRequestsBeforeEOFAnswered(t *testing.T) {
	cache := t.TempDir()
	for run := range 20 {
		rs := serve(t, Options{Locate: Locate{Transcript: recorded}, CacheDir: cache},
			lines(initLine, readyLine, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
				toolCall(2, ToolSearch, map[string]any{"query": "compaction"}),
				toolCall(3, ToolStatus, map[string]any{})))
		for _, id := range []string{`"init"`, "1", "2", "3"} {
			if r := byID(rs, id); r == nil || r.Result == nil {
				t.Fatalf("run %d: request %s not answered: %d responses", run, id, len(rs))
			}
		}
	}
}

// writeTranscript writes a Claude Code transcript of turns whose texts
// are texts (user, assistant, user, …) and returns its path.
func writeTranscript(t *testing.T, texts []string) string {
	t.Helper()
	var b bytes.Buffer
	parent := "null"
	for i, text := range texts {
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		tb, _ := json.Marshal(text)
		ts := fmt.Sprintf("2026-01-01T00:%02d:%02d.000Z", i/60, i%60)
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":%s},"uuid":"%s","timestamp":"%s","sessionId":"s1","version":"2.1.328","cwd":"/w"}`+"\n", parent, tb, uuid, ts)
		} else {
			fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%s}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":10}},"uuid":"%s","timestamp":"%s","sessionId":"s1","version":"2.1.328","cwd":"/w"}`+"\n", parent, i, tb, uuid, ts)
		}
		parent = `"` + uuid + `"`
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 45 #8: read_turns' response as sent stays within max_bytes
// however escape-heavy the text, a cut ends on a character boundary, and
// repeated ids are read once.
func TestReadTurnsBoundedAsSent(t *testing.T) {
	heavy := strings.Repeat("<&>\"\\\x01é€😀 ", 30000) // escapes and multi-byte characters
	file := writeTranscript(t, []string{heavy, "short reply", heavy, "another"})
	cache := t.TempDir()
	ids := make([]string, 100000)
	for i := range ids {
		ids[i] = "00000000-0000-4000-8000-000000000001"
	}
	for _, bound := range []int{1000, 20000, 200000} {
		rs := serve(t, Options{Locate: Locate{Transcript: file}, CacheDir: cache}, lines(initLine, readyLine,
			toolCall(1, ToolRead, map[string]any{"from": "00000000-0000-4000-8000-000000000001", "max_bytes": bound}),
			toolCall(2, ToolRead, map[string]any{"ids": ids, "max_bytes": bound})))
		for _, id := range []string{"1", "2"} {
			r := byID(rs, id)
			if r == nil || r.Result == nil {
				t.Fatalf("bound %d: no answer to %s", bound, id)
			}
			if r.line > bound {
				t.Errorf("bound %d: request %s answered with %d bytes", bound, id, r.line)
			}
			var res struct {
				IsError    bool       `json:"isError"`
				Structured ReadOutput `json:"structuredContent"`
			}
			_ = json.Unmarshal(r.Result, &res)
			if res.IsError || len(res.Structured.Turns) != 1 {
				t.Fatalf("bound %d, request %s: %d turns (error %v)", bound, id, len(res.Structured.Turns), res.IsError)
			}
			text := res.Structured.Turns[0].Text
			if !utf8.ValidString(text) || strings.HasSuffix(text, "\uFFFD") || !strings.HasPrefix(heavy, text) {
				t.Fatalf("bound %d: the cut text does not end on a character: %q", bound, text[max(0, len(text)-12):])
			}
		}
	}
}

// Issue 45 #5 and #9: a query over the bound, or a regular expression
// whose program is too big to scan quickly, is refused at once, with the
// query clipped in the answer; a 10 MB query is refused by the transport
// (naming its id) without being held.
func TestQueryBounds(t *testing.T) {
	rs := serve(t, Options{Locate: Locate{Transcript: recorded}, CacheDir: t.TempDir()}, lines(initLine, readyLine,
		toolCall(1, ToolSearch, map[string]any{"query": strings.Repeat("x", 2<<20)}),
		toolCall(2, ToolSearch, map[string]any{"query": strings.Repeat(`(?:.{0,40}x){0,6}`, 16) + "QQ", "regexp": true}),
		toolCall(3, ToolSearch, map[string]any{"query": strings.Repeat("y", 10<<20)}),
		toolCall(4, ToolSearch, map[string]any{"query": `kept-by-compaction`, "regexp": true})))
	for _, c := range []struct{ id, want string }{{"1", "at most 1024"}, {"2", "instructions"}} {
		r := byID(rs, c.id)
		if r == nil || !bytes.Contains(r.Result, []byte(c.want)) || !bytes.Contains(r.Result, []byte(`"isError":true`)) || r.line > 2048 {
			t.Fatalf("query %s: %+v", c.id, r)
		}
	}
	if r := byID(rs, "3"); r == nil || r.Error == nil || r.line > 1024 {
		t.Fatalf("10 MB query: %+v", r)
	}
	if r := byID(rs, "4"); r == nil || !bytes.Contains(r.Result, []byte(`"total":`)) || bytes.Contains(r.Result, []byte(`"isError":true`)) {
		t.Fatalf("a plain regexp: %+v", r)
	}
}

// Issue 45 #5: a tool call is bounded in time and stops when the input
// ends: a slow regular expression (within the program bound) over a 4 MB
// transcript answers "gave up" at the call's bound, and the server ends
// right after, its stdin closed.
func TestSlowSearchBoundedInTime(t *testing.T) {
	file := slowTranscript(t)
	start := time.Now()
	// A bound well under the scan's time on any machine (about 0.6 s a MB
	// on an idle one, 2.5 s under load): the answer must be the bound's.
	rs := serve(t, Options{Locate: Locate{Transcript: file}, CacheDir: t.TempDir(), CallTimeout: 500 * time.Millisecond}, lines(initLine, readyLine,
		toolCall(1, ToolSearch, map[string]any{"query": slowPattern, "regexp": true})))
	took := time.Since(start)
	r := byID(rs, "1")
	if r == nil || !bytes.Contains(r.Result, []byte("gave up after 500ms")) {
		t.Fatalf("no time-bound answer after %s: %+v", took, r)
	}
	// The answer above is the bound; this only catches a server that
	// went on scanning after it (the whole scan takes minutes), with room
	// for a loaded machine.
	if took > 60*time.Second {
		t.Fatalf("the server ended %s after its input did", took)
	}
}

// slowTranscript is a 4 MB transcript that slowPattern scans at about
// 2.5 s a MB.
func slowTranscript(t *testing.T) string {
	var texts []string
	for i := range 400 {
		texts = append(texts, fmt.Sprintf("turn %d: ", i)+strings.Repeat("the quick brown fox jumps over the lazy dog 12345 ", 200))
	}
	return writeTranscript(t, texts)
}

const slowPattern = `(?i)(?:\w{0,30}[ \t]?){0,9}qqqq`

// Issue 45 #5: a cancelled call (notifications/cancelled cancels its
// context) stops its work: the search returns within a line's scan of the
// cancellation, not at the end of the transcript (one batch of render's
// search here).
func TestCancelledSearchStops(t *testing.T) {
	file := slowTranscript(t)
	h := &handlers{opts: Options{Locate: Locate{Transcript: file}, CacheDir: t.TempDir()}}
	g, _, done, err := h.open(context.Background()) // imported before the clock starts
	if err != nil {
		t.Fatal(err)
	}
	g.S.Close()
	done()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res, _, _ := h.search(ctx, nil, SearchInput{Query: slowPattern, Regexp: true})
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the search went on %s after it was cancelled", took)
	}
	if res == nil || !res.IsError {
		t.Fatalf("a cancelled search answered %+v", res)
	}
}

// A call answered at its bound leaves its work running until it sees the
// cancellation; the server waits for it before it ends (Serve), so the
// work is not cut off by the process's exit — and a test's temporary cache
// is not written after the test has ended.
func TestServeWaitsForCancelledWork(t *testing.T) {
	h := &handlers{opts: Options{CallTimeout: 50 * time.Millisecond}}
	var stopped atomic.Bool
	slow := func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
		<-ctx.Done()
		time.Sleep(300 * time.Millisecond) // a commit in progress
		stopped.Store(true)
		return nil, struct{}{}, ctx.Err()
	}
	res, _, _ := bounded(h, slow)(context.Background(), nil, struct{}{})
	if res == nil || !res.IsError || stopped.Load() {
		t.Fatalf("the call was not answered at its bound: %+v", res)
	}
	if !h.wait(5*time.Second) || !stopped.Load() {
		t.Fatal("wait returned before the cancelled work stopped")
	}
}
