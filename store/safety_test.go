package store_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// tree returns every entry under dir (lost+found/ included) with its
// bytes, or its link target for a symlink, so a test can show that a
// refused write changed nothing at all. The lock file is left out: taking
// the lock creates it.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case rel == store.LockFile && d.Type().IsRegular():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			out[rel] = "-> " + target
			return err
		case d.IsDir():
			out[rel+"/"] = ""
			return nil
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			out[rel] = string(data)
			return err
		}
		out[rel] = d.Type().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t testing.TB, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			t.Errorf("%s changed (%d bytes before, %d after, present %v)", k, len(v), len(w), ok)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s appeared", k)
		}
	}
}

func setNodesBytes(t testing.TB, dir string, n string) {
	t.Helper()
	path := filepath.Join(dir, store.MetaFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"nodes_bytes": `))
	if i < 0 {
		t.Fatalf("no nodes_bytes in %s", data)
	}
	j := i + bytes.IndexAny(data[i:], "\n}")
	data = append(append(append([]byte{}, data[:i]...), `"nodes_bytes": `+n...), data[j:]...)
	writeFile(t, path, string(data))
}

// Issue 18 item 2: with nodes_bytes 0 but HEAD on a node after it, an
// append used to move the whole of nodes.jsonl to lost+found/ before
// being refused. A refused write leaves every file byte-identical, and
// repair does not treat committed-looking data as an interrupted write.
func TestRefusedWriteLeavesSessionIdentical(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "compacted")
	setNodesBytes(t, dir, "0")
	before := tree(t, dir)
	_, err := tryAppend(dir, store.AppendOptions{}, user("", "", "hi"))
	var broken *store.IntegrityError
	if !errors.As(err, &broken) || !strings.Contains(err.Error(), `"a8": HEAD names a node that does not exist`) {
		t.Fatalf("append: want a broken-session refusal naming HEAD, got %v", err)
	}
	sameTree(t, before, tree(t, dir))

	_, err = store.Repair(context.Background(), dir, store.RepairOptions{WriteOptions: testWrite})
	if err == nil || !strings.Contains(err.Error(), "session.json is inconsistent with nodes.jsonl") {
		t.Fatalf("repair: want a refusal naming the inconsistent meta, got %v", err)
	}
	sameTree(t, before, tree(t, dir))

	// A write refused by validation, with a genuine uncommitted tail,
	// leaves the tail where it is too: only a committing write moves it.
	dir = sessiontest.CopyFixture(t, "compacted")
	f, err := os.OpenFile(filepath.Join(dir, store.NodesFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"late","predecessor":"a8","role":"user","content":"x"}` + "\n")
	f.Close()
	before = tree(t, dir)
	if _, err := tryAppend(dir, store.AppendOptions{}, user("x", "nowhere", "hi")); err == nil {
		t.Fatal("append with a missing predecessor was accepted")
	}
	sameTree(t, before, tree(t, dir))
	res := mustAppend(t, dir, store.AppendOptions{}, user("x", "", "hi"))
	if res.Head != "x" {
		t.Fatalf("head %q", res.Head)
	}
	lost, _ := filepath.Glob(filepath.Join(dir, store.LostFound, "nodes-*.jsonl"))
	if len(lost) != 1 {
		t.Fatalf("lost+found after a committed write: %v", lost)
	}
}

// Issue 18 item 3: a writer never writes through a symlink.
func TestWritersRefuseSymlinks(t *testing.T) {
	for _, name := range []string{store.LockFile, store.NodesFile, store.EventsFile, store.MetaFile, store.LostFound} {
		t.Run(name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, "compacted")
			outside := filepath.Join(t.TempDir(), "outside")
			path := filepath.Join(dir, name)
			var content []byte
			if name == store.LostFound {
				if err := os.Mkdir(outside, 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				content, _ = os.ReadFile(path)
				if name == store.LockFile {
					content = []byte("precious\n")
				}
				if err := os.WriteFile(outside, content, 0o644); err != nil {
					t.Fatal(err)
				}
				os.Remove(path)
			}
			if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
			if name == store.LostFound {
				// Give recovery something to move.
				f, _ := os.OpenFile(filepath.Join(dir, store.NodesFile), os.O_WRONLY|os.O_APPEND, 0)
				f.WriteString(`{"id":"late","role":"user"`)
				f.Close()
			}
			before := tree(t, dir)
			_, err := tryAppend(dir, store.AppendOptions{}, user("", "", "hi"))
			if err == nil || !strings.Contains(err.Error(), path+": is a symlink") {
				t.Fatalf("want a refusal naming the symlink %s, got %v", path, err)
			}
			sameTree(t, before, tree(t, dir))
			if name == store.LostFound {
				if entries, _ := os.ReadDir(outside); len(entries) != 0 {
					t.Fatalf("wrote %d files through the symlinked lost+found", len(entries))
				}
				return
			}
			if got, _ := os.ReadFile(outside); !bytes.Equal(got, content) {
				t.Fatalf("the symlink's target changed: %q", got)
			}
		})
	}
}

// Issue 18 item 4: a FIFO in place of a session file is refused at once;
// reading it would block until some writer opened the pipe.
func TestFIFORefused(t *testing.T) {
	for _, name := range []string{store.NodesFile, store.MetaFile, store.EventsFile} {
		t.Run(name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, "compacted")
			path := filepath.Join(dir, name)
			os.Remove(path)
			if err := sessiontest.MakeFIFO(t, path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 2)
			go func() {
				s, err := store.Open(dir, store.OpenOptions{})
				if err == nil {
					_, err = s.ReadEvents(func(store.EventLine) error { return nil })
					s.Close()
				}
				done <- err
			}()
			go func() {
				_, err := tryAppend(dir, store.AppendOptions{}, user("", "", "hi"))
				done <- err
			}()
			for range 2 {
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), path+": is a named pipe (FIFO), not a regular file") {
						t.Fatalf("want a refusal of the FIFO, got %v", err)
					}
				case <-time.After(10 * time.Second):
					// Unblock the reader so the test binary can exit.
					if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
					t.Fatal("blocked on the FIFO")
				}
			}
		})
	}
}

// Issue 18 item 5: the broken-graph guard is in the store's write path,
// so every caller of Update gets it, not only the append command.
func TestAppendRefusesBrokenGraph(t *testing.T) {
	for _, name := range []string{"bad/cycle", "bad/duplicate-id", "bad/missing-predecessor", "bad/head-missing", "broken/caller_cycle", "broken/active_summary_missing"} {
		t.Run(name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, name)
			before := tree(t, dir)
			_, err := tryAppend(dir, store.AppendOptions{RootFirst: true, AsRecorded: true}, user("fresh", "", "hi"))
			var broken *store.IntegrityError
			if !errors.As(err, &broken) {
				t.Fatalf("want a *IntegrityError, got %T %v", err, err)
			}
			if broken.Hint() != "nothing written: the session's graph is broken; 'ctxfold verify "+dir+"' lists every fault" {
				t.Fatalf("hint %q", broken.Hint())
			}
			sameTree(t, before, tree(t, dir))
		})
	}
	// A sound session is not refused.
	dir := sessiontest.CopyFixture(t, "compacted")
	mustAppend(t, dir, store.AppendOptions{}, user("fresh", "", "hi"))
}

// Issue 18 item 6: a nodes.jsonl cut short outside ctxfold (truncate -s
// -50) is refused with the way out named, and repair takes it: the file
// ends at its last complete line, the partial line is kept in
// lost+found/, the committed length is recomputed and HEAD, which was on
// the cut line, moves to the last complete node.
func TestRepairTruncatedFile(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	path := filepath.Join(dir, store.NodesFile)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := orig[:len(orig)-50]
	writeFile(t, path, string(cut))
	_, err = store.Open(dir, store.OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "data was removed outside ctxfold; 'ctxfold repair "+dir+"' truncates it") {
		t.Fatalf("open: want the way out named, got %v", err)
	}
	if _, err := tryAppend(dir, store.AppendOptions{}, user("", "", "x")); err == nil || !strings.Contains(err.Error(), "ctxfold repair") {
		t.Fatalf("append: want the way out named, got %v", err)
	}
	warnings, err := store.Repair(context.Background(), dir, store.RepairOptions{WriteOptions: testWrite})
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	var msgs []string
	for _, w := range warnings {
		msgs = append(msgs, w.String())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"moved the ", "bytes of a partial last line to ", "the committed length is now", `HEAD "a7" was among the removed bytes; HEAD is now "t6"`} {
		if !strings.Contains(all, want) {
			t.Errorf("repair said %q, want %q", all, want)
		}
	}
	now, _ := os.ReadFile(path)
	lost, _ := filepath.Glob(filepath.Join(dir, store.LostFound, "nodes-truncated-*.jsonl"))
	if len(lost) != 1 {
		t.Fatalf("lost+found: %v", lost)
	}
	kept, _ := os.ReadFile(lost[0])
	if !bytes.Equal(append(append([]byte{}, now...), kept...), cut) {
		t.Fatal("the truncated file is not the repaired file plus what lost+found/ keeps")
	}
	s := mustOpen(t, dir)
	if s.Meta.Head != "t6" || *s.Meta.NodesBytes != int64(len(now)) || len(s.Warnings) != 0 {
		t.Fatalf("after repair: head %q nodes_bytes %d (file %d) warnings %v", s.Meta.Head, *s.Meta.NodesBytes, len(now), s.Warnings)
	}
	mustAppend(t, dir, store.AppendOptions{}, user("", "", "next"))
}

// Issue 18 item 16: in a batch an absent predecessor follows the node
// before (or HEAD) while an explicit null is a root, as in nodes.jsonl, so
// a spawned sub-agent root copied from a session stays a root.
func TestBatchNullPredecessorIsRoot(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	batch := `{"id":"follows-head","role":"user","content":"next"}
{"id":"sub","predecessor":null,"caller":"a7","role":"user","content":"a sub-agent's task"}
{"id":"sub-a","role":"assistant","content":"done"}
`
	nodes, _, roots, err := transcript.ReadBatch(strings.NewReader(batch), "batch.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, true, false}; !reflect.DeepEqual(roots, want) {
		t.Fatalf("roots %v, want %v", roots, want)
	}
	res := mustAppend(t, dir, store.AppendOptions{Roots: roots}, nodes...)
	s := mustOpen(t, dir)
	for id, pred := range map[string]string{"follows-head": "a7", "sub": "", "sub-a": "sub"} {
		r, ok := s.RefByID(id)
		if !ok || r.Predecessor != pred {
			t.Errorf("%s: predecessor %q, want %q", id, r.Predecessor, pred)
		}
	}
	if res.Head != "follows-head" {
		t.Errorf("HEAD %q, want follows-head (a root with a caller never moves it)", res.Head)
	}
}

// Issue 18 item 7: invalid UTF-8 is refused, never stored as U+FFFD: in a
// node given to Append (append --content), and in events.jsonl, which
// verify used to pass.
func TestInvalidUTF8Refused(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	before := tree(t, dir)
	_, err := tryAppend(dir, store.AppendOptions{}, user("", "", "bad \xff byte"))
	var ve *store.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "invalid UTF-8 in content") {
		t.Fatalf("append: got %v", err)
	}
	sameTree(t, before, tree(t, dir))
	n := user("", "", "ok")
	n.SetMeta("note", "x")
	n.Metadata["note"] = []byte("\"\xfe\"")
	if _, err := tryAppend(dir, store.AppendOptions{}, n); err == nil || !strings.Contains(err.Error(), "invalid UTF-8 in metadata") {
		t.Fatalf("append with raw metadata: got %v", err)
	}

	writeFile(t, filepath.Join(dir, store.EventsFile), "{\"type\":\"note\",\"text\":\"a\xffb\"}\n")
	s := mustOpen(t, dir)
	_, err = s.ReadEvents(func(store.EventLine) error { return nil })
	if err == nil || err.Error() != filepath.Join(dir, store.EventsFile)+":1: invalid UTF-8 at byte 25" {
		t.Fatalf("events: got %v", err)
	}
}

// ReadRegularFile, which estimate's cache key reads session.json with,
// refuses a FIFO at once instead of blocking on it.
func TestReadRegularFileRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.json")
	if err := sessiontest.MakeFIFO(t, path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := store.ReadRegularFile(path); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrNotRegular) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("blocked on the FIFO")
	}
}
