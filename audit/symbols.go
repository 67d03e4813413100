package audit

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The symbols of a change are found with regular expressions over the
// edit's new text, language by language where a file's extension says
// which, with no parser (docs/COMPACT.md §6). A symbol class is a list of
// patterns whose first non-empty group is the symbol; classes are in the
// order a file's symbols are kept when there are too many.
type symbolPattern struct {
	re *regexp.Regexp
	// exts restricts the pattern to those file extensions (nil: any).
	exts map[string]bool
	// skip excludes those extensions (Elixir's def is reElixirDef's).
	skip map[string]bool
	// whole: the symbol is the whole match (phx-hook="X"), not group 1.
	whole bool
}

func exts(list ...string) map[string]bool {
	m := map[string]bool{}
	for _, e := range list {
		m[e] = true
	}
	return m
}

var (
	extElixir = exts("ex", "exs", "heex", "eex", "leex")
	extConfig = exts("json", "yaml", "yml", "toml")
	extCSS    = exts("css", "scss", "sass", "less")
)

// reElixirDef is handled apart: its symbol is name/arity.
var reElixirDef = regexp.MustCompile(`(?m)^\s*(?:defp?|defmacrop?|defguardp?|defdelegate)\s+([a-z_][\w!?]*)\s*(\(([^()]*(?:\([^()]*\)[^()]*)*)\))?`)

var symbolClasses = [][]symbolPattern{
	// Definitions: modules, types, functions.
	{
		{re: regexp.MustCompile(`(?m)^\s*def(?:module|protocol|impl)\s+([\w.]+)`), exts: extElixir},
		{re: regexp.MustCompile(`(?m)^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)`)},
		{re: regexp.MustCompile(`(?m)^\s*type\s+([A-Za-z_]\w*)\s+(?:struct|interface|func|map|\[|[A-Za-z*])`)},
		{re: regexp.MustCompile(`(?m)^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(`), skip: extElixir},
		{re: regexp.MustCompile(`(?m)^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:class|interface|enum|trait|struct)\s+([A-Za-z_$][\w$]*)`)},
		{re: regexp.MustCompile(`(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:fn|mod)\s+([A-Za-z_]\w*)`)},
		{re: regexp.MustCompile(`(?m)^\s*impl(?:<[^>]*>)?\s+(?:[\w:<>]+\s+for\s+)?([\w:]+)`)},
		{re: regexp.MustCompile(`\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(`)},
		{re: regexp.MustCompile(`(?m)^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=`)},
		{re: regexp.MustCompile(`(?m)^\s*(?:export\s+)?type\s+([A-Z]\w*)\s*=`)},
		{re: regexp.MustCompile(`(?m)^\s*((?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*)\s*=[^=]`)},
		{re: regexp.MustCompile(`(?m)^\s*(?:(?:public|private|protected|static|async|override)\s+)*([A-Za-z_$][\w$]*)\s*\([^()]*\)\s*(?::\s*[\w<>\[\]|. ]+)?\s*\{`)},
	},
	// Events, routes, HTML attributes, CSS classes.
	{
		{re: regexp.MustCompile(`\bhandle_event\(\s*"([^"]+)"`)},
		{re: regexp.MustCompile(`\b(?:push_event|pushEvent|pushEventTo|addEventListener|handleEvent|emit|on)\(\s*["']([\w:.-]+)["']`)},
		{re: regexp.MustCompile(`\b(?:get|post|put|patch|delete|live|resources|forward|route|HandleFunc|Handle)\s*\(?\s*["'](/[^"'\s]*)["']`)},
		{re: regexp.MustCompile(`\b(?:phx|hx|data|x)-[\w-]+="[^"]{1,60}"`), whole: true},
		{re: regexp.MustCompile(`(?m)^\s*(\.[A-Za-z_][\w-]*)[^{};]*\{`), exts: extCSS},
	},
	// Fields and config keys.
	{
		{re: regexp.MustCompile(`(?m)^\s*(?:field|add|embeds_one|embeds_many|belongs_to|has_many|has_one|many_to_many|attribute|argument|calculate|aggregate|create|update|read|destroy|action|identity)\s+:(\w+)`), exts: extElixir},
		{re: regexp.MustCompile(`(?m)^\s+([A-Z]\w*)\s+[\w.*\[\]]+\s+\x60`)},
		{re: regexp.MustCompile(`\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+):\s`)},
		{re: regexp.MustCompile(`(?m)^\s*"([\w.-]+)"\s*:`), exts: extConfig},
		{re: regexp.MustCompile(`(?m)^\s*([\w.-]+):(?:\s|$)`), exts: exts("yaml", "yml")},
		{re: regexp.MustCompile(`(?m)^\s*([\w.-]+)\s*=|^\[([\w.-]+)\]`), exts: exts("toml")},
	},
	// Calls of names that look like code (dotted, snake_case or camelCase).
	{
		{re: regexp.MustCompile(`\b([A-Za-z_$][\w$]*\.[A-Za-z_$][\w$]*|[a-z][a-z0-9]*_[a-z0-9_]+|[a-z][a-z0-9]*[A-Z][\w$]*)\(`)},
	},
}

// notSymbols are keywords and builtins the call and method patterns
// would otherwise take.
var notSymbols = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "return": true,
	"function": true, "else": true, "do": true, "fn": true, "case": true, "cond": true, "with": true, "try": true,
	"constructor": true, "super": true, "new": true, "typeof": true, "sizeof": true, "func": true, "select": true,
	"console.log": true, "fmt.Println": true, "fmt.Printf": true, "fmt.Sprintf": true, "t.Fatal": true, "t.Fatalf": true,
	"t.Errorf": true, "is_nil": true, "map_size": true, "is_map": true, "is_list": true, "is_binary": true}

// stdQualifiers are standard-library modules and objects: a call through
// one (Enum.map, Map.get, fmt.Errorf, JSON.parse) is not the agent's
// symbol. A call through a local variable (text.trim()) is kept only
// when its method name looks like code (getRangeAt, intersects_node).
var stdQualifiers = map[string]bool{"Enum": true, "Map": true, "String": true, "List": true, "Keyword": true, "MapSet": true,
	"DateTime": true, "Date": true, "Time": true, "NaiveDateTime": true, "System": true, "Path": true, "File": true, "IO": true,
	"Integer": true, "Float": true, "Kernel": true, "Process": true, "Logger": true, "Jason": true, "Access": true, "Tuple": true,
	"console": true, "Math": true, "JSON": true, "Object": true, "Array": true, "Promise": true, "Number": true,
	"fmt": true, "strings": true, "os": true, "errors": true, "strconv": true, "sort": true, "bytes": true, "json": true,
	"filepath": true, "io": true, "sys": true, "re": true, "t": true, "b": true, "assert": true, "self": true, "this": false}

// codeLike: a name with a hump or an underscore.
var reCodeLike = regexp.MustCompile(`[a-z][A-Z]|_[a-z0-9]`)

// keepCall filters the calls class: no standard library, no plain method
// of a local variable.
func keepCall(s string) bool {
	q, name, ok := strings.Cut(s, ".")
	if !ok {
		return true
	}
	if stdQualifiers[q] {
		return false
	}
	if q == "this" || q == "window" || q == "document" || q[0] >= 'A' && q[0] <= 'Z' {
		return true
	}
	return reCodeLike.MatchString(name)
}

// editSymbols returns the symbols of one edit by class: those of its new
// text (and the definitions of a patch's context), or of its old text
// when it only removed.
func editSymbols(p string, e *edit) [][]string {
	text := e.new
	if strings.TrimSpace(e.new) == "" {
		text = e.old
	}
	// A patch's context names the definitions it edits inside: they come
	// first, and give nothing else.
	out := symbolsOf(ext(p), e.hunks, 1)
	for c, syms := range symbolsOf(ext(p), text, len(symbolClasses)) {
		out[c] = append(out[c], syms...)
	}
	return out
}

// symbolsOf finds the symbols of text in the first n classes.
func symbolsOf(e2, text string, n int) [][]string {
	out := make([][]string, len(symbolClasses))
	if extElixir[e2] {
		for _, m := range reElixirDef.FindAllStringSubmatch(text, -1) {
			out[0] = append(out[0], m[1]+"/"+strconv.Itoa(arity(m[2], m[3])))
		}
	}
	for c, pats := range symbolClasses[:n] {
		var found []posSymbol
		for _, pat := range pats {
			if pat.exts != nil && !pat.exts[e2] || pat.skip[e2] {
				continue
			}
			for _, ix := range pat.re.FindAllStringSubmatchIndex(text, -1) {
				if s := symbolOf(text, ix, pat.whole); s != "" && !notSymbols[s] && (c < len(symbolClasses)-1 || keepCall(s)) {
					found = append(found, posSymbol{ix[0], s})
				}
			}
		}
		// In the order the text has them.
		sort.SliceStable(found, func(i, j int) bool { return found[i].at < found[j].at })
		for _, f := range found {
			out[c] = append(out[c], f.sym)
		}
	}
	return out
}

type posSymbol struct {
	at  int
	sym string
}

func symbolOf(text string, ix []int, whole bool) string {
	if whole {
		return strings.ReplaceAll(text[ix[0]:ix[1]], ", ", ",")
	}
	for g := 2; g+1 < len(ix); g += 2 {
		if ix[g] >= 0 && ix[g+1] > ix[g] {
			return strings.ReplaceAll(text[ix[g]:ix[g+1]], ", ", ",")
		}
	}
	return ""
}

// arity counts an Elixir head's arguments: the commas at depth zero of
// its parentheses, 0 without them.
func arity(parens, args string) int {
	if parens == "" || strings.TrimSpace(args) == "" {
		return 0
	}
	n, depth := 1, 0
	for _, r := range args {
		switch r {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return n
}
