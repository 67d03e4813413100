package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostileSession holds a control sequence of every kind the terminal acts
// on, in ids, a tool's name, a tool call's name and content: ESC[2J, an OSC
// 0 title, an OSC 8 link, a DCS, a C1 CSI, BEL, BS, CR, NUL and a bidi
// override.
const hostileSession = `{"id":"sys","role":"system","content":"be \u202eevil"}
{"id":"u\u001b[2J1","role":"user","content":"\u001b]0;title\u0007 \u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\ \u001bPq#0\u001b\\ \u009b2J \b\r\u0000 fix \u202eit"}
{"id":"a1","role":"assistant","content":"ok","tool_calls":[{"id":"c1","name":"sh\u001b[2J\u202e","arguments":{"cmd":"ls"}}]}
{"id":"t1","role":"tool","tool_call_id":"c1","name":"sh\u001b]0;owned\u0007\u202e\u0008\r\u0000","content":"out \u202egnp.exe"}
`

// rawControl finds a character a terminal would act on: a C0 control other
// than \n and \t, DEL, a C1 control, an invalid byte or a bidi control.
func rawControl(s string) (rune, bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return rune(s[i]), true
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r, true
		}
		i += size
	}
	return 0, false
}

func TestTextOutputsNeutraliseControls(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	runEnv(t, cliEnv{}, "init", dir).check(t, "initialized empty session in "+dir+"\n", "", 0)
	batch := filepath.Join(t.TempDir(), "b.jsonl")
	if err := os.WriteFile(batch, []byte(hostileSession), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"append", dir, "--file", batch},
		{"append", dir, "--role", "user", "--content", "x", "--id", "n\x1b]0;t\x07\u202e"},
	} {
		r := runEnv(t, cliEnv{}, args...)
		if r.Code != 0 {
			t.Fatalf("%q: exit %d: %s", args, r.Code, r.Stderr)
		}
		if c, bad := rawControl(r.Stdout); bad {
			t.Errorf("%q: stdout holds raw %U:\n%q", args, c, r.Stdout)
		}
	}
	runs := [][]string{
		{"checkout", dir, "u\x1b[2J1"},
		{"checkout", dir},
		{"render", dir, "--format", "ids"},
		{"render", dir},
		{"render", dir, "--raw"},
		{"graph", dir},
		{"graph", dir, "--expand"},
		{"search", dir, "evil"},
		{"search", dir, "gnp"},
		{"verify", dir},
		{"estimate", dir, "--nodes", "--no-cache", "--model", "gpt-4o"},
		{"compact", dir, "--dry-run", "--keep-tokens", "10", "--model", "gpt-4o"},
		{"checkout", dir, "missing\x1b[2J\u202e"},
	}
	for _, tty := range []bool{false, true} {
		for _, args := range runs {
			r := runEnv(t, cliEnv{TTY: tty}, args...)
			if r.Code != 0 && args[len(args)-1] != "missing\x1b[2J\u202e" {
				t.Fatalf("%q: exit %d: %s", args, r.Code, r.Stderr)
			}
			for name, out := range map[string]string{"stdout": r.Stdout, "stderr": r.Stderr} {
				// On a TTY the palette's own SGR sequences are expected; only
				// transcript content must not add any.
				if tty {
					out = stripSGR(out)
				}
				if c, bad := rawControl(out); bad {
					t.Errorf("%q (tty=%v): %s holds raw %U:\n%q", args, tty, name, c, out)
				}
			}
		}
	}
	if r := runEnv(t, cliEnv{}, "render", dir, "--format", "ids"); !strings.Contains(r.Stdout, `u\x1b[2J1`) {
		t.Errorf("ids are not shown escaped:\n%s", r.Stdout)
	}
	if r := runEnv(t, cliEnv{}, "graph", dir); !strings.Contains(r.Stdout, `tool(sh\x1b]0;owned\x07\u202e\x08\x0d\x00)`) {
		t.Errorf("graph does not show the tool name escaped:\n%s", r.Stdout)
	}
}

// stripSGR removes the colour sequences ctxfold's palette writes (ESC [
// digits and ; then m), leaving any other escape in place.
func stripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestAppendBatchReadStopsWhenInterrupted: parsing a large batch checks
// for Ctrl-C at every read, so it stops long before the file's end (a bad
// line later on is never reached).
func TestAppendBatchReadStopsWhenInterrupted(t *testing.T) {
	batch := filepath.Join(t.TempDir(), "b.jsonl")
	if err := os.WriteFile(batch, []byte(`{"id":"u1","role":"user","content":"hi"}`+"\n"+`{"role":"nobody"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, _, err := readBatch(ctx, &appendOptions{File: batch})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}
