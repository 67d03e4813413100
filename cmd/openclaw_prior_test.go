package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A session in pi's format that OpenClaw wrote (its model-snapshot entry
// before the first message, as every OpenClaw JSONL session has) takes
// OpenClaw's prior before a request is recorded — its system prompt and
// tools, about 16,600 tokens — and one pi wrote keeps pi's
// (docs/ACCURACY.md, "The prior").
func TestOpenClawSessionTakesOpenClawsPrior(t *testing.T) {
	b, err := os.ReadFile("../testdata/interop/pi/0.73.1/tool/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	head := strings.Join(lines[:4], "") // header, model, thinking level, the first user message
	snapshot := `{"type":"custom","customType":"model-snapshot","data":{"provider":"fake","modelApi":"openai-completions","modelId":"gpt-5.4"},"id":"4682ef78","parentId":"7b5b7628","timestamp":"2026-12-06T14:43:14.300Z"}` + "\n"
	openclaw := strings.Join(lines[:3], "") + snapshot + strings.Replace(lines[3], `"parentId":"7b5b7628"`, `"parentId":"4682ef78"`, 1)
	for _, c := range []struct{ name, body, want string }{
		{"pi", head, "prior: pi "},
		{"openclaw", openclaw, "prior: openclaw "},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(file, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		r := cliRun(t, map[string]string{"XDG_CACHE_HOME": t.TempDir()}, false, "estimate", file, "--json")
		var e struct {
			Calibration struct {
				Method     string `json:"method"`
				Unrecorded int    `json:"unrecorded_tokens"`
			} `json:"calibration"`
		}
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &e) != nil {
			t.Fatalf("%s: exit %d: %s %s", c.name, r.Code, r.Stdout, r.Stderr)
		}
		if !strings.HasPrefix(e.Calibration.Method, c.want) {
			t.Errorf("%s: method %q, want %q…", c.name, e.Calibration.Method, c.want)
		}
		if c.name == "openclaw" && e.Calibration.Unrecorded < 10000 {
			t.Errorf("openclaw: the prior adds %d, want OpenClaw's system prompt and tools", e.Calibration.Unrecorded)
		}
	}
}
