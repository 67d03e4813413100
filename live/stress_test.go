package live

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
)

// answer is what a reader saw of a cache session: the committed nodes'
// hash and the meta a command reads.
type answer struct {
	Nodes  string `json:"nodes"`
	Head   string `json:"head"`
	Model  string `json:"model"`
	Window string `json:"window"`
}

// reply is a reader's answer with how many bytes of the file its Open's
// cache had consumed: a refresh may read the file while the appender's
// write of a step is half done (a read sees a write page by page), so
// the prefix it consumed can lie between two steps; the parent then
// checks the answer against a fresh import of exactly that prefix.
type reply struct {
	answer
	Consumed int64 `json:"consumed"`
}

// readAnswer reads the session in dir as a command does (session.json,
// then the committed bytes of nodes.jsonl, through store.Open).
func readAnswer(dir string) (answer, error) {
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		return answer{}, err
	}
	defer s.Close()
	a := answer{Head: s.Meta.Head, Model: s.Meta.Model, Window: string(s.Meta.Extra["model_context_window"])}
	time.Sleep(time.Millisecond) // a slow reader: give a refresh a chance to cut in
	f, err := os.Open(filepath.Join(dir, store.NodesFile))
	if err != nil {
		return answer{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, s.CommittedBytes); err != nil {
		return answer{}, fmt.Errorf("nodes.jsonl: %w", err)
	}
	a.Nodes = hex.EncodeToString(h.Sum(nil))
	return a, nil
}

const stressChildEnv = "CTXFOLD_LIVE_STRESS_CHILD"

// Issue 30, item 2: readers never see a cache session mid-rewind. Reader
// processes (each Open is a refresh too) run while the file grows line by
// line and inside lines: every answer must equal a fresh import of one of
// the prefixes the file went through — never a rewound session.json
// without its model, never a nodes.jsonl cut under a reader. The default
// run is short (a recorded Codex rollout); CTXFOLD_LONG=1 adds the shared
// real Codex rollout and a Claude Code session with more readers.
func TestReadersSeeOneCommit(t *testing.T) {
	if spec := os.Getenv(stressChildEnv); spec != "" {
		stressChild(t, spec)
		return
	}
	src := filepath.Join("..", "testdata", "interop", "codex", "0.169.0", "compaction", "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl")
	t.Run("short", func(t *testing.T) { stress(t, src, 3, 16) })
	t.Run("long-codex", func(t *testing.T) {
		sessiontest.Long(t, "the live-cache reader stress test on a real rollout")
		stress(t, sessiontest.External(t, "codex", "madshn-localpush", "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"), 6, 60)
	})
	t.Run("long-claude-code", func(t *testing.T) {
		sessiontest.Long(t, "the live-cache reader stress test on a real Claude Code session")
		stress(t, sessiontest.External(t, "claude-code", "d-kimuson-claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"), 6, 60)
	})
}

func stress(t *testing.T, src string, readers, cuts int) {
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// The prefixes the file goes through, from its middle on (a line end,
	// then inside the next line), and what a fresh import of each gives.
	points := refreshCuts(full, cuts)
	var steps []int
	for _, p := range points {
		if p >= len(full)/2 {
			steps = append(steps, p)
		}
	}
	valid := map[answer]bool{}
	for _, p := range steps {
		f := filepath.Join(t.TempDir(), filepath.Base(src))
		if err := os.WriteFile(f, full[:p], 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := readAnswer(freshImport(t, f))
		if err != nil {
			t.Fatal(err)
		}
		valid[a] = true
	}
	file := filepath.Join(t.TempDir(), filepath.Base(src))
	cache := t.TempDir()
	if err := os.WriteFile(file, full[:steps[0]], 0o644); err != nil {
		t.Fatal(err)
	}
	var procs []*exec.Cmd
	var outs []io.ReadCloser
	for range readers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReadersSeeOneCommit$")
		cmd.Env = append(os.Environ(), stressChildEnv+"="+strings.Join([]string{file, cache, strconv.Itoa(len(full))}, "|"))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, out)
	}
	// Every reader's output is drained at once, as it comes: a reader
	// blocked on a full pipe would hold its shared lock, and the others'
	// refreshes would wait on it until their lock timeout.
	lines := make([][]string, len(outs))
	drained := make(chan int, len(outs))
	for i, out := range outs {
		go func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				lines[i] = append(lines[i], sc.Text())
			}
			drained <- i
		}()
	}
	// The appender: the client writing the file, a step at a time.
	w, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(steps); i++ {
		time.Sleep(40 * time.Millisecond)
		if _, err := w.Write(full[steps[i-1]:steps[i]]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	answers, wrong, busy, between := 0, 0, 0, 0
	// midStep: an answer of a prefix between two steps, checked against
	// a fresh import of that very prefix (memoised).
	checked := map[int64]answer{}
	midStep := func(r reply) bool {
		if r.Consumed <= 0 || r.Consumed > int64(len(full)) {
			return false
		}
		want, ok := checked[r.Consumed]
		if !ok {
			f := filepath.Join(t.TempDir(), filepath.Base(src))
			if err := os.WriteFile(f, full[:r.Consumed], 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := readAnswer(freshImport(t, f))
			if err != nil {
				return false
			}
			checked[r.Consumed], want = a, a
		}
		if want == r.answer {
			between++
			return true
		}
		return false
	}
	for range outs {
		<-drained
	}
	for i := range outs {
		for _, text := range lines[i] {
			if strings.HasPrefix(text, "busy ") {
				busy++
				continue
			}
			line, ok := strings.CutPrefix(text, "answer ")
			if !ok {
				continue // the test binary's own output
			}
			answers++
			var r reply
			if err := json.Unmarshal([]byte(line), &r); err != nil || !(valid[r.answer] || midStep(r)) {
				wrong++
				if wrong <= 5 {
					t.Errorf("reader %d: %s is no fresh import of a prefix the file went through", i, line)
				}
			}
		}
		if err := procs[i].Wait(); err != nil {
			t.Errorf("reader %d: %v", i, err)
		}
	}
	t.Logf("%d answers of %d readers over %d steps, %d wrong (%d of a prefix between two steps, checked), %d Opens timed out busy", answers, readers, len(steps), wrong, between, busy)
	if answers < readers*2 {
		t.Errorf("only %d answers", answers)
	}
}

// stressChild is one reader process: Open, read, Close, print the answer
// (or the error, which the parent counts as wrong; a lock wait that timed
// out as "busy"), until the cache
// consumed the whole file.
func stressChild(t *testing.T, spec string) {
	parts := strings.Split(spec, "|")
	file, cache := parts[0], parts[1]
	size, _ := strconv.ParseInt(parts[2], 10, 64)
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		e, err := Open(context.Background(), file, Options{CacheDir: cache, LockTimeout: time.Minute})
		if err != nil && strings.Contains(err.Error(), "is being refreshed or read by another ctxfold") {
			// The entry lock has no queue: under sustained contention an
			// Open can time out (the command exits "busy"). That is no
			// answer, right or wrong; the parent counts it apart.
			fmt.Printf("busy %q\n", err.Error())
			continue
		}
		if err != nil {
			fmt.Printf("answer %q\n", "open: "+err.Error())
			continue
		}
		// A command reads for a while (an estimate: hundreds of ms on a
		// big session): read it a few times over, every read an answer.
		done := e.Consumed == size
		for range 5 {
			a, err := readAnswer(e.Session)
			if err != nil {
				fmt.Printf("answer %q\n", "read: "+err.Error())
				continue
			}
			// The consumed length of the commit on disk: after the lock's
			// conversion it may be another process's refresh, not ours.
			consumed := e.Consumed
			if st, ok := readState(filepath.Dir(e.Session)); ok {
				consumed = st.Consumed
			}
			b, _ := json.Marshal(reply{a, consumed})
			fmt.Println("answer " + string(b))
			time.Sleep(2 * time.Millisecond)
		}
		e.Close()
		if done {
			return
		}
	}
	t.Fatal("the file never reached its full size")
}
