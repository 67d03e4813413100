package cmd

// Tests of the core commands (init, append, render, checkout, repair)
// through Run with fake IO: exact stdout, stderr and exit code.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

func (r cliResult) check(t *testing.T, stdout, stderr string, code int) {
	t.Helper()
	if r.Stdout != stdout || r.Stderr != stderr || r.Code != code {
		t.Fatalf("got exit %d\nstdout: %q\nstderr: %q\nwant exit %d\nstdout: %q\nstderr: %q", r.Code, r.Stdout, r.Stderr, code, stdout, stderr)
	}
}

// coreFiles is every file of a session directory (the lock record
// excluded), to show that a refused command changed nothing.
func coreFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == store.LockFile {
			return err
		}
		data, _ := os.ReadFile(path)
		out[path] = string(data)
		return nil
	})
	return out
}

func coreSame(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("files changed: %d before, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed", k)
		}
	}
}

func TestCoreInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	runEnv(t, cliEnv{}, "init", dir, "--model", "gpt-4o").check(t, "initialized empty session in "+dir+"\n", "", 0)
	meta, _ := os.ReadFile(filepath.Join(dir, store.MetaFile))
	// The hash chain (docs/FORMAT.md §1) starts at the empty file's digest;
	// the stat fingerprint after it differs per run.
	want := "{\n  \"format_version\": 1,\n  \"head\": \"\",\n  \"model\": \"gpt-4o\",\n  \"created_at\": \"2026-11-30T12:00:00Z\",\n  \"nodes_bytes\": 0,\n  \"nodes_sha256\": \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\n"
	if !strings.HasPrefix(string(meta), want) || !strings.Contains(string(meta), `"nodes_stat": {`) {
		t.Fatalf("session.json:\n%s", meta)
	}
	runEnv(t, cliEnv{}, "init", dir).check(t, "", "ctxfold: error: "+dir+": already a session\n", 2)
	dir2 := filepath.Join(t.TempDir(), "j")
	runEnv(t, cliEnv{}, "init", dir2, "--json").check(t, `{"format_version":1,"model":"","schema_version":2,"session":"`+dir2+`"}`+"\n", "", 0)
	runEnv(t, cliEnv{}, "init").check(t, "", "ctxfold: error: ctxfold init takes 1 argument(s), got 0\nctxfold: hint: see 'ctxfold help' for usage\n", 2)
}

// docs/FORMAT.md §1 through the CLI: append on HEAD advances it; another
// predecessor or a caller does not; checkout refuses a summary or a
// missing id and changes nothing.
func TestCoreHeadRules(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	runEnv(t, cliEnv{}, "init", dir)
	runEnv(t, cliEnv{}, "append", dir, "--role", "user", "--content", "q1", "--id", "u1").check(t, "u1\n", "", 0)
	runEnv(t, cliEnv{}, "append", dir, "--role", "assistant", "--content", "r1", "--id", "a1").check(t, "a1\n", "", 0)
	runEnv(t, cliEnv{}, "checkout", dir).check(t, "a1\n", "", 0)
	runEnv(t, cliEnv{}, "append", dir, "--role", "assistant", "--content", "retry", "--id", "a1b", "--predecessor", "u1", "--json").
		check(t, `{"head":"a1","head_moved":false,"ids":["a1b"],"schema_version":2,"session":"`+dir+`"}`+"\n", "", 0)
	runEnv(t, cliEnv{}, "append", dir, "--role", "user", "--content", "sub", "--id", "k1", "--predecessor", "a1", "--caller", "a1", "--json").
		check(t, `{"head":"a1","head_moved":false,"ids":["k1"],"schema_version":2,"session":"`+dir+`"}`+"\n", "", 0)
	runEnv(t, cliEnv{}, "append", dir, "--role", "user", "--content", "q2", "--id", "u2", "--json").
		check(t, `{"head":"u2","head_moved":true,"ids":["u2"],"schema_version":2,"session":"`+dir+`"}`+"\n", "", 0)
	batch := `{"id":"summary_1","predecessor":null,"role":"user","name":"context/summary","content":"[Previous conversation summary]\nasked and answered","metadata":{"compaction":true,"covers_ids":["u1","a1"]}}` + "\n"
	runEnv(t, cliEnv{Stdin: "\n" + strings.Replace(batch, `"u1","a1"`, `"u1","zz"`, 1)}, "append", dir, "--file", "-").
		check(t, "", `ctxfold: error: <stdin>:2: node "summary_1": covers_ids[1] "zz" not found`+"\n", 2)
	runEnv(t, cliEnv{Stdin: batch}, "append", dir, "--file", "-").check(t, "summary_1\n", "", 0)
	runEnv(t, cliEnv{}, "checkout", dir).check(t, "u2\n", "", 0)
	runEnv(t, cliEnv{}, "render", dir, "--format", "ids").check(t, "summary_1\nu2\n", "", 0)

	before := coreFiles(t, dir)
	runEnv(t, cliEnv{}, "checkout", dir, "summary_1").check(t, "",
		`ctxfold: error: node "summary_1": is a summary node; HEAD never rests on a summary (docs/FORMAT.md §1); HEAD unchanged`+"\n", 2)
	runEnv(t, cliEnv{}, "checkout", dir, "nope").check(t, "", `ctxfold: error: node "nope": no such node; HEAD unchanged`+"\n", 2)
	coreSame(t, before, coreFiles(t, dir))

	runEnv(t, cliEnv{}, "checkout", dir, "a1b").check(t, "a1b\n", "", 0)
	runEnv(t, cliEnv{}, "checkout", dir, "--json").check(t, `{"head":"a1b","schema_version":2,"session":"`+dir+`"}`+"\n", "", 0)
	// From the fork the segment u1,a1 is not on the spine: raw.
	runEnv(t, cliEnv{}, "render", dir, "--format", "ids").check(t, "u1\na1b\n", "", 0)
	runEnv(t, cliEnv{}, "checkout", dir, "u2", "--json").check(t, `{"head":"u2","previous":"a1b","schema_version":2,"session":"`+dir+`"}`+"\n", "", 0)
}

func TestCoreAppendRejects(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	runEnv(t, cliEnv{}, "init", dir)
	runEnv(t, cliEnv{}, "append", dir, "--role", "user", "--content", "q", "--id", "u1")
	runEnv(t, cliEnv{}, "append", dir, "--role", "assistant", "--content", "", "--id", "a1", "--tool-calls", `[{"id":"c1","name":"bash","arguments":{}}]`)
	before := coreFiles(t, dir)
	batchFile := filepath.Join(t.TempDir(), "batch.jsonl")
	os.WriteFile(batchFile, []byte(`{"role":"tool","tool_call_id":"c1","content":"ok"}`+"\n"+`{"role":"user","content":`+"\n"), 0o644)
	dupBatch := filepath.Join(t.TempDir(), "dup.jsonl")
	os.WriteFile(dupBatch, []byte(`{"id":"t1","role":"tool","tool_call_id":"c1","content":"ok"}`+"\n"+`{"id":"u1","role":"user","content":"again"}`+"\n"), 0o644)
	for _, tc := range []struct {
		args   []string
		stderr string
		code   int
	}{
		{[]string{"--role", "user", "--content", "x", "--predecessor", "zz"}, `ctxfold: error: node "%s": predecessor "zz" not found`, 2},
		{[]string{"--role", "user", "--content", "x", "--caller", "zz"}, `ctxfold: error: node "%s": caller "zz" not found`, 2},
		{[]string{"--role", "user", "--content", "x", "--id", "u1"}, `ctxfold: error: node "u1": duplicate id: the session already has a node "u1"`, 2},
		{[]string{"--role", "tool", "--content", "x", "--id", "t9", "--tool-call-id", "c7"}, `ctxfold: error: node "t9": tool result for "c7" has no matching open tool call (the open calls are "c1")`, 2},
		{[]string{"--role", "robot", "--content", "x"}, "ctxfold: error: --role must be system, user, assistant or tool, got \"robot\"\nctxfold: hint: see 'ctxfold help' for usage", 2},
		{[]string{"--content", "x"}, "ctxfold: error: --role is required (or --file)\nctxfold: hint: see 'ctxfold help' for usage", 2},
		{[]string{"--role", "user", "--content", "x", "--root", "--predecessor", "u1"}, "ctxfold: error: --root cannot be combined with --predecessor\nctxfold: hint: see 'ctxfold help' for usage", 2},
		{[]string{"--file", batchFile, "--role", "user"}, "ctxfold: error: --file cannot be combined with --role or --content\nctxfold: hint: see 'ctxfold help' for usage", 2},
		{[]string{"--file", batchFile}, "ctxfold: error: " + batchFile + ":2: expected a JSON object: unexpected end of JSON input at byte 25", 2},
		{[]string{"--file", dupBatch}, `ctxfold: error: ` + dupBatch + `:2: node "u1": duplicate id: the session already has a node "u1"`, 2},
		{[]string{"--file", filepath.Join(t.TempDir(), "missing.jsonl")}, "ctxfold: error: %MISSING%", 2},
		{[]string{"--role", "user", "--content", "x", "--tool-calls", "{"}, "%TOOLCALLS%", 2},
	} {
		args := append([]string{"append", dir}, tc.args...)
		r := runEnv(t, cliEnv{}, args...)
		want := tc.stderr
		switch {
		case strings.Contains(want, "%MISSING%"):
			if r.Code != 2 || !strings.Contains(r.Stderr, "missing.jsonl: open ") || strings.Count(r.Stderr, "\n") != 1 {
				t.Fatalf("%v: %+v", tc.args, r)
			}
		case strings.Contains(want, "%TOOLCALLS%"):
			if r.Code != 2 || !strings.HasPrefix(r.Stderr, "ctxfold: error: --tool-calls: expected a JSON array") {
				t.Fatalf("%v: %+v", tc.args, r)
			}
		case strings.Contains(want, "%s"):
			// The generated id appears in the message: check the rest.
			if r.Code != tc.code || r.Stdout != "" || !strings.HasSuffix(r.Stderr, want[strings.Index(want, "%s")+4:]+"\n") ||
				!strings.HasPrefix(r.Stderr, `ctxfold: error: node "n`) {
				t.Fatalf("%v: %+v", tc.args, r)
			}
		default:
			r.check(t, "", want+"\n", tc.code)
		}
		coreSame(t, before, coreFiles(t, dir))
	}
	empty := t.TempDir()
	runEnv(t, cliEnv{}, "append", empty, "--role", "user", "--content", "x").
		check(t, "", fmt.Sprintf("ctxfold: error: %s: not a ctxfold session (no session.json)\nctxfold: hint: create one with 'ctxfold init %s' or 'ctxfold import FILE -o %s'\n", empty, empty, empty), 2)
	if _, err := os.Stat(filepath.Join(empty, store.LockFile)); err == nil {
		t.Fatal("append created a lock file in a non-session")
	}
}

// A held lock: a second writer fails after --lock-timeout with exit 4 and
// a message naming pid, host and since, plus a hint.
func TestCoreLockTimeout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	runEnv(t, cliEnv{}, "init", dir)
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := store.Update(context.Background(), dir, store.WriteOptions{Command: "holder", Now: func() time.Time { return coreNow }}, func(*store.Tx) error {
			close(held)
			<-release
			return nil
		})
		done <- err
	}()
	<-held
	before := coreFiles(t, dir)
	start := time.Now()
	r := runEnv(t, cliEnv{}, "append", dir, "--role", "user", "--content", "x", "--lock-timeout", "300ms")
	waited := time.Since(start)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	pid := os.Getpid()
	r.check(t, "", fmt.Sprintf("ctxfold: error: %s: session is locked by pid %d on %s since 2026-11-30T12:00:00Z (running)\n"+
		"ctxfold: hint: wait for pid %d to finish, or retry with a longer --lock-timeout\n", dir, pid, host, pid), 4)
	if waited < 300*time.Millisecond {
		t.Fatalf("gave up after %v, before --lock-timeout", waited)
	}
	coreSame(t, before, coreFiles(t, dir))
	// Checkout and repair are writers too.
	runEnv(t, cliEnv{}, "append", dir, "--role", "user", "--content", "x", "--id", "u1").check(t, "u1\n", "", 0)
}

// The malformed-session corpus (fixtures/bad/, README there): each case
// gives one line naming file:line (where there is one) and exit 2 from
// every command that reads the session, never a panic; a torn last line
// alone is a warning.
var coreBadCases = map[string]string{
	"active-summary-missing":     `$DIR/session.json:6: node "summary_9": the active summary does not exist`,
	"active-summary-not-summary": `$DIR/nodes.jsonl:2: node "u1": the active summary is not a summary node (metadata.compaction is not true)`,
	"block-without-type":         `$DIR/nodes.jsonl:3: node "a1": content block: missing "type"`,
	"cycle":                      `$DIR/nodes.jsonl:6: node "x1": predecessor chain forms a cycle`,
	"duplicate-id":               `$DIR/nodes.jsonl:4: node "a1": duplicate id (first defined on line 3)`,
	"empty-middle-line":          `$DIR/nodes.jsonl:3: empty line; expected one JSON node`,
	"empty-session-json":         `$DIR/session.json:1: empty file; expected a JSON object with format_version and head`,
	"format-version-missing":     `$DIR/session.json:1: missing format_version`,
	"format-version-newer":       `$DIR/session.json:1: format_version 99 is newer than this ctxfold reads (2); upgrade ctxfold`,
	"head-missing":               `$DIR/session.json:3: node "a9": HEAD names a node that does not exist`,
	"head-on-summary":            `$DIR/session.json:3: node "summary_1": HEAD is a summary node; HEAD never rests on a summary`,
	"head-unset":                 `$DIR/session.json:3: HEAD is unset but the session has 5 nodes`,
	"invalid-utf8":               `$DIR/nodes.jsonl:3: invalid UTF-8 at byte 64`,
	"malformed-middle-line":      `$DIR/nodes.jsonl:3: expected a JSON object: unexpected end of JSON input at byte 67`,
	"missing-caller":             `$DIR/nodes.jsonl:5: node "a2": caller "ghost" not found`,
	"missing-id":                 `$DIR/nodes.jsonl:2: missing "id"`,
	"missing-predecessor":        `$DIR/nodes.jsonl:4: node "u2": predecessor "a0" not found`,
	"nodes-bytes-beyond-file":    `$DIR/nodes.jsonl: file is 337 bytes but session.json records 99999 committed bytes: data was removed outside ctxfold; 'ctxfold repair $DIR' truncates it to its last complete line and keeps the rest in lost+found/`,
	"not-an-object":              `$DIR/nodes.jsonl:2: expected a JSON object, got an array`,
	"session-json-malformed":     `$DIR/session.json:5: invalid session meta: invalid character '"' after object key:value pair`,
	"unknown-role":               `$DIR/nodes.jsonl:3: node "a1": "role" must be system, user, assistant or tool, got "llm"`,
	// Warnings, not errors: the session reads.
	"torn-last-line":             `WARN $DIR/nodes.jsonl:6: 40 bytes after the last committed write are ignored (an interrupted write); 'ctxfold repair' moves them to lost+found/`,
	"torn-last-line-handwritten": `WARN $DIR/nodes.jsonl:6: torn last line ignored (an interrupted write); 'ctxfold repair' removes it`,
}

// isGraphFault: the fixtures/bad sessions that read but whose graph is
// broken (dag.New's faults), as opposed to ones that do not read at all.
func isGraphFault(name string) bool {
	switch name {
	case "active-summary-missing", "active-summary-not-summary", "cycle", "duplicate-id", "head-missing",
		"head-on-summary", "head-unset", "missing-caller", "missing-predecessor":
		return true
	}
	return false
}

func TestCoreBadCorpus(t *testing.T) {
	entries, err := os.ReadDir("../fixtures/bad")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
			if _, ok := coreBadCases[e.Name()]; !ok {
				t.Errorf("fixtures/bad/%s has no expected outcome in coreBadCases", e.Name())
			}
		}
	}
	sort.Strings(names)
	for _, name := range names {
		want := coreBadCases[name]
		t.Run(name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, filepath.Join("bad", name))
			msg := strings.ReplaceAll(strings.TrimPrefix(want, "WARN "), "$DIR", dir)
			if strings.HasPrefix(want, "WARN ") {
				runEnv(t, cliEnv{}, "render", dir, "--format", "ids").check(t, "sys\nu1\na1\nu2\na2\n", "ctxfold: warning: "+msg+"\n", 0)
				runEnv(t, cliEnv{}, "checkout", dir).check(t, "a2\n", "ctxfold: warning: "+msg+"\n", 0)
				r := runEnv(t, cliEnv{}, "repair", dir)
				lost, _ := filepath.Glob(filepath.Join(dir, store.LostFound, "nodes-*.jsonl"))
				if r.Code != 0 || len(lost) != 1 || !strings.Contains(r.Stdout, "moved 40 bytes of an interrupted write to "+lost[0]) {
					t.Fatalf("repair: %+v, lost+found %v", r, lost)
				}
				if data, _ := os.ReadFile(lost[0]); string(data) != `{"id":"u3","predecessor":"a2","role":"us` {
					t.Fatalf("lost+found holds %q", data)
				}
				runEnv(t, cliEnv{}, "render", dir, "--format", "ids").check(t, "sys\nu1\na1\nu2\na2\n", "", 0)
				runEnv(t, cliEnv{}, "repair", dir).check(t, dir+": nothing to repair\n", "", 0)
				return
			}
			before := coreFiles(t, dir)
			line := "ctxfold: error: " + msg + "\n"
			runEnv(t, cliEnv{}, "render", dir).check(t, "", line, 2)
			// With --json the error is also one object on stdout.
			jerr, _ := report.JSONLine(jsonError{Error: msg, ExitCode: 2})
			runEnv(t, cliEnv{}, "render", dir, "--format", "openai", "--json").check(t, string(jerr)+"\n", line, 2)
			// append refuses too (it never extends a broken session), with
			// the same line, and changes nothing.
			// A broken graph is refused by the store's write path, which
			// says nothing was written and where every fault is listed.
			appendErr := line
			if isGraphFault(name) {
				appendErr += "ctxfold: hint: nothing written: the session's graph is broken; 'ctxfold verify " + dir + "' lists every fault\n"
			}
			runEnv(t, cliEnv{}, "append", dir, "--role", "user", "--content", "x", "--predecessor", "u1").check(t, "", appendErr, 2)
			coreSame(t, before, coreFiles(t, dir))
		})
	}
}

// A 50 MB single line is refused with file:line, not read into memory
// whole and never a crash.
func TestCoreHugeLine(t *testing.T) {
	if !longRun() {
		t.Skip("writes 50 MB")
	}
	dir := filepath.Join(t.TempDir(), "s")
	runEnv(t, cliEnv{}, "init", dir)
	f, err := os.Create(filepath.Join(dir, store.NodesFile))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"u1","predecessor":null,"role":"user","content":"`)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	for range 50 {
		f.Write(chunk)
	}
	f.WriteString("\"}\n")
	f.Close()
	os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(`{"format_version":1,"head":"u1"}`), 0o644)
	want := fmt.Sprintf("ctxfold: error: %s/nodes.jsonl:1: line is longer than the 16777216-byte limit (raise it with --max-line-bytes)\n", dir)
	runEnv(t, cliEnv{}, "render", dir).check(t, "", want, 2)
	// A higher limit reads it.
	r := runEnv(t, cliEnv{}, "render", dir, "--format", "ids", "--max-line-bytes", "60000000")
	r.check(t, "u1\n", "", 0)
}

// render on an empty session: nothing on stdout; a note on stderr only
// when it is a terminal.
func TestCoreRenderEmptyNote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	runEnv(t, cliEnv{}, "init", dir)
	runEnv(t, cliEnv{}, "render", dir).check(t, "", "", 0)
	runEnv(t, cliEnv{TTY: true}, "render", dir).check(t, "", dir+": the session is empty; nothing to show\n", 0)
	runEnv(t, cliEnv{TTY: true}, "render", dir, "--format", "ids").check(t, "", dir+": the session is empty; nothing to show\n", 0)
	runEnv(t, cliEnv{TTY: true}, "render", dir, "--format", "openai").check(t, "[\n]\n", "", 0)
}

// The text format colours node headers by role on a terminal; NO_COLOR,
// --color never and a pipe turn it off, --color always forces it. The
// other formats are the same bytes everywhere.
func TestCoreRenderColour(t *testing.T) {
	fixture := sessiontest.CopyFixture(t, "compacted")
	plain := runEnv(t, cliEnv{}, "render", fixture)
	if plain.Code != 0 || strings.Contains(plain.Stdout, "\x1b[") {
		t.Fatalf("piped: %+v", plain)
	}
	codes := map[string]string{"system": "\x1b[35m", "user": "\x1b[36m", "assistant": "\x1b[32m", "tool": "\x1b[2m", "summary": "\x1b[1m\x1b[33m"}
	var colored strings.Builder
	headers := 0
	for _, line := range strings.SplitAfter(plain.Stdout, "\n") {
		if strings.HasPrefix(line, "── ") {
			label := strings.Fields(line)[1]
			end := "\x1b[0m"
			if label == "summary" {
				end += "\x1b[0m"
			}
			line = codes[label] + strings.TrimSuffix(line, "\n") + end + "\n"
			headers++
		}
		colored.WriteString(line)
	}
	if headers != 4 {
		t.Fatalf("%d headers in\n%s", headers, plain.Stdout)
	}
	for _, tc := range []struct {
		env   cliEnv
		color string
		want  string
	}{
		{cliEnv{TTY: true}, "auto", colored.String()},
		{cliEnv{TTY: true, Env: map[string]string{"NO_COLOR": "1"}}, "auto", plain.Stdout},
		{cliEnv{TTY: true, Env: map[string]string{"TERM": "dumb"}}, "auto", plain.Stdout},
		{cliEnv{TTY: true}, "never", plain.Stdout},
		{cliEnv{}, "always", colored.String()},
		{cliEnv{}, "auto", plain.Stdout},
	} {
		runEnv(t, tc.env, "render", fixture, "--color", tc.color).check(t, tc.want, "", 0)
	}
	for _, format := range []string{"ids", "jsonl", "openai", "anthropic"} {
		piped := runEnv(t, cliEnv{}, "render", fixture, "--format", format)
		runEnv(t, cliEnv{TTY: true}, "render", fixture, "--format", format, "--color", "always").check(t, piped.Stdout, "", 0)
	}
	if r := runEnv(t, cliEnv{}, "render", fixture, "--color", "sometimes"); r.Code != 2 || r.Stdout != "" {
		t.Fatalf("--color sometimes: %+v", r)
	}
}

func TestCoreRenderErrors(t *testing.T) {
	fixture := sessiontest.CopyFixture(t, "compacted")
	runEnv(t, cliEnv{}, "render", fixture, "--format", "yaml").
		check(t, "", "ctxfold: error: unknown format \"yaml\" (want text, ids, jsonl, openai, anthropic, responses, gemini)\nctxfold: hint: see 'ctxfold help' for usage\n", 2)
	runEnv(t, cliEnv{}, "render", fixture, "--head", "zz").check(t, "", "ctxfold: error: "+fixture+": --head \"zz\": no such node\n", 2)
	runEnv(t, cliEnv{}, "render", fixture, "--head", "summary_first").
		check(t, "", "ctxfold: error: "+fixture+": --head \"summary_first\": is a summary node; render from a turn\n", 2)
	runEnv(t, cliEnv{}, "render", fixture, "--json").check(t,
		`{"head":"a8","ids":["sys","summary_second","u4","a8"],"raw":false,"schema_version":2,"session":"`+fixture+`","summarized":true,"summary_id":"summary_second"}`+"\n", "", 0)
	runEnv(t, cliEnv{}, "render", fixture, "--head", "a4x", "--json").check(t,
		`{"head":"a4x","ids":["sys","u1","a1","t1","a2","t2","a3","u2x","a4x"],"raw":false,"schema_version":2,"session":"`+fixture+`","summarized":false,"summary_id":""}`+"\n", "", 0)
	runEnv(t, cliEnv{}, "render", filepath.Join(fixture, "nope")).check(t, "", "ctxfold: error: "+filepath.Join(fixture, "nope")+": no such session directory\n", 2)
}

func TestCoreRepair(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "fork")
	runEnv(t, cliEnv{}, "repair", dir).check(t, dir+": nothing to repair\n", "", 0)
	runEnv(t, cliEnv{}, "repair", dir, "--json").check(t, `{"actions":[],"repaired":false,"schema_version":2,"session":"`+dir+`"}`+"\n", "", 0)
	runEnv(t, cliEnv{}, "repair", dir, "--unlock").check(t, dir+": nothing to repair\n", "", 0)
	// A middle-line fault is reported, not repaired.
	bad := sessiontest.CopyFixture(t, "bad/malformed-middle-line")
	before := coreFiles(t, bad)
	runEnv(t, cliEnv{}, "repair", bad).check(t, "", "ctxfold: error: "+bad+"/nodes.jsonl:3: expected a JSON object: unexpected end of JSON input at byte 67\n", 2)
	coreSame(t, before, coreFiles(t, bad))
}

// Interrupted while waiting for the lock: exit 130, nothing written.
func TestCoreInterruptedWhileWaiting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	runEnv(t, cliEnv{}, "init", dir)
	held, release := make(chan struct{}), make(chan struct{})
	go store.Update(context.Background(), dir, store.WriteOptions{}, func(*store.Tx) error {
		close(held)
		<-release
		return nil
	})
	<-held
	defer close(release)
	before := coreFiles(t, dir)
	ios, _, out, errOut := report.Test()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	xdg := t.TempDir()
	f := &Factory{IO: ios, Now: func() time.Time { return coreNow }, Getenv: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}}
	code := Run(ctx, f, []string{"append", dir, "--role", "user", "--content", "x", "--lock-timeout", "1m"})
	if code != 130 || out.String() != "" || errOut.String() != "ctxfold: interrupted\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	coreSame(t, before, coreFiles(t, dir))
}
