package verify_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/verify"
)

// benchNodes is the size of the generated session (CTXFOLD_BENCH_NODES
// overrides the default of one million).
func benchNodes() int {
	if n, err := strconv.Atoi(os.Getenv("CTXFOLD_BENCH_NODES")); err == nil && n > 100 {
		return n
	}
	return 1_000_000
}

// writeLargeSession writes a session of about n nodes: a main chain of
// turns with tool calls, a two-node fork every 500 nodes, a relic summary
// over the first quarter of the chain and an active one over the first
// half (so about n/2 covered ids), and their compaction events.
func writeLargeSession(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, store.NodesFile))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, `{"id":"sys","predecessor":null,"role":"system","content":"You are a coding agent."}`)
	var main []string
	prev, count := "sys", 1
	emit := func(id, line string) {
		fmt.Fprintf(w, line+"\n", id, prev)
		main = append(main, id)
		prev = id
		count++
	}
	for k := 0; count < n-2; k++ {
		u, a, t, a2 := fmt.Sprintf("u%d", k), fmt.Sprintf("a%d", k), fmt.Sprintf("t%d", k), fmt.Sprintf("b%d", k)
		emit(u, `{"id":%q,"predecessor":%q,"role":"user","content":"Run the next step."}`)
		emit(a, `{"id":%q,"predecessor":%q,"role":"assistant","content":"","tool_calls":[{"id":"c`+strconv.Itoa(k)+`","name":"bash","arguments":{"cmd":"make"}}]}`)
		emit(t, `{"id":%q,"predecessor":%q,"role":"tool","tool_call_id":"c`+strconv.Itoa(k)+`","content":"ok"}`)
		emit(a2, `{"id":%q,"predecessor":%q,"role":"assistant","content":"Done."}`)
		if k%125 == 0 {
			fmt.Fprintf(w, `{"id":"f%d","predecessor":%q,"role":"assistant","content":"A retry."}`+"\n", k, u)
			fmt.Fprintf(w, `{"id":"g%d","predecessor":"f%d","role":"user","content":"Go on."}`+"\n", k, k)
			count += 2
		}
	}
	summary := func(id string, covered []string) {
		fmt.Fprintf(w, `{"id":%q,"predecessor":"sys","role":"user","name":"context/summary","content":"[Previous conversation summary]\nsteps","metadata":{"compaction":true,"covers_ids":[`, id)
		for i, c := range covered {
			if i > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, "%q", c)
		}
		fmt.Fprintln(w, `]}}`)
	}
	quarter, half := len(main)/4/4*4, len(main)/2/4*4
	summary("summary_quarter", main[:quarter])
	summary("summary_half", main[:half])
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	meta := fmt.Sprintf(`{"format_version":1,"head":%q,"active_summary_id":"summary_half","active_summary_text":"steps"}`, main[len(main)-1])
	os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(meta), 0o644)
	events := fmt.Sprintf(`{"type":"compaction_finished","no_op":false,"summary_id":"summary_quarter","summarised_count":%d}
{"type":"compaction_finished","no_op":false,"summary_id":"summary_half","summarised_count":%d}
`, quarter, half)
	os.WriteFile(filepath.Join(dir, store.EventsFile), []byte(events), 0o644)
	return dir
}

// BenchmarkVerifySession times the checks alone on an open session of
// CTXFOLD_BENCH_NODES (default 1M) nodes:
//
//	go test ./verify -run '^$' -bench VerifySession -benchtime 3x
func BenchmarkVerifySession(b *testing.B) {
	dir := writeLargeSession(b, benchNodes())
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for b.Loop() {
		res, err := verify.Session(context.Background(), s, verify.Options{Strict: true}, func(f verify.Finding) { b.Fatalf("finding: %s", f) })
		if err != nil || !res.OK() || res.Summaries != 2 {
			b.Fatalf("res %+v, err %v", res, err)
		}
	}
	b.ReportMetric(float64(s.Len()), "nodes")
}

// BenchmarkVerifyDir times what 'ctxfold verify DIR' does: read and index
// the session, then check it.
//
//	go test ./verify -run '^$' -bench VerifyDir -benchtime 3x
func BenchmarkVerifyDir(b *testing.B) {
	dir := writeLargeSession(b, benchNodes())
	b.ResetTimer()
	for b.Loop() {
		res, err := verify.Dir(context.Background(), dir, store.OpenOptions{}, verify.Options{Strict: true}, nil)
		if err != nil || !res.OK() {
			b.Fatalf("res %+v, err %v", res, err)
		}
	}
}

// BenchmarkVerifyManySummaries checks a deep chain that was compacted many
// times (CTXFOLD_BENCH_SUMMARIES, default 2,000, one summary per step of
// the chain). Whether an earlier summary's segment lies on a later one's
// chain is an O(1) ancestry test, so the cost does not grow with summaries
// × depth (each later summary is reported once, as not extending the
// first):
//
//	go test ./verify -run '^$' -bench VerifyManySummaries -benchtime 1x
func BenchmarkVerifyManySummaries(b *testing.B) {
	n, summaries := 200_000, 2_000
	if v, err := strconv.Atoi(os.Getenv("CTXFOLD_BENCH_SUMMARIES")); err == nil && v > 1 {
		summaries = v
	}
	dir := b.TempDir()
	var sb strings.Builder
	sb.WriteString(`{"id":"n0","predecessor":null,"role":"system","content":"s"}` + "\n")
	for i := 1; i < n; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		fmt.Fprintf(&sb, `{"id":"n%d","predecessor":"n%d","role":%q,"content":"t"}`+"\n", i, i-1, role)
	}
	step := n / (summaries + 1)
	last := ""
	for k := 1; k <= summaries; k++ {
		c := k * step
		last = fmt.Sprintf("summary_%d", k)
		fmt.Fprintf(&sb, `{"id":%q,"predecessor":"n%d","role":"user","name":"context/summary","content":"[Previous conversation summary]\nx","metadata":{"compaction":true,"covers_ids":["n%d"]}}`+"\n", last, c-1, c)
	}
	os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(sb.String()), 0o644)
	os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(fmt.Sprintf(`{"format_version":1,"head":"n%d","active_summary_id":%q,"active_summary_text":"x"}`, n-1, last)), 0o644)
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for b.Loop() {
		notExtending := 0
		res, err := verify.Session(context.Background(), s, verify.Options{}, func(f verify.Finding) {
			if f.Code != verify.CodeSummaryNotExtending {
				b.Fatalf("finding: %s", f)
			}
			notExtending++
		})
		if err != nil || res.Summaries != summaries || notExtending != summaries-1 {
			b.Fatalf("res %+v, %d not extending, err %v", res, notExtending, err)
		}
	}
	b.ReportMetric(float64(summaries), "summaries")
}
