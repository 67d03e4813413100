package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeTourTwice runs the commands of README.md's "A two-minute tour"
// as they are written there (in a temporary directory standing for /tmp,
// with the ctxfold that TestMain puts on $PATH standing for the one the
// first command builds), twice in a row, and compares each command's
// output with the lines the README shows: a line "…" stands for any lines,
// summary ids may differ. The second run must give the same output — the
// tour's first command makes a fresh copy (issue 29 item 7: a second run
// nested the copy and compact said "already compacted").
func TestReadmeTourTwice(t *testing.T) {
	steps := readmeTour(t)
	if len(steps) < 6 {
		t.Fatalf("found %d commands in the README's tour", len(steps))
	}
	bin, err := exec.LookPath("ctxfold")
	if err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Abs("fixtures")
	work := t.TempDir()
	tmp := filepath.Join(work, "tmp")
	os.Mkdir(tmp, 0o755)
	os.Symlink(fixtures, filepath.Join(work, "fixtures"))
	for run := 1; run <= 2; run++ {
		for _, st := range steps {
			cmdline := strings.ReplaceAll(st.cmd, "/tmp/", tmp+"/")
			// The first command builds ./ctxfold; the test binary's stands in.
			if rest, ok := strings.CutPrefix(cmdline, "go build -o ctxfold . && "); ok {
				os.Remove(filepath.Join(work, "ctxfold"))
				if err := os.Symlink(bin, filepath.Join(work, "ctxfold")); err != nil {
					t.Fatal(err)
				}
				cmdline = rest
			}
			c := exec.Command("sh", "-c", cmdline)
			c.Dir = work
			c.Env = append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("run %d: %s: %v\n%s", run, st.cmd, err, out)
			}
			got := strings.ReplaceAll(string(out), tmp+"/", "/tmp/")
			if msg := matchShown(st.want, got); msg != "" {
				t.Errorf("run %d: %s: %s\ngot:\n%s", run, st.cmd, msg, got)
			}
		}
	}
}

type tourStep struct {
	cmd  string
	want []string
}

// readmeTour is the "$ " commands of the README's tour section with the
// output lines shown under each.
func readmeTour(t *testing.T) []tourStep {
	t.Helper()
	return readmeSection(t, "\n## A two-minute tour")
}

// readmeSection is the "$ " commands of the README section whose heading
// line is heading, with the output lines shown under each.
func readmeSection(t *testing.T, heading string) []tourStep {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, heading)
	if start < 0 {
		t.Fatalf("README.md has no %q", heading)
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	var steps []tourStep
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		code, ok := strings.CutPrefix(line, "    ")
		if !ok {
			if strings.TrimSpace(line) != "" {
				inBlock = false
			}
			continue
		}
		if cmd, ok := strings.CutPrefix(code, "$ "); ok {
			steps = append(steps, tourStep{cmd: cmd})
			inBlock = true
			continue
		}
		if inBlock && len(steps) > 0 {
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, code)
		}
	}
	return steps
}

var summaryID = regexp.MustCompile(`summary_[0-9a-f]+`)

// matchShown says how got differs from the shown lines ("" if it does
// not): each shown line must come next, "…" skips any lines, and output
// after the last shown line is allowed only after a "…".
func matchShown(shown []string, got string) string {
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	norm := func(s string) string { return summaryID.ReplaceAllString(strings.TrimRight(s, " "), "summary_ID") }
	i := 0
	skipping := false
	for _, w := range shown {
		if w == "…" {
			skipping = true
			continue
		}
		found := false
		for i < len(lines) {
			l := norm(lines[i])
			i++
			if l == norm(w) {
				found = true
				break
			}
			if !skipping {
				return "expected " + w + ", got " + lines[i-1]
			}
		}
		if !found {
			return "missing " + w
		}
		skipping = false
	}
	if i < len(lines) && !skipping && len(shown) > 0 && shown[len(shown)-1] != "…" {
		return "unexpected further output: " + lines[i]
	}
	return ""
}
