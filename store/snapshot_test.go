package store

import (
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/transcript"
)

// CTXFOLD_TEST_SNAPSHOT_BYTES=N makes every writer in the test binary
// (the crash test's helper processes too) keep a snapshot from N
// committed bytes on and rewrite it every N bytes.
func init() {
	if n, err := strconv.ParseInt(os.Getenv("CTXFOLD_TEST_SNAPSHOT_BYTES"), 10, 64); err == nil && n > 0 {
		snapshotMin, snapshotDelta = n, n
	}
}

var snapWrite = WriteOptions{LockTimeout: 2 * time.Second, Command: "test"}

// smallSnapshots makes writers snapshot from n bytes on, for one test.
func smallSnapshots(t *testing.T, n int64) {
	t.Helper()
	oldMin, oldDelta := snapshotMin, snapshotDelta
	snapshotMin, snapshotDelta = n, n
	t.Cleanup(func() { snapshotMin, snapshotDelta = oldMin, oldDelta })
}

// fullOpen opens dir with the snapshot ignored: the reference index.
func fullOpen(t *testing.T, dir string) *Session {
	t.Helper()
	snapshotsOff = true
	defer func() { snapshotsOff = false }()
	s, err := Open(dir, OpenOptions{})
	if err != nil {
		t.Fatalf("full index: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if s.stats.Snapshot {
		t.Fatal("the reference index came from the snapshot")
	}
	return s
}

func openStats(t *testing.T, dir string) (*Session, OpenStats) {
	t.Helper()
	s, err := Open(dir, OpenOptions{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, s.OpenStats()
}

// sameIndex fails unless a and b answer every accessor alike.
func sameIndex(t *testing.T, a, b *Session) {
	t.Helper()
	if a.Len() != b.Len() || a.CommittedBytes != b.CommittedBytes || a.TailBytes != b.TailBytes || a.unterminated != b.unterminated {
		t.Fatalf("len %d/%d committed %d/%d tail %d/%d unterminated %v/%v", a.Len(), b.Len(), a.CommittedBytes, b.CommittedBytes, a.TailBytes, b.TailBytes, a.unterminated, b.unterminated)
	}
	if !reflect.DeepEqual(a.Duplicates, b.Duplicates) || !reflect.DeepEqual(a.Warnings, b.Warnings) {
		t.Fatalf("duplicates %v / %v, warnings %v / %v", a.Duplicates, b.Duplicates, a.Warnings, b.Warnings)
	}
	for i := range a.Len() {
		ra, rb := a.Ref(i), b.Ref(i)
		if !reflect.DeepEqual(ra, rb) {
			t.Fatalf("node %d:\n%+v\n%+v", i, ra, rb)
		}
		if a.LineAt(i) != b.LineAt(i) || a.PredIndex(i) != b.PredIndex(i) || a.CallerIndex(i) != b.CallerIndex(i) || a.RoleAt(i) != b.RoleAt(i) || a.IsSummary(i) != b.IsSummary(i) {
			t.Fatalf("node %d: accessors differ", i)
		}
		if j, ok := a.Lookup(ra.ID); !ok || j != i {
			t.Fatalf("Lookup(%q) = %d, %v in the first index", ra.ID, j, ok)
		}
		if j, ok := b.Lookup(ra.ID); !ok || j != i {
			t.Fatalf("Lookup(%q) = %d, %v in the second index", ra.ID, j, ok)
		}
		if !reflect.DeepEqual(a.Ref(i).ToolFacts(), b.Ref(i).ToolFacts()) {
			t.Fatalf("node %d: tool facts differ", i)
		}
	}
	for _, id := range []string{"ghost", "", "nope", "n", "summary_"} {
		_, okA := a.Lookup(id)
		_, okB := b.Lookup(id)
		if okA != okB {
			t.Fatalf("Lookup(%q): %v / %v", id, okA, okB)
		}
	}
	if fmt.Sprint(a.checkIntegrity()) != fmt.Sprint(b.checkIntegrity()) {
		t.Fatalf("integrity: %v / %v", a.checkIntegrity(), b.checkIntegrity())
	}
}

// brokenLines is a hand-written nodes.jsonl with every index feature:
// duplicates, a dangling predecessor and caller, a link forward to a later
// line, summaries with covers lists and spans, names, a CRLF line, and a node with more
// tool calls than a record's counts hold (manyIDs).
func brokenLines(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString(`{"id":"r0","predecessor":null,"role":"system","content":"root"}` + "\n")
	prev := "r0"
	for i := 1; i < n; i++ {
		id := fmt.Sprintf("n%d", i)
		switch rng.IntN(12) {
		case 0:
			fmt.Fprintf(&b, `{"id":"%s","predecessor":"ghost-%d","role":"user","content":"dangling"}`+"\n", id, i)
		case 1:
			fmt.Fprintf(&b, `{"id":"%s","predecessor":"%s","role":"user","content":"duplicate"}`+"\n", prev, prev)
			continue
		case 2:
			fmt.Fprintf(&b, `{"id":"%s","predecessor":"n%d","role":"user","content":"forward"}`+"\r\n", id, i+1)
		case 3:
			// Format version 1's list, or version 2's span (docs/FORMAT.md §4).
			covers := fmt.Sprintf(`"covers_ids":["%s"]`, prev)
			if i%2 == 1 {
				covers = fmt.Sprintf(`"covers_span":{"first":"%s","last":"%s","count":%d}`, prev, prev, i)
			}
			fmt.Fprintf(&b, `{"id":"summary_%d","predecessor":"r0","role":"user","name":"context/summary","content":"[Previous conversation summary]\nx","metadata":{"compaction":true,%s}}`+"\n", i, covers)
			continue
		case 4:
			fmt.Fprintf(&b, `{"id":"%s","predecessor":"%s","caller":"gone","role":"tool","name":"bash","tool_call_id":"c%d","content":"ok"}`+"\n", id, prev, i)
		case 5:
			fmt.Fprintf(&b, `{"id":"%s","predecessor":"%s","role":"assistant","content":"","tool_calls":[{"id":"c%d","name":"f","arguments":{}},{"id":"d%d","name":"g","arguments":{}}]}`+"\n", id, prev, i, i)
		default:
			fmt.Fprintf(&b, `{"id":"%s","predecessor":"%s","role":"assistant","content":"turn %d"}`+"\n", id, prev, i)
		}
		prev = id
	}
	var calls []string
	for k := range manyIDs + 5 {
		calls = append(calls, fmt.Sprintf(`{"id":"m%d","name":"f","arguments":{}}`, k))
	}
	fmt.Fprintf(&b, `{"id":"many","predecessor":"%s","role":"assistant","content":"","tool_calls":[%s]}`+"\n", prev, strings.Join(calls, ","))
	return b.String()
}

// handSession writes a session from raw lines with its committed length.
func handSession(t *testing.T, lines string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, NodesFile), []byte(lines), 0o644)
	os.WriteFile(filepath.Join(dir, MetaFile), []byte(fmt.Sprintf(`{"format_version":1,"head":"r0","nodes_bytes":%d}`, len(lines))), 0o644)
	return dir
}

// writeTx runs one writer transaction (fn may be nil: a write that only
// opens, which still leaves a snapshot when one is due).
func writeTx(t *testing.T, dir string, fn func(tx *Tx) error) []Warning {
	t.Helper()
	opts := snapWrite
	if m, err := ReadMeta(dir); err == nil && m.Cache {
		opts.CacheWriter = true // as the live cache writes its sessions
	}
	w, err := Update(context.Background(), dir, opts, func(tx *Tx) error {
		if fn == nil {
			return nil
		}
		return fn(tx)
	})
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	return w
}

func TestSnapshotEquivalentOnBrokenSessions(t *testing.T) {
	smallSnapshots(t, 1)
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 9))
		dir := handSession(t, brokenLines(rng, 200+rng.IntN(300)))
		writeTx(t, dir, nil)
		s, st := openStats(t, dir)
		if !st.Snapshot || st.Delta != 0 {
			t.Fatalf("seed %d: snapshot not used: %+v", seed, st)
		}
		sameIndex(t, s, fullOpen(t, dir))
		// A delta: nodes after the snapshot, one of them the id a
		// dangling link of the snapshot names.
		snapshotMin = 1 << 40
		writeTx(t, dir, func(tx *Tx) error {
			_, err := tx.Append([]transcript.Node{
				{ID: "ghost-" + strconv.Itoa(findGhost(tx.s)), Role: transcript.RoleUser, Content: transcript.TextContent("found")},
				{ID: "late", Role: transcript.RoleAssistant, Content: transcript.TextContent("after")},
			}, AppendOptions{AllowBrokenGraph: true, RootFirst: true})
			return err
		})
		s, st = openStats(t, dir)
		if !st.Snapshot || st.Delta == 0 {
			t.Fatalf("seed %d: snapshot not used with a delta: %+v", seed, st)
		}
		sameIndex(t, s, fullOpen(t, dir))
		snapshotMin = 1
	}
}

func findGhost(s *Session) int {
	for i := range s.Len() {
		if p := s.Ref(i).Predecessor; strings.HasPrefix(p, "ghost-") && s.PredIndex(i) == MissingLink {
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "ghost-"))
			return n
		}
	}
	return -1
}

// soundSession appends n turns (with tool calls and results, a summary
// and a pin) through the writer, snapshotting every snapEvery bytes.
func soundSession(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := Init(dir, "gpt-4o", snapWrite); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		writeTx(t, dir, func(tx *Tx) error {
			call := fmt.Sprintf("c%d", i)
			nodes := []transcript.Node{
				{ID: fmt.Sprintf("u%d", i), Role: transcript.RoleUser, Content: transcript.TextContent("question " + strconv.Itoa(i))},
				{ID: fmt.Sprintf("a%d", i), Role: transcript.RoleAssistant, Content: transcript.TextContent(""), ToolCalls: []transcript.ToolCall{{ID: call, Name: "bash"}}},
				{ID: fmt.Sprintf("t%d", i), Role: transcript.RoleTool, Name: "bash", ToolCallID: call, Content: transcript.TextContent("ok")},
				{ID: fmt.Sprintf("b%d", i), Role: transcript.RoleAssistant, Content: transcript.TextContent("done")},
			}
			if i == 0 {
				nodes[0].Predecessor = ""
			}
			_, err := tx.Append(nodes, AppendOptions{})
			if err == nil && i%5 == 4 {
				err = tx.Pin([]string{fmt.Sprintf("u%d", i)}, true, "")
			}
			return err
		})
	}
	return dir
}

func TestSnapshotUsedAfterAppends(t *testing.T) {
	smallSnapshots(t, 2048)
	dir := soundSession(t, 40)
	s, st := openStats(t, dir)
	if !st.Snapshot || st.Delta >= snapshotDelta || st.Covered == 0 {
		t.Fatalf("after appends: %+v", st)
	}
	sameIndex(t, s, fullOpen(t, dir))
	// The writer skips the whole-graph check: the snapshot vouches.
	writeTx(t, dir, func(tx *Tx) error {
		if !tx.s.stats.Snapshot || !tx.s.snapSound {
			t.Fatalf("the writer did not open via a sound snapshot: %+v", tx.s.stats)
		}
		_, err := tx.Append([]transcript.Node{{ID: "last", Role: transcript.RoleUser, Content: transcript.TextContent("end")}}, AppendOptions{})
		return err
	})
	chainOK(t, dir)
}

// chainOK: nodes_sha256 is the digest of the committed bytes.
func chainOK(t *testing.T, dir string) {
	t.Helper()
	m, _ := readMeta(dir)
	f, err := os.Open(filepath.Join(dir, NodesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := newChain().extend(f, 0, *m.NodesBytes)
	if err != nil || c.sum() != m.NodesSHA256 {
		t.Fatalf("chain: %v, %s vs %s", err, c.sum(), m.NodesSHA256)
	}
}

// A broken session is refused through a snapshot exactly as without one.
func TestSnapshotBrokenSessionRefusedAlike(t *testing.T) {
	smallSnapshots(t, 1)
	dir := handSession(t, brokenLines(rand.New(rand.NewPCG(1, 2)), 100))
	writeTx(t, dir, nil)
	appendOne := func() error {
		_, err := Update(context.Background(), dir, snapWrite, func(tx *Tx) error {
			_, err := tx.Append([]transcript.Node{{ID: "x", Role: transcript.RoleUser, Content: transcript.TextContent("x")}}, AppendOptions{})
			return err
		})
		return err
	}
	withSnap := appendOne()
	if _, st := openStats(t, dir); !st.Snapshot {
		t.Fatalf("no snapshot: %+v", st)
	}
	dropSnapshot(dir)
	without := appendOne()
	if withSnap == nil || fmt.Sprint(withSnap) != fmt.Sprint(without) {
		t.Fatalf("with a snapshot: %v\nwithout: %v", withSnap, without)
	}
}

// rejected checks that dir opens from the full index, equal to the
// reference, with a reason.
func rejected(t *testing.T, dir, what string) {
	t.Helper()
	s, st := openStats(t, dir)
	if st.Snapshot || st.Rejected == "" {
		t.Fatalf("%s: the snapshot was used or not rejected: %+v", what, st)
	}
	t.Logf("%s: rejected: %s", what, st.Rejected)
	sameIndex(t, s, fullOpen(t, dir))
}

func TestSnapshotRejected(t *testing.T) {
	smallSnapshots(t, 2048)
	fresh := func() string {
		dir := soundSession(t, 30)
		if _, st := openStats(t, dir); !st.Snapshot {
			t.Fatalf("no snapshot to reject: %+v", st)
		}
		return dir
	}
	nodes := func(dir string) string { return filepath.Join(dir, NodesFile) }

	dir := fresh()
	data, _ := os.ReadFile(nodes(dir))
	os.WriteFile(nodes(dir), []byte(strings.Replace(string(data), "question 1\"", "QUESTION 1\"", 1)), 0o644)
	rejected(t, dir, "an edit of committed bytes of the same length")
	w := writeTx(t, dir, func(tx *Tx) error {
		_, err := tx.Append([]transcript.Node{{ID: "more", Role: transcript.RoleUser, Content: transcript.TextContent("x")}}, AppendOptions{})
		return err
	})
	if len(w) != 1 || !strings.Contains(w[0].Msg, "changed outside ctxfold") {
		t.Fatalf("the writer after an edit: %v", w)
	}
	chainOK(t, dir)

	dir = fresh()
	os.Truncate(nodes(dir), 100)
	if _, err := Open(dir, OpenOptions{}); err == nil || !strings.Contains(err.Error(), "data was removed outside ctxfold") {
		t.Fatalf("truncated nodes.jsonl: %v", err)
	}

	snap := func(dir string) string { return snapshotPath(dir) }
	dir = fresh()
	b, _ := os.ReadFile(snap(dir))
	b[len(b)/2] ^= 0x40
	os.WriteFile(snap(dir), b, 0o644)
	rejected(t, dir, "a corrupted snapshot")

	dir = fresh()
	st, _ := os.Stat(snap(dir))
	os.Truncate(snap(dir), st.Size()-snapPage)
	rejected(t, dir, "a truncated snapshot")

	dir = fresh()
	elsewhere := filepath.Join(t.TempDir(), "index.snap")
	os.Rename(snap(dir), elsewhere)
	os.Symlink(elsewhere, snap(dir))
	rejected(t, dir, "a snapshot replaced by a symlink")

	// session.json restored from an older copy: its committed length is
	// below what the snapshot covers.
	dir = fresh()
	old, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	for i := range 30 {
		writeTx(t, dir, func(tx *Tx) error {
			_, err := tx.Append([]transcript.Node{{ID: fmt.Sprintf("later%d", i), Role: transcript.RoleUser, Content: transcript.TextContent(strings.Repeat("y", 100))}}, AppendOptions{})
			return err
		})
	}
	if _, st := openStats(t, dir); !st.Snapshot {
		t.Fatal("no snapshot after the later writes")
	}
	os.WriteFile(filepath.Join(dir, MetaFile), old, 0o644)
	s, st2 := openStats(t, dir)
	if st2.Snapshot || st2.Rejected == "" {
		t.Fatalf("a snapshot past the restored committed length was used: %+v", st2)
	}
	sameIndex(t, s, fullOpen(t, dir))
}

// A rewind keeps the snapshot when it covers a prefix of the cut, and
// drops it when it covers more.
func TestRewindKeepsOrDropsSnapshot(t *testing.T) {
	smallSnapshots(t, 2048)
	dir := soundSession(t, 20)
	if err := MarkCache(dir, snapWrite); err != nil {
		t.Fatal(err)
	}
	_, st := openStats(t, dir)
	if !st.Snapshot {
		t.Fatalf("no snapshot: %+v", st)
	}
	// A commit after the snapshot, and more after it.
	snapshotMin = 1 << 40
	writeTx(t, dir, func(tx *Tx) error {
		_, err := tx.Append([]transcript.Node{{ID: "keep", Role: transcript.RoleUser, Content: transcript.TextContent("k")}}, AppendOptions{})
		return err
	})
	at, _ := readMeta(dir)
	for i := range 3 {
		writeTx(t, dir, func(tx *Tx) error {
			_, err := tx.Append([]transcript.Node{{ID: fmt.Sprintf("drop%d", i), Role: transcript.RoleUser, Content: transcript.TextContent("d")}}, AppendOptions{})
			return err
		})
	}
	if err := RewindCache(context.Background(), dir, at, snapWrite); err != nil {
		t.Fatal(err)
	}
	s, st := openStats(t, dir)
	if !st.Snapshot || st.Covered > *at.NodesBytes {
		t.Fatalf("after a rewind past the snapshot's end: %+v", st)
	}
	sameIndex(t, s, fullOpen(t, dir))
	// A rewind below what the snapshot covers drops it.
	first, _ := readMeta(dir)
	*first.NodesBytes = 0
	first.Head, first.ActiveSummaryID, first.ActiveSummaryText = "", "", ""
	first.setChain(newChain())
	if err := RewindCache(context.Background(), dir, first, snapWrite); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(snapshotPath(dir)); !os.IsNotExist(err) {
		t.Fatalf("the snapshot past the cut is still there: %v", err)
	}
	if s, _ := openStats(t, dir); s.Len() != 0 {
		t.Fatalf("%d nodes after a rewind to the empty session", s.Len())
	}
}

// The rewind of a cache session snapshots at the cut once
// snapshotRewindDelta bytes lie past what the snapshot covers (the live
// refresh's next rewind keeps that one); other writes keep snapshotDelta.
func TestRewindSnapshotsAtTheCut(t *testing.T) {
	smallSnapshots(t, 2048)
	dir := soundSession(t, 20)
	if err := MarkCache(dir, snapWrite); err != nil {
		t.Fatal(err)
	}
	oldRewind := snapshotRewindDelta
	t.Cleanup(func() { snapshotRewindDelta = oldRewind })
	snapshotDelta, snapshotRewindDelta = 1<<20, 1
	writeTx(t, dir, func(tx *Tx) error {
		_, err := tx.Append([]transcript.Node{{ID: "keep", Role: transcript.RoleUser, Content: transcript.TextContent("k")}}, AppendOptions{})
		return err
	})
	at, _ := readMeta(dir)
	for i := range 3 {
		writeTx(t, dir, func(tx *Tx) error {
			_, err := tx.Append([]transcript.Node{{ID: fmt.Sprintf("drop%d", i), Role: transcript.RoleUser, Content: transcript.TextContent("d")}}, AppendOptions{})
			return err
		})
	}
	if _, st := openStats(t, dir); !st.Snapshot || st.Covered >= *at.NodesBytes {
		t.Fatalf("before the rewind: %+v", st)
	}
	if err := RewindCache(context.Background(), dir, at, snapWrite); err != nil {
		t.Fatal(err)
	}
	s, st := openStats(t, dir)
	if !st.Snapshot || st.Covered != *at.NodesBytes || st.Delta != 0 {
		t.Fatalf("after the rewind: %+v, want a snapshot of the %d bytes kept", st, *at.NodesBytes)
	}
	sameIndex(t, s, fullOpen(t, dir))
	chainOK(t, dir)
	// An append is no rewind: it keeps the snapshotDelta of any session.
	writeTx(t, dir, func(tx *Tx) error {
		_, err := tx.Append([]transcript.Node{{ID: "more", Role: transcript.RoleUser, Content: transcript.TextContent("m")}}, AppendOptions{})
		return err
	})
	if _, st := openStats(t, dir); st.Covered != *at.NodesBytes {
		t.Fatalf("after an append: %+v, want the snapshot of the rewind", st)
	}
}

// SnapshotAtCheckpoint snapshots in the middle of a write, at the commit
// so far, once snapshotRewindDelta bytes lie past the snapshot, and the
// end of the write then keeps it (the next rewind's cut).
func TestSnapshotAtCheckpoint(t *testing.T) {
	smallSnapshots(t, 2048)
	dir := soundSession(t, 20)
	oldRewind := snapshotRewindDelta
	t.Cleanup(func() { snapshotRewindDelta = oldRewind })
	for _, c := range []struct {
		name  string
		delta int64
		moved bool
	}{{"too little past the snapshot", 1 << 20, false}, {"enough", 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			snapshotDelta, snapshotRewindDelta = 1<<20, c.delta
			_, before := openStats(t, dir)
			var at int64
			writeTx(t, dir, func(tx *Tx) error {
				if _, err := tx.Append([]transcript.Node{{ID: "cp-" + c.name, Role: transcript.RoleUser, Content: transcript.TextContent("k")}}, AppendOptions{}); err != nil {
					return err
				}
				at = tx.s.CommittedBytes
				tx.SnapshotAtCheckpoint()
				_, err := tx.Append([]transcript.Node{{ID: "tail-" + c.name, Role: transcript.RoleUser, Content: transcript.TextContent("t")}}, AppendOptions{})
				return err
			})
			s, st := openStats(t, dir)
			want := before.Covered
			if c.moved {
				want = at
			}
			if !st.Snapshot || st.Covered != want {
				t.Fatalf("snapshot covers %d bytes, want %d (%+v)", st.Covered, want, st)
			}
			sameIndex(t, s, fullOpen(t, dir))
			chainOK(t, dir)
		})
	}
}

// A snapshot of a hand-written file whose last line has no newline: the
// next append ends that line first, and the snapshot still serves.
func TestSnapshotOfUnterminatedLine(t *testing.T) {
	smallSnapshots(t, 1)
	dir := handSession(t, `{"id":"r0","predecessor":null,"role":"system","content":"root"}`+"\n"+`{"id":"a","predecessor":"r0","role":"user","content":"no newline"}`)
	writeTx(t, dir, nil)
	snapshotMin = 1 << 40
	writeTx(t, dir, func(tx *Tx) error {
		_, err := tx.Append([]transcript.Node{{ID: "b", Role: transcript.RoleAssistant, Content: transcript.TextContent("after")}}, AppendOptions{})
		return err
	})
	s, st := openStats(t, dir)
	if !st.Snapshot || st.Delta == 0 {
		t.Fatalf("not opened via the snapshot: %+v", st)
	}
	sameIndex(t, s, fullOpen(t, dir))
	if s.Len() != 3 {
		t.Fatalf("%d nodes", s.Len())
	}
}

// A snapshot altered with its checksums recomputed (crafted, not
// damaged) is refused or, when every bound holds, served without any
// accessor panicking or looping.
func TestSnapshotCraftedNeverPanics(t *testing.T) {
	smallSnapshots(t, 1)
	dir := handSession(t, brokenLines(rand.New(rand.NewPCG(5, 6)), 300))
	writeTx(t, dir, nil)
	orig, err := os.ReadFile(snapshotPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeSnapHeader(orig[:snapPage])
	if err != nil {
		t.Fatal(err)
	}
	base, err := Open(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := refIDs(base)
	base.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	served, refused, rounds := 0, 0, 120
	if !longRun() {
		rounds = 30
	}
	for range rounds {
		b := append([]byte(nil), orig...)
		sec := rng.IntN(numSections)
		if h.secLen[sec] == 0 {
			continue
		}
		for range 1 + rng.IntN(4) {
			b[h.secOff[sec]+rng.Int64N(h.secLen[sec])] ^= byte(1 + rng.IntN(255))
		}
		hh := h
		hh.secCRC[sec] = crc32.Checksum(b[h.secOff[sec]:h.secOff[sec]+h.secLen[sec]], snapCRC)
		copy(b, hh.encode())
		os.WriteFile(snapshotPath(dir), b, 0o644)
		s, err := Open(dir, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.stats.Snapshot {
			served++
			for i := range s.Len() {
				r := s.Ref(i)
				s.Lookup(r.ID)
				s.LineAt(i)
				_ = r.ToolFacts()
			}
			s.Lookup("ghost")
			_ = s.checkIntegrity()
		} else {
			// Refused: the index is read from nodes.jsonl, as it is.
			refused++
			if got := refIDs(s); !reflect.DeepEqual(got, want) {
				t.Fatalf("a refused snapshot left the index %d nodes, want the file's %d", len(got), len(want))
			}
		}
		s.Close()
	}
	t.Logf("%d of %d crafted snapshots were within bounds and served, %d refused", served, rounds, refused)
	// Both paths ran: some flips land where only bounds checks can catch
	// them (and must not panic), others are refused by the checks.
	if served == 0 || refused == 0 {
		t.Fatalf("%d crafted snapshots served, %d refused: both paths must be exercised", served, refused)
	}
}

// refIDs is the session's node ids in file order, from its index.
func refIDs(s *Session) []string {
	out := make([]string, s.Len())
	for i := range out {
		out[i] = s.Ref(i).ID
	}
	return out
}

// A touch changes the stat but not the bytes: the next write records the
// stat again, so later opens trust session.json without re-hashing.
func TestTouchRestamped(t *testing.T) {
	dir := soundSession(t, 3)
	path := filepath.Join(dir, NodesFile)
	later := time.Now().Add(time.Hour)
	os.Chtimes(path, later, later)
	m, _ := readMeta(dir)
	f, _ := os.Open(path)
	st, _ := f.Stat()
	if _, trusted, _, _ := committedChain(m, f, st, *m.NodesBytes); trusted {
		t.Fatal("the chain is trusted after a touch")
	}
	f.Close()
	writeTx(t, dir, nil)
	m, _ = readMeta(dir)
	f, _ = os.Open(path)
	defer f.Close()
	st, _ = f.Stat()
	if _, trusted, changed, _ := committedChain(m, f, st, *m.NodesBytes); !trusted || changed {
		t.Fatalf("after the next write: trusted %v, changed %v", trusted, changed)
	}
}
