package droid_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestLive re-records every scenario with the installed client (record.sh
// installs the pinned one under $HOME/.cache when missing;
// CTXFOLD_DROID_BIN names another) and checks the fresh recording twice:
// the oracle comparison of TestOracle, and the same structure as the
// committed fixtures of that version. Run by .ci/run; off unless
// CTXFOLD_INTEROP_LIVE=1 (about 90 s once the client is cached).
func TestLive(t *testing.T) {
	out := interoptest.Rerecord(t, "Factory Droid "+Version, 10*time.Minute)
	version := Version
	if bin := os.Getenv("CTXFOLD_DROID_BIN"); bin != "" {
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", bin, err)
		}
		lines := strings.Fields(string(out))
		version = lines[len(lines)-1]
	}
	committed := map[string]scenario{}
	for _, s := range scenarios(t, fixturesOf(version)) {
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
			if got, exp := sessionShape(t, s.session), sessionShape(t, want.session); !reflect.DeepEqual(got, exp) {
				t.Errorf("session structure changed:\nnow:       %v\ncommitted: %v", got, exp)
			}
			// As a set: Droid sends some requests concurrently (after a
			// manual compaction, the summary's and a title's), and the
			// order they reach the fake varies from run to run.
			if got, exp := sortedShape(requestShape(s)), sortedShape(requestShape(want)); !reflect.DeepEqual(got, exp) {
				t.Errorf("request structure changed:\nnow:       %v\ncommitted: %v", got, exp)
			}
		})
	}
}

// sessionShape is the sequence of records that carry the conversation:
// each message's role, visibility and block types, and each compaction.
func sessionShape(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var shape []string
	for sc.Scan() {
		var r struct {
			Type    string `json:"type"`
			Message struct {
				Role       string `json:"role"`
				Visibility string `json:"visibility"`
				Content    []struct {
					Type string `json:"type"`
				} `json:"content"`
			} `json:"message"`
			RemovedCount int `json:"removedCount"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			t.Fatalf("%s: not JSON", filepath.Base(file))
		}
		switch r.Type {
		case "message":
			var types []string
			for _, b := range r.Message.Content {
				types = append(types, b.Type)
			}
			shape = append(shape, fmt.Sprintf("%s/%s %s", r.Message.Role, r.Message.Visibility, strings.Join(types, ",")))
		case "compaction_state":
			shape = append(shape, fmt.Sprintf("compaction removed %d", r.RemovedCount))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return shape
}

// requestShape is, per request, its messages' roles and the tools offered.
func requestShape(s scenario) []string {
	var shape []string
	for _, r := range s.requests {
		var roles []string
		for _, m := range r.Messages {
			mm, _ := m.(map[string]any)
			roles = append(roles, fmt.Sprint(mm["role"]))
		}
		shape = append(shape, strings.Join(roles, ",")+" | "+strings.Join(r.Tools, " "))
	}
	return shape
}

// sortedShape is shape in sorted order: the requests as a multiset.
func sortedShape(shape []string) []string {
	out := append([]string(nil), shape...)
	sort.Strings(out)
	return out
}
