package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// claudeFolder lays out a client's project folder: every recorded Claude
// Code session as <name>.jsonl, a sub-agent file (part of a session, never
// measured on its own), a file that is no transcript, and an unrelated
// file that is not *.jsonl.
func claudeFolder(t *testing.T) (dir string, files []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "projects", "-home-u-proj")
	if err := os.MkdirAll(filepath.Join(dir, "s1", "subagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range claudeInteropTranscripts(t) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for name, body := range map[string]string{
		"s1/subagents/agent-a1.jsonl": "{}\n",
		"agent-b2.jsonl":              "{}\n",
		"notes.txt":                   "not a transcript\n",
		"zz-broken.jsonl":             "this is not json\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files = append(files, filepath.Join(dir, "zz-broken.jsonl"))
	sort.Strings(files)
	return dir, files
}

// Issue 29 item 3 / issue 28 item 3: a folder of transcripts is estimated
// transcript by transcript, in parallel, one NDJSON line each, an
// unreadable one reported without stopping the others, nothing written
// into the folder and no hint to init it.
func TestEstimateFolderOfTranscripts(t *testing.T) {
	dir, files := claudeFolder(t)
	before := listTree(t, dir)
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	r := runEnv(t, env, "estimate", dir, "--json", "--model", "claude-sonnet-4-5")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != len(files) {
		t.Fatalf("%d NDJSON lines for %d transcripts: %q\nstderr %q", len(lines), len(files), r.Stdout, r.Stderr)
	}
	for i, l := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("line %d: %v %q", i, err, l)
		}
		if obj["file"] != files[i] {
			t.Errorf("line %d names file %v, want %s (argument order)", i, obj["file"], files[i])
		}
		broken := strings.HasSuffix(files[i], "zz-broken.jsonl")
		if broken != (obj["read_error"] != nil) || (!broken && obj["total"].(float64) == 0) {
			t.Errorf("line %d: %s", i, l)
		}
	}
	if r.Code == 0 || strings.Contains(r.Stderr, "ctxfold init") {
		t.Errorf("exit %d (want the unreadable file's code), stderr %q", r.Code, r.Stderr)
	}
	if after := listTree(t, dir); after != before {
		t.Errorf("the client's folder changed:\n%s\nwas\n%s", after, before)
	}
	// Text: each block named by its file, then one summary line.
	r = runEnv(t, env, "estimate", dir, "--model", "claude-sonnet-4-5")
	for _, f := range files {
		if !strings.Contains(r.Stdout, "file\t"+f+"\n") && !strings.HasSuffix(f, "zz-broken.jsonl") {
			t.Errorf("text output does not name %s:\n%s", f, r.Stdout)
		}
	}
	want := len(files)
	// Piped, the summary line is a note on stderr: stdout ends with data.
	if !strings.Contains(r.Stderr, "ctxfold: "+plural(want, "transcript")+": "+itoa(want-1)+" measured, 1 unreadable · budget median ") ||
		!strings.Contains(r.Stderr, " compacted · ") || strings.Contains(r.Stdout, " measured, ") {
		t.Errorf("no summary line:\n%s", r.Stdout)
	}
	// A quoted pattern is expanded like the folder, with the same figures.
	pattern := filepath.Join(dir, "[b-y]*.jsonl")
	m, _ := filepath.Glob(pattern)
	r2 := runEnv(t, env, "estimate", pattern, "--json", "--model", "claude-sonnet-4-5")
	if got := strings.Count(r2.Stdout, "\n"); got != len(m) || len(m) < 2 || r2.Code != 0 {
		t.Errorf("pattern: exit %d, %d lines, want %d: %s", r2.Code, got, len(m), r2.Stderr)
	}
	var a, b struct {
		File  string
		Total int
	}
	first, _, _ := strings.Cut(r2.Stdout, "\n")
	_ = json.Unmarshal([]byte(first), &b)
	_ = json.Unmarshal([]byte(lines[0]), &a)
	if a != b || a.Total == 0 {
		t.Errorf("pattern's first line differs from the folder's:\n%s\n%s", lines[0], r2.Stdout)
	}
}

// A folder that holds no transcript is an error that suggests no init.
func TestEstimateEmptyFolder(t *testing.T) {
	dir := t.TempDir()
	r := runEnv(t, cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}, "estimate", dir)
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "neither a ctxfold session nor a folder holding transcripts") ||
		strings.Contains(r.Stderr, "init") {
		t.Errorf("exit %d stderr %q", r.Code, r.Stderr)
	}
}

// verify over a folder: one line per transcript named by its file, and a
// summary line.
func TestVerifyFolderOfTranscripts(t *testing.T) {
	dir, files := claudeFolder(t)
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	r := runEnv(t, env, "verify", dir)
	for _, f := range files {
		if !strings.Contains(r.Stdout, "\n"+f+": ") && !strings.HasPrefix(r.Stdout, f+": ") {
			t.Errorf("verify does not name %s:\n%s", f, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "/live/") {
		t.Errorf("verify text names a cache session:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, plural(len(files), "transcript")+": ") || !strings.Contains(r.Stdout, ", 1 unreadable\n") {
		t.Errorf("no summary line:\n%s", r.Stdout)
	}
	r = runEnv(t, env, "verify", dir, "--json")
	if n := strings.Count(r.Stdout, "\n"); n != len(files) {
		t.Errorf("%d JSON lines, want %d", n, len(files))
	}
}

// Issue 29 item 4: estimate's text for one transcript file names the
// file, on a terminal too, not only its cache session.
func TestEstimateTextNamesTheFile(t *testing.T) {
	_, files := claudeFolder(t)
	env := cliEnv{TTY: true, Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	r := runEnv(t, env, "estimate", files[0], files[1], "--model", "claude-sonnet-4-5")
	plain := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(r.Stdout, "")
	for _, f := range files[:2] {
		if !strings.Contains(plain, "\n"+f+"  claude-sonnet-4-5") && !strings.HasPrefix(plain, f+"  claude-sonnet-4-5") {
			t.Errorf("TTY output does not head a block with %s:\n%s", f, r.Stdout)
		}
	}
}

func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + info.Mode().String() + " " + itoa(int(info.Size())) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// audit over a folder: each file named, the never-compacted ones said so,
// the compacted one audited, one JSON object per file, a summary line.
func TestAuditFolderOfTranscripts(t *testing.T) {
	dir, files := claudeFolder(t)
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	r := runEnv(t, env, "audit", dir)
	if !strings.Contains(r.Stdout, filepath.Join(dir, "chat.jsonl")+": never compacted") {
		t.Errorf("no never-compacted line for chat.jsonl:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, filepath.Join(dir, "compact.jsonl")+"\nsummary ") {
		t.Errorf("the compacted transcript is not audited under its name:\n%s", r.Stdout)
	}
	compacted := 0 // the recordings of Claude Code's /compact: compact, compact-file
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "compact") {
			compacted++
		}
	}
	if !strings.Contains(r.Stderr, "ctxfold: "+plural(len(files), "transcript")+": "+itoa(compacted)+" audited, ") || !strings.Contains(r.Stderr, ", 1 unreadable · survival median ") ||
		strings.Contains(r.Stdout, " audited, ") {
		t.Errorf("no summary line:\n%s", r.Stdout)
	}
	if r.Code != ExitUsage || strings.Contains(r.Stdout+r.Stderr, "ctxfold compact") {
		t.Errorf("exit %d (want the unreadable file's 2); stderr %q", r.Code, r.Stderr)
	}
	r = runEnv(t, env, "audit", dir, "--json")
	if n := strings.Count(r.Stdout, "\n"); n != len(files) {
		t.Errorf("%d JSON lines, want %d:\n%s", n, len(files), r.Stdout)
	}
}

// Issue 29 item 3: a command that needs a session, given a client's
// folder of transcripts, never hints to init a session there.
func TestClientFolderNeverHintsInit(t *testing.T) {
	dir, _ := claudeFolder(t)
	for _, args := range [][]string{{"render", dir}, {"graph", dir}, {"search", dir, "x"}} {
		r := runEnv(t, cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}, args...)
		if r.Code == 0 || strings.Contains(r.Stderr, "ctxfold init") || !strings.Contains(r.Stderr, "holds transcripts") {
			t.Errorf("%v: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
	}
}
