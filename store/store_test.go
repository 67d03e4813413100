package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

func TestInit(t *testing.T) {
	dir := newSession(t)
	for _, name := range []string{store.MetaFile, store.NodesFile, store.EventsFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	s := mustOpen(t, dir)
	if s.Meta.FormatVersion != store.InitFormatVersion || s.Meta.Model != "gpt-4o" || s.Meta.Head != "" ||
		s.Meta.NodesBytes == nil || *s.Meta.NodesBytes != 0 || s.Meta.CreatedAt != "2026-11-30T12:00:00Z" {
		t.Fatalf("meta = %+v", s.Meta)
	}
	if _, err := store.Init(dir, "", testWrite); err == nil || !strings.Contains(err.Error(), "already a session") {
		t.Fatalf("second Init: %v", err)
	}
	// A directory holding someone's nodes.jsonl is not initialized over:
	// its lines would become an uncommitted tail.
	other := t.TempDir()
	writeFile(t, filepath.Join(other, store.NodesFile), `{"id":"x","role":"user"}`+"\n")
	if _, err := store.Init(other, "", testWrite); err == nil || !strings.Contains(err.Error(), "nodes.jsonl") {
		t.Fatalf("Init over nodes.jsonl: %v", err)
	}
}

// docs/FORMAT.md §1: append advances HEAD only on chain extension; another
// predecessor, a caller or a summary never moves it.
func TestAppendHeadRules(t *testing.T) {
	dir := newSession(t)
	res := mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"))
	if !res.HeadMoved || res.Head != "u1" {
		t.Fatalf("first root: %+v", res)
	}
	// Default predecessor is HEAD: extension advances.
	res = mustAppend(t, dir, store.AppendOptions{}, asst("a1", "", "r"))
	if !res.HeadMoved || res.Head != "a1" || mustOpen(t, dir).Ref(1).Predecessor != "u1" {
		t.Fatalf("extension: %+v", res)
	}
	// A side branch off u1 does not move HEAD.
	res = mustAppend(t, dir, store.AppendOptions{}, asst("a1b", "u1", "retry"))
	if res.HeadMoved || res.Head != "a1" {
		t.Fatalf("side branch moved HEAD: %+v", res)
	}
	// A spawned turn on HEAD does not move it either.
	spawned := user("sub1", "a1", "sub-agent task")
	spawned.Caller = "a1"
	res = mustAppend(t, dir, store.AppendOptions{}, spawned)
	if res.HeadMoved || res.Head != "a1" {
		t.Fatalf("caller moved HEAD: %+v", res)
	}
	// A batch extending HEAD advances through the whole chain; nodes without
	// a predecessor follow the node before them.
	res = mustAppend(t, dir, store.AppendOptions{}, user("u2", "", "next"), asst("a2", "", "ok"), user("u3", "", "more"))
	if !res.HeadMoved || res.Head != "u3" || !reflect.DeepEqual(res.IDs, []string{"u2", "a2", "u3"}) {
		t.Fatalf("batch: %+v", res)
	}
	s := mustOpen(t, dir)
	if r, _ := s.RefByID("a2"); r.Predecessor != "u2" {
		t.Fatalf("a2 follows %q", r.Predecessor)
	}
	// A summary is a pure insert (docs/FORMAT.md §4: no head movement).
	res = mustAppend(t, dir, store.AppendOptions{}, summaryNode("summary_1", "", "u1", "a1"))
	if res.HeadMoved || res.Head != "u3" {
		t.Fatalf("summary moved HEAD: %+v", res)
	}
	s = mustOpen(t, dir)
	if s.Meta.ActiveSummaryID != "summary_1" || s.Meta.ActiveSummaryText != "what happened" || s.Meta.Head != "u3" {
		t.Fatalf("meta = %+v", s.Meta)
	}
	// RootFirst starts a new root without moving HEAD.
	res = mustAppend(t, dir, store.AppendOptions{RootFirst: true}, user("r2", "", "new topic"))
	if res.HeadMoved || mustOpen(t, dir).Ref(s.Len()).Predecessor != "" {
		t.Fatalf("RootFirst: %+v", res)
	}
	// Generated ids and stamped times.
	res = mustAppend(t, dir, store.AppendOptions{StampTime: true}, transcript.Node{Role: transcript.RoleUser, Content: transcript.TextContent("x")})
	n, err := mustOpen(t, dir).NodeByID(res.IDs[0])
	if err != nil || !strings.HasPrefix(n.ID, "n") || len(n.ID) != 17 || n.CreatedAt != "2026-11-30T12:00:00Z" || n.Predecessor != "u3" {
		t.Fatalf("generated node %+v, %v", n, err)
	}
}

// Every rejected write changes nothing on disk.
func TestAppendRejects(t *testing.T) {
	base := func(t *testing.T) string {
		dir := newSession(t)
		call := asst("a1", "", "")
		call.ToolCalls = []transcript.ToolCall{{ID: "c1", Name: "bash"}, {ID: "c2", Name: "sql"}}
		tool := transcript.Node{ID: "t1", Role: transcript.RoleTool, ToolCallID: "c1", Content: transcript.TextContent("ok")}
		mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"), call, tool)
		return dir
	}
	toolFor := func(id, pred, call string) transcript.Node {
		return transcript.Node{ID: id, Predecessor: pred, Role: transcript.RoleTool, ToolCallID: call, Content: transcript.TextContent("r")}
	}
	withCaller := user("x", "", "")
	withCaller.Caller = "ghost"
	badSummary := func(mut func(*transcript.Node)) transcript.Node {
		n := summaryNode("summary_x", "", "u1", "a1")
		mut(&n)
		return n
	}
	for _, tc := range []struct {
		name  string
		nodes []transcript.Node
		want  string
	}{
		{"unknown predecessor", []transcript.Node{user("x", "ghost", "")}, `node "x": predecessor "ghost" not found`},
		{"unknown caller", []transcript.Node{withCaller}, `caller "ghost" not found`},
		{"duplicate id", []transcript.Node{user("u1", "", "")}, `node "u1": duplicate id: the session already has a node "u1"`},
		// Issue 30: an id is printed one per line; a newline would split it.
		{"newline in the id", []transcript.Node{toolFor("x\ny", "t1", "c2")}, `the id holds a line break ("\n" at byte 1)`},
		{"duplicate in batch", []transcript.Node{user("x", "u1", ""), user("x", "", "")}, `batch node 2 ("x"): duplicate id: the batch holds "x" twice`},
		{"text turn after an unanswered call", []transcript.Node{user("x", "t1", "next")}, `node "x": tool call(s) "c2" of "a1" have no result yet`},
		{"assistant turn after an unanswered call", []transcript.Node{asst("x", "", "more")}, `node "x": tool call(s) "c2" of "a1" have no result yet`},
		{"text turn right after the calls", []transcript.Node{user("x", "a1", "next")}, `node "x": tool call(s) "c1", "c2" of "a1" have no result yet`},
		{"text turn after an unanswered call in the batch", []transcript.Node{user("x", "u1", "q"), func() transcript.Node {
			n := asst("y", "", "")
			n.ToolCalls = []transcript.ToolCall{{ID: "c9", Name: "bash"}}
			return n
		}(), user("z", "", "next")}, `batch node 3 ("z"): tool call(s) "c9" of "y" have no result yet`},
		{"result without call", []transcript.Node{toolFor("x", "u1", "c1")}, `tool result for "c1" has no matching open tool call`},
		{"result already given", []transcript.Node{toolFor("x", "t1", "c1")}, `tool call "c1" already has a result`},
		{"result for unknown call", []transcript.Node{toolFor("x", "t1", "c9")}, `tool result for "c9" has no matching open tool call (the open calls are "c2")`},
		{"tool without call id", []transcript.Node{{ID: "x", Role: transcript.RoleTool}}, `a tool node needs tool_call_id`},
		{"call id on a user node", []transcript.Node{{ID: "x", Predecessor: "t1", Role: transcript.RoleUser, ToolCallID: "c2"}}, `only tool nodes carry tool_call_id (role is user)`},
		{"user makes tool call", []transcript.Node{{ID: "x", Role: transcript.RoleUser, ToolCalls: []transcript.ToolCall{{ID: "c", Name: "n"}}}}, `only assistant nodes make tool calls`},
		{"bad role", []transcript.Node{{ID: "x", Role: "llm"}}, `role must be system, user, assistant or tool, got "llm"`},
		{"reserved summary id", []transcript.Node{user("summary_fake", "", "")}, `reserved for summary nodes`},
		{"summary id prefix", []transcript.Node{badSummary(func(n *transcript.Node) { n.ID = "s1" })}, `a summary node's id must start with "summary_"`},
		{"summary role", []transcript.Node{badSummary(func(n *transcript.Node) { n.Role = transcript.RoleAssistant })}, `a summary node has role "user", got "assistant"`},
		{"summary name", []transcript.Node{badSummary(func(n *transcript.Node) { n.Name = "" })}, `a summary node is named "context/summary"`},
		{"summary prefix", []transcript.Node{badSummary(func(n *transcript.Node) { n.Content = transcript.TextContent("no prefix") })}, `content must begin "[Previous conversation summary]\n"`},
		{"summary covers nothing", []transcript.Node{badSummary(func(n *transcript.Node) { n.SetMeta("covers_ids", []string{}) })}, `metadata.covers_ids is empty`},
		{"summary covers missing", []transcript.Node{badSummary(func(n *transcript.Node) { n.SetMeta("covers_ids", []string{"u1", "zz"}) })}, `covers_ids[1] "zz" not found`},
		{"summary not contiguous", []transcript.Node{badSummary(func(n *transcript.Node) { n.SetMeta("covers_ids", []string{"u1", "t1"}) })}, `covers_ids is not a contiguous chain: "t1" does not follow "u1"`},
		{"summary splice point", []transcript.Node{badSummary(func(n *transcript.Node) { n.Predecessor = "u1" })}, `predecessor must be the predecessor of the first covered node (null), got "u1"`},
		{"summary caller", []transcript.Node{badSummary(func(n *transcript.Node) { n.Caller = "u1" })}, `a summary node has no caller`},
		{"summary covers_ids type", []transcript.Node{badSummary(func(n *transcript.Node) { n.SetMeta("covers_ids", "u1") })}, `metadata.covers_ids must be an array of ids`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := base(t)
			before := snapshot(t, dir)
			_, err := tryAppend(dir, store.AppendOptions{}, tc.nodes...)
			var ve *store.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a ValidationError containing %q", err, tc.want)
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
	// A summary covering another summary is refused (coverage names real
	// turns only), and nothing follows or is spawned by a summary.
	dir := base(t)
	mustAppend(t, dir, store.AppendOptions{}, summaryNode("summary_1", "", "u1", "a1"))
	_, err := tryAppend(dir, store.AppendOptions{}, summaryNode("summary_2", "", "summary_1"))
	if err == nil || !strings.Contains(err.Error(), `covers_ids[0] "summary_1" is a summary`) {
		t.Fatalf("nested summary: %v", err)
	}
	_, err = tryAppend(dir, store.AppendOptions{}, user("x", "summary_1", "after the summary"))
	if err == nil || !strings.Contains(err.Error(), `node "x": predecessor "summary_1" is a summary node`) {
		t.Fatalf("turn after a summary: %v", err)
	}
	spawned := user("y", "t1", "")
	spawned.Caller = "summary_1"
	if _, err = tryAppend(dir, store.AppendOptions{}, spawned); err == nil || !strings.Contains(err.Error(), `caller "summary_1" is a summary node`) {
		t.Fatalf("spawned by a summary: %v", err)
	}
	withCall := summaryNode("summary_3", "", "u1")
	withCall.ToolCalls = []transcript.ToolCall{{ID: "c9", Name: "x"}}
	if _, err = tryAppend(dir, store.AppendOptions{}, withCall); err == nil || !strings.Contains(err.Error(), "carries no tool calls") {
		t.Fatalf("summary with a call: %v", err)
	}
}

// docs/FORMAT.md §1: HEAD never lands on a summary or a missing id; nothing changes.
func TestSetHead(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"), asst("a1", "", "r"), summaryNode("summary_1", "", "u1"))
	for _, id := range []string{"summary_1", "nope"} {
		before := snapshot(t, dir)
		_, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error { return tx.SetHead(id) })
		var ve *store.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "HEAD unchanged") {
			t.Fatalf("SetHead(%s): %v", id, err)
		}
		sameSnapshot(t, before, snapshot(t, dir))
	}
	if _, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
		if err := tx.SetHead("u1"); err != nil {
			return err
		}
		if tx.Session().Meta.Head != "u1" {
			return fmt.Errorf("snapshot not refreshed: %q", tx.Session().Meta.Head)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if h := mustOpen(t, dir).Meta.Head; h != "u1" {
		t.Fatalf("HEAD = %q", h)
	}
	// UpdateMeta may not move HEAD (one mover).
	_, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
		return tx.UpdateMeta(func(m *store.Meta) { m.Head = "a1" })
	})
	if err == nil || mustOpen(t, dir).Meta.Head != "u1" {
		t.Fatalf("UpdateMeta moved HEAD: %v", err)
	}
}

// A hand-written nodes.jsonl without a final newline: the next append must
// not glue its node onto the last line.
func TestAppendAfterUnterminatedLine(t *testing.T) {
	dir := newSession(t)
	writeFile(t, filepath.Join(dir, store.NodesFile), `{"id":"u1","predecessor":null,"role":"user","content":"x"}`)
	writeFile(t, filepath.Join(dir, store.MetaFile), `{"format_version":1,"head":"u1"}`)
	mustAppend(t, dir, store.AppendOptions{}, asst("a1", "", "y"))
	mustAppend(t, dir, store.AppendOptions{}, user("u2", "", "z"))
	s := mustOpen(t, dir)
	if got := strings.Join(ids(s), ","); got != "u1,a1,u2" || s.Meta.Head != "u2" {
		t.Fatalf("ids %s head %s", got, s.Meta.Head)
	}
	n, err := s.NodeByID("a1")
	if err != nil || n.Content.Text != "y" {
		t.Fatalf("a1 = %+v %v", n, err)
	}
}

// Bytes after the committed length (a writer killed between its node write
// and its meta commit) are ignored by readers and moved to lost+found/ by
// the next writer.
func TestUncommittedTailRecovered(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"), asst("a1", "", "r"))
	tail := `{"id":"a2","predecessor":"a1","role":"assistant","content":"never commit` + "ted\"}\n{\"id\":\"a3\""
	f, err := os.OpenFile(filepath.Join(dir, store.NodesFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(tail)
	f.Close()
	s := mustOpen(t, dir)
	if s.Len() != 2 || s.TailBytes != int64(len(tail)) || len(s.Warnings) != 1 ||
		!strings.Contains(s.Warnings[0].String(), "nodes.jsonl:3: ") {
		t.Fatalf("refs=%d tail=%d warnings=%v", s.Len(), s.TailBytes, s.Warnings)
	}
	// While a live process holds the lock the tail is a write in progress:
	// ignored, without a warning.
	host, _ := os.Hostname()
	rec, _ := json.Marshal(store.LockHolder{PID: os.Getpid(), Host: host, Since: fixedNow()})
	writeFile(t, filepath.Join(dir, store.LockFile), string(rec))
	if s := mustOpen(t, dir); s.Len() != 2 || s.TailBytes != int64(len(tail)) || len(s.Warnings) != 0 {
		t.Fatalf("with a live writer: refs=%d tail=%d warnings=%v", s.Len(), s.TailBytes, s.Warnings)
	}
	var warnings []store.Warning
	warnings, err = store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
		_, err := tx.Append([]transcript.Node{user("u2", "", "again")}, store.AppendOptions{})
		return err
	})
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0].Msg, "moved") {
		t.Fatalf("append: %v %v", warnings, err)
	}
	lost, _ := filepath.Glob(filepath.Join(dir, store.LostFound, "*"))
	if len(lost) != 1 {
		t.Fatalf("lost+found = %v", lost)
	}
	if data, _ := os.ReadFile(lost[0]); string(data) != tail {
		t.Fatalf("lost+found holds %q", data)
	}
	s = mustOpen(t, dir)
	if got := strings.Join(ids(s), ","); got != "u1,a1,u2" || len(s.Warnings) != 0 {
		t.Fatalf("after recovery: %s %v", got, s.Warnings)
	}
}

// A torn last line in a session without nodes_bytes (hand-written) is a
// warning; Repair moves it aside and records the committed length.
func TestRepairTornLine(t *testing.T) {
	dir := newSession(t)
	lines := `{"id":"u1","predecessor":null,"role":"user","content":"q"}` + "\n" + `{"id":"a1","predecessor":"u1","role":"assis`
	writeFile(t, filepath.Join(dir, store.NodesFile), lines)
	writeFile(t, filepath.Join(dir, store.MetaFile), `{"format_version":1,"head":"u1"}`)
	s := mustOpen(t, dir)
	if s.Len() != 1 || len(s.Warnings) != 1 || s.Warnings[0].Line != 2 || !strings.Contains(s.Warnings[0].Msg, "torn last line") {
		t.Fatalf("refs %d warnings %v", s.Len(), s.Warnings)
	}
	warnings, err := store.Repair(t.Context(), dir, store.RepairOptions{WriteOptions: testWrite})
	if err != nil || len(warnings) != 1 {
		t.Fatalf("Repair: %v %v", warnings, err)
	}
	s = mustOpen(t, dir)
	if len(s.Warnings) != 0 || s.Meta.NodesBytes == nil || *s.Meta.NodesBytes != s.CommittedBytes {
		t.Fatalf("after repair: %v %+v", s.Warnings, s.Meta)
	}
	if warnings, err := store.Repair(t.Context(), dir, store.RepairOptions{WriteOptions: testWrite}); err != nil || len(warnings) != 0 {
		t.Fatalf("second Repair: %v %v", warnings, err)
	}
}

// A held lock makes a second writer fail after its timeout with a
// LockedError naming the holder.
func TestLockHeld(t *testing.T) {
	dir := newSession(t)
	held := make(chan struct{})
	done := make(chan struct{})
	go func() {
		store.Update(context.Background(), dir, testWrite, func(tx *store.Tx) error {
			close(held)
			<-done
			return nil
		})
	}()
	<-held
	defer close(done)
	opts := testWrite
	opts.LockTimeout = 150 * time.Millisecond
	start := time.Now()
	_, err := store.Update(t.Context(), dir, opts, func(tx *store.Tx) error { return nil })
	var le *store.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want LockedError", err)
	}
	if time.Since(start) < opts.LockTimeout {
		t.Fatalf("gave up before the timeout")
	}
	host, _ := os.Hostname()
	if le.Holder == nil || le.Holder.PID != os.Getpid() || le.Holder.Host != host || le.Stale || le.Holder.Command != "test" {
		t.Fatalf("holder = %+v stale=%v", le.Holder, le.Stale)
	}
	want := fmt.Sprintf("session is locked by pid %d on %s since ", os.Getpid(), host)
	if !strings.Contains(err.Error(), want) || !strings.Contains(le.Hint(), "--lock-timeout") {
		t.Fatalf("error %q hint %q", err, le.Hint())
	}
	// repair --unlock does not break a live lock.
	if _, err := store.Repair(t.Context(), dir, store.RepairOptions{WriteOptions: opts, Unlock: true}); !errors.As(err, &le) {
		t.Fatalf("unlock of a live lock: %v", err)
	}
}

// A lock record left by a dead process (the kernel released its flock)
// never blocks a writer; --unlock clears the record.
func TestStaleLockRecord(t *testing.T) {
	dir := newSession(t)
	host, _ := os.Hostname()
	rec, _ := json.Marshal(store.LockHolder{PID: 1 << 22, Host: host, Since: fixedNow()})
	writeFile(t, filepath.Join(dir, store.LockFile), string(rec))
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "q"))
	writeFile(t, filepath.Join(dir, store.LockFile), string(rec))
	if _, err := store.Repair(t.Context(), dir, store.RepairOptions{WriteOptions: testWrite, Unlock: true}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, store.LockFile)); len(data) != 0 {
		t.Fatalf("lock record not cleared: %s", data)
	}
}

func TestEvents(t *testing.T) {
	dir := newSession(t)
	if _, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
		if err := tx.AppendEvent(map[string]any{"type": "a", "n": 1}); err != nil {
			return err
		}
		if err := tx.AppendEvent([]int{1}); err == nil {
			return errors.New("a non-object event was accepted")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A torn event line (crash) is skipped with a warning and healed by the
	// next event write.
	f, _ := os.OpenFile(filepath.Join(dir, store.EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"b","n`)
	f.Close()
	read := func() ([]string, []store.Warning) {
		s := mustOpen(t, dir)
		var got []string
		warnings, err := s.ReadEvents(func(ev store.EventLine) error {
			got = append(got, fmt.Sprintf("%d:%s", ev.Line, ev.Raw))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, warnings
	}
	got, warnings := read()
	if strings.Join(got, " ") != `1:{"n":1,"type":"a"}` || len(warnings) != 1 {
		t.Fatalf("events %v warnings %v", got, warnings)
	}
	if _, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
		return tx.AppendEvent(map[string]string{"type": "c"})
	}); err != nil {
		t.Fatal(err)
	}
	got, warnings = read()
	if strings.Join(got, " ") != `1:{"n":1,"type":"a"} 2:{"type":"c"}` || len(warnings) != 0 {
		t.Fatalf("after the next event: %v %v", got, warnings)
	}
	lost, _ := filepath.Glob(filepath.Join(dir, store.LostFound, "events-*"))
	if len(lost) != 1 {
		t.Fatalf("lost+found: %v", lost)
	}
	if data, _ := os.ReadFile(lost[0]); string(data) != `{"type":"b","n` {
		t.Fatalf("lost+found holds %q", data)
	}
}

func TestUpdateRefusesNonSession(t *testing.T) {
	dir := t.TempDir()
	_, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error { return nil })
	var ns *store.NotSessionError
	if !errors.As(err, &ns) || !errors.Is(err, store.ErrNotSession) || !strings.Contains(ns.Hint(), "ctxfold init") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, store.LockFile)); err == nil {
		t.Fatal("a lock file was created in a non-session")
	}
	_, err = store.Open(filepath.Join(dir, "missing"), store.OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), "no such session directory") {
		t.Fatalf("missing dir: %v", err)
	}
}
