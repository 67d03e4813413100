package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

func estimateTotal(t *testing.T, dir string) float64 {
	t.Helper()
	r := cliRun(t, nil, false, "estimate", dir, "--json")
	if r.Code != 0 {
		t.Fatalf("estimate: %d %s", r.Code, r.Stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		t.Fatalf("estimate --json: %v\n%s", err, r.Stdout)
	}
	return m["total"].(float64)
}

func TestCompactExitCodes(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// 401 is not retried (a 5xx is, with backoff: compact's own tests
		// cover that with a fast clock).
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"message":"invalid api key","type":"invalid_request_error"}}`)
	}))
	defer failing.Close()
	key := "sk-cmd-test-key-0000"
	cases := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stdout string // regexp
		stderr string // regexp
	}{
		{"no directory", nil, []string{"compact"}, 2, `^$`, `takes 1 argument`},
		{"unknown summarizer", nil, []string{"compact", "DIR", "--summarizer", "magic"}, 2, `^$`, `--summarizer must be extractive, openai or exec`},
		{"exec without a command", nil, []string{"compact", "DIR", "--summarizer", "exec"}, 2, `^$`, `needs --summarizer-cmd`},
		{"a command without exec", nil, []string{"compact", "DIR", "--summarizer-cmd", "cat"}, 2, `^$`, `needs --summarizer exec`},
		{"bad --if-above", nil, []string{"compact", "DIR", "--if-above", "150"}, 2, `^$`, `percentage from 0 to 100`},
		{"bad --lang", nil, []string{"compact", "DIR", "--lang", "fr"}, 2, `^$`, `unknown language "fr"`},
		{"openai without a key or endpoint", nil, []string{"compact", "DIR", "--summarizer", "openai", "--summary-model", "m"}, 2, `^$`, `CTXFOLD_API_KEY`},
		{"not a session", nil, []string{"compact", "NOWHERE"}, 2, `^$`, `no such session directory`},
		{"no-op below the target", nil, []string{"compact", "DIR"}, 0,
			`^Nothing to compact: the history \(\d+ tokens\) is within the retained-token target \(\d+ tokens\)\.\n$`, `^$`},
		{"no-op below the target, in Chinese", nil, []string{"compact", "DIR", "--lang", "zh"}, 0,
			`^无需压缩：历史（\d+ tokens）未超过保留目标（\d+ tokens）。\n$`, `^$`},
		{"below --if-above", nil, []string{"compact", "DIR", "--if-above", "90"}, 0,
			`^Context is at 0\.\d% of the budget, below --if-above 90%; not compacted\.\n$`, `^$`},
		{"below --if-above, in Chinese", nil, []string{"compact", "DIR", "--if-above", "90", "--lang", "zh"}, 0,
			`^上下文占预算的 0\.\d%，低于 --if-above 90%，未压缩。\n$`, `^$`},
		{"succeeded", nil, []string{"compact", "DIR", "--keep-tokens", "300"}, 0,
			`^Context compacted: covered 10 older messages, \d+ → \d+ tokens\nsummary: summary_[0-9a-f]{16}\nsurvival: 14 of 14 facts \(100\.0%\): request 1/1, instruction 1/1, change 1/1, path 3/3, command 2/2, error 3/3, identifier 2/2, number 1/1\n$`, `^$`},
		{"succeeded in Chinese from the locale", map[string]string{"LANG": "zh_CN.UTF-8"}, []string{"compact", "DIR", "--keep-tokens", "300"}, 0,
			`^上下文已压缩：覆盖 10 条较早消息，\d+ → \d+ tokens\n`, `^$`},
		{"exec fails", nil, []string{"compact", "DIR", "--keep-tokens", "300", "--summarizer", "exec", "--summarizer-cmd", "echo nope >&2; exit 7"}, 3,
			`^$`, `^ctxfold: error: context compaction failed: exec: .*exit status 7: nope\n$`},
		{"exec prints nothing, in Chinese", nil, []string{"compact", "DIR", "--keep-tokens", "300", "--summarizer", "exec", "--summarizer-cmd", "cat >/dev/null", "--lang", "zh"}, 3,
			`^$`, `^ctxfold: error: 上下文压缩失败：exec: .*printed no summary\n$`},
		{"openai rejects the key", map[string]string{"OPENAI_API_KEY": key}, []string{"compact", "DIR", "--keep-tokens", "300", "--summarizer", "openai",
			"--summary-model", "m", "--base-url", failing.URL}, 3, `^$`, `^ctxfold: error: context compaction failed: openai: .*401`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, "tools")
			args := slices.Clone(tc.args)
			for i, a := range args {
				if a == "DIR" {
					args[i] = dir
				}
				if a == "NOWHERE" {
					args[i] = filepath.Join(t.TempDir(), "none")
				}
			}
			before, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
			r := cliRun(t, tc.env, false, args...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			if !regexp.MustCompile(tc.stdout).MatchString(r.Stdout) {
				t.Errorf("stdout %q does not match %s", r.Stdout, tc.stdout)
			}
			if !regexp.MustCompile(tc.stderr).MatchString(r.Stderr) {
				t.Errorf("stderr %q does not match %s", r.Stderr, tc.stderr)
			}
			if strings.Contains(r.Stdout+r.Stderr, key) {
				t.Fatal("the API key was printed")
			}
			after, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
			if tc.code != 0 && string(before) != string(after) {
				t.Fatal("a failed run changed nodes.jsonl")
			}
		})
	}
}

// slowChanger is a summarizer during which another writer extends HEAD.
type slowChanger struct{ dir string }

func (s slowChanger) Name() string     { return "slow" }
func (s slowChanger) CacheKey() string { return "slow" }
func (s slowChanger) Summarize(ctx context.Context, _ summarize.Request) (string, error) {
	_, err := store.Update(ctx, s.dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append([]transcript.Node{{ID: "late", Role: transcript.RoleUser, Content: transcript.TextContent("wait")}}, store.AppendOptions{})
		return err
	})
	return "## Objective\nx", err
}

func TestCompactChangedExitsFour(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		dir := sessiontest.CopyFixture(t, "tools")
		ios, _, out, errOut := report.Test()
		opts := &compactOptions{IO: ios, JSON: asJSON, Lang: report.LangEN, Summarizer: slowChanger{dir},
			Compact: compact.Options{Dir: dir, KeepTokens: 300}}
		err := runCompact(context.Background(), opts)
		if ExitCode(err) != ExitBusy {
			t.Fatalf("err %v (exit %d), want exit 4", err, ExitCode(err))
		}
		// Printed by Run in the standard form, with the hint.
		printError(errOut, err)
		if want := "ctxfold: error: session changed during compaction; nothing written: HEAD moved from \"a7\" to \"late\"\nctxfold: hint: run the compaction again\n"; !strings.HasSuffix(errOut.String(), want) {
			t.Fatalf("stderr %q, want %q", errOut, want)
		}
		if asJSON {
			var m map[string]any
			if json.Unmarshal(out.Bytes(), &m) != nil || m["outcome"] != "changed" || m["summary_id"] != "" {
				t.Fatalf("json %s", out)
			}
		}
	}
}

func TestCompactJSONMatchesEstimate(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	before := estimateTotal(t, dir)
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "300", "--json")
	if r.Code != 0 {
		t.Fatalf("%d %s", r.Code, r.Stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"budget_basis", "budget_pct", "calibrated_tokens_after", "calibrated_tokens_before", "calibration",
		"covers_ids", "ledger_facts", "message", "newly_covered_count", "outcome", "schema_version", "session", "summarised_count", "summarizer",
		"summary_cap_tokens", "summary_ceiling_basis", "summary_ceiling_tokens", "summary_growth_tokens", "summary_id", "summary_tokens", "survival", "tokens_after", "tokens_before"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	after := estimateTotal(t, dir)
	if m["tokens_before"] != before || m["tokens_after"] != after || after >= before {
		t.Fatalf("compact says %v → %v, estimate says %v → %v", m["tokens_before"], m["tokens_after"], before, after)
	}
	if m["outcome"] != "succeeded" || m["summarised_count"] != float64(10) || len(m["covers_ids"].([]any)) != 10 {
		t.Fatalf("%v", m)
	}
	// After compacting, estimate's calibrated total of the new view keeps
	// the prefix fitted before: it is what compact reported.
	est := cliRun(t, nil, false, "estimate", dir, "--json")
	var e map[string]any
	if err := json.Unmarshal([]byte(est.Stdout), &e); err != nil {
		t.Fatal(err)
	}
	cal := e["calibration"].(map[string]any)
	if cal["calibrated_total"] != m["calibrated_tokens_after"] || cal["unrecorded_tokens"] != m["calibration"].(map[string]any)["prefix_tokens"] {
		t.Fatalf("estimate after compact: calibrated %v (prefix %v); compact said %v (prefix %v)", cal["calibrated_total"], cal["unrecorded_tokens"],
			m["calibrated_tokens_after"], m["calibration"])
	}
	// Again: nothing new, a no-op that reports no coverage.
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "300", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil || r.Code != 0 {
		t.Fatal(err, r.Stderr)
	}
	if m["outcome"] != "no_op" || m["summarised_count"] != float64(0) || m["tokens_before"] != after || m["tokens_after"] != after ||
		m["message"] != "Context is already compacted; no older messages to fold." {
		t.Fatalf("second run %v", m)
	}
}

func TestCompactDryRunWritesNothing(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	files := func() string {
		entries, _ := os.ReadDir(dir)
		var all []byte
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			all = append(append(all, e.Name()...), b...)
		}
		return string(all)
	}
	before := files()
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "300", "--dry-run")
	if r.Code != 0 || files() != before {
		t.Fatalf("%d %s", r.Code, r.Stderr)
	}
	for _, want := range []string{"dry run: would cover 10 older messages\n", "target: 300\n",
		"covered: 10 nodes, u1 … a5 (all of them with --json)\n", "kept: u2 a6 t5 t6 a7\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "300", "--dry-run", "--json")
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil || m["outcome"] != "planned" || m["dry_run"] != true || files() != before {
		t.Fatalf("%v %s", err, r.Stdout)
	}
}

// TestCompactProgressOnTTY: "Compacting context…" goes to stderr on a
// terminal only; stdout carries just the result either way.
func TestCompactProgressOnTTY(t *testing.T) {
	for _, tty := range []bool{false, true} {
		dir := sessiontest.CopyFixture(t, "tools")
		ios, _, out, errOut := report.Test()
		ios.StdoutTTY, ios.StderrTTY = tty, tty
		f := &Factory{IO: ios, Getenv: func(k string) string {
			if k == "XDG_CONFIG_HOME" {
				return dir + "-config"
			}
			return ""
		}}
		if code := Run(context.Background(), f, []string{"compact", dir, "--keep-tokens", "300", "--lang", "zh"}); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		wantErr := ""
		if tty {
			wantErr = "正在压缩上下文…\n"
		}
		if errOut.String() != wantErr {
			t.Errorf("tty=%v: stderr %q, want %q", tty, errOut, wantErr)
		}
		if !strings.HasPrefix(out.String(), "上下文已压缩：覆盖 10 条较早消息，") {
			t.Errorf("tty=%v: stdout %q", tty, out)
		}
	}
}

// A session failing verify is refused with exit 2 and nothing written.
func TestCompactRefusesBrokenSessionExitsTwo(t *testing.T) {
	dir := sessiontest.CopyFixture(t, filepath.Join("broken", "splice_mismatch"))
	before, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
	r := cliRun(t, nil, false, "compact", dir, "--model", "gpt-4o", "--keep-tokens", "10")
	if r.Code != ExitUsage || r.Stdout != "" {
		t.Fatalf("exit %d stdout %q, want 2 and nothing", r.Code, r.Stdout)
	}
	want := regexp.MustCompile(`^ctxfold: error: .*nodes\.jsonl:\d+: node "summary_1": splice_mismatch: .*\nctxfold: hint: run 'ctxfold verify .*'\n$`)
	if !want.MatchString(r.Stderr) {
		t.Fatalf("stderr %q", r.Stderr)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
	if string(before) != string(after) {
		t.Fatal("a refused compaction changed nodes.jsonl")
	}
}

// oneTurnSession is a single-prompt agent session: one request, then
// steps assistant tool calls with their results and a last reply (steps
// 0: the request and its reply alone). It was never compacted.
func oneTurnSession(t *testing.T, steps int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "one")
	if _, err := store.Init(dir, "gpt-4o", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes := []transcript.Node{
		{ID: "sys", Role: transcript.RoleSystem, Content: transcript.TextContent("You are a coding agent.")},
		{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Fix the failing tests in pkg/a.")},
	}
	for i := range steps {
		call := fmt.Sprintf("call_%d", i)
		nodes = append(nodes,
			transcript.Node{ID: fmt.Sprintf("a%d", i), Role: transcript.RoleAssistant, Content: transcript.TextContent("Looking."),
				ToolCalls: []transcript.ToolCall{{ID: call, Name: "bash", Arguments: json.RawMessage(`{"cmd":"go test ./pkg/a"}`)}}},
			transcript.Node{ID: fmt.Sprintf("t%d", i), Role: transcript.RoleTool, ToolCallID: call,
				Content: transcript.TextContent(strings.Repeat("--- FAIL: TestA (0.00s) want 1 got 2\n", 20))})
	}
	nodes = append(nodes, transcript.Node{ID: "done", Role: transcript.RoleAssistant, Content: transcript.TextContent("Fixed.")})
	for i := 1; i < len(nodes); i++ {
		nodes[i].Predecessor = nodes[i-1].ID
	}
	if _, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append(nodes, store.AppendOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// docs/COMPACT.md §5 reserves "Context is already compacted" for a previous
// summary with nothing new; a history that is one request and its reply,
// never compacted, says what happened instead, and JSON keeps outcome
// no_op with a reason.
func TestCompactNoOpMessages(t *testing.T) {
	dir := oneTurnSession(t, 0)
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "10")
	if r.Code != 0 || r.Stdout != report.CompactionOneTurn(report.LangEN)+"\n" || r.Stderr != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.HasPrefix(r.Stdout, "Nothing to compact: the history is one request and its first reply") {
		t.Fatalf("stdout %q", r.Stdout)
	}
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "10", "--lang", "zh")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "无需压缩：历史只有一个请求") {
		t.Fatalf("exit %d stdout %q", r.Code, r.Stdout)
	}
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "10", "--json")
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil || r.Code != 0 {
		t.Fatalf("%v %d %s", err, r.Code, r.Stdout)
	}
	if m["outcome"] != compact.OutcomeNoOp || m["reason"] != compact.ReasonNoBoundary || m["message"] != report.CompactionOneTurn(report.LangEN) {
		t.Fatalf("json %v", m)
	}

	// The real nothing-to-fold case keeps the message of docs/COMPACT.md §5.
	tools := sessiontest.CopyFixture(t, "tools")
	if r := cliRun(t, nil, false, "compact", tools, "--keep-tokens", "300"); r.Code != 0 {
		t.Fatalf("first compaction: %d %s", r.Code, r.Stderr)
	}
	r = cliRun(t, nil, false, "compact", tools, "--keep-tokens", "300")
	if r.Code != 0 || r.Stdout != "Context is already compacted; no older messages to fold.\n" {
		t.Fatalf("exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// The dry run says whether the summary would be accepted: the extractive
// candidate is built and checked (fixtures/fork's is over a 20-token
// ceiling, and the real run then fails with exit 3); another summarizer is
// not run, and the output says the check happens only on a real run.
func TestCompactDryRunSummaryCheck(t *testing.T) {
	dir := sessiontest.CopyFixture(t, filepath.Join("fork"))
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "10", "--max-summary-tokens", "20", "--dry-run")
	if r.Code != 0 || !regexp.MustCompile(`(?m)^dry run: would cover 2 older messages, but the extractive summary would be rejected: the summary is over the size ceiling \(\d+ tokens, ceiling 20\)$`).MatchString(r.Stdout) ||
		!regexp.MustCompile(`(?m)^summary check: would be rejected \(exit 3\): `).MatchString(r.Stdout) {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "10", "--max-summary-tokens", "20", "--dry-run", "--json")
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil || m["summary_checked"] != true || m["summary_accepted"] != false ||
		!strings.Contains(m["rejection"].(string), "over the size ceiling") {
		t.Fatalf("%v %s", err, r.Stdout)
	}
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "10", "--max-summary-tokens", "20", "--dry-run", "--summarizer", "exec", "--summarizer-cmd", "exit 9")
	if r.Code != 0 || !strings.Contains(r.Stdout, "summary check: not done: the exec summarizer runs only on a real run") {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "10", "--max-summary-tokens", "20"); r.Code != ExitCompactFailed {
		t.Fatalf("real run exit %d, the dry run predicted a rejection: %s", r.Code, r.Stderr)
	}

	tools := sessiontest.CopyFixture(t, "tools")
	r = cliRun(t, nil, false, "compact", tools, "--keep-tokens", "300", "--dry-run")
	if r.Code != 0 || !regexp.MustCompile(`(?m)^summary check: would be accepted: summary \d+ tokens, \d+ → \d+ tokens$`).MatchString(r.Stdout) {
		t.Fatalf("exit %d\n%s", r.Code, r.Stdout)
	}
}

// TestCompactDryRunCoveredIsACountAndARange: the covered ids of a large
// session made one line of kilobytes; the text shows a count and the first
// and last id, --json the whole list.
func TestCompactDryRunCoveredIsACountAndARange(t *testing.T) {
	tools := sessiontest.CopyFixture(t, "tools")
	r := cliRun(t, nil, false, "compact", tools, "--keep-tokens", "200", "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "\ncovered: 10 nodes, u1 … a5 (all of them with --json)\n") {
		t.Fatalf("exit %d\n%s", r.Code, r.Stdout)
	}
	r = cliRun(t, nil, false, "compact", tools, "--keep-tokens", "200", "--dry-run", "--json")
	var m struct {
		CoversIDs []string `json:"covers_ids"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil || len(m.CoversIDs) != 10 || m.CoversIDs[0] != "u1" || m.CoversIDs[9] != "a5" {
		t.Fatalf("%v %s", err, r.Stdout)
	}
}
