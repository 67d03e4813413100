package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestColorEnabled(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		tty     bool
		noColor bool
		want    bool
	}{
		{"auto", true, false, true},
		{"auto", false, false, false},
		{"auto", true, true, false},
		{"always", false, true, true},
		{"always", true, false, true},
		{"never", true, false, false},
		{"", true, false, true},
	} {
		s := &IOStreams{ColorMode: tc.mode, StdoutTTY: tc.tty, NoColorEnv: tc.noColor}
		if got := s.ColorEnabled(); got != tc.want {
			t.Errorf("mode %q tty %v NO_COLOR %v: ColorEnabled = %v", tc.mode, tc.tty, tc.noColor, got)
		}
	}
}

func TestNoColorFromEnv(t *testing.T) {
	for env, want := range map[string]bool{
		"":              false,
		"NO_COLOR=1":    true,
		"NO_COLOR=":     false,
		"TERM=dumb":     true,
		"TERM=DUMB":     true,
		"TERM=xterm":    false,
		"NO_COLOR=yes,": true,
	} {
		vars := map[string]string{}
		for _, kv := range strings.Split(env, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				vars[k] = v
			}
		}
		if got := NoColorFromEnv(func(k string) string { return vars[k] }); got != want {
			t.Errorf("%q: %v, want %v", env, got, want)
		}
	}
}

func TestPalette(t *testing.T) {
	on := NewPalette(&IOStreams{ColorMode: "always"})
	off := NewPalette(&IOStreams{ColorMode: "never"})
	if got := on.Red("x"); got != "\x1b[31mx\x1b[0m" || !on.Enabled() {
		t.Fatalf("Red on: %q", got)
	}
	for _, f := range []func(string) string{off.Red, off.Green, off.Yellow, off.Cyan, off.Bold, off.Dim, off.Magenta} {
		if f("x") != "x" {
			t.Fatal("a disabled palette changed its text")
		}
	}
	if off.Enabled() {
		t.Fatal("off palette enabled")
	}
}

func TestTestStreams(t *testing.T) {
	ios, in, out, errOut := Test()
	in.WriteString("input")
	fmt.Fprint(ios.Out, "o")
	fmt.Fprint(ios.ErrOut, "e")
	var got bytes.Buffer
	got.ReadFrom(ios.In)
	if got.String() != "input" || out.String() != "o" || errOut.String() != "e" || ios.StdoutTTY || ios.ColorEnabled() || ios.ProgressEnabled() {
		t.Fatalf("Test streams: %+v", ios)
	}
}

// JSON adds schema_version, sorts keys at every level, keeps numbers
// exact and does not escape HTML.
func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	v := struct {
		Zeta  int            `json:"zeta"`
		Alpha map[string]any `json:"alpha"`
		Big   int64          `json:"big"`
		Text  string         `json:"text"`
	}{3, map[string]any{"b": 1, "a": []int{2}}, 9007199254740993, "<a&b>"}
	if err := JSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	want := `{"alpha":{"a":[2],"b":1},"big":9007199254740993,"schema_version":2,"text":"<a&b>","zeta":3}` + "\n"
	if buf.String() != want {
		t.Fatalf("JSON:\n%s\nwant:\n%s", buf.String(), want)
	}
	if err := JSON(&buf, []int{1}); err == nil {
		t.Fatal("a non-object was accepted")
	}
}

func ExampleJSON() {
	var out bytes.Buffer
	_ = JSON(&out, map[string]any{"ids": []string{"u1", "a1"}, "head": "a1"})
	fmt.Print(out.String())
	// Output:
	// {"head":"a1","ids":["u1","a1"],"schema_version":2}
}
