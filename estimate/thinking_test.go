package estimate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/importer"
)

// claudeOmittedThinking writes a Claude Code session of three requests
// whose assistant messages hold thinking as Claude Opus 4.7 and later
// return it (thinking omitted: the text empty, the signature kept), or,
// with text, as earlier models do; a real prompt comes between requests
// 2 and 3 and after request 3. The requests' recorded outputs are
// outputs (900, 700 and 500 when none are given). It returns the session,
// imported.
func claudeOmittedThinking(t *testing.T, thinking string, outputs ...int) string {
	t.Helper()
	return claudeThinkingSigned(t, thinking, "c2lnbmF0dXJl", outputs...)
}

// claudeThinkingSigned is claudeOmittedThinking with each thinking block's
// signature.
func claudeThinkingSigned(t *testing.T, thinking, signature string, outputs ...int) string {
	t.Helper()
	if len(outputs) == 0 {
		outputs = []int{900, 700, 500}
	}
	var lines []string
	add := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	user := func(uuid, parent, content string) {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		add(`{"parentUuid":%s,"isSidechain":false,"type":"user","uuid":"%s","sessionId":"s","version":"2.1.222","cwd":"/w","timestamp":"2026-11-01T10:00:00Z","message":{"role":"user","content":%s}}`, p, uuid, content)
	}
	assistant := func(uuid, parent, msg, text, call string, input, output int) {
		content := `[{"type":"thinking","thinking":"` + thinking + `","signature":"` + signature + `"},{"type":"text","text":"` + text + `"}` + call + `]`
		add(`{"parentUuid":"%s","isSidechain":false,"type":"assistant","uuid":"%s","sessionId":"s","version":"2.1.222","cwd":"/w","timestamp":"2026-11-01T10:00:01Z","message":{"id":"%s","type":"message","role":"assistant","model":"claude-opus-4-8","content":%s,"usage":{"input_tokens":4,"cache_read_input_tokens":%d,"output_tokens":%d}}}`, parent, uuid, msg, content, input-4, output)
	}
	user("u1", "", `"Find where the retry budget is set."`)
	assistant("a1", "u1", "msg_1", "Reading the config.", `,{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/config.go"}}`, 20000, outputs[0])
	user("u2", "a1", `[{"type":"tool_result","tool_use_id":"t1","content":"`+strings.Repeat("const retryBudget = 3 // per request\\n", 40)+`"}]`)
	assistant("a2", "u2", "msg_2", "It is set in config.go.", "", 21500, outputs[1])
	user("u3", "a2", `"Raise it to five."`)
	assistant("a3", "u3", "msg_3", "Done.", "", 22400, outputs[2])
	user("u4", "a3", `"Thanks."`)
	return importLines(t, lines)
}

// importLines imports a transcript of lines into a session directory.
func importLines(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{path}, Out: out}); err != nil {
		t.Fatal(err)
	}
	return out
}

func estimateHead(t *testing.T, dir string) *Result {
	t.Helper()
	v := openView(t, dir, "", false)
	res, err := View(context.Background(), v, Options{Model: v.Graph.S.Meta.Model, NodeDetail: true})
	if err != nil || res.Calibration == nil {
		t.Fatalf("estimate: %v (calibration %v)", err, res)
	}
	return res
}

// Claude's omitted thinking is output the transcript does not show but
// every later request reads (docs/ESTIMATE.md, "The anchor"): each
// request's recorded output less its shown text and calls is carried,
// across a new prompt too, until a compaction.
func TestClaudeOmittedThinkingIsCarried(t *testing.T) {
	res := estimateHead(t, claudeOmittedThinking(t, ""))
	c := res.Calibration
	if len(c.History) != 3 {
		t.Fatalf("%d requests, want 3", len(c.History))
	}
	if c.PriorSlope != ClaudeV47ProxySlope {
		t.Errorf("prior slope %v, want Claude Opus 4.7's tokenizer's %v (the session's model is claude-opus-4-8)", c.PriorSlope, ClaudeV47ProxySlope)
	}
	var sum int64
	for k, r := range c.History {
		out := []int64{900, 700, 500}[k]
		if r.Hidden <= out/2 || r.Hidden >= out {
			t.Errorf("request %d: hidden %d, want its output %d less the few tokens its text and call show", k+1, r.Hidden, out)
		}
		if r.NewTurn {
			t.Errorf("request %d: a new prompt dropped the hidden thinking; Claude keeps it", k+1)
		}
		sum += r.Hidden
	}
	if int64(c.CarriedTokens) != sum {
		t.Errorf("carried %d, want the three requests' hidden thinking, %d (a prompt after the latest request drops none)", c.CarriedTokens, sum)
	}
	// The view now is request 3's plus the prompt after it, the carried
	// thinking and the fitted rest: more than request 3 read by at least
	// the thinking request 3 produced.
	if int64(c.CalibratedTotal) < c.Measured+c.History[2].Hidden {
		t.Errorf("calibrated %d, want at least request 3's %d + its thinking %d", c.CalibratedTotal, c.Measured, c.History[2].Hidden)
	}

	// Thinking shown as text is counted in the view: nothing is hidden.
	res = estimateHead(t, claudeOmittedThinking(t, "The budget is a constant; read config.go first."))
	for k, r := range res.Calibration.History {
		if r.Hidden != 0 {
			t.Errorf("shown thinking, request %d: hidden %d, want 0", k+1, r.Hidden)
		}
	}
	if res.Calibration.CarriedTokens != 0 {
		t.Errorf("shown thinking: carried %d, want 0", res.Calibration.CarriedTokens)
	}
}

// A reply whose recorded output is below what it shows carries the
// count its stream started with, not its final one (Claude Code writes
// each block of a streamed reply as a line of its own): its omitted
// thinking is sized by its signature (signatureRate), when that stands
// for at least minSummarised tokens; a final count keeps the output less
// what is shown.
func TestClaudeOmittedThinkingSizedBySignature(t *testing.T) {
	long := strings.Repeat("A", 12000) // 4,080 tokens at signatureRate
	c := estimateHead(t, claudeThinkingSigned(t, "", long, 1, 1, 1)).Calibration
	want := int64(signatureRate * float64(len(long)))
	for k, r := range c.History {
		if r.Hidden != want {
			t.Errorf("request %d (output 1, below its shown text): hidden %d, want %d, the signature's", k+1, r.Hidden, want)
		}
	}
	if int64(c.CarriedTokens) != 3*want {
		t.Errorf("carried %d, want the three signatures' %d", c.CarriedTokens, 3*want)
	}
	// A short signature stands for less than minSummarised: no carry from
	// a count that is not final.
	c = estimateHead(t, claudeThinkingSigned(t, "", strings.Repeat("A", 600), 1, 1, 1)).Calibration
	for k, r := range c.History {
		if r.Hidden != 0 {
			t.Errorf("short signature, request %d: hidden %d, want 0", k+1, r.Hidden)
		}
	}
	// A final count is the measure, whatever the signature's length.
	c = estimateHead(t, claudeThinkingSigned(t, "", long, 900, 700, 500)).Calibration
	for k, r := range c.History {
		if out := []int64{900, 700, 500}[k]; r.Hidden <= out/2 || r.Hidden >= out {
			t.Errorf("final count, request %d: hidden %d, want its output %d less what it shows", k+1, r.Hidden, out)
		}
	}
}

// A long thinking Claude 4 summarises is shown as its summary while the
// provider reads the whole of it later (docs/ESTIMATE.md, "The anchor"):
// a request whose output is many times what the transcript shows of it
// carries the difference; one whose output is near what it shows carries
// nothing.
func TestClaudeSummarisedThinkingIsCarried(t *testing.T) {
	res := estimateHead(t, claudeOmittedThinking(t, "The budget is a constant; read config.go first.", 9000, 700, 500))
	h := res.Calibration.History
	if len(h) != 3 {
		t.Fatalf("%d requests, want 3", len(h))
	}
	if h[0].Hidden < 8900 || h[0].Hidden >= 9000 {
		t.Errorf("request 1 (output 9,000, a few dozen tokens shown): hidden %d, want its output less what it shows", h[0].Hidden)
	}
	for k, r := range h[1:] {
		if r.Hidden != 0 {
			t.Errorf("request %d (output near what it shows): hidden %d, want 0", k+2, r.Hidden)
		}
	}
	if int64(res.Calibration.CarriedTokens) != h[0].Hidden {
		t.Errorf("carried %d, want request 1's summarised thinking %d", res.Calibration.CarriedTokens, h[0].Hidden)
	}
}
