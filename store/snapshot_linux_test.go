package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/transcript"
)

// The stat fingerprint relies on nanosecond ctimes: two writes in the
// same millisecond must still leave different ctimes (multigrain
// timestamps on this kernel's ext4 and tmpfs).
func TestCtimeChangesWithinAMillisecond(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("a"), 0o644)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	defer f.Close()
	same := 0
	for range 200 {
		st1, _ := os.Stat(path)
		f.Write([]byte("b"))
		st2, _ := os.Stat(path)
		a, b := st1.Sys().(*syscall.Stat_t).Ctim.Nano(), st2.Sys().(*syscall.Stat_t).Ctim.Nano()
		if b-a < int64(time.Millisecond) && a == b {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("%d of 200 writes left the ctime as it was: the stat fingerprint would miss them", same)
	}
}

// TestWriterUnmapsItsSnapshot: a writer's transaction maps the session's
// snapshot and unmaps it when the transaction ends, and the ids it handed
// out stay readable after. A process writing many sessions (an archive
// run) kept every mapping before, hundreds of MB of copied-on-write pages
// (docs/BENCHMARKS.md, "The first archive's memory").
func TestWriterUnmapsItsSnapshot(t *testing.T) {
	smallSnapshots(t, 2048)
	dir := soundSession(t, 40)
	snap := filepath.Join(dir, SnapshotFile)
	mapped := func() int {
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(maps), snap)
	}
	before := mapped()
	var ids []string
	for k := range 3 {
		writeTx(t, dir, func(tx *Tx) error {
			if !tx.s.stats.Snapshot || mapped() <= before {
				t.Fatalf("the writer did not map the snapshot: %+v", tx.s.stats)
			}
			for i := range tx.s.Len() {
				ids = append(ids, tx.s.ID(i), tx.s.Ref(i).Predecessor)
			}
			_, err := tx.Append([]transcript.Node{{ID: fmt.Sprintf("end%d", k), Predecessor: tx.s.Meta.Head, Role: transcript.RoleUser, Content: transcript.TextContent("end")}}, AppendOptions{})
			return err
		})
		if n := mapped(); n != before {
			t.Fatalf("after write %d, %d mappings of the snapshot, %d before", k+1, n, before)
		}
	}
	s := fullOpen(t, dir)
	defer s.Close()
	for _, id := range ids {
		if _, ok := s.Lookup(id); id != "" && !ok {
			t.Fatalf("id %q handed out by a writer is not the session's any more", id)
		}
	}
}
