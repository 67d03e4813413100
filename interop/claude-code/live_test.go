package claudecodeinterop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestLiveRerecord re-records every scenario with the installed pinned
// client, runs the oracle tests on the fresh recording, and compares its
// structure with the committed fixtures. It needs the client, so it runs
// only with CTXFOLD_INTEROP_LIVE=1 (.ci/run sets it after installing the
// client; interop/claude-code/record.sh installs it by hand). The client is
// CTXFOLD_CLAUDE_BIN, or the one record.sh installs under $HOME/.cache.
func TestLiveRerecord(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") == "" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to re-record with the installed Claude Code " + Version)
	}
	client := claudeBin(t)
	committed := fixtureRootOf(committedVersion(t, client))
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	var log bytes.Buffer
	if err := Record(ctx, Config{Client: client, Out: out, Log: &log}); err != nil {
		t.Fatalf("record: %v\n%s", err, log.String())
	}
	t.Logf("re-recorded %d scenarios in %s", len(Scenarios()), time.Since(start).Round(time.Second))
	t.Run("import-verify", func(t *testing.T) { oracleImportVerify(t, out) })
	t.Run("render", func(t *testing.T) { oracleRender(t, out) })
	t.Run("estimate", func(t *testing.T) { oracleEstimate(t, out) })
	for _, sc := range Scenarios() {
		t.Run("structure/"+sc.Name, func(t *testing.T) {
			want, got := structure(t, filepath.Join(committed, sc.Name)), structure(t, filepath.Join(out, sc.Name))
			if want != got {
				t.Errorf("structure differs from the committed fixtures (re-record with interop/claude-code/record.sh if the client changed):\n got %s\nwant %s", got, want)
			}
		})
	}
}

// structure summarises a scenario: per transcript file, the sequence of
// records that carry a uuid (type, subtype, attachment type; records
// without one are written asynchronously and their order varies); per
// request, the roles and block types of its messages and its tool names,
// in sorted order.
func structure(t *testing.T, dir string) string {
	t.Helper()
	var parts []string
	var files []string
	_ = filepath.WalkDir(filepath.Join(dir, "transcript"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var seq []string
		for _, line := range bytes.Split(b, []byte("\n")) {
			var r struct {
				Type       string `json:"type"`
				Subtype    string `json:"subtype"`
				UUID       string `json:"uuid"`
				Attachment struct {
					Type string `json:"type"`
				} `json:"attachment"`
			}
			if json.Unmarshal(line, &r) != nil || r.UUID == "" {
				continue
			}
			seq = append(seq, strings.TrimRight(r.Type+"/"+r.Subtype+r.Attachment.Type, "/"))
		}
		parts = append(parts, "file:"+strings.Join(seq, ","))
	}
	reqs, _ := filepath.Glob(filepath.Join(dir, "requests", "*.json"))
	var reqParts []string
	for _, rf := range reqs {
		b, err := os.ReadFile(rf)
		if err != nil {
			t.Fatal(err)
		}
		var req request
		if json.Unmarshal(b, &req) != nil {
			reqParts = append(reqParts, "request:unreadable")
			continue
		}
		var seq []string
		for _, raw := range req.Messages {
			var m rawMsg
			_ = json.Unmarshal(raw, &m)
			var types []string
			for _, bl := range contentBlocks(t, m.Content) {
				types = append(types, bl.Type)
			}
			seq = append(seq, m.Role+"("+strings.Join(types, "+")+")")
		}
		var tools []string
		for _, tr := range req.Tools {
			var d struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(tr, &d)
			tools = append(tools, d.Name)
		}
		reqParts = append(reqParts, "request:"+strings.Join(seq, ",")+" tools:"+strings.Join(tools, ","))
	}
	// A sub-agent's requests run beside the main loop's, so their
	// arrival order varies: requests compare as a set.
	sort.Strings(reqParts)
	return strings.Join(append(parts, reqParts...), "\n")
}
