package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzMCPRequest: whatever line a client sends after the handshake, the
// server writes only JSON-RPC lines, does not end, and answers the next
// request.
func FuzzMCPRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_history","arguments":{"query":"compaction"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_history","arguments":{"query":"(a|b","regexp":true}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_turns","arguments":{"ids":["x","x"],"max_bytes":-1}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"context_status","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		"garbage", `{"id":2}`, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\x00",
	} {
		f.Add(s)
	}
	cache := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		line = strings.ReplaceAll(line, "\n", " ") // one line
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		in := initLine + "\n" + readyLine + "\n" + line + "\n" + `{"jsonrpc":"2.0","id":"last","method":"ping"}` + "\n"
		err := New(Options{Locate: Locate{Transcript: recorded}, CacheDir: cache, CallTimeout: 10 * time.Second}).
			Run(ctx, &Transport{In: strings.NewReader(in), Out: &out})
		if ctx.Err() != nil {
			t.Fatalf("the server did not end with its input: %v", err)
		}
		last := false
		for l := range bytes.Lines(out.Bytes()) {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
			}
			if json.Unmarshal(l, &m) != nil || m.JSONRPC != "2.0" {
				t.Fatalf("not a JSON-RPC line: %q", l)
			}
			last = last || string(m.ID) == `"last"`
		}
		if !last && err != io.EOF && err != nil {
			t.Fatalf("the server stopped serving after %q: %v", line, err)
		}
		if !last {
			t.Fatalf("the request after %q was not answered", line)
		}
	})
}
