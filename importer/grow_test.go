package importer_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/verify"
)

// TestAppendGrownLog cuts each real Codex and Claude Code log at many
// points, imports the cut, then imports the whole log with --append: the
// README's "re-importing a log that grew adds only what is new" must hold
// at every cut, including one inside a streamed model request (issue 18
// item 1: head -n 1870 of the madshn rollout ends between a request's
// reasoning and its tool call). After the append the session has no fault
// the cut had not, holds every node of a fresh import, reads from HEAD
// exactly as a fresh import does, and a second --append adds nothing.
func TestAppendGrownLog(t *testing.T) {
	external := sessiontest.External(t)
	files, _ := filepath.Glob(filepath.Join(external, "codex", "*", "*.jsonl"))
	cc, _ := filepath.Glob(filepath.Join(external, "claude-code", "*", "*.jsonl"))
	files = append(files, cc...)
	if len(files) < 4 {
		t.Fatalf("expected the Codex and Claude Code logs in %s, found %v", external, files)
	}
	for _, file := range files {
		rel, _ := filepath.Rel(external, file)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			full := filepath.Join(t.TempDir(), "full")
			if _, err := run(t, importer.Auto, full, file); err != nil {
				t.Fatal(err)
			}
			want := mustIDs(t, full)
			wantBody := rawBody(t, full)
			// Every line for short logs; a spread of about 20 cuts for long
			// ones, plus the cut the issue names.
			step := max(1, len(lines)/sessiontest.Sample(20, 5))
			cuts := []int{}
			for k := 1; k < len(lines); k += step {
				cuts = append(cuts, k)
			}
			if len(lines) > 1870 {
				cuts = append(cuts, 1870)
			}
			for _, k := range cuts {
				dir := t.TempDir()
				head := filepath.Join(dir, filepath.Base(file))
				if err := os.WriteFile(head, bytes.Join(lines[:k], nil), 0o644); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, "s")
				if _, err := run(t, importer.Auto, out, head); err != nil {
					// A cut too early to hold a conversation is no session.
					continue
				}
				before := verifyErrors(t, out)
				rep, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{file}, Out: out, Append: true})
				if err != nil {
					t.Fatalf("cut after line %d: --append of the whole log: %v", k, err)
				}
				// The append adds no fault. A cut log can itself import with
				// one (a message recorded between a call and its output that
				// had not arrived yet): that stays on the stored, now
				// off-branch nodes.
				for f := range verifyErrors(t, out) {
					if !before[f] {
						t.Fatalf("cut after line %d: the --append added a fault: %s", k, f)
					}
				}
				got := mustIDs(t, out)
				for id := range want {
					if !got[id] {
						t.Fatalf("cut after line %d: node %q of a fresh import is missing after --append", k, id)
					}
				}
				// The live branch reads exactly as a fresh import of the
				// whole log: every request whole, HEAD at its end.
				if got := rawBody(t, out); !bytes.Equal(got, wantBody) {
					t.Fatalf("cut after line %d: render --raw from HEAD differs from a fresh import's (%d vs %d bytes)", k, len(got), len(wantBody))
				}
				rep, err = importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{file}, Out: out, Append: true})
				if err != nil {
					t.Fatalf("cut after line %d: second --append: %v", k, err)
				}
				if n := rep.Sessions[0].Nodes; n != 0 {
					t.Fatalf("cut after line %d: a second --append of the same log wrote %d nodes", k, n)
				}
			}
		})
	}
}

// verifyErrors is the set of verify's errors on dir.
func verifyErrors(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	_, err := verify.Dir(context.Background(), dir, store.OpenOptions{}, verify.Options{}, func(f verify.Finding) {
		if f.Severity == verify.Error {
			out[f.String()] = true
		}
	})
	if err != nil {
		t.Fatalf("%s: verify: %v", dir, err)
	}
	return out
}

// rawBody is the OpenAI request body of render --raw from HEAD: every
// turn the model would read, without node ids.
func rawBody(t *testing.T, dir string) []byte {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", true)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := render.Write(&buf, v, render.FormatOpenAI); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustIDs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string]bool{}
	for _, r := range s.All() {
		out[r.ID] = true
	}
	return out
}
