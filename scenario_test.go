package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The scenario suite (docs/ARCHITECTURE.md, where each rule is enforced):
// the flows a user runs, end to end through the real ctxfold binary (testscript.Main in main_test.go puts it on PATH
// as "ctxfold"; every call is a new process), checking HEAD, the rendered
// id list and 'verify --strict' after every step. The class of
// cross-module side-effect bug it guards against (a write that moves HEAD,
// a summary leaking into a branch that never had its turns) does not show
// up in unit tests of the parts.

type scenario struct {
	t   *testing.T
	dir string
	env []string
}

func newScenario(t *testing.T) *scenario {
	t.Helper()
	if _, err := exec.LookPath("ctxfold"); err != nil {
		t.Skip("ctxfold is not on PATH (run through 'go test .')")
	}
	work := t.TempDir()
	sc := &scenario{t: t, dir: filepath.Join(work, "s"),
		env: append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"), "NO_COLOR=1", "LANG=C", "LC_ALL=C")}
	sc.ok("init", sc.dir, "--model", "gpt-4o")
	return sc
}

// run executes ctxfold in a new process and returns stdout, stderr and the
// exit code.
func (sc *scenario) run(args ...string) (string, string, int) {
	sc.t.Helper()
	cmd := exec.Command("ctxfold", args...)
	cmd.Env = sc.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		sc.t.Fatalf("ctxfold %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

func (sc *scenario) ok(args ...string) string {
	sc.t.Helper()
	out, errOut, code := sc.run(args...)
	if code != 0 {
		sc.t.Fatalf("ctxfold %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// say appends one node with a fixed id (its predecessor defaults to HEAD).
func (sc *scenario) say(id, role, content string, extra ...string) {
	sc.t.Helper()
	sc.ok(append([]string{"append", sc.dir, "--id", id, "--role", role, "--content", content}, extra...)...)
}

func (sc *scenario) head() string {
	sc.t.Helper()
	return strings.TrimSpace(sc.ok("checkout", sc.dir))
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// ids is the rendered id list from head ("" for HEAD); raw ignores summaries.
func (sc *scenario) ids(head string, raw bool) []string {
	sc.t.Helper()
	args := []string{"render", sc.dir, "--format", "ids"}
	if head != "" {
		args = append(args, "--head", head)
	}
	if raw {
		args = append(args, "--raw")
	}
	return lines(sc.ok(args...))
}

// summary reads a summary node's predecessor and coverage from disk: its
// covers_ids, or its covers_span walked back along the file's predecessor
// links (docs/FORMAT.md §4).
func (sc *scenario) summary(id string) (pred string, covers []string) {
	sc.t.Helper()
	data, err := os.ReadFile(filepath.Join(sc.dir, "nodes.jsonl"))
	if err != nil {
		sc.t.Fatal(err)
	}
	preds := map[string]string{}
	found := false
	var span *struct {
		First string `json:"first"`
		Last  string `json:"last"`
		Count int    `json:"count"`
	}
	for _, line := range lines(string(data)) {
		var n struct {
			ID          string  `json:"id"`
			Predecessor *string `json:"predecessor"`
			Metadata    struct {
				CoversIDs  []string `json:"covers_ids"`
				CoversSpan *struct {
					First string `json:"first"`
					Last  string `json:"last"`
					Count int    `json:"count"`
				} `json:"covers_span"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(line), &n); err != nil {
			sc.t.Fatal(err)
		}
		p := ""
		if n.Predecessor != nil {
			p = *n.Predecessor
		}
		preds[n.ID] = p
		if n.ID == id {
			found, pred, covers, span = true, p, n.Metadata.CoversIDs, n.Metadata.CoversSpan
		}
	}
	if !found {
		sc.t.Fatalf("no node %q", id)
	}
	if span != nil {
		covers = make([]string, span.Count)
		x := span.Last
		for k := span.Count - 1; k >= 0; k-- {
			covers[k] = x
			x = preds[x]
		}
		if covers[0] != span.First {
			sc.t.Fatalf("%s: covers_span %+v does not walk back to its first node", id, *span)
		}
	}
	return pred, covers
}

func (sc *scenario) meta() map[string]any {
	sc.t.Helper()
	data, err := os.ReadFile(filepath.Join(sc.dir, "session.json"))
	if err != nil {
		sc.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		sc.t.Fatal(err)
	}
	return m
}

func (sc *scenario) activeSummary() string {
	s, _ := sc.meta()["active_summary_id"].(string)
	return s
}

// expectedView is the test's own statement of docs/FORMAT.md §4 over the raw spine
// (the oracle the binary's rendering is checked against): if every covered
// id lies on the spine as one run right after the summary's predecessor,
// the run is replaced by the summary; otherwise the spine renders raw.
func expectedView(spine []string, summary, pred string, covers []string) []string {
	if summary == "" || len(covers) == 0 {
		return spine
	}
	at := slices.Index(spine, covers[0])
	if at < 1 || spine[at-1] != pred || at+len(covers) > len(spine) || !slices.Equal(spine[at:at+len(covers)], covers) {
		return spine
	}
	out := append(slices.Clone(spine[:at]), summary)
	return append(out, spine[at+len(covers):]...)
}

// check asserts HEAD, the rendered ids of HEAD (against the oracle and,
// when given, an exact list) and that verify --strict is clean.
func (sc *scenario) check(step, wantHead string, wantIDs []string) []string {
	sc.t.Helper()
	if h := sc.head(); h != wantHead {
		sc.t.Fatalf("%s: HEAD is %q, want %q", step, h, wantHead)
	}
	got := sc.ids("", false)
	active := sc.activeSummary()
	var pred string
	var covers []string
	if active != "" {
		pred, covers = sc.summary(active)
	}
	if want := expectedView(sc.ids("", true), active, pred, covers); !slices.Equal(got, want) {
		sc.t.Fatalf("%s: rendered ids %v, docs/FORMAT.md §4 gives %v", step, got, want)
	}
	if wantIDs != nil && !slices.Equal(got, wantIDs) {
		sc.t.Fatalf("%s: rendered ids %v, want %v", step, got, wantIDs)
	}
	sc.verifyClean(step)
	sc.t.Logf("%s: HEAD %s renders %v", step, wantHead, got)
	return got
}

func (sc *scenario) verifyClean(step string) {
	sc.t.Helper()
	out, errOut, code := sc.run("verify", "--strict", sc.dir)
	if code != 0 {
		sc.t.Fatalf("%s: verify exit %d\n%s%s", step, code, out, errOut)
	}
}

// compact runs ctxfold compact and returns the new active summary, which
// must cover a prefix of HEAD's turns after the system prompt, extend the
// previous summary's coverage and leave HEAD where it was.
func (sc *scenario) compact(step string, keep string, previous string) string {
	sc.t.Helper()
	before := sc.head()
	rawBefore := sc.ids("", true)
	sc.ok("compact", sc.dir, "--summarizer", "extractive", "--keep-tokens", keep)
	s := sc.activeSummary()
	if s == "" || s == previous {
		sc.t.Fatalf("%s: compact wrote no new summary (active %q)", step, s)
	}
	pred, covers := sc.summary(s)
	if pred != "sys" || len(covers) == 0 || !slices.Equal(covers, rawBefore[1:1+len(covers)]) {
		sc.t.Fatalf("%s: %s covers %v after %q; want a prefix of %v after sys", step, s, covers, pred, rawBefore[1:])
	}
	if previous != "" {
		_, old := sc.summary(previous)
		if len(covers) <= len(old) || !slices.Equal(covers[:len(old)], old) {
			sc.t.Fatalf("%s: %s covers %v, which does not extend %s's %v", step, s, covers, previous, old)
		}
	}
	got := sc.check(step, before, nil)
	if got[0] != "sys" || got[1] != s || slices.Contains(got, previous) || len(got) != len(rawBefore)-len(covers)+1 {
		sc.t.Fatalf("%s: rendered ids %v are not [sys, %s, kept tail…]", step, got, s)
	}
	for _, c := range covers {
		if slices.Contains(got, c) {
			sc.t.Fatalf("%s: covered id %s is rendered", step, c)
		}
	}
	return s
}

// words makes a turn long enough for compaction's token budget to cut.
func words(topic string) string {
	return strings.Repeat(topic+" needs careful handling in the migration plan; ", 6)
}

func TestScenarioChatForkCompactReload(t *testing.T) {
	sc := newScenario(t)
	sc.check("init", "", nil)

	// chat
	sc.say("sys", "system", "You are a migration assistant.")
	sc.say("u1", "user", words("the schema"))
	sc.say("a1", "assistant", words("reading the schema"), "--tool-calls", `[{"id":"c1","name":"bash","arguments":{"cmd":"cat schema.sql"}}]`)
	sc.say("t1", "tool", words("CREATE TABLE users"), "--tool-call-id", "c1")
	sc.say("a2", "assistant", words("the users table"))
	sc.say("u2", "user", words("the orders table"))
	sc.say("a3", "assistant", words("orders"))
	chain := []string{"sys", "u1", "a1", "t1", "a2", "u2", "a3"}
	sc.check("chat", "a3", chain)

	// fork: a retry of a3 beside it; HEAD stays (not a chain extension)
	sc.say("a3b", "assistant", words("orders, retried"), "--predecessor", "u2")
	sc.check("fork", "a3", chain)
	retry := append(slices.Clone(chain[:6]), "a3b")
	if got := sc.ids("a3b", false); !slices.Equal(got, retry) {
		t.Fatalf("fork: the retry renders %v, want %v", got, retry)
	}

	// checkout the retry; the original branch is untouched
	sc.ok("checkout", sc.dir, "a3b")
	sc.check("checkout", "a3b", retry)
	if got := sc.ids("a3", false); !slices.Equal(got, chain) {
		t.Fatalf("checkout: the sibling renders %v, want %v", got, chain)
	}

	// compact: one summary, HEAD unchanged
	s1 := sc.compact("compact", "150", "")
	// The sibling a3 holds the whole covered segment too (it forks after
	// it), so it renders with the summary as well.
	_, covers1 := sc.summary(s1)
	if got, want := sc.ids("a3", false), expectedView(chain, s1, "sys", covers1); !slices.Equal(got, want) || !slices.Contains(got, s1) {
		t.Fatalf("compact: the sibling renders %v, want %v with %s", got, want, s1)
	}

	// chat on
	sc.say("u3", "user", words("the indexes"))
	sc.say("a4", "assistant", words("indexes"))
	sc.check("chat after compact", "a4", nil)

	// compact again: the coverage extends, one active summary, the first
	// is a relic that no view shows
	s2 := sc.compact("compact again", "120", s1)
	if sc.activeSummary() != s2 {
		t.Fatalf("active summary %q, want %q", sc.activeSummary(), s2)
	}

	// chat on
	sc.say("u4", "user", words("the rollback"))
	sc.say("a5", "assistant", words("rollback"))
	final := sc.check("chat after second compact", "a5", nil)
	if final[len(final)-1] != "a5" || final[1] != s2 {
		t.Fatalf("final view %v", final)
	}

	// a new process loads the directory: the same HEAD and bytes
	jsonl := sc.ok("render", sc.dir, "--format", "jsonl")
	sc.check("reload", "a5", final)
	if again := sc.ok("render", sc.dir, "--format", "jsonl"); again != jsonl {
		t.Fatal("reload: the rendered view changed between two processes")
	}

	// the original branch a3: it lacks a3b, so s2's segment is not on its
	// spine and it renders raw (s1 is a relic and never substitutes)
	if got := sc.ids("a3", false); !slices.Equal(got, chain) {
		t.Fatalf("sibling after double compaction renders %v, want raw %v", got, chain)
	}
}

func TestScenarioHeadIntegrity(t *testing.T) {
	sc := newScenario(t)
	sc.say("sys", "system", "You are a migration assistant.")
	for _, id := range []string{"u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4"} {
		role := "user"
		if id[0] == 'a' {
			role = "assistant"
		}
		sc.say(id, role, words(id))
	}
	chain := []string{"sys", "u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4"}
	sc.check("chat", "a4", chain)
	s := sc.compact("compact", "150", "")
	_, covers := sc.summary(s)
	view := sc.check("compacted", "a4", nil)

	// HEAD refuses a summary (and a missing id); nothing changes
	if _, errOut, code := sc.run("checkout", sc.dir, s); code != 2 || !strings.Contains(errOut, "summary") {
		t.Fatalf("checkout of a summary: exit %d %q", code, errOut)
	}
	if _, _, code := sc.run("checkout", sc.dir, "nope"); code != 2 {
		t.Fatalf("checkout of a missing id: exit %d", code)
	}
	sc.check("refused checkouts", "a4", view)

	// spawned (caller) turns never move HEAD, even extending it
	sc.say("sp1", "user", "Sub-agent: list the indexes.", "--caller", "a4")
	sc.say("sp2", "assistant", "Three indexes.", "--caller", "a4", "--predecessor", "sp1")
	sc.check("spawned turns", "a4", view)

	// meta saves never move HEAD: repair records the committed length in
	// session.json (removed here, as in a hand-written session); a no-op
	// compaction writes no node
	m := sc.meta()
	delete(m, "nodes_bytes")
	data, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(sc.dir, "session.json"), data, 0o644)
	sc.ok("repair", sc.dir)
	if _, ok := sc.meta()["nodes_bytes"]; !ok {
		t.Fatal("repair did not save session.json")
	}
	sc.check("meta save", "a4", view)
	sc.ok("compact", sc.dir, "--summarizer", "extractive", "--keep-tokens", "150")
	if sc.activeSummary() != s {
		t.Fatal("a repeated compaction with nothing new wrote a summary")
	}
	sc.check("no-op compaction", "a4", view)

	// rewinding: checkout an earlier kept turn, then chat; the new tip is
	// rendered with the summary and the sibling branch is left alone
	kept := view[2] // the first kept turn after the summary
	sc.ok("checkout", sc.dir, kept)
	sc.say("r1", "assistant", words("a different answer"))
	rewound := sc.check("rewind", "r1", nil)
	if want := append(slices.Clone(view[:3]), "r1"); !slices.Equal(rewound, want) {
		t.Fatalf("rewind renders %v, want %v", rewound, want)
	}
	if got := sc.ids("a4", false); !slices.Equal(got, view) {
		t.Fatalf("rewind: the sibling renders %v, want %v", got, view)
	}

	// a fork from inside the covered range renders raw: it never had the
	// turns after the fork point, so it does not inherit their summary
	inside := covers[len(covers)-2]
	sc.ok("checkout", sc.dir, inside)
	sc.say("x1", "user", words("another direction"))
	forkIDs := sc.check("fork inside the covered range", "x1", nil)
	if slices.Contains(forkIDs, s) || forkIDs[len(forkIDs)-1] != "x1" || !slices.Equal(forkIDs, sc.ids("x1", true)) {
		t.Fatalf("fork from %s renders %v, want its raw spine", inside, forkIDs)
	}
	// and the compacted branch still substitutes
	if got := sc.ids("a4", false); !slices.Equal(got, view) {
		t.Fatalf("after the inside fork, a4 renders %v, want %v", got, view)
	}
}

// TestScenarioAppendedSummary: a summary appended by hand through 'append
// --file' (a valid docs/FORMAT.md §4 node) behaves like one compact writes.
func TestScenarioAppendedSummary(t *testing.T) {
	sc := newScenario(t)
	sc.say("sys", "system", "You are a migration assistant.")
	sc.say("u1", "user", "Plan the migration.")
	sc.say("a1", "assistant", "Step one: back up.")
	sc.say("u2", "user", "Go on.")
	sc.say("a2", "assistant", "Step two: migrate.")
	batch := filepath.Join(t.TempDir(), "summary.jsonl")
	os.WriteFile(batch, []byte(`{"id":"summary_hand","predecessor":"sys","role":"user","name":"context/summary","content":"[Previous conversation summary]\nThe user asked for a migration plan; step one is a backup.","metadata":{"compaction":true,"covers_ids":["u1","a1"]}}`+"\n"), 0o644)
	sc.ok("append", sc.dir, "--file", batch)
	sc.check("appended summary", "a2", []string{"sys", "summary_hand", "u2", "a2"})
}
