package cmd

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 44 item 6: a Claude Code transcript before its first reply records
// no model. estimate FILE budgets it for the client's default and says the
// model is assumed; a folder holding such a file passes --fail-above; an
// error of a file in a folder names the file, not its cache session.
func TestEstimateBeforeFirstReply(t *testing.T) {
	src, err := os.Open(importFixtures + "claude-code/sess-0001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// The lines before the first assistant record.
	var head []string
	sc := bufio.NewScanner(src)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && !strings.Contains(sc.Text(), `"type":"assistant"`) {
		head = append(head, sc.Text())
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "early.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(head, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	r := runEnv(t, env, "estimate", file, "--json")
	var res struct {
		Model        string
		ModelAssumed bool `json:"model_assumed"`
		Total        int
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 {
		t.Fatalf("estimate FILE: exit %d %q %q %v", r.Code, r.Stdout, r.Stderr, err)
	}
	if res.Model != "claude-sonnet-4-5" || !res.ModelAssumed || res.Total == 0 {
		t.Errorf("estimate FILE: %+v", res)
	}
	if !strings.Contains(r.Stderr, "assumed claude-sonnet-4-5") {
		t.Errorf("no word that the model is assumed: %q", r.Stderr)
	}
	// The configured model wins over the client's default, unassumed.
	r = runEnv(t, cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir(), "CTXFOLD_MODEL": "claude-opus-4-6"}}, "estimate", file, "--json")
	res.ModelAssumed = false
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || res.Model != "claude-opus-4-6" || res.ModelAssumed {
		t.Errorf("configured model: %+v %q", res, r.Stderr)
	}
	// A folder with that file and a finished transcript: the gate holds.
	full, err := os.ReadFile(importFixtures + "claude-code/sess-0001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "full.jsonl"), full, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runEnv(t, env, "estimate", "--fail-above", "80", dir); r.Code != 0 {
		t.Errorf("estimate --fail-above 80 DIR: exit %d %s", r.Code, r.Stderr)
	}
	// A session with no model and no client default still fails, naming
	// the file in a many-file run, never its cache session.
	body := filepath.Join(dir, "body.json")
	if err := os.WriteFile(body, []byte(`{"messages":[{"role":"user","content":"hi"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runEnv(t, env, "estimate", file, body)
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, body+": no model") || strings.Contains(r.Stderr, env.Env["XDG_CACHE_HOME"]) {
		t.Errorf("estimate DIR with a model-less body: exit %d %s", r.Code, r.Stderr)
	}
}

// A Claude Code transcript whose attachments name the model before the
// first reply ("The exact model ID is …") is budgeted for that model, not
// assumed.
func TestEstimateModelFromAttachment(t *testing.T) {
	src, err := os.ReadFile("../testdata/interop/claude-code/2.1.332/chat/transcript/00000000-0000-4000-8000-000000000001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, `"type":"assistant"`) {
			break // the transcript as it is before the first reply
		}
		keep = append(keep, l)
	}
	file := filepath.Join(t.TempDir(), "early.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	for run := 0; run < 2; run++ { // the second run reads the stored view
		r := runEnv(t, env, "estimate", file, "--json")
		var res struct {
			Model        string
			ModelAssumed bool `json:"model_assumed"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || res.Model != "claude-opus-5-5" || res.ModelAssumed {
			t.Fatalf("run %d: exit %d %+v %v %s", run, r.Code, res, err, r.Stderr)
		}
	}
}

// compact --dry-run and render --fit resolve the model as estimate does:
// the attachment's model, else the client's default with the warning
// naming the file.
func TestCompactAndFitAssumeAsEstimate(t *testing.T) {
	src, err := os.ReadFile("../testdata/interop/claude-code/2.1.332/chat/transcript/00000000-0000-4000-8000-000000000001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	var early []string
	for _, l := range lines {
		if strings.Contains(l, `"type":"assistant"`) {
			break
		}
		early = append(early, l)
	}
	dir := t.TempDir()
	announced := filepath.Join(dir, "announced.jsonl")
	os.WriteFile(announced, []byte(strings.Join(early, "\n")+"\n"), 0o644)
	// Without the attachment naming the model: the client's default.
	var bare []string
	for _, l := range early {
		if !strings.Contains(l, "The exact model ID is") {
			bare = append(bare, l)
		}
	}
	assumed := filepath.Join(dir, "assumed.jsonl")
	os.WriteFile(assumed, []byte(strings.Join(bare, "\n")+"\n"), 0o644)
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	r := runEnv(t, env, "render", announced, "--fit", "--json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"model":"claude-opus-5-5"`) || strings.Contains(r.Stderr, "assumed") {
		t.Errorf("render --fit, announced: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runEnv(t, env, "render", assumed, "--fit", "--json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"model":"claude-sonnet-4-5"`) || !strings.Contains(r.Stderr, "assumed claude-sonnet-4-5") {
		t.Errorf("render --fit, assumed: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runEnv(t, env, "compact", assumed, "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stderr, "ctxfold: warning: "+assumed+": the session records no model yet: assumed claude-sonnet-4-5") {
		t.Errorf("compact --dry-run, assumed: %d %s", r.Code, r.Stderr)
	}
}
