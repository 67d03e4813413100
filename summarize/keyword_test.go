package summarize

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var keywordREs = map[string]keywordRE{"constraint": reConstraint, "decision": reDecision, "inspect": reInspect, "rejected": reRejected}

func keywordREAgrees(t *testing.T, s string) {
	t.Helper()
	for name, k := range keywordREs {
		if got, want := k.MatchString(s), k.re.MatchString(s); got != want {
			t.Fatalf("%s on %q: prefiltered %v, regexp %v", name, s, got, want)
		}
	}
}

// The prefilter never changes an answer: every line and sentence of the
// fixtures and of crafted cases (case, folding, word edges) gets the
// regexp's own answer.
func TestKeywordREAgrees(t *testing.T) {
	crafted := []string{
		"NEVER do that", "ſhould not", "KEEP it", "I'LL run the tests", "Let's  read it first", "we rejected it",
		"ValueError: bad", "FAILED tests", "main.go:12: undefined: x", "exit status 2", "exit code 0", `File "a.py", line 3`,
		"Permission Denied", "PANIC: no", "panic: boom", "not foundation", "errors", "K", "onlyone", "rather thanks",
	}
	for _, s := range crafted {
		keywordREAgrees(t, s)
	}
	files, _ := filepath.Glob("../fixtures/*/nodes.jsonl")
	lines := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			for _, l := range strings.Split(strings.ReplaceAll(sc.Text(), `\n`, "\n"), "\n") {
				keywordREAgrees(t, l)
				for _, s := range sentences(l) {
					keywordREAgrees(t, s)
				}
				lines++
			}
		}
		fh.Close()
	}
	if lines < 100 {
		t.Fatalf("only %d fixture lines", lines)
	}
}

func FuzzKeywordRE(f *testing.F) {
	for _, s := range []string{"I'll check", "error: x", "don't", "a.go:1:", "gave up", "ſhould not"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { keywordREAgrees(t, s) })
}
