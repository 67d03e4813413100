package hook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCompactionOnLargeTranscript is the hook's figure in
// docs/HOOKS.md: on a large Claude Code transcript (bench/claudecode-gen),
// PreCompact (here the cold import, untimed), then the client's compaction
// record appended and the next UserPromptSubmit timed: the incremental refresh,
// the audit of every covered turn and the composed context.
//
//	go run ./bench/claudecode-gen -mb 100 -o /tmp/b100.jsonl
//	CTXFOLD_HOOK_BENCH_FILE=/tmp/b100.jsonl go test ./hook -run '^$' -bench CompactionOnLarge -benchtime 1x
func BenchmarkCompactionOnLargeTranscript(b *testing.B) {
	src := os.Getenv("CTXFOLD_HOOK_BENCH_FILE")
	if src == "" {
		b.Skip("set CTXFOLD_HOOK_BENCH_FILE (see the comment)")
	}
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		file, cache := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "cache")
		copyFile(b, src, file)
		in := Input{Event: EventPreCompact, TranscriptPath: file}
		if _, err := Run(ctx, in, Options{CacheDir: cache}); err != nil {
			b.Fatal(err)
		}
		appendCompaction(b, file)
		b.StartTimer()
		res, err := Run(ctx, Input{Event: EventUserPromptSubmit, TranscriptPath: file}, Options{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if res.Injected == nil {
			b.Fatalf("nothing injected (update %s)", res.Update)
		}
		b.ReportMetric(float64(res.Injected.Facts), "facts")
		b.ReportMetric(float64(res.Injected.Missing), "missing")
		b.ReportMetric(float64(res.Injected.Budget), "budget-tokens")
		b.ReportMetric(float64(res.Injected.Tokens), "injected-tokens")
		if fi, err := os.Stat(file); err == nil {
			b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
		}
	}
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
}

// appendCompaction appends a whole-session compaction as Claude Code
// 2.1.328 writes it: a compact_boundary whose logical parent is the last
// message, and the summary as the next user line.
func appendCompaction(b *testing.B, file string) {
	b.Helper()
	f, err := os.Open(file)
	if err != nil {
		b.Fatal(err)
	}
	last, session := "", ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		var r struct {
			Type, UUID, SessionID string
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && (r.Type == "user" || r.Type == "assistant") && r.UUID != "" {
			last, session = r.UUID, r.SessionID
		}
	}
	f.Close()
	if last == "" {
		b.Fatal("no message in the generated file")
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"parentUuid":null,"logicalParentUuid":%q,"isSidechain":false,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2026-12-01T00:00:00.000Z","uuid":"bench-boundary","level":"info","compactMetadata":{"trigger":"auto","preTokens":900000},"sessionId":%q}`+"\n", last, session)
	fmt.Fprintf(&buf, `{"parentUuid":"bench-boundary","isSidechain":false,"type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nThe user worked on a project."},"isCompactSummary":true,"uuid":"bench-summary","timestamp":"2026-12-01T00:00:01.000Z","sessionId":%q}`+"\n", session)
	out, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if _, err := out.Write(buf.Bytes()); err != nil {
		b.Fatal(err)
	}
}
