package summarize

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/transcript"
)

// Extractive is the default summarizer: offline and deterministic, no model
// and no network. It parses what the covered turns contain — the requests,
// tool calls and their arguments, error lines, questions, imperative
// constraints — and keeps what it takes verbatim. It prefers omission to
// invention: a section with nothing found is left out.
type Extractive struct{}

// Name implements Summarizer.
func (Extractive) Name() string { return "extractive" }

// CacheKey implements Summarizer. The rules are versioned: change the
// version when they change what a summary says.
func (Extractive) CacheKey() string { return "extractive/v5" }

// Section names used by the extractive summary besides the fact sections
// (factledger.go).
const (
	secObjective = "Objective"
	secEarlier   = "Earlier state"
	secPinned    = "Pinned"
	secTools     = "Other tool calls"
	secState     = "Current state and plan"
	secDecisions = "Key decisions"
	secRejected  = "Rejected approaches"
	secQuestions = "Open questions"
	secLatest    = "Latest user request"
	secMedia     = "Media (reference only)"
	// secNotKept says how many facts of the lowest ranks did not fit the
	// ceiling: a drop is never silent.
	secNotKept = "Not kept"
	// secInspectedV2 is the paths section of summaries written before the
	// fact sections (extractive/v2), read back when one is absorbed.
	secInspectedV2 = "Files inspected"
)

// paragraph sections hold one text; the others are lists.
var paragraphSections = map[string]bool{secObjective: true, secTask: true, secEarlier: true, secState: true, secLatest: true}

// proseOrder is the prose, in the order it is given room: the budget goes
// to the facts first (docs/COMPACT.md §3). The state and an earlier
// summary of another shape (ceilingProse) may use what the facts leave of
// the ceiling; the rest only what they leave of the cap.
var proseOrder = []string{secTask, secPlan, secEarlier, secDecisions, secRejected, secState, secLatest, secQuestions, secTools, secMedia}

// ceilingProse is how many sections of proseOrder may grow to the ceiling.
const ceilingProse = 3

// sectionOrder is every section in the order it is written: the current
// task and the plan right under the objective, the rest of the prose after
// the facts.
var sectionOrder = append(append(append([]string{secObjective, secTask, secPlan, secPinned}, factSections...),
	secEarlier, secState, secLatest, secDecisions, secRejected, secQuestions, secTools, secMedia), secNotKept)

// knownSection: a heading an extractive summary (this version or v2)
// writes, so a previous summary holding one merges section by section.
func knownSection(h string) bool {
	return slices.Contains(sectionOrder, h) || h == secInspectedV2
}

var (
	reConstraint = keywordRE{regexp.MustCompile(`(?i)\b(never|always|do not|don't|dont|must|mustn't|should|shouldn't|only|prefer|avoid|make sure|ensure|without|keep|please|instead|stop|no longer|not allowed|required)\b`),
		[]string{"never", "always", "do not", "don't", "dont", "must", "should", "only", "prefer", "avoid", "make sure", "ensure", "without", "keep", "please", "instead", "stop", "no longer", "not allowed", "required"}}
	// reCorrection: a user sentence that opens by correcting the agent.
	reCorrection = regexp.MustCompile(`(?i)^(no|nope|actually|wait|wrong|that's wrong|that is wrong|not that|that's not)\b`)
	reDecision   = keywordRE{regexp.MustCompile(`(?i)(\bI'll\b|\bI will\b|\bwe'll\b|\bwe will\b|\blet's\b|\bdecided\b|\bgoing to\b|\bswitch(ed)? to\b|\bthe plan\b|\bthe fix\b|\bfound it\b|\binstead of\b|\brather than\b)`),
		[]string{"i'll", "i will", "we'll", "we will", "let's", "decided", "going to", "switch", "the plan", "the fix", "found it", "instead of", "rather than"}}
	// reInspect: "I'll read the file first" announces a look, not a decision.
	reInspect = keywordRE{regexp.MustCompile(`(?i)\b(I'll|I will|let me|let's|we'll)\s+(first\s+)?(read|run|re-run|check|look|inspect|open|search|see|start|begin|try)\b`),
		[]string{"i'll", "i will", "let me", "let's", "we'll"}}
	reRejected = keywordRE{regexp.MustCompile(`(?i)(\bwon't work\b|\bdoesn't work\b|\bdidn't work\b|\bdoes not work\b|\bdid not work\b|\bnot going to\b|\brejected?\b|\babandon|\breverted?\b|\bgave up\b|\bno longer\b|\bdead end\b|\bruled out\b)`),
		[]string{"won't work", "doesn't work", "didn't work", "does not work", "did not work", "not going to", "reject", "abandon", "revert", "gave up", "no longer", "dead end", "ruled out"}}
	reTodoTool  = regexp.MustCompile(`(?i)(todo|plan)`)
	rePatchFile = regexp.MustCompile(`\*\*\* (?:Add|Update|Delete) File: ([^\n\\]+)`)
	reWriteTool = regexp.MustCompile(`(?i)(edit|write|create|patch|apply|replace|insert|delete|remove|move|rename|mkdir)`)
)

// pathKeys are argument keys holding file paths.
var pathKeys = []string{"path", "file", "file_path", "filepath", "filename", "target_file", "paths", "files", "source", "destination", "dir", "directory"}

type extraction struct {
	paragraph map[string]string
	lists     map[string][]string
	seen      map[string]map[string]bool
	// modified are the paths a writing tool named (Files modified).
	modified map[string]bool
	// prevFacts are the fact lines of a previous summary, read back when
	// the request brings no Facts of its own.
	prevFacts []audit.Fact
	// left are the facts that did not fit the ceiling, of total (the
	// "Not kept" note).
	left  []audit.Fact
	total int
	// plan follows the agent's todo list; task and taskID are the latest
	// substantive request (Current task).
	plan         planState
	task, taskID string
}

func newExtraction() *extraction {
	return &extraction{paragraph: map[string]string{}, lists: map[string][]string{}, seen: map[string]map[string]bool{}, modified: map[string]bool{}}
}

func (x *extraction) add(sec, item string) {
	item = strings.TrimSpace(item)
	if item == "" {
		return
	}
	if x.seen[sec] == nil {
		x.seen[sec] = map[string]bool{}
	}
	if x.seen[sec][item] {
		return
	}
	x.seen[sec][item] = true
	x.lists[sec] = append(x.lists[sec], item)
}

// Summarize implements Summarizer.
func (e Extractive) Summarize(ctx context.Context, req Request) (string, error) {
	x := newExtraction()
	x.seed(req)
	var lastAssistant, slashCommand string
	for _, nd := range req.Nodes {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		text := strings.TrimSpace(nd.Content.PlainText())
		x.message(nd, text, &lastAssistant, &slashCommand)
		x.nodeExtras(nd)
	}
	x.finish(lastAssistant, slashCommand)
	facts := req.Facts
	if facts == nil {
		facts = mergeFacts(x.prevFacts, audit.Extract(req.Nodes, nil))
	}
	x.rejectedChanges(facts)
	x.setTask(NewIDShortener(facts))
	return x.fit(req, facts)
}

// mergeFacts is a then the facts of b not in a (same kind and text).
func mergeFacts(a, b []audit.Fact) []audit.Fact {
	seen := map[[2]string]bool{}
	out := make([]audit.Fact, 0, len(a)+len(b))
	for _, f := range append(slices.Clip(a), b...) {
		k := [2]string{string(f.Kind), f.Text}
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// seed starts from what precedes the new turns: the previous summary, the
// session's first request and the pinned texts.
func (x *extraction) seed(req Request) {
	if req.Previous != "" {
		x.absorb(req.Previous)
	}
	if x.paragraph[secObjective] == "" && strings.TrimSpace(req.FirstRequest) != "" {
		x.paragraph[secObjective] = clipText(strings.TrimSpace(req.FirstRequest), 2000)
	}
	for _, p := range req.Pinned {
		// Not add: a pinned text is kept verbatim, whitespace included.
		if p != "" && !slices.Contains(x.lists[secPinned], p) {
			x.lists[secPinned] = append(x.lists[secPinned], p)
		}
	}
}

// message extracts what a request or an assistant's prose says; the last
// assistant text and the first slash command are kept for finish.
func (x *extraction) message(nd *transcript.Node, text string, lastAssistant, slashCommand *string) {
	switch {
	case nd.IsTurnStart() && nd.IsMeta():
		// A client's bookkeeping (Claude Code isMeta lines, command
		// wrappers, the local-command caveat, system reminders) is
		// neither a request nor the user's constraint. The one thing
		// in it the user typed is a slash command's name and
		// arguments: the objective when no request says more.
		if *slashCommand == "" {
			*slashCommand = slashCommandOf(text)
		}
	case nd.IsTurnStart() && text != "":
		objective := x.paragraph[secObjective] == ""
		if objective {
			x.paragraph[secObjective] = clipText(text, 2000)
		}
		// Each request's opening and the user's constraints are facts
		// (audit.Extract), listed by fit.
		x.paragraph[secLatest] = clipText(text, 2000)
		if substantive(text) {
			x.task, x.taskID = text, nd.ID
		}
	case nd.Role == transcript.RoleAssistant && text != "":
		*lastAssistant = text
		ss := sentences(text)
		for _, s := range ss {
			if reRejected.MatchString(s) {
				x.add(secRejected, s)
			}
			if strings.HasSuffix(s, "?") {
				x.add(secQuestions, s)
			}
		}
		for _, d := range decisions(ss) {
			if !reRejected.MatchString(d) {
				x.add(secDecisions, d)
			}
		}
	}
}

// nodeExtras extracts what any node carries besides its prose and its
// facts: which files its tool calls modify, the other tools it called,
// media notices. (URLs, commands, paths and error lines are facts.)
func (x *extraction) nodeExtras(nd *transcript.Node) {
	for _, c := range nd.AllToolCalls() {
		if steps, ok := planOf(c); ok {
			x.plan.update(steps, nd.ID)
			continue
		}
		x.toolCall(c)
	}
	if nd.Content.IsBlocks {
		for _, b := range nd.Content.Blocks {
			switch b.Type {
			case transcript.BlockText, transcript.BlockThinking, transcript.BlockToolCall, transcript.BlockToolResult:
			default:
				x.add(secMedia, mediaNotice(b))
			}
		}
	}
}

// finish fills the paragraphs that depend on the whole range.
func (x *extraction) finish(lastAssistant, slashCommand string) {
	if x.paragraph[secObjective] == "" && slashCommand != "" {
		x.paragraph[secObjective] = slashCommand
	}
	if x.paragraph[secLatest] == x.paragraph[secObjective] {
		// One request so far: the objective already quotes it.
		delete(x.paragraph, secLatest)
	}
	if lastAssistant != "" {
		x.paragraph[secState] = clipText(lastAssistant, 1500)
	}
	x.setPlan(&x.plan)
}

// absorb reads a previous summary. One written by Extractive (or any
// summary with the same "## " headings) merges section by section; any other
// text is kept verbatim as the earlier state.
func (x *extraction) absorb(prev string) {
	sec := ""
	var para []string
	flush := func() {
		if sec != "" && paragraphSections[sec] {
			if p := strings.TrimSpace(strings.Join(para, "\n")); p != "" {
				x.paragraph[sec] = p
			}
		}
		para = nil
	}
	known := false
	for _, line := range strings.Split(prev, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			h = strings.TrimSpace(h)
			// A heading of the carried earlier state (a client's summary
			// may use "## " itself) stays part of it; a known one ends it.
			if sec != secEarlier || knownSection(h) {
				flush()
				sec = h
				known = known || knownSection(sec)
				continue
			}
		}
		if sec == "" || sec == secPinned || sec == secNotKept {
			// Pinned texts come again with every request (Request.Pinned),
			// so an unpinned node's text leaves the next summary.
			continue
		}
		item := strings.TrimSpace(strings.TrimPrefix(line, "- "))
		switch {
		case paragraphSections[sec]:
			// Paragraphs keep their blank lines: the earlier state is
			// carried verbatim.
			para = append(para, line)
		case item == "":
		case slices.Contains(factSections, sec) || sec == secInspectedV2:
			x.absorbFact(sec, item)
		case knownSection(sec):
			x.add(sec, item)
		}
	}
	flush()
	if !known {
		// A summary of another shape — a client's own, imported — is
		// carried forward whole as the earlier state (docs/COMPACT.md §3).
		x.paragraph[secEarlier] = strings.TrimSpace(prev)
	}
	// The latest request and the state are superseded by the new turns when
	// they have any; the objective stays the first request ever made.
}

// absorbFact reads back one line of a previous summary's fact section:
// a modified file stays one, and without Request.Facts the line is a fact
// again (its ids cut off).
func (x *extraction) absorbFact(sec, item string) {
	text := stripFactIDs(item)
	if sec == secFactModified {
		x.modified[text] = true
	}
	if sec == secFactChanged {
		p, _, _ := audit.ParseChange(text)
		x.modified[p] = true
	}
	kind := kindOfSection[sec]
	if sec == secInspectedV2 {
		kind = audit.KindPath
	}
	if kind == "" {
		return // the ledger's lines name no kind
	}
	if kind == audit.KindInstruction && len(text) > 1 && strings.HasPrefix(text, `"`) && strings.HasSuffix(text, `"`) {
		text = text[1 : len(text)-1]
	}
	x.prevFacts = append(x.prevFacts, audit.Fact{Kind: kind, Text: text})
}

func (x *extraction) toolCall(c transcript.ToolCall) {
	if c.ShellCommand() != "" {
		return // a command: a fact
	}
	var args map[string]any
	argText := c.ArgumentsText()
	_ = json.Unmarshal([]byte(argText), &args)
	write := reWriteTool.MatchString(c.Name)
	if cmd, ok := args["command"].(string); ok && !strings.Contains(cmd, " ") {
		// str_replace-style editors name their action in "command".
		write = cmd != "view" && cmd != "read"
	}
	var paths []string
	for _, k := range pathKeys {
		switch v := args[k].(type) {
		case string:
			paths = append(paths, v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					paths = append(paths, s)
				}
			}
		}
	}
	// apply_patch (Codex) names its files inside the patch text.
	for _, m := range rePatchFile.FindAllStringSubmatch(argText, -1) {
		paths = append(paths, strings.TrimSpace(m[1]))
		write = true
	}
	for _, p := range paths {
		if write {
			x.modified[strings.TrimSpace(p)] = true
		}
	}
	if len(paths) > 0 {
		return
	}
	// Any other tool is not a command: it is listed apart, by name and
	// clipped arguments, a todo list by name alone (its JSON is the
	// agent's notes, not what it did).
	if reTodoTool.MatchString(c.Name) {
		x.add(secTools, c.Name)
		return
	}
	x.add(secTools, c.Name+" "+clipText(argText, 120))
}

var (
	reCommandName = regexp.MustCompile(`<command-name>\s*([^<]+?)\s*</command-name>`)
	reCommandArgs = regexp.MustCompile(`(?s)<command-args>\s*(.*?)\s*</command-args>`)
)

// slashCommandOf is the slash command a Claude Code command wrapper
// records ("/init", "/review src/x.go"), "" when text is no such wrapper.
func slashCommandOf(text string) string {
	m := reCommandName.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	cmd := m[1]
	if !strings.HasPrefix(cmd, "/") {
		cmd = "/" + cmd
	}
	if a := reCommandArgs.FindStringSubmatch(text); a != nil && a[1] != "" {
		cmd += " " + a[1]
	}
	return cmd
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + " …[clipped]"
}

func quote(s string) string {
	if strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`) && len(s) > 1 {
		return s
	}
	return `"` + s + `"`
}

// sentences splits text at line breaks and at sentence ends (". ", "! ",
// "? "), keeping the punctuation.
func sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
				if s := strings.TrimSpace(line[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// keywordRE is a regexp with a cheap necessary condition: text can match
// only if, lower-cased, it holds one of keys. Most sentences and output
// lines hold none and never reach the regexp, whose backtracking was most
// of a large extractive summary's time. keys must cover every alternative
// of the regexp (TestKeywordREAgrees, FuzzKeywordRE).
type keywordRE struct {
	re   *regexp.Regexp
	keys []string
}

func (k keywordRE) MatchString(s string) bool {
	low := strings.ToLower(s)
	// (?i) also folds ſ (U+017F) to s; ToLower keeps it (the Kelvin sign,
	// the one other non-ASCII letter folding to ASCII, it lowers to k).
	if strings.Contains(low, "ſ") {
		low = strings.ReplaceAll(low, "ſ", "s")
	}
	for _, key := range k.keys {
		if strings.Contains(low, key) {
			return k.re.MatchString(s)
		}
	}
	return false
}
