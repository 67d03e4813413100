package copilot_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestLive re-records every scenario with the installed client (the
// pinned one record.sh installs under the interop cache, or the one
// CTXFOLD_COPILOT_BIN names) and checks the fresh recording twice: the
// oracle comparison of TestOracle, and the same conversation structure as
// the committed fixtures. Off unless CTXFOLD_INTEROP_LIVE=1 (it needs npm
// and the network for the first install; one to three minutes once cached).
func TestLive(t *testing.T) {
	out := interoptest.Rerecord(t, "GitHub Copilot CLI "+version, 10*time.Minute)
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			fresh := filepath.Join(out, sc)
			checkScenario(t, fresh, sc)
			got, want := shape(t, fresh), shape(t, filepath.Join(recordings, sc))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("conversation structure changed:\nnow:       %v\ncommitted: %v", got, want)
			}
		})
	}
}

// shape is the sequence of events that carry the conversation: user and
// assistant messages (with their number of tool calls), tool results and
// the compactions that applied. Where a background compaction lands
// between them races, so compactions are counted, not placed.
func shape(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	compactions := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			AgentID string `json:"agentId"`
			Data    struct {
				ToolRequests []json.RawMessage `json:"toolRequests"`
				Success      bool              `json:"success"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "user.message", "tool.execution_complete":
			out = append(out, ev.Type)
		case "assistant.message":
			out = append(out, fmt.Sprintf("%s calls=%d", ev.Type, len(ev.Data.ToolRequests)))
		case "session.compaction_complete":
			if ev.Data.Success {
				compactions++
			}
		}
	}
	return append(out, fmt.Sprintf("compactions=%d", compactions))
}
