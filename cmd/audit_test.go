package cmd

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite cmd/testdata golden files")

// auditSession is a session whose hand-written summary keeps some facts
// of the turns it covers and drops others (testdata/audit-session.jsonl):
// request, paths and command kept; instruction, error, identifier and
// number lost.
func auditSession(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if r := cliRun(t, nil, false, "init", dir, "--model", "gpt-4o"); r.Code != 0 {
		t.Fatalf("init: %d %s", r.Code, r.Stderr)
	}
	if r := cliRun(t, nil, false, "append", dir, "--file", filepath.Join("testdata", "audit-session.jsonl")); r.Code != 0 {
		t.Fatalf("append: %d %s", r.Code, r.Stderr)
	}
	return dir
}

func TestAuditJSONGolden(t *testing.T) {
	dir := auditSession(t)
	r := cliRun(t, nil, false, "audit", dir, "--json")
	if r.Code != 0 {
		t.Fatalf("audit: %d %s", r.Code, r.Stderr)
	}
	got := strings.ReplaceAll(r.Stdout, dir, "DIR")
	golden := filepath.Join("testdata", "audit.golden.json")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -run TestAuditJSONGolden -update-golden)", err)
	}
	if got != string(want) {
		t.Errorf("audit --json differs from %s:\n got %s\nwant %s", golden, got, want)
	}
	var obj struct {
		Summaries []struct {
			Total, Kept int
			Facts       []struct {
				Kind, Text string
				Kept       bool
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || len(obj.Summaries) != 1 {
		t.Fatalf("audit --json: %v %s", err, r.Stdout)
	}
	// What the summary says is kept; what neither it nor the kept tail
	// (u2, a3) says is missing.
	wantKept := map[string]bool{
		"Fix the parser in src/parse.go and src/lex.go.": true, "src/parse.go": true, "src/lex.go": true, "go test ./src": true,
		"Never change the public \x1b[31mAPI\x1b[0m.": false, "--- FAIL: TestLex (0.00s)": false, "lexToken": false, "20ms": false,
	}
	s := obj.Summaries[0]
	for _, f := range s.Facts {
		kept, ok := wantKept[f.Text]
		if !ok {
			t.Errorf("unexpected fact %s %q", f.Kind, f.Text)
			continue
		}
		if f.Kept != kept {
			t.Errorf("fact %q kept = %v, want %v", f.Text, f.Kept, kept)
		}
		delete(wantKept, f.Text)
	}
	for text := range wantKept {
		t.Errorf("fact %q not found", text)
	}
}

func TestAuditExitCodes(t *testing.T) {
	dir := auditSession(t)
	var obj struct {
		Summaries []struct {
			SurvivalPct float64 `json:"survival_pct"`
		}
	}
	r := cliRun(t, nil, false, "audit", dir, "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || len(obj.Summaries) != 1 {
		t.Fatalf("audit --json: %v %s", err, r.Stdout)
	}
	pct := obj.Summaries[0].SurvivalPct
	if pct <= 0 || pct >= 100 {
		t.Fatalf("survival %v: the gate test needs a figure strictly between 0 and 100", pct)
	}
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"audit", dir}, 0, "survival:"},
		{[]string{"audit", dir, "--fail-below", "0"}, 0, "survival:"},
		{[]string{"audit", dir, "--fail-below", strings.TrimRight(strings.TrimRight(jsonNum(pct), "0"), ".")}, 0, "survival:"},
		{[]string{"audit", dir, "--fail-below", jsonNum(pct + 0.1)}, 1, "survival:"},
		{[]string{"audit", dir, "--fail-below", "100", "--json"}, 1, `"passed":false`},
		{[]string{"audit", dir, "--fail-below", "101"}, 2, ""},
		{[]string{"audit", dir, "--summary", "u1"}, 2, ""},
		{[]string{"audit", dir, "--summary", "summary_manual", "--fail-below", "50"}, 0, "survival: 4 of 8"},
		{[]string{"audit", dir, "--summary", "x", "--all"}, 2, ""},
		{[]string{"audit", filepath.Join("..", "fixtures", "tools")}, 2, ""},
	}
	for _, c := range cases {
		r := cliRun(t, nil, false, c.args...)
		if r.Code != c.code || !strings.Contains(r.Stdout, c.out) {
			t.Errorf("%v: exit %d, want %d; stdout %q stderr %q", c.args, r.Code, c.code, r.Stdout, r.Stderr)
		}
	}
}

func jsonNum(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func TestAuditTextIsTerminalSafe(t *testing.T) {
	// The lost instruction carries an escape sequence; the missing list
	// prints it, escaped (render.TextSafe), never raw.
	dir := auditSession(t)
	r := cliRun(t, nil, false, "audit", dir, "--missing", "0")
	if r.Code != 0 {
		t.Fatalf("audit: %d %s", r.Code, r.Stderr)
	}
	if strings.ContainsRune(r.Stdout, 0x1b) {
		t.Errorf("audit printed an escape character:\n%q", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "missing instruction (1):\n  Never change the public ") {
		t.Errorf("the lost instruction is not listed:\n%s", r.Stdout)
	}
}
