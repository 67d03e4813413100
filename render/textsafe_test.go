package render_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

func TestTextSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ünïcode 😀\n\tindented", "plain ünïcode 😀\n\tindented"},
		{"\x1b[31mRED\x1b[0m", `\x1b[31mRED\x1b[0m`},
		{"\x1b]0;owned\x07 bell", `\x1b]0;owned\x07 bell`},
		{"over\rwrite\x7f\x00", `over\x0dwrite\x7f\x00`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"bad \xff byte", `bad \xff byte`},
		{"file\u202egnp.exe \u2066iso\u2069 \u200f\u061c", `file\u202egnp.exe \u2066iso\u2069 \u200f\u061c`},
	} {
		if got := render.TextSafe(tc.in); got != tc.want {
			t.Errorf("TextSafe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// hostileJSONL puts terminal control sequences in content, a tool call's
// name and arguments, and an id.
const hostileJSONL = `{"id":"u1","role":"user","content":"\u001b[31mRED\u001b[0m \u001b]0;owned\u0007 please \u009b2J"}
{"id":"a1","role":"assistant","content":"ok","tool_calls":[{"id":"c\u001b1","name":"sh\u001b[2J","arguments":{"cmd":"\u001b[H"}}]}
{"id":"t\u001b1","role":"tool","tool_call_id":"c\u001b1","content":"out\r\u001b[Kspoof"}
`

// TestTextOutputNeutralisesControls: the text format (for people) shows
// control characters escaped; jsonl keeps the stored bytes exactly and
// openai keeps the content (JSON-escaped, as JSON does).
func TestTextOutputNeutralisesControls(t *testing.T) {
	dir := rtSession(t, hostileJSONL)
	text := rtRender(t, dir, "", false, render.FormatText)
	if strings.ContainsAny(text, "\x1b\x07\r\u009b") {
		t.Fatalf("text output holds raw control characters:\n%q", text)
	}
	for _, want := range []string{`\x1b[31mRED\x1b[0m \x1b]0;owned\x07 please \u009b2J`, `sh\x1b[2J`, `out\x0d\x1b[Kspoof`, `── tool · t\x1b1 · result of c\x1b1`} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	jsonl := rtRender(t, dir, "", false, render.FormatJSONL)
	if !strings.Contains(jsonl, `\u001b[31mRED`) {
		t.Errorf("jsonl is not the stored bytes:\n%s", jsonl)
	}
	openai := rtRender(t, dir, "", false, render.FormatOpenAI)
	if strings.Contains(openai, `\\x1b`) || !strings.Contains(openai, `\u001b[31mRED`) {
		t.Errorf("openai content was altered:\n%s", openai)
	}
}

func TestSearchSnippetNeutralisesControls(t *testing.T) {
	dir := rtSession(t, hostileJSONL)
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	view, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	var snippets []string
	for _, q := range []string{"please", "spoof"} {
		err = render.Search(context.Background(), view, render.SearchOptions{Query: q}, func(h render.Hit) error {
			snippets = append(snippets, h.Snippet)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// \r is whitespace: the one-line snippet folds it into a space.
	want := []string{`\x1b[31mRED\x1b[0m \x1b]0;owned\x07 please \u009b2J`, `out \x1b[Kspoof`}
	if strings.Join(snippets, "|") != strings.Join(want, "|") {
		t.Fatalf("snippets = %q, want %q", snippets, want)
	}
}
