// Package hooktest holds what the live hook tests of the three clients
// share (interop/<client>/hooks_live_test.go, docs/HOOKS.md): the planted
// facts' survival each run reports, the hook inputs saved as the client
// sent them, and the figures file.
package hooktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Fact is one planted fact: its kind and the exact text the conversation
// holds (an alias, so the tests' tables stay unkeyed literals).
type Fact = struct{ Kind, Text string }

// Planted are the facts every client's scripted session plants, one or
// more of every kind audit knows (docs/COMPACT.md §6), each a string the
// request after the client's compaction either carries or not. One list,
// so the three clients' figures are comparable.
var Planted = []Fact{
	{"request", "Please migrate the session store to SQLite"},
	{"instruction", "Never touch /etc/ctxfold/prod.toml"},
	{"instruction", "keep the WAL under 64 MB"},
	{"path", "internal/store/open_store.go"},
	{"identifier", "openStoreWithRetry"},
	{"url", "https://sqlite.org/wal.html"},
	{"command", "ls /nonexistent-ctxfold-dir"},
	{"error", "No such file or directory"},
	{"correction", "use the flock-based lock instead of the pid file"},
	{"number", "250 ms"},
}

// ClientBin is the client a live test drives: $env when set (a newer
// client is tested by that one variable), else the pinned one the
// client's record.sh installs under $CTXFOLD_INTEROP_CACHE or
// ~/.cache/ctxfold-interop, as dir/node_modules/.bin/name. t fails,
// naming both ways to get it, when the file is not there.
func ClientBin(t testing.TB, env, dir, name, recordScript string) string {
	t.Helper()
	client := os.Getenv(env)
	if client == "" {
		cache := os.Getenv("CTXFOLD_INTEROP_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "ctxfold-interop")
		}
		client = filepath.Join(cache, dir, "node_modules", ".bin", name)
	}
	if _, err := os.Stat(client); err != nil {
		t.Fatalf("client %s: %v (run %s once to install it, or set %s)", client, err, recordScript, env)
	}
	return client
}

// Build builds ctxfold into a temporary directory and returns the
// binary's path, for the clients' hooks and MCP server to run; with
// CTXFOLD_TEST_BIN set, that installed ctxfold instead (the npm-installed
// one in .ci/run: docs/INSTALL.md).
func Build(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("CTXFOLD_TEST_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("CTXFOLD_TEST_BIN: %v", err)
		}
		return bin
	}
	bin := filepath.Join(t.TempDir(), "ctxfold")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ctxfold/ctxfold").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TeeScript writes, beside the directory inputs, a hook command that
// copies each hook input it receives into inputs (one file per call,
// named by the time, so SaveInputs reads them in order) and returns its
// path; inputs is created.
func TeeScript(t testing.TB, inputs string) string {
	t.Helper()
	if err := os.MkdirAll(inputs, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(inputs, "..", "tee-hook.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > \""+inputs+"/$(date +%s%N).json\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// Run is one session's figures: which planted facts the request after the
// client's own compaction still carries, without or with ctxfold.
type Run struct {
	Mode         string          `json:"mode"`
	Kept         map[string]bool `json:"kept"`
	KeptCount    int             `json:"kept_count"`
	Planted      int             `json:"planted"`
	SurvivalPct  float64         `json:"survival_pct"`
	RequestBytes int             `json:"request_bytes"`
	// Injection is the hook state's record (tokens counted by estimate).
	Injection json.RawMessage `json:"injection,omitempty"`
	Context   string          `json:"context,omitempty"`
}

// Measure is mode's run: each fact kept when the conversation part of the
// request (messages, input or contents, as sent) holds its text as a JSON
// string holds it; requestBytes is the whole request's size. lost, when
// not nil, hears of each fact that did not survive.
func Measure(mode string, facts []Fact, conversation []byte, requestBytes int, lost func(Fact)) Run {
	r := Run{Mode: mode, Kept: map[string]bool{}, Planted: len(facts), RequestBytes: requestBytes}
	for _, f := range facts {
		k := bytes.Contains(conversation, []byte(JSONText(f.Text)))
		r.Kept[f.Kind+": "+f.Text] = k
		if k {
			r.KeptCount++
		} else if lost != nil {
			lost(f)
		}
	}
	if r.Planted > 0 {
		r.SurvivalPct = float64(r.KeptCount*1000/r.Planted) / 10
	}
	return r
}

// Sent is the facts the client sent the model in one of bodies (the
// requests before its compaction): a fact the client itself never sent —
// a command whose output its tool did not capture — was not planted, and
// no hook can carry it. Each left out is logged.
func Sent(t testing.TB, facts []Fact, bodies [][]byte) []Fact {
	t.Helper()
	var out []Fact
	for _, f := range facts {
		sent := false
		for _, b := range bodies {
			sent = sent || bytes.Contains(b, []byte(JSONText(f.Text)))
		}
		if sent {
			out = append(out, f)
		} else {
			t.Logf("not planted: the client never sent %s %q", f.Kind, f.Text)
		}
	}
	return out
}

// JSONText is s as the inside of a JSON string (how a request body holds
// it).
func JSONText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// SaveInputs writes the hook inputs recorded in from, one file each in
// name order, to to as NN-<hook_event_name>.json, indented: raw rewrites
// the run's temporary paths in the bytes (to /interop), and normalize what
// differs at every recording (ids, dates, generated paths) in the decoded
// object. Files that are not a JSON object are left out.
func SaveInputs(from, to string, raw *strings.Replacer, normalize func(v map[string]any)) error {
	if err := os.RemoveAll(to); err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	es, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for i, n := range names {
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			return err
		}
		var v map[string]any
		if json.Unmarshal([]byte(raw.Replace(string(b))), &v) != nil {
			continue
		}
		if normalize != nil {
			normalize(v)
		}
		if err := WriteJSON(filepath.Join(to, fmt.Sprintf("%02d-%s.json", i+1, v["hook_event_name"])), v); err != nil {
			return err
		}
	}
	return nil
}

// Placeholders puts "<key>" in place of each of keys v has: values that
// differ at every recording (session, turn and prompt ids).
func Placeholders(v map[string]any, keys ...string) {
	for _, k := range keys {
		if _, ok := v[k]; ok {
			v[k] = "<" + k + ">"
		}
	}
}

// WriteJSON writes v to path indented by two spaces, "<" and ">" kept as
// the clients write them.
func WriteJSON(path string, v any) error {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// Session drives one client session with ctxfold installed or not (mode
// "with" or "without") and returns its figures and, with ctxfold, what
// the recall found.
type Session func(mode string) (Run, map[string]any)

// Acceptance runs a client's session without and with ctxfold and checks
// docs/HOOKS.md's acceptance: with ctxfold at least 95% of the planted facts
// reach the model after the client's own compaction (named by after, as
// in "after /compact"), more than without, and the recall's tool result
// carried the covered turn verbatim.
func Acceptance(t testing.TB, client, after string, session Session) (runs []Run, recall map[string]any) {
	t.Helper()
	for _, mode := range []string{"without", "with"} {
		r, rec := session(mode)
		runs = append(runs, r)
		if rec != nil {
			recall = rec
		}
		t.Logf("%s %s ctxfold: %d of %d planted facts in the request %s (%.0f%%), request %d bytes",
			client, mode, r.KeptCount, r.Planted, after, r.SurvivalPct, r.RequestBytes)
	}
	if runs[1].SurvivalPct < 95 {
		t.Errorf("%s: with ctxfold only %.0f%% of the planted facts reach the model %s:\n%s", client, runs[1].SurvivalPct, after, runs[1].Context)
	}
	if runs[0].SurvivalPct >= runs[1].SurvivalPct {
		t.Errorf("%s: the client's own compaction kept as much as ctxfold (%v%% vs %v%%): the test proves nothing", client, runs[0].SurvivalPct, runs[1].SurvivalPct)
	}
	covered, named := recall["covered"]
	if recall["verbatim"] != true || recall["query_visible_before_recall"] != false || (named && covered != true) {
		t.Errorf("%s recall: the read_turns result the client sent back does not carry the covered turn verbatim: %v", client, recall)
	}
	t.Logf("recall: %v", recall)
	return runs, recall
}

// AddTee adds script (TeeScript) as a command hook beside the client's
// own under "hooks" of the JSON settings file at path (Codex's hooks.json,
// Gemini CLI's settings.json: {"hooks": {event: [group, …]}}), for each of
// events, or for every event the file names when events is nil. The
// file's other keys are kept.
func AddTee(t testing.TB, path, script string, events []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	hooks, _ := doc["hooks"].(map[string]any)
	if hooks == nil {
		t.Fatalf("%s: no hooks", path)
	}
	if events == nil {
		for ev := range hooks {
			events = append(events, ev)
		}
	}
	tee := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": script}}}
	for _, ev := range events {
		list, _ := hooks[ev].([]any)
		hooks[ev] = append(list, tee)
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// RecordFigures writes, when CTXFOLD_HOOKS_RECORD names a folder (the
// clients' hooks.sh), the runs and the recall to figures.json there with
// the client's name and version.
func RecordFigures(t testing.TB, name, client string, runs []Run, recall map[string]any) {
	t.Helper()
	dir := os.Getenv("CTXFOLD_HOOKS_RECORD")
	if dir == "" {
		return
	}
	doc := map[string]any{"client": name, "version": ClientVersion(client), "runs": runs, "recall": recall}
	if err := WriteJSON(filepath.Join(dir, "figures.json"), doc); err != nil {
		t.Fatal(err)
	}
}

// ClientVersion is the first word of `client --version` that starts with
// a digit ("2.1.328 (Claude Code)", "codex-cli 0.169.0", "0.61.0"), or
// "unknown".
func ClientVersion(client string) string {
	out, _ := exec.Command(client, "--version").Output()
	for _, w := range strings.Fields(string(out)) {
		if w[0] >= '0' && w[0] <= '9' {
			return w
		}
	}
	return "unknown"
}

// Injection is the first injection ctxfold's hook state under home
// records (home/.cache/ctxfold/hook/*.json, the one state that injected), with what
// differs at every recording — its time, the summary id — taken out; nil
// when there is none.
func Injection(home string) json.RawMessage {
	states, _ := filepath.Glob(filepath.Join(home, ".cache", "ctxfold", "hook", "*.json"))
	// One state a transcript: after Droid's manual compaction, the old
	// session's (its PreCompact) and the new one's, which injected.
	var inj map[string]any
	for _, path := range states {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		var st struct {
			Injected []map[string]any `json:"injected"`
		}
		if json.Unmarshal(b, &st) != nil || len(st.Injected) == 0 {
			continue
		}
		if inj != nil {
			return nil // two transcripts injected: no one figure
		}
		inj = st.Injected[0]
	}
	if inj == nil {
		return nil
	}
	delete(inj, "at")
	inj["summary_id"] = "<summary_id>"
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(inj)
	return bytes.TrimSpace(out.Bytes())
}
