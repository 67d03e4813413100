package opencode_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ctxfold/ctxfold/format/opencode"
	"github.com/ctxfold/ctxfold/internal/importtest"
)

// writeBigExport writes an `opencode export` document of about mb MB by
// repeating the recorded tool turn's messages (a user prompt, a step that
// calls bash, the answer) under fresh ids, each tool output padded to
// 4 KB so the document is mostly transcript text, as real ones are.
func writeBigExport(tb testing.TB, mb int) (string, int64) {
	tb.Helper()
	data, err := os.ReadFile(recorded + "tool/export-1.json")
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Info     json.RawMessage  `json:"info"`
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "big-export.json")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, "{\"info\": %s,\n\"messages\": [\n", doc.Info)
	pad := make([]byte, 4096)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	var n int64
	for turn := 0; n < int64(mb)*1e6; turn++ {
		for _, m := range doc.Messages {
			info := m["info"].(map[string]any)
			copyInfo := map[string]any{}
			for k, v := range info {
				copyInfo[k] = v
			}
			copyInfo["id"] = fmt.Sprintf("%s_%07d", info["id"], turn)
			if p, ok := info["parentID"].(string); ok {
				copyInfo["parentID"] = fmt.Sprintf("%s_%07d", p, turn)
			}
			var parts []map[string]any
			for _, p := range m["parts"].([]any) {
				pm := map[string]any{}
				for k, v := range p.(map[string]any) {
					pm[k] = v
				}
				pm["id"] = fmt.Sprintf("%s_%07d", pm["id"], turn)
				if pm["type"] == "tool" {
					pm["callID"] = fmt.Sprintf("call_%07d", turn)
					st := map[string]any{}
					for k, v := range pm["state"].(map[string]any) {
						st[k] = v
					}
					st["output"] = string(pad)
					pm["state"] = st
				}
				parts = append(parts, pm)
			}
			line, _ := json.Marshal(map[string]any{"info": copyInfo, "parts": parts})
			if n > 0 {
				w.WriteString(",\n")
			}
			w.Write(line)
			n += int64(len(line)) + 2
		}
	}
	w.WriteString("\n]}\n")
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	return path, st.Size()
}

// BenchmarkImportExport100MB imports a generated 100 MB export
// (docs/BENCHMARKS.md): go test ./format/opencode -run '^$' -bench
// ImportExport100MB -benchtime 1x.
func BenchmarkImportExport100MB(b *testing.B) {
	mb := 100
	if v, err := strconv.Atoi(os.Getenv("CTXFOLD_BENCH_MB")); err == nil && v > 0 {
		mb = v // a smaller run while iterating
	}
	path, size := writeBigExport(b, mb)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var tg importtest.Target
		if err := opencode.Import(context.Background(), []string{path}, opencode.Options{}, &tg); err != nil {
			b.Fatal(err)
		}
		if len(tg.Convs) != 1 || len(tg.Convs[0].Nodes) < 1000 {
			b.Fatalf("%d sessions", len(tg.Convs))
		}
	}
}
