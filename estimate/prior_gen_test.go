package estimate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The prior table's generator (docs/ACCURACY.md, "The prior"): every
// real-client recording in ../testdata/interop holds the request bodies the
// client sent to the fake provider, so the part of the prompt a transcript
// never records — the system prompt and the tool definitions — is measured
// there, in bytes and in this package's own counts, per client version and
// mode (the main agent's first request with tools; a sub-agent's first
// request). CTXFOLD_PRIOR_WRITE=1 rewrites prior_table.go (and, with
// CTXFOLD_PRIOR_MD=FILE, writes the Markdown table); without it the test
// fails when the committed table is not what the recordings give
// (scripts/prior-table.sh).

// priorClients maps a recording folder to the importer's format name, for
// the clients whose transcripts record usage.
var priorClients = map[string]string{
	"claude-code": "claude-code", "codex": "codex", "copilot": "copilot",
	"gemini-cli": "gemini", "qwen-code": "qwen-code", "pi": "pi", "openclaw": "openclaw",
}

// recordedRequest is one request body of a recording.
type recordedRequest struct {
	name string // file, or requests.jsonl:line
	body map[string]json.RawMessage
}

func TestPriorTable(t *testing.T) {
	entries := generatePrior(t, filepath.Join("..", "testdata", "interop"), PriorHarness)
	entries = append(entries, generatePrior(t, filepath.Join("..", "testdata", "priors"), PriorDefault)...)
	if len(entries) == 0 {
		t.Fatal("no recording measured")
	}
	src := priorSource(entries)
	if os.Getenv("CTXFOLD_PRIOR_WRITE") != "" {
		if err := os.WriteFile("prior_table.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		if p := os.Getenv("CTXFOLD_PRIOR_MD"); p != "" {
			if err := os.WriteFile(p, []byte(priorMarkdown(entries)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	got, err := os.ReadFile("prior_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Errorf("prior_table.go is not what the recordings give: run scripts/prior-table.sh")
	}
}

// generatePrior measures every recording under root, made in setup: the
// interop recordings (PriorHarness) or the default-mode first requests of
// testdata/priors (PriorDefault, scripts/record-priors.sh), whose one
// request counts with or without tools (Codex 0.169.0's default model is
// sent none).
// oracleOnly are the Claude Code recordings made only when named, import
// oracles rather than the harness's first request: attachments (2.1.222, a
// hook, a skill and an MCP server set up, the Skill tool added),
// subagent-step and skill-parallel (the same setup), compact-file (the
// Read tool instead of Agent), model-switch (its requests after /model
// are another model's) and subagent-thinking (recorded with 2.1.222 for
// what it writes of a late usage, not for its prefix).
var oracleOnly = map[string]bool{"attachments": true, "subagent-step": true, "skill-parallel": true, "compact-file": true, "model-switch": true,
	"subagent-thinking": true}

func generatePrior(t *testing.T, root, setup string) []PriorEntry {
	c, err := getCounter(O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	defer putCounter(c)
	var out []PriorEntry
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "*", "*"))
	sort.Strings(dirs)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		client, ok := priorClients[parts[0]]
		if !ok || parts[2] == "blobs" || oracleOnly[parts[2]] {
			continue
		}
		reqs := recordedRequests(t, dir)
		var main *PriorEntry
		for _, r := range reqs {
			e, ok := measureRequest(c, r.body, filepath.Join(filepath.Dir(dir), "blobs"))
			if !ok && setup == PriorHarness {
				continue
			}
			e.Client, e.Version, e.Scenario, e.Setup = client, parts[1], parts[2], setup
			e.Source = "testdata/" + filepath.Base(root) + "/" + filepath.ToSlash(filepath.Join(rel, r.name))
			if main == nil && setup == PriorDefault && parts[2] == "subagent" {
				// A default-mode sub-agent's first request, kept alone.
				e.Mode = PriorSubagent
				out = append(out, e)
				break
			}
			if main == nil {
				e.Mode = PriorMain
				out = append(out, e)
				main = &out[len(out)-1]
				continue
			}
			if parts[2] == "subagent" && (e.SystemBytes != main.SystemBytes || e.ToolsBytes != main.ToolsBytes) {
				e.Mode = PriorSubagent
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// recordedRequests reads dir/requests/*.json or dir/requests.jsonl.
func recordedRequests(t *testing.T, dir string) []recordedRequest {
	var out []recordedRequest
	files, _ := filepath.Glob(filepath.Join(dir, "requests", "*.json"))
	sort.Strings(files)
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "count_tokens") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]json.RawMessage
		if json.Unmarshal(b, &body) == nil {
			if inner, ok := body["body"]; ok {
				body = nil
				_ = json.Unmarshal(inner, &body)
			}
			out = append(out, recordedRequest{"requests/" + filepath.Base(f), body})
		}
	}
	f, err := os.Open(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		var rec struct {
			Body map[string]json.RawMessage `json:"body"`
			Path string                     `json:"path"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Body == nil || strings.Contains(rec.Path, "count") {
			continue
		}
		out = append(out, recordedRequest{fmt.Sprintf("requests.jsonl:%d", line), rec.Body})
	}
	return out
}

var reElided = regexp.MustCompile(`\[elided: about (\d+) bytes\]`)

// measureRequest is the system prompt and tool definitions of one request
// body; ok only for a request that carries tools.
func measureRequest(c *counter, body map[string]json.RawMessage, blobs string) (PriorEntry, bool) {
	var e PriorEntry
	var system []string
	var tools []json.RawMessage
	texts := func(raw json.RawMessage) {
		raw = resolveBlob(raw, blobs)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			system = append(system, s)
			return
		}
		var blocks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &blocks) == nil {
			for _, b := range blocks {
				system = append(system, b.Text)
			}
		}
	}
	switch {
	case body["system"] != nil: // Anthropic messages
		e.API = "anthropic-messages"
		texts(body["system"])
	case body["systemInstruction"] != nil || body["contents"] != nil: // Gemini
		e.API = "gemini"
		var si struct {
			Parts json.RawMessage `json:"parts"`
		}
		_ = json.Unmarshal(resolveBlob(body["systemInstruction"], blobs), &si)
		texts(si.Parts)
	case body["input"] != nil: // OpenAI responses
		e.API = "openai-responses"
		if body["instructions"] != nil {
			texts(body["instructions"])
		}
		leadingSystem(resolveBlob(body["input"], blobs), blobs, texts)
	default: // OpenAI chat completions
		e.API = "openai-chat"
		leadingSystem(resolveBlob(body["messages"], blobs), blobs, texts)
	}
	var elidedTools struct {
		Bytes int      `json:"bytes"`
		Names []string `json:"names"`
	}
	if json.Unmarshal(resolveBlob(body["tools"], blobs), &elidedTools) == nil && elidedTools.Bytes > 0 {
		// The recording elided the definitions (Qwen Code's): their size
		// and names only, counted at four bytes a token.
		e.Tools, e.ToolsBytes, e.ElidedBytes = len(elidedTools.Names), elidedTools.Bytes, elidedTools.Bytes
	}
	_ = json.Unmarshal(resolveBlob(body["tools"], blobs), &tools)
	if e.API == "gemini" {
		var flat []json.RawMessage
		for _, tl := range tools {
			var g struct {
				Decls []json.RawMessage `json:"functionDeclarations"`
			}
			if json.Unmarshal(tl, &g) == nil && len(g.Decls) > 0 {
				flat = append(flat, g.Decls...)
			} else {
				flat = append(flat, tl)
			}
		}
		tools = flat
	}
	sys := strings.Join(system, "\n")
	for _, m := range reElided.FindAllStringSubmatch(sys, -1) {
		var n int
		fmt.Sscan(m[1], &n)
		e.ElidedBytes += n
	}
	e.SystemBytes, e.SystemTokens = len(sys), c.count(sys)
	if len(tools) == 0 {
		e.ToolNames = strings.Join(elidedTools.Names, ",")
		return e, e.Tools > 0
	}
	e.ToolNames = toolNames(tools)
	defs, _ := json.Marshal(tools)
	var buf bytes.Buffer
	_ = json.Compact(&buf, defs)
	e.Tools, e.ToolsBytes = len(tools), buf.Len()
	e.ToolsTokens = toolDefTokens(c, ProviderAnthropic, buf.Bytes())
	e.ToolsTokensOpenAI = toolDefTokens(c, ProviderOpenAI, buf.Bytes())
	return e, true
}

// toolNames is the tool definitions' names, sorted, comma-separated: a
// definition's name, its function's (OpenAI chat), or its type (a
// provider's built-in tool).
func toolNames(tools []json.RawMessage) string {
	var names []string
	for _, raw := range tools {
		var d struct {
			Name, Type string
			Function   struct{ Name string }
		}
		_ = json.Unmarshal(raw, &d)
		switch {
		case d.Name != "":
			names = append(names, d.Name)
		case d.Function.Name != "":
			names = append(names, d.Function.Name)
		default:
			names = append(names, d.Type)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// leadingSystem calls texts on the content of the messages before the
// first user or assistant message (system and developer roles).
func leadingSystem(raw json.RawMessage, blobs string, texts func(json.RawMessage)) {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(raw, &msgs)
	for _, m := range msgs {
		if m.Role != "system" && m.Role != "developer" {
			return
		}
		texts(resolveBlob(m.Content, blobs))
	}
}

// resolveBlob is the blob a {"$blob": NAME} value stands for (the
// recordings store large repeated values once, under blobs/).
func resolveBlob(raw json.RawMessage, blobs string) json.RawMessage {
	var ref struct {
		Blob string `json:"$blob"`
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ref) != nil || ref.Blob == "" {
		return raw
	}
	b, err := os.ReadFile(filepath.Join(blobs, ref.Blob))
	if err != nil {
		return raw
	}
	return b
}

// priorSource is prior_table.go for entries.
func priorSource(entries []PriorEntry) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by scripts/prior-table.sh (TestPriorTable) from the request bodies in testdata/interop and testdata/priors; DO NOT EDIT.\n\npackage estimate\n\n")
	b.WriteString("// priorTable is what each recorded client version sent beside the\n// conversation (docs/ACCURACY.md, \"The prior\").\nvar priorTable = []PriorEntry{\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "\t{Client: %q, Version: %q, Mode: %q, Setup: %q, API: %q, Scenario: %q, Source: %q, SystemBytes: %d, SystemTokens: %d, ElidedBytes: %d, Tools: %d, ToolsBytes: %d, ToolsTokens: %d, ToolsTokensOpenAI: %d, ToolNames: %q},\n",
			e.Client, e.Version, e.Mode, e.Setup, e.API, e.Scenario, e.Source, e.SystemBytes, e.SystemTokens, e.ElidedBytes, e.Tools, e.ToolsBytes, e.ToolsTokens, e.ToolsTokensOpenAI, e.ToolNames)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// priorMarkdown is the table of docs/ACCURACY.md.
func priorMarkdown(entries []PriorEntry) string {
	var b strings.Builder
	b.WriteString("| client | version | mode | setup | API | scenario (request) | system bytes | system tokens | elided bytes | tools | tool bytes | tool tokens (JSON) | tool tokens (OpenAI rule) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range entries {
		src := e.Source
		for _, dir := range []string{"interop", "priors"} {
			src = strings.TrimPrefix(src, "testdata/"+dir+"/"+dirOfClient(e.Client)+"/"+e.Version+"/")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d | %d | %d | %d | %d | %d | %d |\n", e.Client, e.Version, e.Mode, e.Setup, e.API,
			src, e.SystemBytes, e.SystemTokens, e.ElidedBytes, e.Tools, e.ToolsBytes, e.ToolsTokens, e.ToolsTokensOpenAI)
	}
	return b.String()
}

func dirOfClient(client string) string {
	for d, c := range priorClients {
		if c == client {
			return d
		}
	}
	return client
}

// The default-mode recordings are an interactive session's where the
// client lets print mode say so (record.go's interactive): 2.1.39's
// billing header names the cli entrypoint and its Task tool lists the
// claude-code-guide agent, which a program's session (sdk-cli) is not
// offered.
func TestDefaultPriorIsAnInteractiveSessions(t *testing.T) {
	for _, name := range []string{"default/requests/messages.json", "subagent/requests/subagent-messages.json"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "priors", "claude-code", "2.1.39", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "cc_entrypoint=cli;") {
			t.Errorf("2.1.39 %s: not recorded as an interactive session's", name)
		}
		if strings.HasPrefix(name, "default/") && !strings.Contains(string(b), "claude-code-guide") {
			t.Errorf("2.1.39 %s: the Task tool does not list claude-code-guide", name)
		}
	}
}
