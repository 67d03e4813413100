package pi_test

import (
	"context"
	"os"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/format/pi"
	"github.com/ctxfold/ctxfold/transcript"
)

// nullTarget takes the nodes and drops them: the decoder's own cost.
type nullTarget struct{ nodes int }

func (t *nullTarget) Conversation(string) (transcript.ImportSink, error) { return t, nil }
func (t *nullTarget) Node(transcript.Node) error                         { t.nodes++; return nil }
func (t *nullTarget) SetHead(string)                                     {}
func (t *nullTarget) SetModel(string)                                    {}
func (t *nullTarget) Count(string, string, string)                       {}
func (t *nullTarget) Warn(string, int, string)                           {}

// BenchmarkDecode100MB decodes the session CTXFOLD_PI_BENCH names (write one
// with go run ./bench/pi-gen -mb 100 -o FILE) into a sink that keeps nothing.
func BenchmarkDecode100MB(b *testing.B) {
	file := os.Getenv("CTXFOLD_PI_BENCH")
	if file == "" {
		b.Skip("set CTXFOLD_PI_BENCH to a generated session (bench/pi-gen)")
	}
	st, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		var t nullTarget
		if err := pi.Import(context.Background(), []string{file}, input.Options{}, &t); err != nil {
			b.Fatal(err)
		}
	}
}
