package estimate

import (
	"bufio"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// A version the table does not hold takes the nearest known one, and the
// method says which (docs/ACCURACY.md, "The prior").
func TestNearestPrior(t *testing.T) {
	table := []PriorEntry{
		{Client: "c", Version: "2.1.328", Mode: PriorMain, SystemTokens: 100},
		{Client: "c", Version: "2.1.332", Mode: PriorMain, SystemTokens: 200},
		{Client: "c", Version: "2.1.332", Mode: PriorMain, SystemTokens: 210},
		{Client: "c", Version: "2.1.332", Mode: PriorMain, SystemTokens: 220},
		{Client: "c", Version: "2.1.332", Mode: PriorSubagent, SystemTokens: 50},
		{Client: "c", Version: "1.0.98", Mode: PriorMain, Setup: PriorDefault, SystemTokens: 1000},
		{Client: "c", Version: "2.1.39", Mode: PriorMain, Setup: PriorDefault, SystemTokens: 2000},
	}
	for _, tc := range []struct {
		version, mode, setup string
		tokens               int
		method               string
	}{
		{"2.1.332", PriorMain, PriorHarness, 210, "prior: c 2.1.332 main harness"},
		{"2.1.330", PriorMain, PriorHarness, 100, "prior: c 2.1.328 main harness (nearest known version to 2.1.330)"},
		{"1.0.98", PriorMain, PriorHarness, 100, "prior: c 2.1.328 main harness (nearest known version to 1.0.98)"},
		{"2.1.400", PriorMain, PriorHarness, 210, "prior: c 2.1.332 main harness (nearest known version to 2.1.400)"},
		{"2.1.40", PriorMain, PriorHarness, 100, "prior: c 2.1.328 main harness (nearest known version to 2.1.40)"},
		{"", PriorMain, PriorHarness, 210, "prior: c 2.1.332 main harness (the session records no client version: the newest known)"},
		{"2.1.332", PriorSubagent, PriorHarness, 50, "prior: c 2.1.332 subagent harness"},
		{"2.1.328", PriorSubagent, PriorHarness, 50, "prior: c 2.1.332 subagent harness (nearest known version to 2.1.328)"},
		// The default setup is looked up among its own entries: the
		// nearest version of the same setup, never the harness's.
		{"1.0.98", PriorMain, PriorDefault, 1000, "prior: c 1.0.98 main default"},
		{"1.0.108", PriorMain, PriorDefault, 1000, "prior: c 1.0.98 main default (nearest known version to 1.0.108)"},
		{"2.1.332", PriorMain, PriorDefault, 2000, "prior: c 2.1.39 main default (nearest known version to 2.1.332)"},
		{"", PriorMain, PriorDefault, 2000, "prior: c 2.1.39 main default (the session records no client version: the newest known)"},
		// A sub-agent with no default entry of its own takes the main one.
		{"2.1.39", PriorSubagent, PriorDefault, 2000, "prior: c 2.1.39 main default"},
	} {
		p, ok := NearestPrior(table, "c", tc.version, tc.mode, tc.setup)
		if !ok || p.Entry.SystemTokens != tc.tokens || p.Method != tc.method {
			t.Errorf("%s %s %s: %+v %v, want %d tokens, method %q", tc.version, tc.mode, tc.setup, p, ok, tc.tokens, tc.method)
		}
	}
	if _, ok := NearestPrior(table, "other", "1", PriorMain, PriorHarness); ok {
		t.Error("a client the table does not hold has a prior")
	}
	// Only main entries: a sub-agent takes the main one.
	if p, ok := NearestPrior(table[:1], "c", "2.1.328", PriorSubagent, PriorHarness); !ok || p.Method != "prior: c 2.1.328 main harness" {
		t.Errorf("sub-agent without its own entry: %+v", p)
	}
	// A client with harness entries only: the default setup takes them.
	if p, ok := NearestPrior(table[:1], "c", "2.1.328", PriorMain, PriorDefault); !ok || p.Method != "prior: c 2.1.328 main harness" {
		t.Errorf("default setup without its own entry: %+v", p)
	}
}

// The setup is the recording harness's unless the transcript shows the
// client's default mode: a recorded tool set beyond the harness's, or —
// when it records none — a call to a tool the harness's set does not
// hold. A session that called nothing, or only Bash, keeps the harness's.
func TestPriorSetup(t *testing.T) {
	table := []PriorEntry{
		{Client: "c", Setup: PriorHarness, ToolNames: "Agent,Bash"},
		{Client: "c", Setup: PriorDefault, ToolNames: "Agent,Bash,Edit,Read"},
		{Client: "d", Setup: PriorDefault, ToolNames: "shell"},
	}
	for _, tc := range []struct {
		client           string
		recorded, called []string
		entry, want      string
	}{
		{"c", nil, nil, "", PriorDefault},                     // nothing called yet: a person's session runs the default
		{"c", nil, nil, "cli", PriorDefault},                  // started from a person's terminal
		{"c", nil, nil, "sdk-cli", PriorHarness},              // a program's run picks its tools
		{"c", nil, []string{"Read"}, "sdk-cli", PriorDefault}, // …until its calls show the default's
		{"c", nil, []string{"Bash", "Bash", "Agent"}, "", PriorHarness},
		{"c", nil, []string{"Bash", "Read"}, "", PriorDefault},
		{"c", []string{"Bash", "Agent"}, []string{"Read"}, "", PriorHarness}, // the recorded set wins
		{"c", []string{"Bash", "Read"}, nil, "sdk-cli", PriorDefault},        // and over the entrypoint
		{"d", nil, []string{"shell"}, "", PriorDefault},                      // no harness entry: every tool is beyond it
	} {
		if got, why := PriorSetup(table, tc.client, tc.recorded, tc.called, tc.entry); got != tc.want || why == "" {
			t.Errorf("%s %v %v: %s (%s), want %s", tc.client, tc.recorded, tc.called, got, why, tc.want)
		}
	}
}

// What the prior adds is the entry's system prompt and tools less what
// the view's leading system messages hold, plus Anthropic's tool preamble
// when the view declares no tools itself.
func TestPriorUnrecorded(t *testing.T) {
	p := Prior{Entry: PriorEntry{SystemTokens: 1000, ElidedBytes: 400, Tools: 2, ToolsTokens: 500, ToolsTokensOpenAI: 300}}
	if got := p.Unrecorded(ProviderOpenAI, 0, false); got != 1000+100+300+perMessage {
		t.Errorf("openai: %d", got)
	}
	if got := p.Unrecorded(ProviderAnthropic, 0, false); got != 1000+100+500+perMessage+anthropicToolPreamble {
		t.Errorf("anthropic, no tools in the view: %d", got)
	}
	if got := p.Unrecorded(ProviderAnthropic, 1200, true); got != 1000+100+500+perMessage-1200 {
		t.Errorf("anthropic, system recorded: %d", got)
	}
	if got := p.Unrecorded(ProviderOpen, 5000, true); got != 0 {
		t.Errorf("more recorded than the prior: %d, want 0", got)
	}
	// A view that records a longer system prompt than the entry's but no
	// tools (a Codex rollout's instructions and AGENTS.md): the tools are
	// still sent beside it.
	if got := p.Unrecorded(ProviderOpenAI, 5000, false); got != 300 {
		t.Errorf("a longer recorded system, no tools in the view: %d, want the tools' 300", got)
	}
}

// Before any usage is recorded, `estimate` calibrates a Codex rollout with
// the prior of its recorded cli_version (the rollout records no tool set
// and, cut before its first usage, has called none: the default mode,
// whose recording sent no tools here, so the harness's, which had them):
// the tools, which the rollout does not record, beside the
// instructions, which it does; the stored view's incremental run carries
// it.
func TestEstimateBeforeFirstRequestUsesThePrior(t *testing.T) {
	rollout, _ := filepath.Glob(filepath.Join("..", "testdata", "interop", "codex", "0.169.0", "chat", "rollout-*.jsonl"))
	if len(rollout) != 1 {
		t.Fatalf("the Codex 0.169.0 chat recording: %v", rollout)
	}
	cut := filepath.Join(t.TempDir(), filepath.Base(rollout[0]))
	writeLinesBefore(t, rollout[0], cut, `"type":"token_usage_record"`)
	out := filepath.Join(t.TempDir(), "s")
	rep, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{cut}, Out: out})
	if err != nil || len(rep.Sessions) != 1 {
		t.Fatalf("import: %v", err)
	}
	g, err := dag.Open(rep.Sessions[0].Dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := View(context.Background(), v, Options{Model: g.S.Meta.Model, Window: 200000, NodeDetail: true})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Calibration
	if c == nil || c.Requests != 0 || c.Method != "prior: codex 0.169.0 main harness; the session records no tool set and has called none yet: the client's default mode, but the default recording of codex 0.169.0 sent no tools: the harness's" || c.Anchor != MethodPrior {
		t.Fatalf("calibration before the first request: %+v", c)
	}
	p, _ := LookupPrior("codex", "0.169.0", PriorMain, PriorHarness)
	sys := 0
	for _, n := range res.Nodes {
		if n.Role != "system" {
			break
		}
		sys += n.Tokens
	}
	want := p.Unrecorded(res.Provider, sys, false)
	if sys == 0 || want <= 0 || c.UnrecordedTokens != want || c.CalibratedTotal != res.Total+want || res.BudgetBasis != BasisCalibrated {
		t.Errorf("prior: unrecorded %d (want %d, %d recorded in the system messages), total %d of raw %d", c.UnrecordedTokens, want, sys, c.CalibratedTotal, res.Total)
	}
	// The tools are what the rollout lacks: the prior adds about them
	// (within the framing of the recorded system messages).
	if d := want - p.Entry.ToolsTokensOpenAI; d < -p.Entry.ToolsTokensOpenAI/10 || d > p.Entry.ToolsTokensOpenAI/10 {
		t.Errorf("prior adds %d, the tools count %d", want, p.Entry.ToolsTokensOpenAI)
	}
	if off, err := View(context.Background(), v, Options{Model: g.S.Meta.Model, Window: 200000, NoCalibrate: true}); err != nil || off.Calibration != nil {
		t.Errorf("--no-calibrate: %+v %v", off.Calibration, err)
	}
	if carried := carryPrior(c, &Result{Total: 10}); carried == nil || carried.CalibratedTotal != 10+want || carried.Method != c.Method {
		t.Errorf("carried: %+v", carried)
	}
}

// writeLinesBefore copies src's lines before the first that contains
// stop into dst.
func writeLinesBefore(t *testing.T, src, dst, stop string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() && !strings.Contains(sc.Text(), stop) {
		b.WriteString(sc.Text() + "\n")
	}
	if err := os.WriteFile(dst, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// With too few requests to fit a slope, a Claude model's calibration
// uses the prior slope (the growth Claude's tokenizer counts beyond the
// proxy's); an exact encoding keeps 1; enough steps fit their own.
func TestPriorSlope(t *testing.T) {
	if PriorSlope(ProviderAnthropic, "claude-sonnet-4-5", true) != ClaudeProxySlope || PriorSlope(ProviderOpenAI, "gpt-5", false) != 1 || PriorSlope(ProviderGemini, "gemini-2.5-pro", true) != 1 {
		t.Fatal("prior slopes")
	}
	// Claude Opus 4.7 and later count with a newer tokenizer.
	for model, v47 := range map[string]bool{
		"claude-opus-4-7": true, "claude-opus-4-8": true, "claude-opus-5": true, "claude-sonnet-5-5": true,
		"us.anthropic.claude-opus-4-7-v1": true, "claude-opus-5-20260901": true, "claude-opus-4-7[1m]": true, "claude-sonnet-4-6[1m]": false, "claude-fable-5": true, "claude-mythos-5-1": true,
		"claude-opus-4-6": false, "claude-sonnet-4-6": false, "claude-haiku-4-5-20251001": false, "claude-opus-4-20250514": false,
		"claude-3-7-sonnet": false, "": false,
	} {
		want := ClaudeProxySlope
		if v47 {
			want = ClaudeV47ProxySlope
		}
		if got := PriorSlope(ProviderAnthropic, model, true); got != want {
			t.Errorf("PriorSlope(%q) = %v, want %v", model, got, want)
		}
	}
	one := []MatchedRequest{{Node: "a", Estimated: 1000, Measured: 11000}}
	f := FitRequestsPrior(one, Priors{Slope: ClaudeProxySlope})
	want := 11000 + int(math.Round(ClaudeProxySlope*1000))
	if f.Method != MethodPriorSlope || f.Predict(2000, 0) != want {
		t.Errorf("one request: %s predicts %d, want %d", f.Method, f.Predict(2000, 0), want)
	}
	if f := FitRequests(one); f.Method != MethodOffset || f.Predict(2000, 0) != 12000 {
		t.Errorf("no prior: %+v", f)
	}
	// Four steps at slope 1.5 fit it, whatever the prior.
	var reqs []MatchedRequest
	for k := range 5 {
		reqs = append(reqs, MatchedRequest{Node: string(rune('a' + k)), Estimated: 1000 + 1000*k, Measured: int64(10000 + 1500*k)})
	}
	if f := FitRequestsPrior(reqs, Priors{Slope: ClaudeProxySlope}); f.Method != MethodOffsetSlope || f.Slope != 1.5 {
		t.Errorf("five requests: %s slope %v, want the fitted 1.5", f.Method, f.Slope)
	}
}

// A Claude Code transcript before its first reply: the import keeps the
// client version of its first line, and the setup follows what the file
// shows — the recording harness's when its api-request-shape line names
// Bash and Agent, or when it records no tool set (as Claude Code 1.0 and
// 2.1.39 files do) and calls none beyond them; the client's default mode
// when it calls one (Read): the default tools' prior, several times the
// harness's.
func TestClaudePriorSetupFollowsTheTranscript(t *testing.T) {
	tr, _ := filepath.Glob(filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "tool", "transcript", "*.jsonl"))
	if len(tr) != 1 {
		t.Fatalf("the Claude Code 2.1.328 tool recording: %v", tr)
	}
	b, err := os.ReadFile(tr[0])
	if err != nil || !strings.Contains(string(b), `"type":"api-request-shape"`) || !strings.Contains(string(b), `"name":"Bash"`) {
		t.Fatalf("the recording records no request shape or Bash call: %v", err)
	}
	var old strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.Contains(line, `"type":"api-request-shape"`) {
			old.WriteString(strings.ReplaceAll(line, `"version":"2.1.328"`, `"version":"1.0.98"`))
		}
	}
	dir := t.TempDir()
	legacy, read := filepath.Join(dir, "legacy.jsonl"), filepath.Join(dir, "read.jsonl")
	if err := os.WriteFile(legacy, []byte(old.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(read, []byte(strings.ReplaceAll(old.String(), `"name":"Bash"`, `"name":"Read"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	harness := "; the session records no tool set and called none beyond the recording harness's"
	for _, tc := range []struct {
		file, version, setup, method string
	}{
		{tr[0], "2.1.328", PriorHarness, "prior: claude-code 2.1.328 main harness; the session records the recording harness's tool set"},
		{legacy, "1.0.98", PriorHarness, "prior: claude-code 2.1.328 main harness (nearest known version to 1.0.98)" + harness},
		{read, "1.0.98", PriorDefault, "prior: claude-code 1.0.98 main default; the session called tools beyond the recording harness's: Read"},
	} {
		res, sys := estimateFirst(t, tc.file)
		c := res.Calibration
		p, ok := LookupPrior("claude-code", tc.version, PriorMain, tc.setup)
		if !ok || c == nil || c.Method != tc.method {
			t.Fatalf("%s: calibration %+v, want method %q", tc.file, c, tc.method)
		}
		if want := p.Unrecorded(res.Provider, sys, res.Categories[CatTools] > 0); c.UnrecordedTokens != want {
			t.Errorf("%s: the prior adds %d, want %d", tc.file, c.UnrecordedTokens, want)
		}
	}
}

// estimateFirst imports one transcript and estimates it at the cut before
// its first assistant reply (`estimate --head` there; a file with no reply is that cut): the result and the
// tokens of its leading system nodes.
func estimateFirst(t *testing.T, file string) (*Result, int) {
	t.Helper()
	rep, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{file}, Out: filepath.Join(t.TempDir(), "s")})
	if err != nil || len(rep.Sessions) != 1 {
		t.Fatalf("import %s: %v", file, err)
	}
	g, err := dag.Open(rep.Sessions[0].Dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	first := -1
	for i := 0; i < g.S.Len() && first < 0; i++ {
		if g.S.RoleAt(i) == "assistant" {
			first = i
		}
	}
	head := "" // a file that holds no reply is the cut itself
	if first >= 0 {
		if g.Pred(first) < 0 {
			t.Fatalf("%s: an assistant node with nothing before it", file)
		}
		head = g.ID(g.Pred(first))
	}
	v, err := render.Build(g, head, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := View(context.Background(), v, Options{Model: "claude-sonnet-4-5", Window: 200000, NodeDetail: true})
	if err != nil {
		t.Fatal(err)
	}
	sys := 0
	for _, n := range res.Nodes {
		if n.Role != "system" {
			break
		}
		sys += n.Tokens
	}
	return res, sys
}

// CalledTools reads a call wherever a node holds it: in content blocks
// (Claude Code) and in the tool_calls field (Codex, the OpenAI shapes).
func TestCalledToolsBothShapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := store.Init(dir, "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append([]transcript.Node{
			{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("go")},
			{ID: "a1", Predecessor: "u1", Role: transcript.RoleAssistant, Content: transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
				{Type: transcript.BlockToolCall, ID: "c1", Name: "Read", Arguments: []byte(`{}`)}}}},
			{ID: "t1", Predecessor: "a1", Role: transcript.RoleTool, ToolCallID: "c1", Content: transcript.TextContent("x")},
			{ID: "a2", Predecessor: "t1", Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "c2", Name: "apply_patch", Arguments: []byte(`{}`)}}},
			{ID: "t2", Predecessor: "a2", Role: transcript.RoleTool, ToolCallID: "c2", Content: transcript.TextContent("ok")},
		}, store.AppendOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := strings.Join(CalledTools(s), ","); got != "Read,apply_patch" {
		t.Errorf("CalledTools = %q, want Read,apply_patch", got)
	}
}

// A default-mode recording whose request carried no tool is not taken for
// a session that called tools: the harness's recording, which had them,
// is (Codex 0.169.0's default model in the fake's catalogue was sent none).
func TestPriorDefaultWithoutToolsFallsBack(t *testing.T) {
	table := []PriorEntry{
		{Client: "x", Version: "1.0.0", Mode: PriorMain, Setup: PriorHarness, Tools: 2, ToolNames: "exec,patch", SystemTokens: 100},
		{Client: "x", Version: "1.0.0", Mode: PriorMain, Setup: PriorDefault, SystemTokens: 90},
	}
	p, ok := PriorFor(table, "x", nil, []string{"spawn_agent"})
	if !ok || p.Entry.Setup != PriorHarness || !strings.Contains(p.Method, "sent no tools") {
		t.Fatalf("prior %+v (%s), want the harness's with why", p.Entry, p.Method)
	}
	// With tools in the default recording, the default stands.
	table[1].Tools, table[1].ToolNames = 3, "exec,patch,spawn_agent"
	if p, _ := PriorFor(table, "x", nil, []string{"spawn_agent"}); p.Entry.Setup != PriorDefault {
		t.Fatalf("prior %+v (%s), want the default's", p.Entry, p.Method)
	}
}

// Before its first reply, a Claude Code session that records no tool set
// takes the default mode when a person started it (entrypoint "cli") and
// the recording harness's when a program did ("sdk-cli", as `claude -p`
// and the Agent SDK record): the recorded chat scenario, its request
// shape left out, cut before the reply.
func TestClaudePriorFollowsTheEntrypoint(t *testing.T) {
	tr, _ := filepath.Glob(filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "chat", "transcript", "*.jsonl"))
	if len(tr) != 1 {
		t.Fatalf("the Claude Code 2.1.328 chat recording: %v", tr)
	}
	b, err := os.ReadFile(tr[0])
	if err != nil || !strings.Contains(string(b), `"entrypoint":"sdk-cli"`) {
		t.Fatalf("the recording names no sdk-cli entrypoint: %v", err)
	}
	var cut strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.Contains(line, `"type":"assistant"`) {
			break
		}
		if !strings.Contains(line, `"type":"api-request-shape"`) {
			cut.WriteString(line)
		}
	}
	for _, tc := range []struct{ entry, setup, why string }{
		{"sdk-cli", PriorHarness, "a program's session (entrypoint sdk-cli)"},
		{"cli", PriorDefault, "has called none yet: the client's default mode"},
	} {
		file := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(file, []byte(strings.ReplaceAll(cut.String(), `"entrypoint":"sdk-cli"`, `"entrypoint":"`+tc.entry+`"`)), 0o644); err != nil {
			t.Fatal(err)
		}
		res, _ := estimateFirst(t, file)
		c := res.Calibration
		want := "prior: claude-code 2.1.328 main " + tc.setup + "; "
		if c == nil || !strings.HasPrefix(c.Method, want) || !strings.Contains(c.Method, tc.why) {
			t.Errorf("entrypoint %s: %+v, want %q… %q", tc.entry, c, want, tc.why)
		}
	}
}
