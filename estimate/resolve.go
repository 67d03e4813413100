package estimate

import (
	"encoding/json"

	"fmt"
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/store"
)

// How a model name was resolved (Resolution.Rule).
const (
	// RuleExact: the name is in the table (or the config's models:).
	RuleExact = "exact"
	// RuleAlias: the same model under another spelling — a provider
	// prefix ("anthropic/", "us.anthropic."), a date or version suffix
	// ("-20250929", "@20251101", "-v1:0", "-latest"), a "[1m]" variant.
	RuleAlias = "alias"
	// RuleFamily: another model of the same family stands in (a newer
	// minor version, a variant suffix, a custom name that contains a
	// known one). Commands warn once, naming it.
	RuleFamily = "family"
)

// Resolution is a model name resolved against the table.
type Resolution struct {
	// Requested is the name as given.
	Requested string
	// Model is the entry that stands in, with Window set for a "[1m]"
	// variant.
	Model Model
	Rule  string
}

// Warning is the one line a command prints when another model stands in
// for the requested one; "" for an exact or alias match.
func (r Resolution) Warning() string {
	if r.Rule != RuleFamily {
		return ""
	}
	return fmt.Sprintf("model %q is not in the model table; budgeting as %s (window %d, by family) — pass --window or add it under models: in the config to be exact",
		r.Requested, r.Model.Name, r.Model.Window)
}

// providerWords are dotted prefixes cloud catalogs put before a model name
// ("us.anthropic.claude-…", "google.gemini-…").
func isProviderWord(w string) bool {
	if w == "" {
		return false
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// ResolveModel finds the table entry for name: extra (the config's
// models:, which wins), then the built-in table, exactly; then the same
// name without its provider prefix, tag, date or "[1m]" suffix (an alias);
// then by family rules (docs/ESTIMATE.md, "Models"):
//
//   - the longest known name it starts with at a "-", when what follows is
//     a variant word, not a version ("gpt-5.3-codex-spark" → gpt-5.3-codex);
//   - the same family — the name's words without its version numbers —
//     at the newest version not above the one asked for
//     ("claude-opus-5-7" → claude-opus-5-5), or the oldest if every known
//     one is newer; a major version more than one above the newest known is
//     not sensible ("gpt-9000" does not resolve);
//   - a known name or family inside a custom name ("my-gpt-5" → gpt-5),
//     except after one of EditorPrefixes ("aide-gpt-5" is gpt-5, an alias).
func ResolveModel(name string, extra map[string]Model) (Resolution, bool) {
	r := Resolution{Requested: name}
	raw := strings.ToLower(strings.TrimSpace(name))
	if raw == "" || len(raw) > MaxModelName {
		// No model name is this long: a garbled or hostile id is unknown
		// at once, not after a search quadratic in its words.
		return r, false
	}
	if m, ok := findModel(raw, extra); ok {
		r.Model, r.Rule = m, RuleExact
		return r, true
	}
	// GitHub Copilot CLI names Claude models with a dotted version
	// ("claude-sonnet-4.5"); Anthropic's name is dashed: an alias.
	if strings.HasPrefix(raw, "claude-") && strings.Contains(raw, ".") {
		if m, ok := findModel(strings.ReplaceAll(raw, ".", "-"), extra); ok {
			r.Model, r.Rule = m, RuleAlias
			return r, true
		}
	}
	key, long := normalizeModelName(raw)
	toks := trimAliasTokens(strings.Split(key, "-"))
	if len(toks) == 0 || toks[0] == "" {
		return r, false
	}
	setLong := func(m Model) Model {
		if long {
			switch {
			case m.LongWindow > 0:
				m.Window = m.LongWindow
			case m.Window < 1000000:
				m.Window = 1000000
			}
		}
		return m
	}
	for start := range toks {
		sub := toks[start:]
		if !startsWithLetter(sub[0]) {
			continue
		}
		m, rule, ok := resolveTokens(sub, extra)
		if !ok {
			continue
		}
		if start > 1 || (start == 1 && !isEditorPrefix(toks[0])) {
			rule = RuleFamily
		}
		r.Model, r.Rule = setLong(m), rule
		return r, true
	}
	// An ollama-style tag names the size ("llama3.1:70b"): try it as a
	// word of the name.
	if i := strings.IndexByte(raw, ':'); i > 0 && i < len(raw)-1 && !strings.Contains(raw[i+1:], ":") {
		if r2, ok := ResolveModel(raw[:i]+"-"+raw[i+1:], extra); ok {
			r2.Requested = name
			if r2.Rule == RuleExact {
				r2.Rule = RuleAlias
			}
			return r2, true
		}
	}
	return r, false
}

// MaxModelName bounds the model names ResolveModel and the closest-name
// search consider (the longest known name is under 60 bytes).
const MaxModelName = 256

func findModel(k string, extra map[string]Model) (Model, bool) {
	for n, m := range extra {
		if strings.EqualFold(n, k) {
			return configModel(n, m), true
		}
	}
	m, ok := builtinModels[k]
	return m, ok
}

// normalizeModelName drops what names the same model differently: a
// "[1m]" variant (long reports it), an "@date" or ":tag" suffix, a path
// of provider prefixes ("openrouter/anthropic/…") and dotted catalog
// prefixes ("us.anthropic.").
func normalizeModelName(k string) (key string, long bool) {
	if i := strings.LastIndexByte(k, '['); i > 0 && strings.HasSuffix(k, "]") {
		long = strings.EqualFold(k[i+1:len(k)-1], "1m")
		k = k[:i]
	}
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		k = k[i+1:]
	}
	if i := strings.IndexByte(k, '@'); i > 0 {
		k = k[:i]
	}
	if i := strings.IndexByte(k, ':'); i > 0 {
		k = k[:i]
	}
	for {
		i := strings.IndexByte(k, '.')
		if i <= 0 || !isProviderWord(k[:i]) {
			break
		}
		k = k[i+1:]
	}
	return k, long
}

// trimAliasTokens drops trailing tokens that date or version a release
// of the same model: "20250929", "2024-08-06", "0613", "v1", "latest".
func trimAliasTokens(toks []string) []string {
	for len(toks) > 1 {
		t := toks[len(toks)-1]
		switch {
		case t == "latest" || (len(t) >= 2 && t[0] == 'v' && allDigits(t[1:])):
		case len(t) == 8 && allDigits(t) && (t[0] == '2' || t[0] == '1'):
		case len(t) == 4 && allDigits(t) && (t[0] == '0' || t[0] == '1') && len(toks) > 2:
		case len(toks) >= 4 && len(t) == 2 && allDigits(t) && len(toks[len(toks)-2]) == 2 && allDigits(toks[len(toks)-2]) &&
			len(toks[len(toks)-3]) == 4 && allDigits(toks[len(toks)-3]):
			toks = toks[:len(toks)-2] // YYYY-MM-DD: drop DD and MM, YYYY below
		default:
			return toks
		}
		toks = toks[:len(toks)-1]
	}
	return toks
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isVersionToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return s[0] != '.'
}

func startsWithLetter(s string) bool { return s != "" && s[0] >= 'a' && s[0] <= 'z' }

// variantWords do not tell models apart for the family rule: a preview or
// experimental build budgets like the release.
var variantWords = map[string]bool{"preview": true, "exp": true, "experimental": true, "latest": true, "customtools": true}

// resolveTokens resolves one '-'-split, alias-trimmed name: exactly, by
// the longest known prefix followed by a variant word, then by family.
func resolveTokens(toks []string, extra map[string]Model) (Model, string, bool) {
	key := strings.Join(toks, "-")
	if m, ok := findModel(key, extra); ok {
		return m, RuleAlias, true
	}
	// A known name followed by variant words only is an alias; then the
	// family; then a known name followed by other words.
	var prefix Model
	found := false
	for n := len(toks) - 1; n >= 1 && !found; n-- {
		if isVersionToken(toks[n]) {
			// "claude-opus-4-9" is not "claude-opus-4": a version
			// continues, it is not a variant.
			continue
		}
		if m, ok := findModel(strings.Join(toks[:n], "-"), extra); ok {
			if allVariant(toks[n:]) {
				return m, RuleAlias, true
			}
			prefix, found = m, true
		}
	}
	if m, ok := resolveFamily(toks, extra); ok {
		return m, RuleFamily, true
	}
	if found {
		return prefix, RuleFamily, true
	}
	return Model{}, "", false
}

func allVariant(toks []string) bool {
	for _, t := range toks {
		if !variantWords[t] && !allDigits(t) {
			return false
		}
	}
	return true
}

// familyOf splits a name into its family (the words, variant words
// dropped) and its version (every number in it, in order): claude-opus-4-5
// is ("claude opus", [4 5]), gpt-5.2-codex ("gpt codex", [5 2]), o4-mini
// ("o mini", [4]).
func familyOf(toks []string) (string, []int) {
	var words []string
	var ver []int
	for _, t := range toks {
		switch {
		case isVersionToken(t):
			for _, p := range strings.Split(t, ".") {
				n, _ := strconv.Atoi(p)
				ver = append(ver, n)
			}
		case variantWords[t]:
		default:
			// "o3", "qwen2.5": letters then a version.
			i := 0
			for i < len(t) && t[i] >= 'a' && t[i] <= 'z' {
				i++
			}
			if i > 0 && i < len(t) && isVersionToken(t[i:]) {
				words = append(words, t[:i])
				for _, p := range strings.Split(t[i:], ".") {
					n, _ := strconv.Atoi(p)
					ver = append(ver, n)
				}
				continue
			}
			words = append(words, t)
		}
	}
	return strings.Join(words, " "), ver
}

func compareVersions(a, b []int) int {
	for i := range max(len(a), len(b)) {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// resolveFamily picks, among the known models of toks' family, the newest
// version not above toks' own (the oldest when all are newer; the newest
// when toks has no version).
func resolveFamily(toks []string, extra map[string]Model) (Model, bool) {
	fam, ver := familyOf(toks)
	if fam == "" {
		return Model{}, false
	}
	type cand struct {
		m   Model
		ver []int
	}
	var below, all []cand
	consider := func(name string, m Model) {
		f, v := familyOf(strings.Split(strings.ToLower(name), "-"))
		if f != fam || len(v) == 0 {
			return
		}
		c := cand{m, v}
		all = append(all, c)
		if len(ver) == 0 || compareVersions(v, ver) <= 0 {
			below = append(below, c)
		}
	}
	for n, m := range extra {
		consider(n, configModel(n, m))
	}
	for n, m := range builtinModels {
		if _, shadowed := extra[n]; !shadowed {
			consider(n, m)
		}
	}
	if len(all) == 0 {
		return Model{}, false
	}
	// Newest first; on a tie the shorter (plainer) name.
	better := func(a, b cand) bool {
		if c := compareVersions(a.ver, b.ver); c != 0 {
			return c > 0
		}
		if len(a.m.Name) != len(b.m.Name) {
			return len(a.m.Name) < len(b.m.Name)
		}
		return a.m.Name < b.m.Name
	}
	pick := func(cs []cand) cand {
		best := cs[0]
		for _, c := range cs[1:] {
			if better(c, best) {
				best = c
			}
		}
		return best
	}
	newest := pick(all)
	if len(ver) > 0 && ver[0] > newest.ver[0]+1 {
		return Model{}, false
	}
	if len(below) > 0 {
		return pick(below).m, true
	}
	// Every known version is newer: the oldest stands in, preferring the
	// plainer name among equal versions.
	oldest := all[0]
	for _, c := range all[1:] {
		if cmp := compareVersions(c.ver, oldest.ver); cmp < 0 || (cmp == 0 && len(c.m.Name) < len(oldest.m.Name)) {
			oldest = c
		}
	}
	return oldest.m, true
}

// ModelWarning is the one-line warning for a result whose model was
// assumed (ForSession) or resolved by family (Resolution.Warning); ""
// otherwise.
func (r *Result) ModelWarning() string {
	if r.ModelAssumed {
		return fmt.Sprintf("the session records no model yet: assumed %s, its client's default — pass --model or set model: in the config to choose", r.Model)
	}
	return Resolution{Requested: r.Model, Model: Model{Name: r.ResolvedModel, Window: r.Window}, Rule: r.ModelRule}.Warning()
}

// RecordedWindowKey is the session.json key under which an importer keeps
// the context window the client recorded (Codex's
// token_count.info.model_context_window, Claude Code's 1M-context beta).
const RecordedWindowKey = "model_context_window"

// RecordedWindowSourceKey names, beside RecordedWindowKey, where an
// importer found the window when the session file records none:
// WindowFromClientConfig, the client's own configuration of a custom model
// (OpenCode's limit.context, pi's models.json contextWindow, …).
const RecordedWindowSourceKey = "model_context_window_source"

// recordedWindowSource is WindowFromClientConfig when the session's window
// came from its client's configuration, WindowFromSession otherwise.
func recordedWindowSource(meta store.Meta) string {
	var s string
	if raw, ok := meta.Extra[RecordedWindowSourceKey]; ok && json.Unmarshal(raw, &s) == nil && s == WindowFromClientConfig {
		return s
	}
	return WindowFromSession
}

// RecordedWindow is the window a session records in its metadata, 0 when
// it records none (or something that is not a positive integer).
func RecordedWindow(meta store.Meta) int {
	raw, ok := meta.Extra[RecordedWindowKey]
	if !ok {
		return 0
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil || n <= 0 {
		return 0
	}
	return n
}
