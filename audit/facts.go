package audit

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/transcript"
)

// Kind is what a fact is. The kinds and what counts as each are
// docs/COMPACT.md §6.
type Kind string

const (
	KindRequest     Kind = "request"
	KindInstruction Kind = "instruction"
	KindPath        Kind = "path"
	KindCommand     Kind = "command"
	KindError       Kind = "error"
	KindIdentifier  Kind = "identifier"
	KindURL         Kind = "url"
	KindNumber      Kind = "number"
	// KindChange is a file the covered turns wrote, edited or patched,
	// with the symbols the change touched (change.go).
	KindChange Kind = "change"
)

// Kinds lists every kind in report order: what the user asked for first,
// then what the work touched, then the details.
var Kinds = []Kind{KindRequest, KindInstruction, KindChange, KindPath, KindCommand, KindError, KindIdentifier, KindURL, KindNumber}

// Fact is one thing a summary should carry, with the nodes it came from
// (in order of first appearance).
type Fact struct {
	Kind    Kind     `json:"kind"`
	Text    string   `json:"text"`
	NodeIDs []string `json:"node_ids"`
}

// Clip lengths: a fact is matched as a prefix-sized substring, so a long
// command or error line counts as kept when the summary quotes its start
// (the extractive summary clips commands at 300 bytes, errors at 240).
const (
	maxCommand     = 120
	maxError       = 160
	maxInstruction = 200
	maxRequest     = 160
)

var (
	reURL = regexp.MustCompile(`https?://[^\s<>"'\x60)\]}]+`)
	// A path has a directory part and a file name with an extension, or
	// is absolute or home-relative with at least two components. Dates
	// (2024/01/02), fractions (1/2) and "and/or" have neither.
	rePath = regexp.MustCompile(`(?:^|[\s"'(\[\x60=:,])((?:~|\.{1,2})?/?(?:[\w@+-][\w.@+-]*/)+[\w@+-][\w.@+-]*)`)
	// Identifiers: a backticked name, a call (name()), camelCase,
	// PascalCase with two humps, snake_case or a qualified name (a.b.c is
	// kept only in backticks: in prose it is usually a file or a sentence).
	reTicked = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:(?:\\.|::|#)[A-Za-z_][A-Za-z0-9_]*)*[!?]?)(?:\\(\\))?`")
	reCall   = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\(\)`)
	reCamel  = regexp.MustCompile(`\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b`)
	rePascal = regexp.MustCompile(`\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b`)
	reSnake  = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)
	// An upper-case code (ERR_PORT_7, E_TIMEOUT, MAX_RETRIES): an error
	// code or a constant the user names (issue 44).
	reUpperCode = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)
	// A number after its unit word ("port 8443", "pid 4312"): the unit
	// names what the number is, as "250ms" does after it.
	reUnitFirst = regexp.MustCompile(`(?i)\b(?:port|pid|uid|gid|line|attempt|retries|timeout|version)\s?:?\s?\d+(?:\.\d+)*\b`)
	reNumber    = regexp.MustCompile(`(?i)\b\d+(?:[.,]\d+)?\s?(?:ms|µs|us|ns|secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|kb|mb|gb|tb|kib|mib|gib|tib|bytes?|tokens?|px|rem|hz|khz|mhz|ghz|[smh])\b|\b\d+(?:[.,]\d+)?\s?%`)
	reMarker    = regexp.MustCompile(`(?i)\b(never|always|do not|don't|dont|must|mustn't|should|shouldn't|only|prefer|avoid|make sure|ensure|please|instead|stop|no longer|not allowed|required|without|keep)\b`)
	reCorrect   = regexp.MustCompile(`(?i)^(no|nope|actually|wait|wrong|that's wrong|that is wrong|not that|that's not)\b`)
	space       = regexp.MustCompile(`\s+`)
	reExitOnly  = regexp.MustCompile(`(?i)^((<shellId: \d+ completed with )?exit (code|status):? ?\d+|process exited with code \d+)\W*$`)
	// reClientDate is the line GitHub Copilot CLI 1.0.102 puts before each
	// prompt the model reads (transformedContent, docs/INTEROP-copilot.md).
	reClientDate = regexp.MustCompile(`^<current_datetime>[^<>]*</current_datetime>$`)
	reANSI       = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
)

// pathKeys are tool-argument keys holding file paths.
var pathKeys = map[string]bool{"path": true, "file": true, "file_path": true, "filepath": true, "filename": true,
	"target_file": true, "paths": true, "files": true, "notebook_path": true, "absolute_path": true, "dir_path": true}

// extractor collects facts in order of first appearance.
type extractor struct {
	facts []Fact
	at    map[[2]string]int
	// only, when set, restricts the kinds extracted (ExtractKinds).
	only map[Kind]bool
	// changes are the files written so far, made facts at the end.
	changes changes
}

func (x *extractor) add(k Kind, text, id string) {
	if x.only != nil && !x.only[k] {
		return
	}
	text = strings.TrimSpace(space.ReplaceAllString(text, " "))
	if text == "" {
		return
	}
	key := [2]string{string(k), text}
	if i, ok := x.at[key]; ok {
		f := &x.facts[i]
		if f.NodeIDs[len(f.NodeIDs)-1] != id {
			f.NodeIDs = append(f.NodeIDs, id)
		}
		return
	}
	x.at[key] = len(x.facts)
	x.facts = append(x.facts, Fact{Kind: k, Text: text, NodeIDs: []string{id}})
}

// Extract returns the facts of nodes, each once, in order of first
// appearance. What counts as each kind (docs/COMPACT.md §6):
//
//   - request: the first sentence of each request the user typed (never a
//     client's meta line: transcript.Node.IsRealRequest);
//   - instruction: the user's sentences that constrain or correct
//     (never/always/do not/must/only/prefer/avoid/instead/…, or opening
//     with no/actually/wait);
//   - path: tool-call path arguments, paths in shell commands and in user
//     or assistant text;
//   - command: the command of a shell tool call (not other tools' JSON);
//   - error: error lines of failed tool results (is_error, or a non-zero
//     exit reported in the output), import lines excepted;
//   - identifier, url, number (with a unit): from user and assistant text
//     and tool-call arguments;
//   - change: each file a tool call wrote, edited or patched, with the
//     symbols the change touched and whether a later turn undid it
//     (change.go), one fact a file after the others.
//
// Tool output other than a failure's error lines gives no facts: it is
// what the work read, not what it did.
//
// spawned are the nodes of the covered turns' caller subtrees (a
// sub-agent's own chain): their work gives facts of every kind but
// requests and instructions, whose "user" there is the agent that spawned
// them (Claude Code's compaction prompt is one), not the person.
func Extract(nodes, spawned []*transcript.Node) []Fact {
	return ExtractKinds(nodes, spawned, nil)
}

// ExtractKinds is Extract restricted to the kinds in only (nil: every
// kind); without identifiers, URLs and numbers it skips the prose
// patterns that find them, most of Extract's time on a long session.
func ExtractKinds(nodes, spawned []*transcript.Node, only map[Kind]bool) []Fact {
	x := &extractor{at: map[[2]string]int{}, only: only}
	for _, nd := range nodes {
		x.node(nd, true)
	}
	for _, nd := range spawned {
		x.node(nd, false)
	}
	if x.only == nil || x.only[KindChange] {
		x.facts = append(x.facts, x.changes.facts()...)
	}
	return x.facts
}

func (x *extractor) node(nd *transcript.Node, byUser bool) {
	id := nd.ID
	if nd.IsSummary() {
		return
	}
	text := nd.Content.PlainText()
	switch {
	case nd.Role == transcript.RoleUser && nd.IsRealRequest() && byUser:
		text = withoutClientDate(text)
		x.request(text, id)
		x.prose(text, id)
	case nd.Role == transcript.RoleAssistant:
		x.prose(text, id)
	}
	for _, c := range nd.AllToolCalls() {
		x.call(c, id)
	}
	for _, r := range nd.ToolResults() {
		x.result(r, id)
	}
}

// withoutClientDate is a prompt without the date line Copilot CLI puts
// before it: the client's, not the user's, and no summary repeats it.
func withoutClientDate(text string) string {
	if i := strings.IndexByte(text, '\n'); i > 0 && reClientDate.MatchString(text[:i]) {
		return strings.TrimLeft(text[i:], "\n")
	}
	return text
}

func (x *extractor) request(text, id string) {
	first := ""
	for _, s := range sentences(text) {
		if first == "" {
			first = s
		}
		if reMarker.MatchString(s) || reCorrect.MatchString(s) {
			if len(strings.Fields(s)) >= 3 {
				x.add(KindInstruction, clip(s, maxInstruction), id)
			}
		}
	}
	x.add(KindRequest, clip(first, maxRequest), id)
}

// prose takes paths, URLs, identifiers and numbers from conversational text.
func (x *extractor) prose(text, id string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	// Terminal escapes pasted from a colour terminal ("\x1b[0m") hold
	// digit-letter runs that are not numbers with units.
	text = reANSI.ReplaceAllString(text, " ")
	rest := text
	for _, u := range reURL.FindAllString(text, -1) {
		x.add(KindURL, trimURL(u), id)
		rest = strings.ReplaceAll(rest, u, " ")
	}
	for _, p := range paths(rest) {
		x.add(KindPath, p, id)
		rest = strings.ReplaceAll(rest, p, " ")
	}
	if x.only != nil && !x.only[KindIdentifier] && !x.only[KindNumber] {
		return
	}
	x.identifiers(rest, id)
	for _, re := range []*regexp.Regexp{reNumber, reUnitFirst} {
		for _, n := range re.FindAllString(rest, -1) {
			x.add(KindNumber, n, id)
		}
	}
}

func (x *extractor) identifiers(text, id string) {
	for _, m := range reTicked.FindAllStringSubmatch(text, -1) {
		if !fileName(m[1]) {
			x.add(KindIdentifier, m[1], id)
		}
	}
	for _, m := range reCall.FindAllStringSubmatch(text, -1) {
		x.add(KindIdentifier, m[1], id)
	}
	for _, re := range []*regexp.Regexp{reCamel, rePascal, reSnake, reUpperCode} {
		for _, m := range re.FindAllString(text, -1) {
			x.add(KindIdentifier, m, id)
		}
	}
}

func (x *extractor) call(c transcript.ToolCall, id string) {
	var args map[string]any
	argText := c.ArgumentsText()
	_ = json.Unmarshal([]byte(argText), &args)
	for _, k := range sortedKeys(args) {
		if !pathKeys[strings.ToLower(k)] {
			continue
		}
		for _, s := range transcript.JSONStrings(args[k]) {
			if s = strings.TrimSpace(s); s != "" && !strings.ContainsAny(s, "\n*?") {
				x.add(KindPath, s, id)
			}
		}
	}
	if x.only == nil || x.only[KindChange] {
		for _, e := range edits(c, id) {
			x.changes.add(e)
		}
	}
	if cmd := c.ShellCommand(); cmd != "" {
		x.changes.undo(cmd)
		x.add(KindCommand, clip(firstLine(cmd), maxCommand), id)
		for _, p := range paths(cmd) {
			x.add(KindPath, p, id)
		}
	}
	for _, s := range transcript.JSONStrings(args) {
		for _, u := range reURL.FindAllString(s, -1) {
			x.add(KindURL, trimURL(u), id)
		}
	}
}

func (x *extractor) result(r transcript.ToolResult, id string) {
	for _, l := range r.ErrorLines(3) {
		if reExitOnly.MatchString(l) {
			// "Exit code: 1" alone says a command failed, not how.
			continue
		}
		x.add(KindError, clip(l, maxError), id)
	}
}

// paths finds path-like words in text.
func paths(text string) []string {
	var out []string
	for _, m := range rePath.FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[1], ".,:;")
		if isPath(p) {
			out = append(out, p)
		}
	}
	return out
}

func isPath(p string) bool {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	last := parts[len(parts)-1]
	hasLetter := strings.IndexFunc(p, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
	if !hasLetter {
		return false // 2024/01/02, 1/2
	}
	if dot := strings.LastIndexByte(last, '.'); dot > 0 && dot < len(last)-1 {
		ext := last[dot+1:]
		return strings.IndexFunc(ext, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
	}
	// No extension: a directory or an extensionless file, taken only when
	// absolute or home-relative with two components (/etc/hosts, ~/src/x),
	// so "and/or" and "client/server" are not paths.
	return (strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "./")) && len(parts) >= 2
}

// fileName: name.ext with a short lower-case extension (`project.ex`) is a
// file, not a qualified identifier (`Phoenix.Component`).
func fileName(s string) bool {
	base, ext, ok := strings.Cut(s, ".")
	if !ok || base == "" || strings.Contains(ext, ".") || len(ext) > 4 {
		return false
	}
	return strings.ToLower(ext) == ext
}

func trimURL(u string) string { return strings.TrimRight(u, ".,:;!?'\"") }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sentences splits text at line breaks and at a sentence end (". ", "! ",
// "? "), so the dot of a file name or a version does not split.
func sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		start := 0
		for i := 0; i < len(line); i++ {
			if c := line[i]; (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
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

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	s = strings.TrimSpace(space.ReplaceAllString(s, " "))
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}
