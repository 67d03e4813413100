package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

const importFixtures = "../fixtures/import/"

func TestImportExitCodes(t *testing.T) {
	tmp := t.TempDir()
	existing := filepath.Join(tmp, "existing")
	if r := cliRun(t, nil, false, "import", importFixtures+"openai/messages.json", "-o", existing); r.Code != 0 {
		t.Fatalf("setup: exit %d: %s", r.Code, r.Stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		// stderr is the one error line expected (a substring), or "".
		stderr string
	}{
		{"codex", []string{importFixtures + "codex/rollout-compacted.jsonl"}, 0, ""},
		{"gemini", []string{importFixtures + "gemini/legacy.json"}, 0, ""},
		{"chatgpt several", []string{importFixtures + "chatgpt/conversations.json"}, 0, ""},
		{"anthropic named", []string{"--from", "anthropic", importFixtures + "anthropic/body.json"}, 0, ""},
		{"truncated rollout is not fatal", []string{importFixtures + "codex/rollout-truncated.jsonl"}, 0, ""},
		{"malformed codex", []string{importFixtures + "codex/malformed.jsonl"}, 2, "codex/malformed.jsonl:3: expected a Codex rollout record"},
		{"malformed gemini", []string{importFixtures + "gemini/malformed.jsonl"}, 2, "gemini/malformed.jsonl:3: \"$rewindTo\" must be"},
		{"malformed chatgpt", []string{importFixtures + "chatgpt/malformed.json"}, 2, "chatgpt/malformed.json:6: expected a conversation object"},
		{"malformed openai", []string{importFixtures + "openai/malformed.json"}, 2, "openai/malformed.json:35: messages[3]"},
		{"malformed anthropic", []string{importFixtures + "anthropic/malformed.json"}, 2, "anthropic/malformed.json:15: messages[1].content[0]"},
		{"line over the limit", []string{"--max-line-bytes", "100", importFixtures + "codex/rollout-compacted.jsonl"}, 2, "rollout-compacted.jsonl:1: line is longer than the 100-byte limit"},
		{"wrong format named", []string{"--from", "gemini", importFixtures + "codex/rollout-compacted.jsonl"}, 2, "rollout-compacted.jsonl: no Gemini CLI records found; the file looks like Codex"},
		{"undetectable", []string{"../README.md"}, 2, "README.md:1: not a supported export (supported: "},
		{"no such file", []string{filepath.Join(tmp, "nope.jsonl")}, 2, "nope.jsonl"},
		{"bad --from", []string{"--from", "word", importFixtures + "openai/messages.json"}, 2, "--from must be one of"},
		{"no file", nil, 2, "needs at least 1 argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "s")
			r := cliRun(t, nil, false, append(append([]string{"import"}, tc.args...), "-o", out)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			if tc.stderr != "" {
				lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
				if !strings.HasPrefix(lines[0], "ctxfold: error: ") || !strings.Contains(lines[0], tc.stderr) || strings.Contains(r.Stderr, "goroutine") {
					t.Errorf("stderr %q, want one error line containing %q", r.Stderr, tc.stderr)
				}
				if len(lines) > 2 || (len(lines) == 2 && !strings.HasPrefix(lines[1], "ctxfold: hint: ")) {
					t.Errorf("more than one error line: %q", r.Stderr)
				}
			}
		})
	}
	r := cliRun(t, nil, false, "import", importFixtures+"openai/messages.json", "-o", existing)
	if r.Code != 2 || !strings.Contains(r.Stderr, "already a session") || !strings.Contains(r.Stderr, "hint: add to it with --append") {
		t.Errorf("overwrite: exit %d stderr %q", r.Code, r.Stderr)
	}
	r = cliRun(t, nil, false, "import", "-o", filepath.Join(tmp, "x"))
	if r.Code != 2 {
		t.Errorf("no file: exit %d", r.Code)
	}
	r = cliRun(t, nil, false, "import", importFixtures+"openai/messages.json")
	if r.Code != 2 || !strings.Contains(r.Stderr, "-o DIR is required") {
		t.Errorf("no -o: exit %d stderr %q", r.Code, r.Stderr)
	}
}

func TestImportOutput(t *testing.T) {
	file := importFixtures + "anthropic/body.json"
	out := filepath.Join(t.TempDir(), "s")
	r := cliRun(t, nil, false, "import", file, "-o", out)
	want := "session\tanthropic\t" + out + "\tnodes=6\talready_present=0\thead=m5-25c61a73\n" +
		"media\t" + out + "\treferences=1\tbytes=8\n" +
		"record\tbody/max_tokens\t0\t0\t1\tskipped 1: request parameter, not part of the conversation\n" +
		"record\tbody/model\t0\t1\t0\tmerged 1: recorded in session.json\n" +
		"record\tbody/system\t1\t0\t0\t\n" +
		"record\tmessage/assistant\t2\t0\t0\t\n" +
		"record\tmessage/user\t3\t0\t0\t\n"
	if r.Code != 0 || r.Stdout != want || r.Stderr != "" {
		t.Fatalf("piped: exit %d\nstdout:\n%q\nwant:\n%q\nstderr %q", r.Code, r.Stdout, want, r.Stderr)
	}

	out = filepath.Join(t.TempDir(), "s")
	r = cliRun(t, nil, true, "import", file, "-o", out)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "FORMAT  anthropic\n") || !strings.Contains(r.Stdout, "RECORD             IMPORTED  MERGED  SKIPPED  WHY\n") ||
		!strings.Contains(r.Stdout, out+": 1 media kept as sha256 references; 8 bytes not stored in the session\n") {
		t.Fatalf("tty: exit %d\n%s", r.Code, r.Stdout)
	}

	out = filepath.Join(t.TempDir(), "s")
	r = cliRun(t, nil, false, "import", "--json", importFixtures+"codex/rollout-truncated.jsonl", "-o", out)
	m := decodeJSON(t, r.Stdout)
	sessions, _ := m["sessions"].([]any)
	warnings, _ := m["warnings"].([]any)
	if r.Code != 0 || m["format"] != "codex" || m["schema_version"] == nil || len(sessions) != 1 || len(warnings) != 2 {
		t.Fatalf("json: exit %d\n%s", r.Code, r.Stdout)
	}
	// Warnings also go to stderr, one line each.
	if n := strings.Count(r.Stderr, "ctxfold: warning: "); n != 2 {
		t.Errorf("stderr %q", r.Stderr)
	}
}
