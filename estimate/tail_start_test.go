package estimate_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/live"
)

// TestTailStartsAnywhere: whatever line the tail starts at — the second
// line of an assistant message streamed as several (its first part and
// the calls in it before the tail), a running sub-agent's sidechain line,
// a tool result whose call lies before the tail, a progress line — the
// status it answers is the whole file's. The file is fixed and the tail's
// start moves: the short run takes one start of each kind near the
// shortest tail that holds FitWindow+2 requests; the long run
// (CTXFOLD_LONG=1) every line of the 150 before it, in a generated session
// with inline sub-agents and in the shared spotter session.
func TestTailStartsAnywhere(t *testing.T) {
	files := []string{generatedSession(t)}
	if sessiontest.LongRun() {
		files = append(files, sessiontest.External(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
	}
	ctx := context.Background()
	for _, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if !sessiontest.LongRun() {
			data = lastBytes(data, 2<<20) // a quicker whole file; its first line is a root
		}
		fullCache := t.TempDir()
		file := filepath.Join(fullCache, "s.jsonl")
		out, want := wholeStatus(t, file, fullCache, data)
		starts := lineStarts(data)
		answered := 0
		for _, k := range tailStarts(t, data, starts) {
			from := starts[k]
			size := int64(len(data) - from)
			a, err := estimate.FromTail(ctx, file, estimate.TailOptions{Live: live.Options{CacheDir: t.TempDir()}, MinBytes: size, MaxBytes: size})
			if errors.Is(err, estimate.ErrTailUnusable) {
				t.Logf("line %d (%s): unusable", k+1, lineKind(data[from:]))
				continue // too few requests from here
			}
			if err != nil {
				t.Fatalf("%s: the tail from line %d: %v", filepath.Base(src), k+1, err)
			}
			got, start := estimate.TailStatus(a, 0), a.Entry.Start
			a.Entry.Close()
			if start != int64(from) {
				t.Fatalf("the tail from line %d starts at byte %d; want %d", k+1, start, from)
			}
			answered++
			if got != want || a.Compactions != out.Summaries {
				t.Errorf("%s: the tail from line %d (%s):\n tail %+v compactions %d\n full %+v compactions %d",
					filepath.Base(src), k+1, lineKind(data[from:]), got, a.Compactions, want, out.Summaries)
			}
		}
		if answered < 3 {
			t.Errorf("%s: %d tails answered; the test checks too little", filepath.Base(src), answered)
		}
	}
}

// tailStarts are the lines a tail is started at: from the shortest tail
// that holds FitWindow+2 requests on, one line of each kind (every line of
// the 150 before it in the long run).
func tailStarts(t *testing.T, data []byte, starts []int) []int {
	t.Helper()
	seen := map[string]bool{}
	requests, at := 0, -1
	for k := len(starts) - 1; k >= 0 && at < 0; k-- {
		var r lineRecord
		_ = json.Unmarshal(lineAt(data, starts, k), &r)
		if r.Type == "assistant" && !r.IsSidechain && len(r.Message.Usage) > 0 && !seen[r.Message.ID] {
			seen[r.Message.ID] = true
			if requests++; requests == estimate.FitWindow+2 {
				at = k
			}
		}
	}
	if at < 0 {
		t.Fatalf("fewer than %d requests", estimate.FitWindow+2)
	}
	var out []int
	if sessiontest.LongRun() {
		for k := at; k >= 0 && k > at-150; k-- {
			out = append(out, k)
		}
		return out
	}
	kinds := map[string]bool{}
	// A tail's first node has nothing before it: its request is not one
	// the fit can use, so the tail needs one line more.
	for k := at - 1; k >= 0 && len(kinds) < 4; k-- {
		kind := lineKind(lineAt(data, starts, k))
		if kind != "" && !kinds[kind] {
			kinds[kind] = true
			out = append(out, k)
		}
	}
	return out
}

type lineRecord struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	ParentUUID  string `json:"parentUuid"`
	Message     struct {
		ID      string          `json:"id"`
		Usage   json.RawMessage `json:"usage"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// lineKind names the kinds of line a tail is started at ("" for others).
func lineKind(line []byte) string {
	var r lineRecord
	if json.Unmarshal(firstLine(line), &r) != nil {
		return ""
	}
	switch {
	case r.IsSidechain:
		return "sidechain"
	case r.Type == "progress":
		return "progress"
	case r.Type == "user" && len(r.Message.Content) > 0 && r.Message.Content[0] == '[' && json.Valid(r.Message.Content) && containsToolResult(r.Message.Content):
		return "tool result"
	case r.Type == "assistant" && r.Message.ID != "":
		return "assistant"
	}
	return ""
}

func containsToolResult(content json.RawMessage) bool {
	var blocks []struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(content, &blocks)
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

func lineStarts(b []byte) []int {
	starts := []int{0}
	for _, e := range lineEnds(b) {
		if e < len(b) {
			starts = append(starts, e)
		}
	}
	return starts
}

func lineAt(data []byte, starts []int, k int) []byte { return firstLine(data[starts[k]:]) }

func firstLine(b []byte) []byte {
	for i, c := range b {
		if c == '\n' {
			return b[:i]
		}
	}
	return b
}

// lastBytes is b's last n bytes or more, from a line start.
func lastBytes(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for i := len(b) - n; i > 0; i-- {
		if b[i-1] == '\n' {
			return b[i:]
		}
	}
	return b
}
