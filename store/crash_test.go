package store_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// The crash and concurrency tests run writers in separate processes: the
// test binary re-executes itself with CTXFOLD_STORE_HELPER set, and
// TestStoreHelperProcess becomes the writer.
const helperEnv = "CTXFOLD_STORE_HELPER"

func helperCmd(t *testing.T, mode, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoreHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "CTXFOLD_HELPER_DIR="+dir, "CTXFOLD_HELPER_ARGS="+strings.Join(args, ","))
	return cmd
}

// TestStoreHelperProcess is not a test: it is the writer process of the
// crash and concurrency tests.
func TestStoreHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	dir := os.Getenv("CTXFOLD_HELPER_DIR")
	args := strings.Split(os.Getenv("CTXFOLD_HELPER_ARGS"), ",")
	opts := store.WriteOptions{LockTimeout: time.Minute, Command: "helper"}
	out := os.Stdout
	switch mode {
	case "crash":
		// Append batches forever, printing each batch's ids once committed,
		// until the parent kills us.
		round := args[0]
		rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 7))
		fmt.Fprintln(out, "ready")
		for b := 0; ; b++ {
			k := 1 + rng.IntN(8)
			nodes := make([]transcript.Node, k)
			for i := range nodes {
				text := strings.Repeat("x", rng.IntN(200))
				if rng.IntN(16) == 0 {
					// Some lines span many pages, so a kill can land inside
					// one write.
					text = strings.Repeat("y", 64<<10)
				}
				nodes[i] = transcript.Node{ID: fmt.Sprintf("r%s-b%d-%d-of-%d", round, b, i, k), Role: transcript.RoleUser, Content: transcript.TextContent(text)}
			}
			var res *store.AppendResult
			_, err := store.Update(context.Background(), dir, opts, func(tx *store.Tx) error {
				var err error
				res, err = tx.Append(nodes, store.AppendOptions{})
				return err
			})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
			fmt.Fprintln(out, strings.Join(res.IDs, " "))
		}
	case "rewind":
		// Append two nodes on root, then rewind the cache session to the
		// commit holding only root, forever.
		opts.CacheWriter = true // as the live cache writes its sessions
		data, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "root-meta.json"))
		var root store.Meta
		if err == nil {
			err = root.UnmarshalJSON(data)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Fprintln(out, "ready")
		for {
			for _, n := range []transcript.Node{{ID: "x", Predecessor: "root", Role: transcript.RoleAssistant, Content: transcript.TextContent(strings.Repeat("x", 5000))},
				{ID: "y", Predecessor: "x", Role: transcript.RoleUser, Content: transcript.TextContent("y")}} {
				if _, err := store.Update(context.Background(), dir, opts, func(tx *store.Tx) error {
					_, err := tx.Append([]transcript.Node{n}, store.AppendOptions{})
					return err
				}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				fmt.Fprintln(out, n.ID)
			}
			if err := store.RewindCache(context.Background(), dir, root, opts); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
			fmt.Fprintln(out, "rewound")
		}
	case "append":
		// Append n single nodes, each in its own locked write.
		prefix := args[0]
		n, _ := strconv.Atoi(args[1])
		w := bufio.NewWriter(out)
		for i := range n {
			id := fmt.Sprintf("%s-%04d", prefix, i)
			_, err := store.Update(context.Background(), dir, opts, func(tx *store.Tx) error {
				_, err := tx.Append([]transcript.Node{{ID: id, Role: transcript.RoleUser, Content: transcript.TextContent("from " + prefix)}}, store.AppendOptions{})
				return err
			})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
			fmt.Fprintln(w, id)
		}
		w.Flush()
	case "fsize":
		// One append past a small file size limit (as a full disk would
		// refuse it), printing the error's type.
		fmt.Fprintln(out, appendPastSizeLimit(dir))
	}
	os.Exit(0)
}

// TestCrashAtRandomMoments SIGKILLs a writing process at random moments.
// After every kill the session opens and its graph loads, every id the
// writer printed (printed only after its commit) is present, every batch
// is all or none, and the next append works.
func TestCrashAtRandomMoments(t *testing.T) {
	rounds := 200
	if !longRun() {
		rounds = 40
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	// Kill within about three batch writes of the writer starting, however
	// fast this machine (or -race) makes a batch.
	window := 3 * batchTime(t)
	var dir string
	var withWrites, recovered, active, snapped int
	for r := range rounds {
		if r%20 == 0 {
			// A fresh session now and then keeps each round's re-index small.
			dir = newSession(t)
		}
		cmd := helperCmd(t, "crash", dir, strconv.Itoa(r))
		if r%2 == 1 {
			// Every other round the writer rewrites the index snapshot
			// after nearly every batch, so kills land inside those writes
			// too (docs/FORMAT.md §1, "The index snapshot").
			cmd.Env = append(cmd.Env, "CTXFOLD_TEST_SNAPSHOT_BYTES=4096")
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill at a random moment after the writer has started writing.
		br := bufio.NewReader(pipe)
		if line, err := br.ReadString('\n'); line != "ready\n" {
			t.Fatalf("round %d: helper said %q (%v): %s", r, line, err, stderr.String())
		}
		time.Sleep(time.Duration(rng.Int64N(int64(window))))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		rest, _ := io.ReadAll(br)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: the writer was not killed (%v): %s", r, err, stderr.String())
		}
		// Only complete lines count: the kill may cut a print short.
		out := string(rest)
		if k := strings.LastIndexByte(out, '\n'); k >= 0 {
			out = out[:k]
		} else {
			out = ""
		}
		printed := strings.Fields(out)

		s, err := store.Open(dir, store.OpenOptions{})
		if err != nil {
			t.Fatalf("round %d: session does not open after a kill: %v", r, err)
		}
		if s.OpenStats().Snapshot {
			snapped++
		}
		sameAsFullIndex(t, s)
		if _, err := dag.Load(s); err != nil {
			t.Fatalf("round %d: graph: %v", r, err)
		}
		for _, id := range printed {
			if _, ok := s.Lookup(id); !ok {
				t.Fatalf("round %d: printed id %s is missing", r, id)
			}
		}
		// All or none: count the nodes of each batch of this round.
		count := map[string]int{}
		size := map[string]int{}
		prefix := fmt.Sprintf("r%d-", r)
		for _, ref := range s.All() {
			if !strings.HasPrefix(ref.ID, prefix) {
				continue
			}
			parts := strings.Split(ref.ID, "-") // r, b, i, of, k
			batch := parts[1]
			count[batch]++
			size[batch], _ = strconv.Atoi(parts[4])
		}
		if len(count) > 0 {
			withWrites++
		}
		for b, n := range count {
			if n != size[b] {
				t.Fatalf("round %d: batch %s has %d of its %d nodes", r, b, n, size[b])
			}
		}
		s.Close()

		// The next append works, recovering any interrupted write.
		var warnings []store.Warning
		warnings, err = store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
			_, err := tx.Append([]transcript.Node{user(fmt.Sprintf("check-%d", r), "", "after the kill")}, store.AppendOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("round %d: append after the kill: %v", r, err)
		}
		recovered += len(warnings)
		if len(count) > 0 || len(warnings) > 0 {
			active++
		}
		s = mustOpen(t, dir)
		if len(s.Warnings) != 0 || s.TailBytes != 0 {
			t.Fatalf("round %d: warnings after the next append: %v", r, s.Warnings)
		}
		if _, ok := s.Lookup(fmt.Sprintf("check-%d", r)); !ok {
			t.Fatalf("round %d: the next append is missing", r)
		}
		tmp, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
		snapTmp, _ := filepath.Glob(filepath.Join(dir, "cache", ".*tmp*"))
		if tmp = append(tmp, snapTmp...); len(tmp) > 0 {
			t.Fatalf("round %d: temp files left after the next write: %v", r, tmp)
		}
	}
	t.Logf("%d rounds: %d committed a batch before the kill, %d left an interrupted write to recover, %d opened via a snapshot", rounds, withWrites, recovered, snapped)
	if snapped == 0 {
		t.Fatal("no round opened via a snapshot: the snapshot's write steps were not crash-tested")
	}
	// The test means something only if kills land while the writer writes.
	if active < rounds/4 {
		t.Fatalf("only %d of %d rounds wrote anything before the kill: kills come too early", active, rounds)
	}
}

// batchTime runs the crash writer on a scratch session until it has
// committed 10 batches and returns the mean time per batch.
func batchTime(t *testing.T) time.Duration {
	t.Helper()
	cmd := helperCmd(t, "crash", newSession(t), "calibrate")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	br := bufio.NewReader(pipe)
	if _, err := br.ReadString('\n'); err != nil { // ready
		t.Fatal(err)
	}
	start := time.Now()
	for range 10 {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	per := time.Since(start) / 10
	t.Logf("one batch takes about %v here", per)
	return max(per, time.Millisecond)
}

// TestConcurrentWriters: two processes append 1,000 nodes each through
// the lock; the session ends with every node, well formed, in each
// writer's order, and HEAD on a tip.
func TestConcurrentWriters(t *testing.T) {
	n := 1000
	if !longRun() {
		n = 200
	}
	// On tmpfs when there is one: this test is about the lock and the
	// commit protocol, and 2,000 fsync'ed commits on a busy disk would
	// measure the disk.
	base := t.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "ctxfold-conc-"); err == nil {
			base = d
			t.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	dir := filepath.Join(base, "s")
	if _, err := store.Init(dir, "", testWrite); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, dir, store.AppendOptions{}, user("root", "", "start"))
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	stderrs := make([]bytes.Buffer, 2)
	for p := range 2 {
		cmd := helperCmd(t, "append", dir, fmt.Sprintf("p%d", p), strconv.Itoa(n))
		cmd.Stdout, cmd.Stderr = &outs[p], &stderrs[p]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = cmd.Wait()
		}()
	}
	wg.Wait()
	for p := range 2 {
		if errs[p] != nil {
			t.Fatalf("writer %d: %v: %s", p, errs[p], stderrs[p].String())
		}
		if got := strings.Count(outs[p].String(), "\n"); got != n {
			t.Fatalf("writer %d printed %d ids", p, got)
		}
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	s := g.S
	if s.Len() != 2*n+1 || len(s.Duplicates) != 0 || len(s.Warnings) != 0 {
		t.Fatalf("%d nodes, %d duplicates, warnings %v", s.Len(), len(s.Duplicates), s.Warnings)
	}
	next := [2]int{}
	switches, last := 0, byte(0)
	for i := range s.Len() {
		if _, err := s.Node(i); err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		id := s.ID(i)
		if id == "root" {
			continue
		}
		if id[1] != last {
			switches++
			last = id[1]
		}
		p := int(id[1] - '0')
		if want := fmt.Sprintf("p%d-%04d", p, next[p]); id != want {
			t.Fatalf("line %d: %s, want %s (writer order)", i+1, id, want)
		}
		next[p]++
	}
	t.Logf("the two writers took turns %d times", switches)
	tip := false
	for _, i := range g.Tips() {
		tip = tip || i == g.Head()
	}
	if !tip || g.Head() < 0 {
		t.Fatalf("HEAD %d is not a tip (%v)", g.Head(), g.Tips())
	}
	// Every append extended HEAD, so the session is one chain.
	if len(g.Spine(g.Head())) != 2*n+1 {
		t.Fatalf("spine of HEAD has %d nodes", len(g.Spine(g.Head())))
	}
}

// sameAsFullIndex compares s with the full index of its committed files
// (a copy without cache/, so without the snapshot).
func sameAsFullIndex(t *testing.T, s *store.Session) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "full")
	os.MkdirAll(dir, 0o755)
	for _, name := range []string{store.MetaFile, store.NodesFile} {
		data, err := os.ReadFile(filepath.Join(s.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	full, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatalf("full index: %v", err)
	}
	defer full.Close()
	if full.Len() != s.Len() || full.CommittedBytes != s.CommittedBytes || len(full.Duplicates) != len(s.Duplicates) {
		t.Fatalf("%d nodes, %d bytes from %+v; the full index has %d, %d", s.Len(), s.CommittedBytes, s.OpenStats(), full.Len(), full.CommittedBytes)
	}
	for i, ref := range full.All() {
		if got := s.Ref(i); got.ID != ref.ID || got.Predecessor != ref.Predecessor || got.Offset != ref.Offset || got.Line != ref.Line {
			t.Fatalf("node %d: %+v, full index %+v", i, got, ref)
		}
	}
}
