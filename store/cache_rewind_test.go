package store_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// chainHolds checks docs/FORMAT.md §1's hash chain: nodes_sha256 is the
// SHA-256 of exactly the committed bytes.
func chainHolds(t testing.TB, dir string) store.Meta {
	t.Helper()
	m, err := store.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, store.NodesFile))
	if err != nil {
		t.Fatal(err)
	}
	if m.NodesBytes == nil || *m.NodesBytes > int64(len(data)) {
		t.Fatalf("nodes_bytes %v, file %d bytes", m.NodesBytes, len(data))
	}
	sum := sha256.Sum256(data[:*m.NodesBytes])
	if got := hex.EncodeToString(sum[:]); got != m.NodesSHA256 {
		t.Fatalf("nodes_sha256 %s, but the %d committed bytes hash to %s", m.NodesSHA256, *m.NodesBytes, got)
	}
	return m
}

func TestHashChainExtendedByEveryWrite(t *testing.T) {
	dir := newSession(t)
	chainHolds(t, dir)
	mustAppend(t, dir, store.AppendOptions{}, user("a", "", "one"))
	chainHolds(t, dir)
	mustAppend(t, dir, store.AppendOptions{}, asst("b", "a", "two"), user("c", "b", "three"))
	m := chainHolds(t, dir)
	if m.NodesStat == nil || m.NodesStat.Size != *m.NodesBytes {
		t.Fatalf("nodes_stat %+v after a commit of %d bytes", m.NodesStat, *m.NodesBytes)
	}
}

// A session without the chain (an older ctxfold, a hand-written one) gets
// it from its first write.
func TestHashChainStartsOnOldSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	os.MkdirAll(dir, 0o755)
	writeFile(t, filepath.Join(dir, store.MetaFile), `{"format_version":1,"head":"a"}`)
	writeFile(t, filepath.Join(dir, store.NodesFile), `{"id":"a","role":"user","content":"hi"}`+"\n")
	mustAppend(t, dir, store.AppendOptions{}, asst("b", "", "hello"))
	chainHolds(t, dir)
}

// An outside edit of committed bytes that keeps their length is caught by
// the chain: the next write warns and rebases it on the file as it is.
func TestHashChainRebasedAfterOutsideEdit(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("a", "", "one"))
	path := filepath.Join(dir, store.NodesFile)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte("one"), []byte("uno"), 1), 0o644)
	w, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
		_, err := tx.Append([]transcript.Node{asst("b", "a", "two")}, store.AppendOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 1 || !strings.Contains(w[0].Msg, "changed outside ctxfold") {
		t.Fatalf("warnings %v", w)
	}
	chainHolds(t, dir)
}

func cacheSession(t testing.TB) string {
	t.Helper()
	dir := newSession(t)
	if err := store.MarkCache(dir, testWrite); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRewindCache(t *testing.T) {
	dir := cacheSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("a", "", "one"), asst("b", "a", "two"))
	at, _ := store.ReadMeta(dir)
	before := snapshot(t, dir)
	mustAppend(t, dir, store.AppendOptions{}, user("c", "b", "three"))
	mustAppend(t, dir, store.AppendOptions{}, asst("d", "c", "four"))
	if err := store.RewindCache(t.Context(), dir, at, testWrite); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	if !bytes.Equal(after[store.NodesFile], before[store.NodesFile]) {
		t.Fatalf("nodes.jsonl after the rewind:\n%s\nwant:\n%s", after[store.NodesFile], before[store.NodesFile])
	}
	m := chainHolds(t, dir)
	if m.Head != "b" || *m.NodesBytes != *at.NodesBytes || !m.Cache || m.NodesStat == nil || m.NodesStat.Size != *m.NodesBytes {
		t.Fatalf("meta after the rewind: %+v", m)
	}
	s := mustOpen(t, dir)
	if got := strings.Join(ids(s), " "); got != "a b" || len(s.Warnings) != 0 {
		t.Fatalf("nodes %q, warnings %v", got, s.Warnings)
	}
	// The rewound session takes the dropped nodes again.
	mustAppend(t, dir, store.AppendOptions{}, user("c", "b", "three again"))
	chainHolds(t, dir)
}

func TestRewindCacheRefuses(t *testing.T) {
	plain := newSession(t)
	mustAppend(t, plain, store.AppendOptions{}, user("a", "", "one"))
	atPlain, _ := store.ReadMeta(plain)
	mustAppend(t, plain, store.AppendOptions{}, asst("b", "a", "two"))
	before := snapshot(t, plain)
	if err := store.RewindCache(t.Context(), plain, atPlain, testWrite); err == nil || !strings.Contains(err.Error(), "not a cache session") {
		t.Fatalf("rewind of a user's session: %v", err)
	}
	sameSnapshot(t, before, snapshot(t, plain))

	dir := cacheSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("a", "", "one"))
	mustAppend(t, dir, store.AppendOptions{}, asst("b", "a", "two"))
	later, _ := store.ReadMeta(dir)
	// Another session's commit of the same length: "uno" for "one".
	other := cacheSession(t)
	mustAppend(t, other, store.AppendOptions{}, user("a", "", "uno"))
	foreign, _ := store.ReadMeta(other)
	mustAppend(t, dir, store.AppendOptions{}, user("c", "b", "three"))
	tampered := later
	tampered.NodesHashState = foreign.NodesHashState
	noChain := later
	noChain.NodesHashState, noChain.NodesSHA256 = "", ""
	current, _ := store.ReadMeta(dir)
	ahead := current
	n := *current.NodesBytes + 10
	ahead.NodesBytes = &n
	before = snapshot(t, dir)
	for name, to := range map[string]store.Meta{"foreign": foreign, "tampered": tampered, "no chain": noChain, "ahead": ahead} {
		err := store.RewindCache(t.Context(), dir, to, testWrite)
		var ve *store.ValidationError
		if !errorsAs(err, &ve) || !strings.Contains(err.Error(), "rewind to") {
			t.Fatalf("%s: %v", name, err)
		}
		sameSnapshot(t, before, snapshot(t, dir))
	}
}

// TestRewindCrashAtRandomMoments SIGKILLs a process that appends and
// rewinds a cache session in a loop. After every kill the session opens,
// its committed bytes match nodes_sha256, it holds whole rounds only, and
// the next append works.
func TestRewindCrashAtRandomMoments(t *testing.T) {
	rounds := 60
	if !longRun() {
		rounds = 20
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	dir := cacheSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("root", "", "start"))
	root, _ := store.ReadMeta(dir)
	saveRootMeta(t, dir, root)
	var active int
	// The kill comes within window after the helper is ready; a round in
	// which the helper wrote nothing (a loaded machine starts it slowly)
	// widens it, so the rounds keep landing inside writes.
	window := 20 * time.Millisecond
	for r := range rounds {
		cmd := helperCmd(t, "rewind", dir, strconv.Itoa(r))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		pipe, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(pipe)
		if line, err := br.ReadString('\n'); line != "ready\n" {
			t.Fatalf("round %d: helper said %q (%v): %s", r, line, err, stderr.String())
		}
		time.Sleep(time.Duration(rng.Int64N(int64(window))))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		rest, _ := io.ReadAll(br)
		cmd.Wait()
		if len(rest) > 0 {
			active++
		} else {
			window = min(2*window, time.Second)
		}
		s := mustOpen(t, dir)
		// The helper's rounds add x then y on root and rewind to root:
		// whatever the kill cut, the committed nodes are a prefix of that.
		got := strings.Join(ids(s), " ")
		if !strings.HasPrefix(got, "root") || strings.Count(got, " ") > 2 {
			t.Fatalf("round %d: nodes %q", r, got)
		}
		s.Close()
		if err := store.RewindCache(t.Context(), dir, rootMeta(t, dir), testWrite); err != nil {
			t.Fatalf("round %d: rewind after the kill: %v", r, err)
		}
		chainHolds(t, dir)
		mustAppend(t, dir, store.AppendOptions{}, user(fmt.Sprintf("check-%d", r), "root", "after the kill"))
		chainHolds(t, dir)
		if err := store.RewindCache(t.Context(), dir, rootMeta(t, dir), testWrite); err != nil {
			t.Fatalf("round %d: rewind of the check: %v", r, err)
		}
	}
	if active < rounds/4 {
		t.Fatalf("only %d of %d rounds wrote before the kill", active, rounds)
	}
}

// rootMeta is the state the rewind helper rewinds to, kept beside the
// session by the test (the commit holding only "root").
func rootMeta(t testing.TB, dir string) store.Meta {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "root-meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m store.Meta
	if err := m.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return m
}

func saveRootMeta(t testing.TB, dir string, m store.Meta) {
	t.Helper()
	data, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "root-meta.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A write that appends nothing still restarts the chain it warned about.
func TestHashChainRebasedByAnyWrite(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("a", "", "one"))
	path := filepath.Join(dir, store.NodesFile)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte("one"), []byte("uno"), 1), 0o644)
	for i, want := range []int{1, 0} {
		w, err := store.Update(t.Context(), dir, testWrite, func(*store.Tx) error { return nil })
		if err != nil || len(w) != want {
			t.Fatalf("write %d: %v, warnings %v", i, err, w)
		}
	}
	chainHolds(t, dir)
}

// TestUpdateFrom: the rewind and the write are one transaction — fn sees
// the session already cut back (the dropped nodes gone, HEAD the earlier
// commit's) and appends after it; a refused rewind is a *RewindError
// around the refusal, fn does not run, and every file is left as it was.
func TestUpdateFrom(t *testing.T) {
	dir := cacheSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("a", "", "one"), asst("b", "a", "two"))
	at, _ := store.ReadMeta(dir)
	mustAppend(t, dir, store.AppendOptions{}, user("c", "b", "three"))
	other := cacheSession(t)
	mustAppend(t, other, store.AppendOptions{}, user("a", "", "uno"), asst("b", "a", "two"))
	foreign, _ := store.ReadMeta(other)
	before := snapshot(t, dir)
	ran := false
	_, err := store.UpdateFrom(t.Context(), dir, foreign, testWrite, func(tx *store.Tx) error { ran = true; return nil })
	var re *store.RewindError
	var ve *store.ValidationError
	if !errorsAs(err, &re) || !errorsAs(err, &ve) || !strings.Contains(err.Error(), "rewind to") || ran {
		t.Fatalf("refused rewind: %v (fn ran: %v)", err, ran)
	}
	sameSnapshot(t, before, snapshot(t, dir))

	_, err = store.UpdateFrom(t.Context(), dir, at, testWrite, func(tx *store.Tx) error {
		s := tx.Session()
		if _, ok := s.Lookup("c"); ok || s.Meta.Head != "b" {
			t.Errorf("fn sees the session before the cut: head %q", s.Meta.Head)
		}
		_, err := tx.Append([]transcript.Node{user("c2", "b", "three again")}, store.AppendOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m := chainHolds(t, dir)
	s := mustOpen(t, dir)
	if got := strings.Join(ids(s), " "); got != "a b c2" || m.Head != "c2" || !m.Cache || len(s.Warnings) != 0 {
		t.Fatalf("nodes %q, head %q, cache %v, warnings %v", got, m.Head, m.Cache, s.Warnings)
	}
}
