package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/codex"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/importtest"
	"github.com/ctxfold/ctxfold/transcript"
)

// cpTarget keeps the nodes of one conversation and takes checkpoints, as
// the importer's sinks do; unlike importtest's, it accepts a node whose
// predecessor came before the resume point (it is in the session).
type cpTarget struct{ nodes []transcript.Node }

func (t *cpTarget) Conversation(string) (transcript.ImportSink, error) { return t, nil }
func (t *cpTarget) Node(n transcript.Node) error                       { t.nodes = append(t.nodes, n); return nil }
func (t *cpTarget) SetHead(string)                                     {}
func (t *cpTarget) SetModel(string)                                    {}
func (t *cpTarget) Count(string, string, string)                       {}
func (t *cpTarget) Warn(string, int, string)                           {}
func (t *cpTarget) Checkpoint() error                                  { return nil }

// An import resumed from the point an import of a cut rollout saved emits
// exactly the nodes a plain import of the whole rollout emits after the
// ones emitted before that point; a damaged state, or another rollout's, is
// input.ErrCannotResume.
func TestResumedImport(t *testing.T) {
	src, full, plain := toolRollout(t)
	file := filepath.Join(t.TempDir(), filepath.Base(src))
	ends := 0
	for i, c := range full {
		if c != '\n' {
			continue
		}
		if ends++; ends < 2 {
			continue
		}
		cut := i + 1
		if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		res := &input.Resume{}
		if err := codex.ImportResumable(context.Background(), []string{file}, codex.Options{}, res, &cpTarget{}); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if res.Point == nil || res.Point.Offset != int64(cut) || res.Parsed != int64(cut) {
			t.Fatalf("cut %d: point %+v, parsed %d", cut, res.Point, res.Parsed)
		}
		if err := os.WriteFile(file, full, 0o644); err != nil {
			t.Fatal(err)
		}
		var tg cpTarget
		again := &input.Resume{State: res.Point.State}
		if err := codex.ImportResumable(context.Background(), []string{file}, codex.Options{}, again, &tg); err != nil {
			t.Fatalf("cut %d: resumed: %v", cut, err)
		}
		if again.Parsed != int64(len(full)-cut) {
			t.Errorf("cut %d: parsed %d, want %d", cut, again.Parsed, len(full)-cut)
		}
		want, _ := json.Marshal(plain.Nodes[res.Point.Nodes:])
		got, _ := json.Marshal(tg.nodes)
		if !bytes.Equal(got, want) {
			t.Fatalf("cut %d: the resumed import's %d nodes differ from the last %d of a plain import", cut, len(tg.nodes), len(plain.Nodes)-res.Point.Nodes)
		}
	}
	for _, state := range [][]byte{[]byte("{"), []byte(`{"prefix":"cxdeadbeef","off":10,"line":1}`)} {
		err := codex.ImportResumable(context.Background(), []string{src}, codex.Options{}, &input.Resume{State: state}, &cpTarget{})
		if !errors.Is(err, input.ErrCannotResume) {
			t.Errorf("state %q: %v, want ErrCannotResume", state, err)
		}
	}
}

// With a Limit, a resumable import reads the rollout as if it ended there.
func TestResumableImportLimit(t *testing.T) {
	const src = "../../testdata/interop/codex/0.169.0/tool/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	cutFile := filepath.Join(t.TempDir(), filepath.Base(src))
	first := bytes.IndexByte(full, '\n') + 1
	rest := len(full) - first
	// Cuts inside lines after the first (the session_meta).
	for _, cut := range []int{first + rest/3, first + rest/2, first + 2*rest/3} {
		if err := os.WriteFile(cutFile, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		var plain, limited cpTarget
		if err := codex.ImportResumable(context.Background(), []string{cutFile}, codex.Options{}, &input.Resume{}, &plain); err != nil {
			t.Fatal(err)
		}
		res := &input.Resume{Limit: int64(cut)}
		if err := codex.ImportResumable(context.Background(), []string{src}, codex.Options{}, res, &limited); err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(plain.nodes)
		b, _ := json.Marshal(limited.nodes)
		if !bytes.Equal(a, b) || res.Parsed != int64(cut) {
			t.Errorf("limit %d: %d nodes vs %d of the cut file, parsed %d", cut, len(limited.nodes), len(plain.nodes), res.Parsed)
		}
	}
}

// An import that resumes and finds only a torn line after the point keeps
// the point where it was (the torn line is read again next time), and
// the import after it still emits exactly what a plain import emits after
// the point's nodes.
func TestResumeThroughTornLine(t *testing.T) {
	src, full, plain := toolRollout(t)
	file := filepath.Join(t.TempDir(), filepath.Base(src))
	var ends []int
	for i, c := range full {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	for k := 1; k+1 < len(ends); k++ {
		run := func(cut int, state []byte) (*input.Resume, *cpTarget) {
			t.Helper()
			if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			res, tg := &input.Resume{State: state, Limit: int64(cut)}, &cpTarget{}
			if err := codex.ImportResumable(context.Background(), []string{file}, codex.Options{}, res, tg); err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
			return res, tg
		}
		first, _ := run(ends[k], nil)
		torn, _ := run(ends[k]+(ends[k+1]-ends[k])/2, first.Point.State)
		if torn.Point == nil || torn.Point.Offset != first.Point.Offset || torn.Point.Nodes != first.Point.Nodes {
			t.Fatalf("line %d: the point moved over a torn line: %+v then %+v", k+1, first.Point, torn.Point)
		}
		last, tg := run(len(full), torn.Point.State)
		want, _ := json.Marshal(plain.Nodes[first.Point.Nodes:])
		got, _ := json.Marshal(tg.nodes)
		if !bytes.Equal(got, want) || last.Parsed != int64(len(full)-ends[k]) {
			t.Fatalf("line %d: after the torn line the resumed import differs from a plain one", k+1)
		}
	}
}

// toolRollout is the real Codex recording the resume tests cut: its path,
// its bytes and what a plain import of it emits.
func toolRollout(t *testing.T) (src string, full []byte, plain *importtest.Conv) {
	t.Helper()
	src = "../../testdata/interop/codex/0.169.0/tool/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err = load(t, src, codex.Options{}); err != nil {
		t.Fatal(err)
	}
	return src, full, plain
}
