package codex_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestLive re-records every scenario with the installed pinned client
// (record.sh installs it under $HOME/.cache when missing) and checks the
// fresh recording twice: the oracle comparison of TestOracle, and the same
// structure as the committed fixtures. Run by .ci/run; off unless
// CTXFOLD_INTEROP_LIVE=1 (it needs npm, bash and the network for the first
// install, and takes about 15 s once the client is cached).
func TestLive(t *testing.T) {
	out := interoptest.Rerecord(t, "Codex CLI "+Version, 15*time.Minute)
	committed := map[string]scenario{}
	for _, s := range scenarios(t, fixturesOf(committedVersion(t))) {
		committed[s.name] = s
	}
	fresh := scenarios(t, out)
	if len(fresh) != len(committed) {
		t.Errorf("%d scenarios recorded, %d committed", len(fresh), len(committed))
	}
	for _, s := range fresh {
		t.Run(s.name, func(t *testing.T) {
			checkRenders(t, s)
			want, ok := committed[s.name]
			if !ok {
				t.Fatalf("scenario %s is not committed", s.name)
			}
			if got, exp := rolloutShape(t, s), rolloutShape(t, want); !reflect.DeepEqual(got, exp) {
				t.Errorf("rollout structure changed:\nnow:       %v\ncommitted: %v", got, exp)
			}
			if got, exp := requestShape(s), requestShape(want); !reflect.DeepEqual(got, exp) {
				t.Errorf("request structure changed:\nnow:       %v\ncommitted: %v", got, exp)
			}
		})
	}
}

// rolloutShape is the sequence of record types that carry the
// conversation (response items by type and role, compactions, session
// metadata), with the outputs of parallel calls sorted (Codex writes them
// in completion order). Events and bookkeeping records are left out: they
// do not reach the model and their order races.
func rolloutShape(t *testing.T, s scenario) []string {
	t.Helper()
	var shape []string
	for _, file := range s.rollouts {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		var outputs []string
		flush := func() {
			sort.Strings(outputs)
			shape = append(shape, outputs...)
			outputs = nil
		}
		for sc.Scan() {
			var rec struct {
				Type    string `json:"type"`
				Payload struct {
					Type   string `json:"type"`
					Role   string `json:"role"`
					CallID string `json:"call_id"`
				} `json:"payload"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil {
				t.Fatalf("%s: not JSON", file)
			}
			switch {
			case rec.Type == "response_item" && rec.Payload.Type == "function_call_output":
				outputs = append(outputs, "function_call_output "+rec.Payload.CallID)
			case rec.Type == "response_item":
				flush()
				shape = append(shape, strings.TrimSpace(rec.Payload.Type+" "+rec.Payload.Role))
			case rec.Type == "compacted" || rec.Type == "session_meta":
				flush()
				shape = append(shape, rec.Type)
			}
		}
		flush()
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		shape = append(shape, "EOF "+filepath.Base(file))
	}
	return shape
}

// requestShape is, per request, its input items by type and role, and
// the tools offered, thread by thread (a sub-agent's requests race with
// its parent's).
func requestShape(s scenario) []string {
	var shape []string
	byThread := map[string]int{}
	for _, req := range s.requests {
		var items []string
		input, _ := req["input"].([]any)
		for _, it := range input {
			m, _ := it.(map[string]any)
			items = append(items, strings.TrimSpace(fmt.Sprint(m["type"], " ", m["role"])))
		}
		var tools []string
		list, _ := req["tools"].([]any)
		for _, tl := range list {
			m, _ := tl.(map[string]any)
			tools = append(tools, fmt.Sprint(m["type"], ":", m["name"]))
		}
		thread, _ := req["prompt_cache_key"].(string)
		if meta, ok := req["client_metadata"].(map[string]any); ok && meta["thread_id"] != nil {
			thread, _ = meta["thread_id"].(string)
		}
		byThread[thread]++
		shape = append(shape, fmt.Sprintf("thread %s request %d: %s | tools %s", thread, byThread[thread], strings.Join(items, ", "), strings.Join(tools, " ")))
	}
	sort.Strings(shape)
	return shape
}
