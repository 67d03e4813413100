package cmd

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/setup"
)

// hookEnv is an environment whose cache is the test's own.
func hookEnv(t *testing.T) (map[string]string, string) {
	t.Helper()
	cache := t.TempDir()
	return map[string]string{"XDG_CACHE_HOME": cache, "HOME": t.TempDir()}, filepath.Join(cache, "ctxfold")
}

// ctxfold hook never breaks the client: whatever it is given it exits 0,
// prints nothing and logs why.
func TestHookNeverBreaksTheClient(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.jsonl")
	if err := os.WriteFile(huge, []byte(strings.Repeat(`{"type":"user","garbage":`, 1<<16)), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated, _ := os.ReadFile("../testdata/interop/claude-code/2.1.328/compact/transcript/00000000-0000-4000-8000-000000000001.jsonl")
	cut := filepath.Join(dir, "cut.jsonl")
	_ = os.WriteFile(cut, truncated[:len(truncated)/2], 0o644)
	ev := func(event, file string) string {
		b, _ := json.Marshal(map[string]string{"hook_event_name": event, "transcript_path": file, "source": "compact"})
		return string(b)
	}
	cases := map[string]string{
		"empty":              "",
		"truncated json":     `{"hook_event_name":"PreCompact","transcript_pa`,
		"not an object":      `[1,2,3]`,
		"hostile control":    "\x1b[2J\x00\xff{\"hook_event_name\":\"PreCompact\"}",
		"over the input cap": `{"hook_event_name":"PreCompact","x":"` + strings.Repeat("a", 2<<20) + `"}`,
		"missing transcript": ev("PreCompact", filepath.Join(dir, "nope.jsonl")),
		"directory":          ev("PreCompact", dir),
		"garbage transcript": ev("PreCompact", huge),
		"no transcript_path": `{"hook_event_name":"PreCompact"}`,
		"unknown event":      ev("Whatever", cut),
		"session start":      ev("SessionStart", filepath.Join(dir, "nope.jsonl")),
		// Gemini CLI 0.61's shapes (docs/HOOKS.md): PreCompress on a
		// garbage transcript, BeforeAgent with nothing pending, the events
		// ctxfold does not handle.
		"gemini precompress": ev("PreCompress", huge),
		"gemini beforeagent": `{"hook_event_name":"BeforeAgent","transcript_path":"` + huge + `","prompt":"\u001b[2J hi","timestamp":"2026-01-01T00:00:00.000Z"}`,
		"gemini afteragent":  `{"hook_event_name":"AfterAgent","transcript_path":"x","prompt_response":{"nested":[1]}}`,
	}
	silent := map[string]bool{"unknown event": true, "gemini beforeagent": true, "gemini afteragent": true}
	for name, stdin := range cases {
		t.Run(name, func(t *testing.T) {
			env, cache := hookEnv(t)
			start := time.Now()
			r := runEnv(t, cliEnv{Stdin: stdin, Env: env}, "hook")
			if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
				t.Fatalf("code %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("took %s", d)
			}
			log, _ := os.ReadFile(filepath.Join(cache, "hook.log"))
			if !silent[name] && len(log) == 0 {
				t.Fatalf("nothing logged")
			}
		})
	}
	t.Run("bad flag", func(t *testing.T) {
		env, cache := hookEnv(t)
		r := runEnv(t, cliEnv{Stdin: ev("PreCompact", cut), Env: env}, "hook", "--no-such-flag")
		if r.Code != 0 || r.Stdout != "" {
			t.Fatalf("%+v", r)
		}
		if log, _ := os.ReadFile(filepath.Join(cache, "hook.log")); !strings.Contains(string(log), "no-such-flag") {
			t.Fatalf("log: %q", log)
		}
	})
	// Issue 45 #3: a stray argument is logged, and the hook still runs.
	t.Run("stray argument", func(t *testing.T) {
		env, cache := hookEnv(t)
		r := runEnv(t, cliEnv{Stdin: ev("PreCompact", cut), Env: env}, "hook", "extra", setupMarker)
		if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
			t.Fatalf("%+v", r)
		}
		if log, _ := os.ReadFile(filepath.Join(cache, "hook.log")); !strings.Contains(string(log), `ignored arguments ["extra"]`) {
			t.Fatalf("log: %q", log)
		}
	})
	// Issue 45 #4: the log escapes what a hostile transcript_path holds.
	t.Run("log escapes control bytes", func(t *testing.T) {
		env, cache := hookEnv(t)
		r := runEnv(t, cliEnv{Stdin: ev("PreCompact", filepath.Join(dir, "x\x1b]0;pwned\x07\x1b[2J.jsonl")), Env: env}, "hook")
		if r.Code != 0 || r.Stdout != "" {
			t.Fatalf("%+v", r)
		}
		log, _ := os.ReadFile(filepath.Join(cache, "hook.log"))
		if len(log) == 0 || strings.ContainsAny(string(log), "\x1b\x07") {
			t.Fatalf("log: %q", log)
		}
	})
}

// setupMarker is the argument setup writes into the hook's command.
var setupMarker = setup.Marker

// A client that never closes stdin is not waited for past --timeout.
func TestHookTimeBound(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ios, _, out, _ := report.Test()
	opts := &hookOptions{IO: ios, In: pr, CacheDir: t.TempDir(), Timeout: 300 * time.Millisecond}
	start := time.Now()
	runHook(context.Background(), opts)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("hook waited %s for stdin", d)
	}
	if out.Len() != 0 {
		t.Fatalf("printed %q", out.String())
	}
	log, _ := os.ReadFile(filepath.Join(opts.CacheDir, "hook.log"))
	if !strings.Contains(string(log), "deadline") && !strings.Contains(string(log), "gave up") {
		t.Fatalf("log: %q", log)
	}
}

// The command prints exactly the hook's JSON once the client's compaction
// record is in the transcript, and nothing the second time.
func TestHookCommandInjects(t *testing.T) {
	src := "../testdata/interop/claude-code/2.1.328/compact/transcript/00000000-0000-4000-8000-000000000001.jsonl"
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(full), `"subtype":"compact_boundary"`)
	pre := full[:strings.LastIndex(string(full[:i]), "\n")+1]
	file := filepath.Join(t.TempDir(), "s.jsonl")
	_ = os.WriteFile(file, pre, 0o644)
	env, _ := hookEnv(t)
	in := func(ev string) string {
		b, _ := json.Marshal(map[string]string{"hook_event_name": ev, "transcript_path": file, "source": "compact"})
		return string(b)
	}
	for _, ev := range []string{"PreCompact", "SessionStart"} {
		if r := runEnv(t, cliEnv{Stdin: in(ev), Env: env}, "hook"); r.Code != 0 || r.Stdout != "" {
			t.Fatalf("%s: %+v", ev, r)
		}
	}
	_ = os.WriteFile(file, full, 0o644)
	r := runEnv(t, cliEnv{Stdin: in("UserPromptSubmit"), Env: env}, "hook", "--budget", "400")
	var got struct {
		HSO map[string]string `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || !strings.Contains(got.HSO["additionalContext"], "Before compaction, turn one.") {
		t.Fatalf("stdout %q: %v", r.Stdout, err)
	}
	if r := runEnv(t, cliEnv{Stdin: in("UserPromptSubmit"), Env: env}, "hook"); r.Stdout != "" {
		t.Fatalf("second run printed %q", r.Stdout)
	}
}
