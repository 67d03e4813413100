package audit

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// A change fact is one file the covered turns wrote, edited or patched,
// with the symbols the change introduced or touched (docs/COMPACT.md §6):
//
//	path → sym, sym, … [(reverted|superseded|deleted)]
//
// Its Text is that line, so a summary that lists it, or names the path and
// every symbol anywhere in what the model reads, keeps it (Matcher.Has).
const (
	changeArrow = " → "
	// maxChangeSymbols caps a file's symbols: definitions first, then
	// events, routes, attributes and fields, then calls.
	maxChangeSymbols = 64
	// A change's status: every edit of the file undone by a later turn
	// (an inverse edit, git checkout/restore), replaced by a later whole
	// write that no longer holds it, or the file deleted.
	StatusReverted   = "reverted"
	StatusSuperseded = "superseded"
	StatusDeleted    = "deleted"
)

// edit is one write of one file by one tool call.
type edit struct {
	path     string
	old, new string
	// hunks are the @@ lines and context lines of a patch: the enclosing
	// definition the patch names (Codex "@@ def foo", or a context line
	// "export const f = …"), of which only definitions are symbols.
	hunks string
	whole bool // new is the whole file (Write, write_file, Add File)
	del   bool
	id    string
	state string // "" live, or a status
	// nOld, nNew are old and new whitespace-collapsed, once (add
	// compares each edit with the file's earlier ones).
	nOld, nNew string
}

// fileChange is the edits of one file, in order.
type fileChange struct {
	path  string
	edits []*edit
	ids   []string
}

var (
	// reEditTool names the tools that write files: Claude Code Write, Edit,
	// MultiEdit; Gemini and Qwen write_file, replace, edit; OpenCode and pi
	// edit, write; Anthropic's str_replace editors; edit_file, create_file.
	reEditTool  = regexp.MustCompile(`(?i)^(write|edit|multiedit|multi_edit|write_file|replace|edit_file|create_file|str_replace_based_edit_tool|str_replace_editor|create|patch|apply_diff|search_replace)$`)
	rePatchHead = regexp.MustCompile(`(?m)^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$`)
	reGitUndo   = regexp.MustCompile(`\bgit\s+(?:checkout|restore|reset\s+--hard|stash)\b[^;&|\n]*`)
)

var (
	changePathKeys = []string{"file_path", "filePath", "path", "absolute_path", "target_file", "filename", "file"}
	changeOldKeys  = []string{"old_string", "oldString", "old_str", "oldText", "old", "search"}
	changeNewKeys  = []string{"new_string", "newString", "new_str", "newText", "new", "replace"}
	changeAllKeys  = []string{"content", "file_text", "contents", "code_edit"}
)

// edits returns the file writes of one tool call: an editor's arguments
// or an apply_patch envelope (Codex's custom tool, function call or shell
// heredoc).
func edits(c transcript.ToolCall, id string) []*edit {
	argText := c.ArgumentsText()
	if strings.Contains(argText, "*** Begin Patch") || rePatchHead.MatchString(argText) {
		var v any
		if json.Unmarshal([]byte(argText), &v) == nil {
			var out []*edit
			for _, s := range transcript.JSONStrings(v) {
				out = append(out, patchEdits(s, id)...)
			}
			return out
		}
		return patchEdits(argText, id)
	}
	if !reEditTool.MatchString(c.Name) {
		return nil
	}
	var args map[string]any
	if json.Unmarshal([]byte(argText), &args) != nil {
		return nil
	}
	if cmd, ok := args["command"].(string); ok && (cmd == "view" || cmd == "read") {
		return nil
	}
	p := firstString(args, changePathKeys)
	if p == "" {
		return nil
	}
	var out []*edit
	if all := firstString(args, changeAllKeys); all != "" {
		out = append(out, &edit{path: p, new: all, whole: true, id: id})
	}
	if n := firstString(args, changeNewKeys); n != "" || firstString(args, changeOldKeys) != "" {
		out = append(out, &edit{path: p, old: firstString(args, changeOldKeys), new: n, id: id})
	}
	if list, ok := args["edits"].([]any); ok {
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				out = append(out, &edit{path: p, old: firstString(m, changeOldKeys), new: firstString(m, changeNewKeys), id: id})
			}
		}
	}
	return out
}

func firstString(m map[string]any, keys []string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// patchEdits parses an apply_patch envelope: one edit per file section,
// "+" lines the new text, "-" lines the old.
func patchEdits(patch, id string) []*edit {
	var out []*edit
	var cur *edit
	var old, nw, hunks strings.Builder
	flush := func() {
		if cur != nil {
			cur.old, cur.new, cur.hunks = old.String(), nw.String(), hunks.String()
			out = append(out, cur)
		}
		old.Reset()
		nw.Reset()
		hunks.Reset()
	}
	for _, line := range strings.Split(patch, "\n") {
		if m := rePatchHead.FindStringSubmatch(line); m != nil {
			if m[3] != "" && cur != nil {
				cur.path = strings.TrimSpace(m[3])
				continue
			}
			flush()
			cur = &edit{path: strings.TrimSpace(m[2]), whole: m[1] == "Add", del: m[1] == "Delete", id: id}
			continue
		}
		switch {
		case cur == nil || strings.HasPrefix(line, "*** "):
		case strings.HasPrefix(line, "@@"):
			hunks.WriteString(strings.TrimSpace(strings.TrimPrefix(line, "@@")) + "\n")
		case strings.HasPrefix(line, "+"):
			nw.WriteString(line[1:] + "\n")
		case strings.HasPrefix(line, "-"):
			old.WriteString(line[1:] + "\n")
		case strings.HasPrefix(line, " "):
			hunks.WriteString(line[1:] + "\n")
		}
	}
	flush()
	return out
}

// changes tracks the edits of the covered turns by file.
type changes struct {
	files map[string]*fileChange
	order []string
}

func (cs *changes) add(e *edit) {
	if cs.files == nil {
		cs.files = map[string]*fileChange{}
	}
	fc := cs.files[e.path]
	if fc == nil {
		fc = &fileChange{path: e.path}
		cs.files[e.path] = fc
		cs.order = append(cs.order, e.path)
	}
	e.nOld, e.nNew = norm(e.old), norm(e.new)
	for _, prev := range fc.edits {
		switch {
		case prev.state != "":
		case e.del:
			prev.state = StatusDeleted
		case !prev.whole && !e.whole && prev.nNew != "" && e.nOld == prev.nNew && e.nNew == prev.nOld:
			// The inverse edit: both are undone.
			prev.state, e.state = StatusReverted, StatusReverted
		case e.whole && !strings.Contains(e.nNew, prev.nNew):
			prev.state = StatusSuperseded
		}
	}
	if e.del {
		e.state = StatusDeleted
	}
	fc.edits = append(fc.edits, e)
	if len(fc.ids) == 0 || fc.ids[len(fc.ids)-1] != e.id {
		fc.ids = append(fc.ids, e.id)
	}
}

// undo marks reverted the files a git checkout/restore/reset/stash in a
// shell command puts back: the files it names, or every file for "." or
// no path.
func (cs *changes) undo(cmd string) {
	for _, m := range reGitUndo.FindAllString(cmd, -1) {
		args := strings.Fields(m)[2:]
		var named []string
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && a != "HEAD" && !strings.Contains(a, "~") {
				named = append(named, a)
			}
		}
		for _, p := range cs.order {
			if len(named) == 0 || matchesAny(p, named) {
				for _, e := range cs.files[p].edits {
					if e.state == "" {
						e.state = StatusReverted
					}
				}
			}
		}
	}
}

func matchesAny(p string, named []string) bool {
	for _, n := range named {
		n = strings.TrimPrefix(n, "./")
		if n == "." || p == n || strings.HasSuffix(p, "/"+n) || strings.HasPrefix(p, n+"/") {
			return true
		}
	}
	return false
}

// facts returns one change fact a file, in order of first change.
func (cs *changes) facts() []Fact {
	var out []Fact
	for _, p := range cs.order {
		fc := cs.files[p]
		var live, all []*edit
		for _, e := range fc.edits {
			all = append(all, e)
			if e.state == "" {
				live = append(live, e)
			}
		}
		status := ""
		if len(live) == 0 {
			status = all[len(all)-1].state
			live = all
		}
		text := p
		if syms := fileSymbols(p, live); len(syms) > 0 {
			text += changeArrow + strings.Join(syms, ", ")
		}
		if status != "" {
			text += " (" + status + ")"
		}
		out = append(out, Fact{Kind: KindChange, Text: text, NodeIDs: fc.ids})
	}
	return out
}

// fileSymbols is the symbols of a file's edits, by class (definitions
// first), each once, at most maxChangeSymbols.
func fileSymbols(p string, es []*edit) []string {
	classes := make([][]string, len(symbolClasses)+1)
	for _, e := range es {
		for c, syms := range editSymbols(p, e) {
			classes[c] = append(classes[c], syms...)
		}
	}
	// A name/arity and the same name called are one symbol, and an
	// attribute whose value is a symbol already (phx-click="save") adds
	// nothing.
	seen := map[string]bool{}
	var out []string
	for _, syms := range classes {
		for _, s := range syms {
			key := symbolName(s)
			if _, v, ok := strings.Cut(s, `="`); ok {
				key = strings.TrimSuffix(v, `"`)
			}
			if !seen[key] && !seen[symbolName(s)] && len(out) < maxChangeSymbols {
				seen[key], seen[symbolName(s)] = true, true
				out = append(out, s)
			}
		}
	}
	return out
}

// ParseChange splits a change fact's text into its path, symbols and
// status.
func ParseChange(text string) (p string, symbols []string, status string) {
	for _, st := range []string{StatusReverted, StatusSuperseded, StatusDeleted} {
		if t, ok := strings.CutSuffix(text, " ("+st+")"); ok {
			text, status = t, st
			break
		}
	}
	p, rest, ok := strings.Cut(text, changeArrow)
	if ok {
		symbols = strings.Split(rest, ", ")
	}
	return strings.TrimSpace(p), symbols, status
}

// hasChange: the path (as Has matches paths) and every symbol — an
// Elixir name/arity by its name — are in the text.
func (m *Matcher) hasChange(f Fact) bool {
	p, syms, _ := ParseChange(f.Text)
	if !m.Has(Fact{Kind: KindPath, Text: p}) {
		return false
	}
	for _, s := range syms {
		if !strings.Contains(m.text, s) && !strings.Contains(m.text, symbolName(s)) {
			return false
		}
	}
	return true
}

// symbolName drops an arity (name/2) from a symbol.
var reArity = regexp.MustCompile(`/\d+$`)

func symbolName(s string) string { return reArity.ReplaceAllString(s, "") }

func norm(s string) string { return strings.TrimSpace(space.ReplaceAllString(s, " ")) }

func ext(p string) string { return strings.ToLower(strings.TrimPrefix(path.Ext(p), ".")) }
