package setup

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// setup pi writes the extension where pi loads it ($PI_CODING_AGENT_DIR,
// else ~/.pi/agent; --project: .pi/extensions), with the command it was
// given; a second run changes nothing; doctor's Inspect finds the three
// hooks; uninstall removes it.
func TestPiInstallUninstall(t *testing.T) {
	h, agent := t.TempDir(), t.TempDir()
	o := Options{Scope: ScopeUser, Home: h, Command: "/opt/ctxfold", Getenv: func(k string) string {
		if k == "PI_CODING_AGENT_DIR" {
			return agent
		}
		return ""
	}}
	applyPlan(t, Pi, o)
	path := filepath.Join(agent, "extensions", "ctxfold.ts")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`const CTXFOLD = "/opt/ctxfold";`, `"session_before_compact"`, `"before_agent_start"`, `"ctxfold_search_history"`, `"ctxfold_read_turns"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("extension lacks %s", want)
		}
	}
	if cs := applyPlan(t, Pi, o); cs[0].Action != "unchanged" {
		t.Errorf("second install: %s", cs[0].Action)
	}
	in, err := Inspect(ClientPi, o)
	if err != nil || len(in.Entries) != 3 || len(in.Missing) != 0 || in.Entries[0].Argv[0] != "/opt/ctxfold" {
		t.Fatalf("inspect: %+v %v", in, err)
	}
	o.Uninstall = true
	applyPlan(t, Pi, o)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("uninstall left it: %v", err)
	}
	p := t.TempDir()
	cs, err := Pi(Options{Scope: ScopeProject, Project: p, Home: h})
	if err != nil || cs[0].Path != filepath.Join(p, ".pi", "extensions", "ctxfold.ts") {
		t.Fatalf("--project: %v %+v", err, cs)
	}
}
