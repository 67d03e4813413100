package qwen_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ctxfold/ctxfold/format/qwen"
	"github.com/ctxfold/ctxfold/transcript"
)

// discard is a sink that keeps nothing: the benchmark measures the
// format's reading alone.
type discard struct{ nodes int }

func (d *discard) Conversation(string) (transcript.ImportSink, error) { return d, nil }
func (d *discard) Node(transcript.Node) error                         { d.nodes++; return nil }
func (d *discard) SetHead(string)                                     {}
func (d *discard) SetModel(string)                                    {}
func (d *discard) Count(string, string, string)                       {}
func (d *discard) Warn(string, int, string)                           {}

// BenchmarkImport reads a 20 MB recording made of copies of the turns
// fixture, each chained after the previous (bench/qwen-gen writes the
// same shape at any size for the whole import).
func BenchmarkImport(b *testing.B) {
	src, err := os.ReadFile(chat(b, "turns"))
	if err != nil {
		b.Fatal(err)
	}
	uuid := regexp.MustCompile(`"(uuid|parentUuid)":"([^"]+)"`)
	lines := bytes.Split(bytes.TrimSpace(src), []byte("\n"))
	var buf bytes.Buffer
	prev := ""
	for c := 0; buf.Len() < 20<<20; c++ {
		for i, l := range lines {
			l = uuid.ReplaceAll(l, []byte(fmt.Sprintf(`"$1":"${2}_%d"`, c)))
			if i == 0 && prev != "" {
				l = bytes.Replace(l, []byte(`"parentUuid":null`), []byte(`"parentUuid":"`+prev+`"`), 1)
			}
			buf.Write(l)
			buf.WriteByte('\n')
		}
		prev = fmt.Sprintf("00000000-0000-4000-8000-000000000029_%d", c)
	}
	file := filepath.Join(b.TempDir(), "big.jsonl")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for range b.N {
		var d discard
		if err := qwen.Import(context.Background(), []string{file}, qwen.Options{}, &d); err != nil {
			b.Fatal(err)
		}
		if d.nodes == 0 {
			b.Fatal("no nodes")
		}
	}
}
