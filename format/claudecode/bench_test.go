package claudecode

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// genSession writes a synthetic Claude Code 2.1 session of about size
// bytes: each turn is a user prompt, an assistant message streamed as
// three lines (thinking, text, tool call), hook and bash progress, a 3 KB
// tool result and a closing assistant line.
func genSession(w io.Writer, size int64) (lines int, err error) {
	bw := bufio.NewWriter(w)
	var written int64
	out := func(s string) {
		n, _ := bw.WriteString(s)
		bw.WriteByte('\n')
		written += int64(n) + 1
		lines++
	}
	result := strings.Repeat("file contents line\\n", 160)
	prev := "null"
	for turn := 0; written < size; turn++ {
		id := func(k string) string { return fmt.Sprintf(`"%s-%08d"`, k, turn) }
		common := `"sessionId":"bench","version":"2.1.39","cwd":"/work","timestamp":"2026-02-01T10:00:00.000Z"`
		out(fmt.Sprintf(`{"type":"user","uuid":%s,"parentUuid":%s,%s,"message":{"role":"user","content":"Please look at file %d and fix it"}}`, id("u"), prev, common, turn))
		msg := fmt.Sprintf(`"id":"msg_%08d","type":"message","role":"assistant","model":"claude-opus-4-6"`, turn)
		usage := `"usage":{"input_tokens":3,"cache_read_input_tokens":20000,"cache_creation_input_tokens":300,"output_tokens":120}`
		out(fmt.Sprintf(`{"type":"assistant","uuid":%s,"parentUuid":%s,"requestId":"req_%08d",%s,"message":{%s,"content":[{"type":"thinking","thinking":"I should read the file first, then decide.","signature":"c2lnbmF0dXJl"}],%s}}`, id("a1"), id("u"), turn, common, msg, usage))
		out(fmt.Sprintf(`{"type":"assistant","uuid":%s,"parentUuid":%s,"requestId":"req_%08d",%s,"message":{%s,"content":[{"type":"text","text":"Let me read it."}],%s}}`, id("a2"), id("a1"), turn, common, msg, usage))
		out(fmt.Sprintf(`{"type":"assistant","uuid":%s,"parentUuid":%s,"requestId":"req_%08d",%s,"message":{%s,"content":[{"type":"tool_use","id":"toolu_%08d","name":"Read","input":{"file_path":"/work/f%d.go"}}],%s}}`, id("a3"), id("a2"), turn, common, msg, turn, turn, usage))
		out(fmt.Sprintf(`{"type":"progress","uuid":%s,"parentUuid":%s,%s,"data":{"type":"hook_progress","hookEvent":"PreToolUse"},"parentToolUseID":"toolu_%08d"}`, id("p1"), id("a3"), common, turn))
		out(fmt.Sprintf(`{"type":"progress","uuid":%s,"parentUuid":%s,%s,"data":{"type":"bash_progress","output":"..."},"parentToolUseID":"toolu_%08d"}`, id("p2"), id("p1"), common, turn))
		out(fmt.Sprintf(`{"type":"user","uuid":%s,"parentUuid":%s,%s,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%08d","content":"%s"}]},"toolUseResult":{"type":"text"}}`, id("r"), id("a3"), common, turn, result))
		out(fmt.Sprintf(`{"type":"assistant","uuid":%s,"parentUuid":%s,"requestId":"req_b%08d",%s,"message":{"id":"msg_b%08d","type":"message","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"Fixed: the loop bound was off by one."}],%s}}`, id("b"), id("r"), turn, common, turn, usage))
		prev = id("b")
	}
	return lines, bw.Flush()
}

// discardSink counts and drops nodes, sampling the heap as they arrive
// (with live set, after a collection: what the importer holds, not
// garbage awaiting the collector).
type discardSink struct {
	nodes, lines int
	live         bool
	peak         uint64
}

func (d *discardSink) Conversation(string) (transcript.ImportSink, error) { return d, nil }
func (d *discardSink) Node(transcript.Node) error {
	d.nodes++
	if d.nodes%2000 == 0 {
		d.sample()
	}
	return nil
}
func (d *discardSink) SetHead(string)               {}
func (d *discardSink) SetModel(string)              {}
func (d *discardSink) Count(string, string, string) { d.lines++ }
func (d *discardSink) Warn(string, int, string)     {}
func (d *discardSink) sample() {
	if d.live {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapAlloc > d.peak {
		d.peak = m.HeapAlloc
	}
}

func makeSession(tb testing.TB, size int64) (string, int) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "bench.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	lines, err := genSession(f, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	return path, lines
}

// TestStreamingMemory: importing a 40 MB session, the importer holds well
// under the file's size (structure, not content). The live heap is
// measured, so the figure does not depend on when the collector runs.
func TestStreamingMemory(t *testing.T) {
	if !longRun() {
		t.Skip("skipping the 40 MB import in -short mode")
	}
	const size = 40 << 20
	path, lines := makeSession(t, size)
	runtime.GC()
	sink := discardSink{live: true}
	if err := Import(context.Background(), []string{path}, Options{}, &sink); err != nil {
		t.Fatal(err)
	}
	if sink.lines != lines {
		t.Errorf("counted %d records, the file has %d lines", sink.lines, lines)
	}
	if sink.peak > size/3 {
		t.Errorf("live heap %d MB for a %d MB file: not streaming", sink.peak>>20, size>>20)
	}
	t.Logf("%d MB file, %d lines, %d nodes: peak live heap %d MB", size>>20, lines, sink.nodes, sink.peak>>20)
}

// BenchmarkImport100MB imports a generated 100 MB session (figures for
// docs/BENCHMARKS.md): go test ./format/claudecode -run '^$' -bench Import100MB -benchtime 1x
func BenchmarkImport100MB(b *testing.B) {
	const size = 100 << 20
	path, _ := makeSession(b, size)
	b.SetBytes(size)
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var sink discardSink
		if err := Import(context.Background(), []string{path}, Options{}, &sink); err != nil {
			b.Fatal(err)
		}
		sink.sample()
		if sink.peak > peak {
			peak = sink.peak
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}
