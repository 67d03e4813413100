package summarize

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/estimate"
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
func (Extractive) CacheKey() string { return "extractive/v1" }

// Section names used by the extractive summary (a subset of Sections plus
// the media notice).
const (
	secObjective   = "Objective"
	secState       = "Current state and plan"
	secInspected   = "Files inspected"
	secModified    = "Files modified"
	secCommands    = "Commands run"
	secDecisions   = "Key decisions"
	secRejected    = "Rejected approaches"
	secConstraints = "Constraints and user preferences"
	secErrors      = "Errors and failing tests"
	secQuestions   = "Open questions"
	secLatest      = "Latest user request"
	secMedia       = "Media (reference only)"
)

// paragraph sections hold one text; the others are lists.
var paragraphSections = map[string]bool{secObjective: true, secState: true, secLatest: true}

var sectionOrder = append(slices.Clone(Sections), secMedia)

// dropOrder is the order items are dropped in when the summary exceeds its
// cap: the cheapest to lose first; within a section the oldest item goes.
var dropOrder = []string{secCommands, secInspected, secQuestions, secDecisions, secRejected, secMedia, secErrors, secModified, secConstraints}

// perSectionLimit bounds a list before sizing (the most recent items win).
const perSectionLimit = 40

var (
	reConstraint = keywordRE{regexp.MustCompile(`(?i)\b(never|always|do not|don't|must|mustn't|should not|shouldn't|only|prefer|avoid|make sure|ensure|without|keep)\b`),
		[]string{"never", "always", "do not", "don't", "must", "should not", "shouldn't", "only", "prefer", "avoid", "make sure", "ensure", "without", "keep"}}
	reDecision = keywordRE{regexp.MustCompile(`(?i)(\bI'll\b|\bI will\b|\bwe'll\b|\bwe will\b|\blet's\b|\bdecided\b|\bgoing to\b|\bswitch(ed)? to\b|\bthe plan\b|\bthe fix\b|\bfound it\b|\binstead of\b|\brather than\b)`),
		[]string{"i'll", "i will", "we'll", "we will", "let's", "decided", "going to", "switch", "the plan", "the fix", "found it", "instead of", "rather than"}}
	// reInspect: "I'll read the file first" announces a look, not a decision.
	reInspect = keywordRE{regexp.MustCompile(`(?i)\b(I'll|I will|let me|let's|we'll)\s+(first\s+)?(read|run|re-run|check|look|inspect|open|search|see|start|begin|try)\b`),
		[]string{"i'll", "i will", "let me", "let's", "we'll"}}
	reRejected = keywordRE{regexp.MustCompile(`(?i)(\bwon't work\b|\bdoesn't work\b|\bdidn't work\b|\bdoes not work\b|\bdid not work\b|\bnot going to\b|\brejected?\b|\babandon|\breverted?\b|\bgave up\b|\bno longer\b|\bdead end\b|\bruled out\b)`),
		[]string{"won't work", "doesn't work", "didn't work", "does not work", "did not work", "not going to", "reject", "abandon", "revert", "gave up", "no longer", "dead end", "ruled out"}}
	reErrorLine = keywordRE{regexp.MustCompile(`(\bFAIL\b|\bFAILED\b|\bpanic:|(?i:\berror:)|\bERROR\b|(?i:^error\b)|\w+Error\b|(?i:\bexception\b)|Traceback|undefined:|(?i:\bcannot\b)|fatal:|(?i:\bnot found\b)|(?i:permission denied)|(?i:segmentation fault)|exit (status|code) [1-9]|\.go:\d+:|\.py", line \d+)`),
		[]string{"fail", "panic:", "error", "exception", "traceback", "undefined:", "cannot", "fatal:", "not found", "permission denied", "segmentation fault", "exit status", "exit code", ".go:", ".py\", line"}}
	reShellTool = regexp.MustCompile(`(?i)(bash|shell|exec|run|terminal|command|sh$)`)
	reWriteTool = regexp.MustCompile(`(?i)(edit|write|create|patch|apply|replace|insert|delete|remove|move|rename|mkdir)`)
)

// pathKeys are argument keys holding file paths.
var pathKeys = []string{"path", "file", "file_path", "filepath", "filename", "target_file", "paths", "files", "source", "destination", "dir", "directory"}

type extraction struct {
	paragraph map[string]string
	lists     map[string][]string
	seen      map[string]map[string]bool
}

func newExtraction() *extraction {
	return &extraction{paragraph: map[string]string{}, lists: map[string][]string{}, seen: map[string]map[string]bool{}}
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
	if req.Previous != "" {
		x.absorb(req.Previous)
	}
	var lastAssistant string
	for _, nd := range req.Nodes {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		text := strings.TrimSpace(nd.Content.PlainText())
		switch {
		case nd.IsTurnStart() && text != "":
			if x.paragraph[secObjective] == "" {
				x.paragraph[secObjective] = clipText(text, 2000)
			}
			x.paragraph[secLatest] = clipText(text, 2000)
			for _, s := range sentences(text) {
				if reConstraint.MatchString(s) {
					x.add(secConstraints, quote(s))
				}
			}
		case nd.Role == transcript.RoleAssistant && text != "":
			lastAssistant = text
			for _, s := range sentences(text) {
				switch {
				case reRejected.MatchString(s):
					x.add(secRejected, s)
				case reDecision.MatchString(s) && !reInspect.MatchString(s):
					x.add(secDecisions, s)
				}
				if strings.HasSuffix(s, "?") {
					x.add(secQuestions, s)
				}
			}
		}
		for _, c := range nd.AllToolCalls() {
			x.toolCall(c)
		}
		for _, r := range nd.ToolResults() {
			x.toolResult(r)
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
	if x.paragraph[secLatest] == x.paragraph[secObjective] {
		// One request so far: the objective already quotes it.
		delete(x.paragraph, secLatest)
	}
	if lastAssistant != "" {
		x.paragraph[secState] = clipText(lastAssistant, 1500)
	}
	for sec, items := range x.lists {
		if len(items) > perSectionLimit {
			x.lists[sec] = items[len(items)-perSectionLimit:]
		}
	}
	return x.fit(req)
}

// absorb reads a previous summary. One written by Extractive (or any
// summary with the same "## " headings) merges section by section; any other
// text is kept verbatim as the earlier state.
func (x *extraction) absorb(prev string) {
	sec := ""
	var para []string
	flush := func() {
		if sec != "" && paragraphSections[sec] && len(para) > 0 {
			x.paragraph[sec] = strings.Join(para, "\n")
		}
		para = nil
	}
	known := false
	for _, line := range strings.Split(prev, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			sec = strings.TrimSpace(h)
			known = known || slices.Contains(sectionOrder, sec)
			continue
		}
		if sec == "" || strings.TrimSpace(line) == "" {
			continue
		}
		if paragraphSections[sec] {
			para = append(para, line)
		} else if slices.Contains(sectionOrder, sec) {
			x.add(sec, strings.TrimPrefix(line, "- "))
		}
	}
	flush()
	if !known {
		x.paragraph[secState] = clipText(strings.TrimSpace(prev), 3000)
	}
	// The latest request and the state are superseded by the new turns when
	// they have any; the objective stays the first request ever made.
}

func (x *extraction) toolCall(c transcript.ToolCall) {
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
	if len(paths) > 0 {
		sec := secInspected
		if write {
			sec = secModified
		}
		for _, p := range paths {
			x.add(sec, p)
		}
		return
	}
	cmd, _ := args["cmd"].(string)
	if cmd == "" {
		if s, ok := args["command"].(string); ok && strings.Contains(s, " ") {
			cmd = s
		}
	}
	if cmd != "" && (reShellTool.MatchString(c.Name) || args["cmd"] != nil) {
		x.add(secCommands, clipText(cmd, 300))
		return
	}
	x.add(secCommands, c.Name+" "+clipText(argText, 300))
}

func (x *extraction) toolResult(r transcript.ToolResult) {
	n := 0
	for _, line := range strings.Split(r.Text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || !(reErrorLine.MatchString(line) || (r.IsError && n == 0)) {
			continue
		}
		x.add(secErrors, clipText(line, 240))
		if n++; n >= 5 {
			break
		}
	}
}

// fit renders the summary and drops items until it is within the cap,
// sizing through estimate.Text.
func (x *extraction) fit(req Request) (string, error) {
	enc := req.Encoding
	if enc == "" {
		enc = estimate.O200kBase
	}
	text := x.render()
	if req.MaxTokens <= 0 {
		return text, nil
	}
	cost := func(s string) (int, error) { return estimate.Text(enc, s) }
	total, err := cost(text)
	if err != nil {
		return "", err
	}
	// Drop by estimated arithmetic first (item costs are close to
	// additive), then confirm with a real count.
	for total > req.MaxTokens {
		over := total - req.MaxTokens
		dropped := false
		for _, sec := range dropOrder {
			for len(x.lists[sec]) > 0 && over > 0 {
				c, err := cost(x.lists[sec][0])
				if err != nil {
					return "", err
				}
				x.lists[sec] = x.lists[sec][1:]
				over -= c + 2
				dropped = true
			}
			if over <= 0 {
				break
			}
		}
		if !dropped {
			// Only the paragraphs are left: shorten them, the state first.
			shrunk := false
			for _, sec := range []string{secState, secLatest, secObjective} {
				if p := x.paragraph[sec]; len(p) > 200 {
					x.paragraph[sec] = clipText(p, len(p)/2)
					shrunk = true
					break
				}
			}
			if !shrunk {
				break
			}
		}
		text = x.render()
		if total, err = cost(text); err != nil {
			return "", err
		}
	}
	return text, nil
}

func (x *extraction) render() string {
	var b strings.Builder
	for _, sec := range sectionOrder {
		if paragraphSections[sec] {
			if p := x.paragraph[sec]; p != "" {
				b.WriteString("## " + sec + "\n" + p + "\n\n")
			}
			continue
		}
		items := x.lists[sec]
		if len(items) == 0 {
			continue
		}
		if sec == secInspected || sec == secModified {
			items = slices.Clone(items)
			sort.Strings(items)
		}
		b.WriteString("## " + sec + "\n")
		for _, it := range items {
			b.WriteString("- " + strings.ReplaceAll(it, "\n", " ") + "\n")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
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
