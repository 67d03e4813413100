package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

func TestGraphExitCodes(t *testing.T) {
	compacted, fork := sessiontest.CopyFixture(t, "compacted"), sessiontest.CopyFixture(t, "fork")
	bad := unreadableSession(t)
	out := filepath.Join(t.TempDir(), "g.html")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"tree", []string{compacted}, 0},
		{"expand", []string{compacted, "--expand"}, 0},
		{"json", []string{compacted, "--json"}, 0},
		{"json format", []string{compacted, "--format", "json"}, 0},
		{"json and tree disagree", []string{compacted, "--json", "--format", "tree"}, 2},
		{"dot", []string{fork, "--format", "dot"}, 0},
		{"mermaid", []string{fork, "--format", "mermaid"}, 0},
		{"html to file", []string{compacted, "--format", "html", "-o", out}, 0},
		{"unknown format", []string{compacted, "--format", "svg"}, 2},
		{"around", []string{compacted, "--around", "u2x", "--depth", "2"}, 0},
		{"around unknown", []string{compacted, "--around", "nope"}, 2},
		{"depth without around", []string{compacted, "--depth", "2"}, 2},
		{"negative depth", []string{compacted, "--around", "a8", "--depth", "-1"}, 2},
		{"model", []string{compacted, "--model", "gpt-4", "--json"}, 0},
		{"unknown model asked for", []string{compacted, "--model", "gpt-9-turbo"}, 2},
		{"unknown model with a window", []string{compacted, "--model", "gpt-9-turbo", "--window", "100000"}, 0},
		{"unknown encoding", []string{compacted, "--encoding", "p50k"}, 2},
		{"negative window", []string{compacted, "--window", "-1"}, 2},
		{"unwritable output", []string{compacted, "-o", filepath.Join(t.TempDir(), "no", "dir", "g.txt")}, 2},
		{"unreadable", []string{bad}, 2},
		{"no such dir", []string{filepath.Join(t.TempDir(), "nope")}, 2},
		{"no args", nil, 2},
		{"two args", []string{compacted, fork}, 2},
	} {
		r := cliRun(t, nil, false, append([]string{"graph"}, tc.args...)...)
		if r.Code != tc.code {
			t.Errorf("%s: exit %d, want %d\nstdout %s\nstderr %s", tc.name, r.Code, tc.code, r.Stdout, r.Stderr)
		}
		if strings.Contains(r.Stderr, "goroutine ") {
			t.Errorf("%s: stack trace on stderr", tc.name)
		}
	}
}

func TestGraphTreeTTY(t *testing.T) {
	s := sessiontest.CopyFixture(t, "compacted")
	plain := cliRun(t, nil, false, "graph", s)
	if plain.Code != 0 || strings.Contains(plain.Stdout, "\x1b[") {
		t.Fatalf("piped tree: code %d, colour %v\n%s", plain.Code, strings.Contains(plain.Stdout, "\x1b["), plain.Stderr)
	}
	if !strings.Contains(plain.Stdout, "◆ summary_second  covers 14 nodes · ") || !strings.Contains(plain.Stdout, "← HEAD") {
		t.Errorf("tree:\n%s", plain.Stdout)
	}
	tty := cliRun(t, nil, true, "graph", s)
	if tty.Code != 0 || !strings.Contains(tty.Stdout, "\x1b[") {
		t.Errorf("tree on a TTY has no colour:\n%q", tty.Stdout)
	}
	if tty.Stderr != "" || plain.Stderr != "" {
		t.Errorf("stderr: %q %q", tty.Stderr, plain.Stderr)
	}
	never := cliRun(t, nil, true, "graph", "--color", "never", s)
	if strings.Contains(never.Stdout, "\x1b[") {
		t.Error("--color never still colours")
	}
}

// -o writes atomically: the file appears only on success, and a failed run
// leaves an existing file untouched and no temporary file behind.
func TestGraphOutputAtomic(t *testing.T) {
	s := sessiontest.CopyFixture(t, "compacted")
	dir := t.TempDir()
	out := filepath.Join(dir, "g.dot")
	if r := cliRun(t, nil, true, "graph", s, "--format", "dot", "-o", out); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("code %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(raw), "digraph ctxfold {") || strings.Contains(string(raw), "\x1b[") {
		t.Fatalf("output file: %v %q", err, raw)
	}
	// A run that fails (unknown --around) after -o was named.
	if r := cliRun(t, nil, false, "graph", s, "-o", out, "--around", "nope"); r.Code != 2 {
		t.Fatalf("code %d", r.Code)
	}
	// (A failure in the middle of writing is report.WriteFileAtomic's test.)
	after, _ := os.ReadFile(out)
	if string(after) != string(raw) {
		t.Error("a failed run changed the existing output file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("leftover files after a failed run: %v", names)
	}
}

func TestGraphJSONIsTheJSONFormat(t *testing.T) {
	s := sessiontest.CopyFixture(t, "compacted")
	a := cliRun(t, nil, false, "graph", s, "--json")
	b := cliRun(t, nil, false, "graph", s, "--format", "json")
	if a.Code != 0 || a.Stdout != b.Stdout {
		t.Fatalf("--json and --format json differ:\n%s\n%s", a.Stdout, b.Stdout)
	}
	m := decodeJSON(t, a.Stdout)
	if m["active_summary_id"] != "summary_second" || m["schema_version"] != float64(2) {
		t.Errorf("json: %v", m)
	}
}

// A drawing does not fail on a model estimate does not know: it counts
// with the default encoding and says so on stderr.
func TestGraphUnknownModel(t *testing.T) {
	s := sessiontest.CopyFixture(t, "fork")
	meta := filepath.Join(s, "session.json")
	raw, _ := os.ReadFile(meta)
	os.WriteFile(meta, []byte(strings.Replace(string(raw), `"claude-sonnet-4-5"`, `"model-from-the-future"`, 1)), 0o644)
	r := cliRun(t, nil, false, "graph", s)
	if r.Code != 0 || !strings.Contains(r.Stderr, `unknown model "model-from-the-future"`) || !strings.Contains(r.Stdout, "← HEAD") {
		t.Errorf("code %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
}

// The tokens are counted for --model, else the session's recorded model,
// else the env/config model — and the JSON names what counted them.
func TestGraphModelPrecedence(t *testing.T) {
	s := sessiontest.CopyFixture(t, "compacted") // records gpt-4.1 (o200k_base)
	env := map[string]string{"CTXFOLD_MODEL": "gpt-4"}
	for _, tc := range []struct {
		name            string
		env             map[string]string
		args            []string
		model, encoding string
	}{
		{"session's model", nil, nil, "gpt-4.1", "o200k_base"},
		{"session's model before the env's", env, nil, "gpt-4.1", "o200k_base"},
		{"--model first", env, []string{"--model", "gpt-4"}, "gpt-4", "cl100k_base"},
		{"--encoding overrides the model's", nil, []string{"--encoding", "cl100k_base"}, "gpt-4.1", "cl100k_base"},
	} {
		r := cliRun(t, tc.env, false, append([]string{"graph", s, "--json"}, tc.args...)...)
		if r.Code != 0 {
			t.Fatalf("%s: code %d: %s", tc.name, r.Code, r.Stderr)
		}
		m := decodeJSON(t, r.Stdout)
		if m["model"] != tc.model || m["encoding"] != tc.encoding {
			t.Errorf("%s: model %v encoding %v, want %s %s", tc.name, m["model"], m["encoding"], tc.model, tc.encoding)
		}
	}
	// The env's model is the fallback when the session records none.
	meta := filepath.Join(s, "session.json")
	raw, _ := os.ReadFile(meta)
	os.WriteFile(meta, []byte(strings.Replace(string(raw), `"model": "gpt-4.1",`, "", 1)), 0o644)
	r := cliRun(t, env, false, "graph", s, "--json")
	if m := decodeJSON(t, r.Stdout); r.Code != 0 || m["model"] != "gpt-4" || m["encoding"] != "cl100k_base" {
		t.Errorf("no session model: code %d model %v encoding %v", r.Code, m["model"], m["encoding"])
	}
}

func TestGraphEmptySession(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(`{"format_version":1,"head":""}`), 0o644)
	for _, tty := range []bool{false, true} {
		r := cliRun(t, nil, tty, "graph", dir)
		note := strings.Contains(r.Stderr, "nothing to show")
		if r.Code != 0 || r.Stdout != "" || note != tty {
			t.Errorf("tty %v: code %d stdout %q stderr %q", tty, r.Code, r.Stdout, r.Stderr)
		}
	}
}
