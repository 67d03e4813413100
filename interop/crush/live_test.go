package crush_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestLive re-records every scenario with the real Crush (record.sh
// builds the pinned one from its source tree when it is not built yet;
// CTXFOLD_CRUSH_BIN names another), runs the oracle on the fresh
// recording and compares its structure (each request's kind and roles,
// the imported nodes' roles and calls) with the committed recording of
// that version, or of the pinned one when that version has none. Off
// unless CTXFOLD_INTEROP_LIVE=1; it skips, saying why, where Crush can be
// neither found nor built (its npm package downloads the binary at
// install time, docs/INTEROP-crush.md). About 15 s once Crush is built.
func TestLive(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to re-record with the real Crush")
	}
	version := Versions[0]
	if bin := os.Getenv("CTXFOLD_CRUSH_BIN"); bin != "" {
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", bin, err)
		}
		f := strings.Fields(string(out))
		version = strings.TrimPrefix(f[len(f)-1], "v")
	} else {
		install := exec.Command("bash", "record.sh", "--install")
		b, err := install.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			t.Skipf("Crush %s is not built here and cannot be:\n%s", version, b)
		}
		if err != nil {
			t.Fatalf("record.sh --install: %v\n%s", err, b)
		}
	}
	out := interoptest.Rerecord(t, "Crush "+version, 5*time.Minute)
	committed := filepath.Join("../../testdata/interop/crush", version)
	if _, err := os.Stat(committed); err != nil {
		t.Logf("no recording of Crush %s: comparing with %s", version, Versions[0])
		committed = filepath.Join("../../testdata/interop/crush", Versions[0])
	}
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			fresh := filepath.Join(out, sc)
			oracle(t, fresh)
			if a, b := shape(t, filepath.Join(committed, sc)), shape(t, fresh); a != b {
				t.Errorf("structure changed:\ncommitted:\n%s\nnow:\n%s", a, b)
			}
		})
	}
}

// shape is a recording's structure: each request's kind and message roles
// (the title request, which Crush makes in the background, left out), then
// each imported node's role, name and tool call names.
func shape(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range readRequests(t, dir) {
		if r.Kind == "title" {
			continue
		}
		var roles []string
		for _, m := range r.Body.Messages {
			roles = append(roles, fmt.Sprint(m["role"]))
		}
		fmt.Fprintf(&b, "request %s %v\n", r.Kind, roles)
	}
	db := buildDB(t, dir)
	for _, row := range listSessions(t, db) {
		fmt.Fprintf(&b, "session (sub-agent %v)\n", row.parent != "")
		sess := importChecked(t, db, "--session", row.id)
		data, err := os.ReadFile(filepath.Join(sess, "nodes.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var n struct {
				Role, Name string
				ToolCalls  []struct{ Name string } `json:"tool_calls"`
			}
			if err := json.Unmarshal(line, &n); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "node %s %s %v\n", n.Role, n.Name, n.ToolCalls)
		}
	}
	return b.String()
}
