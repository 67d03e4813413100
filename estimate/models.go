package estimate

import (
	"fmt"
	"sort"
	"strings"
)

// Providers decide the chat-format overhead rules (docs/ESTIMATE.md).
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderGemini    = "gemini"
	ProviderOpen      = "open"
)

// Model is one entry of the model table.
type Model struct {
	Name string `json:"name" mapstructure:"name"`
	// Provider selects the overhead rules: openai, anthropic, gemini, open.
	Provider string `json:"provider" mapstructure:"provider"`
	Window   int    `json:"window" mapstructure:"window"`
	// MaxOutput is the model's output capability (0: unknown).
	MaxOutput int    `json:"max_output" mapstructure:"max_output"`
	Encoding  string `json:"encoding" mapstructure:"encoding"`
	// Proxy is true when the model's tokenizer is not public and Encoding
	// stands in for it; calibration corrects the difference.
	Proxy bool `json:"proxy" mapstructure:"proxy"`
	// LongWindow is the window of the model's long-context variant (a
	// "[1m]" name or the 1M-context beta); 0 when it has none.
	LongWindow int `json:"long_window,omitempty" mapstructure:"long_window"`
	// Source says where Window and MaxOutput come from.
	Source string `json:"source" mapstructure:"source"`
}

// Where the figures come from. The clients' own model tables are read
// from the npm packages named (docs/ESTIMATE.md, "Models").
const (
	srcClaudeCode = "Claude Code 2.1.328 model registry (context.window, max_output_tokens.upper)"
	srcAnthropic  = "Anthropic models overview (context window, max output)"
	srcCodex      = "Codex 0.169.0 model catalog (context_window: the input limit; OpenAI publishes 400,000 incl. 128,000 output)"
	srcCodex171   = "Codex 0.171.0 model catalog (context_window: the input limit)"
	srcOpenAI     = "OpenAI model pages (context window, max output tokens)"
	srcGeminiCLI  = "Gemini CLI 0.61.0 tokenLimits.ts (1,048,576 for every Gemini model); max output from Google's model cards"
	srcGemmaCLI   = "Gemini CLI 0.61.0 tokenLimits.ts (GEMMA_4_TOKEN_LIMIT)"
	srcGeminiNew  = "Gemini CLI 0.61.0 models.ts and tokenLimits.ts (1,048,576, DEFAULT_TOKEN_LIMIT); max output as gemini-3.5-flash (no model card read)"
	srcOpenModel  = "publisher's model card"
	srcConfig     = "config file (models:)"
	srcOpenCode   = "OpenCode 1.18.33's bundled model list (OpenCode Zen: limit.context, limit.output)"
)

// builtinModels: context window, output capability and encoding as the
// providers and their clients publish them. OpenAI's o200k/cl100k models
// are exact; Claude, Gemini and the open models count with a stated proxy.
var builtinModels = func() map[string]Model {
	m := map[string]Model{}
	add := func(provider, enc string, proxy bool, window, maxOut int, src string, names ...string) {
		for _, n := range names {
			m[n] = Model{Name: n, Provider: provider, Window: window, MaxOutput: maxOut, Encoding: enc, Proxy: proxy, Source: src}
		}
	}
	long := func(window int, names ...string) {
		for _, n := range names {
			e := m[n]
			e.LongWindow = window
			m[n] = e
		}
	}
	// OpenAI.
	add(ProviderOpenAI, O200kBase, false, 128000, 16384, srcOpenAI, "gpt-4o", "gpt-4o-mini", "chatgpt-4o-latest")
	add(ProviderOpenAI, O200kBase, false, 1047576, 32768, srcOpenAI, "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano")
	add(ProviderOpenAI, O200kBase, false, 272000, 128000, srcCodex, "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-codex", "gpt-5-codex-mini",
		"gpt-5.1", "gpt-5.1-codex", "gpt-5.1-codex-mini", "gpt-5.1-codex-max",
		"gpt-5.2", "gpt-5.2-codex", "gpt-5.3-codex", "gpt-5.4", "gpt-5.4-mini", "gpt-5.5",
		"gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna")
	add(ProviderOpenAI, O200kBase, false, 128000, 16384, srcOpenAI, "gpt-5-chat-latest")
	// gpt-6: Codex lists it; its tokenizer is not published, so o200k is
	// a proxy until it is.
	add(ProviderOpenAI, O200kBase, true, 272000, 128000, srcCodex, "gpt-6-astra", "gpt-6-sol", "gpt-6-luna")
	add(ProviderOpenAI, O200kBase, true, 500000, 128000, srcCodex, "gpt-6.1-terra")
	// Codex 0.171.0: gpt-6.1-sol's input limit went from 272,000 to
	// 500,000; gpt-6.2 is new; the hidden reviewer and "daybreak" models
	// are listed too, since a rollout can name them.
	add(ProviderOpenAI, O200kBase, true, 500000, 128000, srcCodex171, "gpt-6.1-sol", "gpt-6.2-sol")
	add(ProviderOpenAI, O200kBase, true, 272000, 128000, srcCodex171, "gpt-6.2-astra", "codex-auto-review", "gpt-daybreak-blue-latest")
	add(ProviderOpenAI, O200kBase, true, 372000, 128000, srcCodex171, "gpt-daybreak-red-latest")
	add(ProviderOpenAI, O200kBase, false, 200000, 100000, srcOpenAI, "o1", "o3", "o3-mini", "o4-mini", "o3-pro", "o1-pro")
	add(ProviderOpenAI, O200kBase, false, 128000, 65536, srcOpenAI, "o1-mini")
	add(ProviderOpenAI, O200kBase, false, 131072, 131072, srcOpenAI, "gpt-oss-20b", "gpt-oss-120b")
	add(ProviderOpenAI, Cl100kBase, false, 128000, 4096, srcOpenAI, "gpt-4-turbo")
	add(ProviderOpenAI, Cl100kBase, false, 8192, 8192, srcOpenAI, "gpt-4")
	add(ProviderOpenAI, Cl100kBase, false, 16385, 4096, srcOpenAI, "gpt-3.5-turbo")
	// Anthropic (tokenizer not public).
	add(ProviderAnthropic, ClaudeEncoding, true, 200000, 8192, srcAnthropic, "claude-3-5-sonnet", "claude-3-5-haiku")
	add(ProviderAnthropic, ClaudeEncoding, true, 200000, 64000, srcClaudeCode, "claude-3-7-sonnet", "claude-sonnet-4", "claude-sonnet-4-0",
		"claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5")
	add(ProviderAnthropic, ClaudeEncoding, true, 200000, 32000, srcClaudeCode, "claude-opus-4", "claude-opus-4-0", "claude-opus-4-1")
	add(ProviderAnthropic, ClaudeEncoding, true, 200000, 128000, srcClaudeCode, "claude-sonnet-4-6", "claude-opus-4-6")
	add(ProviderAnthropic, ClaudeEncoding, true, 1000000, 128000, srcClaudeCode, "claude-opus-4-7", "claude-opus-4-8",
		"claude-opus-5", "claude-opus-5-5", "claude-sonnet-5", "claude-sonnet-5-5", "claude-haiku-5-5",
		"claude-fable-5", "claude-fable-5-1", "claude-fable-5-2", "claude-mythos-5", "claude-mythos-5-1", "claude-mythos-5-2")
	// The registry marks these with a 1M variant (supports_1m_suffix,
	// maximum_window 1e6).
	long(1000000, "claude-sonnet-4", "claude-sonnet-4-0", "claude-sonnet-4-5", "claude-sonnet-4-6", "claude-opus-4-6",
		"claude-opus-4", "claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-5", "claude-haiku-4-5")
	// Google (tokenizer not public).
	add(ProviderGemini, O200kBase, true, 1048576, 8192, srcGeminiCLI, "gemini-2.0-flash", "gemini-2.0-flash-lite")
	add(ProviderGemini, O200kBase, true, 1048576, 65536, srcGeminiCLI, "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite",
		"gemini-3-pro-preview", "gemini-3-flash-preview", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview-customtools",
		"gemini-3.1-flash-lite-preview", "gemini-3.5-flash", "gemini-3.5-flash-lite")
	// Gemini CLI 0.61.0's default flash model (LATEST_GEMINI_FLASH_MODEL),
	// its base flash-lite and the legacy name it still accepts.
	add(ProviderGemini, O200kBase, true, 1048576, 65536, srcGeminiNew, "gemini-3.8-flash", "gemini-3.1-flash-lite", "gemini-3-flash")
	add(ProviderGemini, O200kBase, true, 256000, 0, srcGemmaCLI, "gemma-4-31b-it", "gemma-4-26b-a4b-it")
	// Common open models (their own tokenizers; o200k_base as a proxy).
	add(ProviderOpen, O200kBase, true, 131072, 8192, srcOpenModel, "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b",
		"qwen2.5-72b", "qwen2.5-coder-32b", "mistral-large", "mistral-small", "devstral")
	add(ProviderOpen, O200kBase, true, 1048576, 8192, srcOpenModel, "llama-4-maverick")
	add(ProviderOpen, O200kBase, true, 10485760, 8192, srcOpenModel, "llama-4-scout")
	add(ProviderOpen, O200kBase, true, 131072, 16384, srcOpenModel, "qwen3-32b", "qwen3-235b-a22b")
	add(ProviderOpen, O200kBase, true, 262144, 65536, srcOpenModel, "qwen3-coder", "qwen3-coder-480b-a35b", "kimi-k2")
	// Qwen Code 0.24.4's defaults (tokenLimits: 1,000,000 input; output 32k, 64k for qwen3.x and coder-model).
	add(ProviderOpen, O200kBase, true, 1000000, 32768, "Qwen Code 0.24.4 tokenLimits", "qwen3-coder-plus", "qwen3-coder-flash")
	add(ProviderOpen, O200kBase, true, 1000000, 65536, "Qwen Code 0.24.4 tokenLimits", "coder-model", "qwen3.5-plus", "qwen3.6-plus", "qwen3.7-plus")
	add(ProviderOpen, O200kBase, true, 256000, 8192, srcOpenModel, "codestral")
	add(ProviderOpen, O200kBase, true, 200000, 128000, srcOpenModel, "glm-4.6")
	add(ProviderOpen, O200kBase, true, 200000, 32000, srcOpenCode, "big-pickle") // OpenCode Zen's free default
	add(ProviderOpen, O200kBase, true, 128000, 8192, srcOpenModel, "deepseek-v3", "deepseek-v3.1", "deepseek-v3.2", "deepseek-chat")
	add(ProviderOpen, O200kBase, true, 128000, 32768, srcOpenModel, "deepseek-r1", "deepseek-reasoner")
	// pi 0.73.1's defaults for DeepSeek, xAI, MiniMax and Xiaomi (its defaultModelPerProvider), sized by its registry.
	add(ProviderOpen, O200kBase, true, 1000000, 384000, "pi 0.73.1 model registry (pi-ai models.generated.js)", "deepseek-v4-pro")
	add(ProviderOpen, O200kBase, true, 2000000, 30000, "pi 0.73.1 model registry (pi-ai models.generated.js)", "grok-4.20-0309-reasoning")
	add(ProviderOpen, O200kBase, true, 204800, 131072, "pi 0.73.1 model registry (pi-ai models.generated.js)", "minimax-m2.7")
	add(ProviderOpen, O200kBase, true, 1048576, 128000, "pi 0.73.1 model registry (pi-ai models.generated.js)", "mimo-v2.5-pro")
	return m
}()

// EditorPrefixes are words an editor or gateway puts before a provider's
// model name ("aide-gpt-5", "aide:gpt-4o"): ResolveModel drops one as an
// alias, without the family warning, when the rest of the name is known.
var EditorPrefixes = []string{"aide", "cursor", "copilot", "windsurf", "zed", "cline", "roo", "kilo"}

func isEditorPrefix(w string) bool {
	for _, p := range EditorPrefixes {
		if w == p {
			return true
		}
	}
	return false
}

// ClaudeEncoding is the proxy that counts Claude models. On real Claude
// Code transcripts o200k_base, cl100k_base and the vocabulary of npm
// @anthropic-ai/tokenizer tracked the recorded growth equally well (residual
// 6.3–6.7% on 152 requests), so the exact encoding ctxfold already ships
// stays (docs/ACCURACY.md, "Which proxy for Claude").
const ClaudeEncoding = O200kBase

// KnownModels returns the built-in model names, sorted.
func KnownModels() []string {
	names := make([]string, 0, len(builtinModels))
	for n := range builtinModels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Table returns the built-in table merged with extra (the config's
// models:, which wins), sorted by name: what `ctxfold models` lists.
func Table(extra map[string]Model) []Model {
	all := map[string]Model{}
	for n, m := range builtinModels {
		all[n] = m
	}
	for n, m := range extra {
		all[strings.ToLower(n)] = configModel(n, m)
	}
	out := make([]Model, 0, len(all))
	for _, m := range all {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// configModel fills a config entry's defaults: its name, the open
// provider, o200k_base, and — for a provider whose tokenizer is not
// public (Claude, Gemini, open models) — proxy, whatever it says.
func configModel(name string, m Model) Model {
	if m.Name == "" {
		m.Name = name
	}
	if m.Provider == "" {
		m.Provider = ProviderOpen
	}
	if m.Encoding == "" {
		m.Encoding = O200kBase
		m.Proxy = true
	}
	if m.Provider != ProviderOpenAI {
		m.Proxy = true
	}
	if m.Source == "" {
		m.Source = srcConfig
	}
	return m
}

// Providers lists the provider names a model entry may give.
var Providers = []string{ProviderOpenAI, ProviderAnthropic, ProviderGemini, ProviderOpen}

// ValidProvider reports whether p is one of Providers ("" counts: it
// defaults to open).
func ValidProvider(p string) bool {
	if p == "" {
		return true
	}
	for _, k := range Providers {
		if p == k {
			return true
		}
	}
	return false
}

// UnknownModelError: the model is in neither the built-in table nor the
// config's models:, no family rule matches it, and no window was given.
type UnknownModelError struct {
	Model   string
	Closest []string
	// Client is the importer's name of the session's client, whose own
	// configuration key for a custom model's window the hint names.
	Client string
}

// clientWindowKeys is where each client configures a custom model's
// context window: what the importer reads (transcript.WindowReporter) and
// the hint of an unknown model names.
var clientWindowKeys = map[string]string{
	"opencode":  "provider.<id>.models.<id>.limit.context in opencode.json",
	"kilo":      "provider.<id>.models.<id>.limit.context in kilo.json",
	"droid":     "customModels[].maxContextLimit in ~/.factory/settings.json",
	"pi":        "providers.<id>.models[].contextWindow in ~/.pi/agent/models.json",
	"qwen-code": "model.generationConfig.contextWindowSize in ~/.qwen/settings.json",
	"crush":     "providers.<id>.models[].context_window in crush.json",
	"openclaw":  "models.providers.<id>.models[].contextWindow in ~/.openclaw/openclaw.json",
}

func (e *UnknownModelError) Error() string {
	if e.Model == "" {
		return "no model: the session records none; pass --model (or --window)"
	}
	msg := fmt.Sprintf("unknown model %q", e.Model)
	if len(e.Closest) > 0 {
		msg += "; closest known: " + strings.Join(e.Closest, ", ")
	}
	return msg
}

// Hint points at the ways out: a session that records no model needs one
// named (model:, not the models: table of unknown names; issue 44).
func (e *UnknownModelError) Hint() string {
	if e.Model == "" {
		return "pass --model M (or --window N), or set model: in the config file (CTXFOLD_MODEL)"
	}
	if key, ok := clientWindowKeys[e.Client]; ok {
		return "pass --window N, set " + key + ", or add the model under models: in the config file"
	}
	return "pass --window N, or add the model under models: in the config file"
}

// LookupModel resolves a name like ResolveModel, family rules included.
func LookupModel(name string, extra map[string]Model) (Model, bool) {
	r, ok := ResolveModel(name, extra)
	return r.Model, ok
}

// closestModels returns up to three known names nearest to name by edit
// distance.
func closestModels(name string, extra map[string]Model) []string {
	names := KnownModels()
	for n := range extra {
		names = append(names, n)
	}
	type scored struct {
		n string
		d int
	}
	var all []scored
	lower := strings.ToLower(name)
	if len(lower) > MaxModelName {
		// The edit distance is quadratic: a 500 KB id would take seconds.
		// Its first bytes say as much about the nearest names.
		lower = strings.ToValidUTF8(lower[:MaxModelName], "")
	}
	for _, n := range names {
		all = append(all, scored{n, editDistance(lower, strings.ToLower(n))})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].n < all[j].n
	})
	var out []string
	for _, s := range all {
		if len(out) == 3 {
			break
		}
		out = append(out, s.n)
	}
	return out
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// BudgetInfo is a model's resolved budget arithmetic.
type BudgetInfo struct {
	Model    string `json:"model"`
	Provider string `json:"provider"`
	Encoding string `json:"encoding"`
	// EncodingIsProxy: the model's own tokenizer is not public.
	EncodingIsProxy bool `json:"encoding_is_proxy"`
	Window          int  `json:"window"`
	MaxOutput       int  `json:"max_output"`
	// OutputReserve is kept free for the reply; InputBudget = Window −
	// OutputReserve is what the rendered view may fill.
	OutputReserve int `json:"output_reserve"`
	InputBudget   int `json:"input_budget"`
	// ResolvedModel is the table entry that budgets Model and ModelRule
	// how it was found (RuleExact, RuleAlias, RuleFamily); both "" when
	// nothing resolved and a window was given.
	ResolvedModel string `json:"resolved_model,omitempty"`
	ModelRule     string `json:"model_rule,omitempty"`
	// WindowSource says which window counts: "flag" (--window), "session"
	// (recorded in the session, e.g. Codex's model_context_window) or
	// "table".
	WindowSource string `json:"window_source,omitempty"`
}

// Window sources (BudgetInfo.WindowSource).
const (
	WindowFromFlag    = "flag"
	WindowFromSession = "session"
	// WindowFromClientConfig: the session's client configures the model
	// with this window (a custom model; RecordedWindowSourceKey).
	WindowFromClientConfig = "client_config"
	WindowFromTable        = "table"
)

// reserveCeiling is the most ever reserved for the reply when no explicit
// cap is given (docs/FIT.md).
const reserveCeiling = 16384

// Budget resolves opts.Model (through opts.Models, the built-in table and
// the family rules, ResolveModel) and the overrides into the budget
// arithmetic: the window is --window, else the one the session recorded
// (opts.RecordedWindow), else the table's; output reserve = min(output
// capability, 16384, window/4) unless OutputCap is given; input budget =
// window − reserve. A model nothing resolves, with no window given or
// recorded, is an *UnknownModelError naming the closest known names.
func Budget(opts Options) (BudgetInfo, error) {
	r, ok := ResolveModel(opts.Model, opts.Models)
	m := r.Model
	if !ok {
		if opts.Window <= 0 && opts.RecordedWindow <= 0 {
			var closest []string
			if opts.Model != "" {
				closest = closestModels(opts.Model, opts.Models)
			}
			return BudgetInfo{}, &UnknownModelError{Model: opts.Model, Closest: closest, Client: opts.Client}
		}
		// Unknown model with an explicit window: its tokenizer is unknown,
		// so whatever encoding counts is a proxy.
		m = Model{Name: opts.Model, Provider: ProviderOpen, Encoding: O200kBase, Proxy: true}
	}
	if m.Provider == "" {
		m.Provider = ProviderOpen
	}
	if m.Encoding == "" {
		m.Encoding = O200kBase
		m.Proxy = true
	}
	b := BudgetInfo{Model: opts.Model, Provider: m.Provider, Encoding: m.Encoding, EncodingIsProxy: m.Proxy,
		Window: m.Window, MaxOutput: m.MaxOutput, WindowSource: WindowFromTable}
	if ok {
		b.ResolvedModel, b.ModelRule = m.Name, r.Rule
	}
	if b.Model == "" {
		b.Model = m.Name
	}
	if opts.Encoding != "" {
		if _, ok := tables[opts.Encoding]; !ok {
			return BudgetInfo{}, &UnknownEncodingError{Name: opts.Encoding}
		}
		// Any encoding other than the model's own is a stand-in.
		if opts.Encoding != m.Encoding {
			b.EncodingIsProxy = true
		}
		b.Encoding = opts.Encoding
	}
	switch {
	case opts.Window > 0:
		b.Window, b.WindowSource = opts.Window, WindowFromFlag
	case opts.RecordedWindow > 0:
		b.Window, b.WindowSource = opts.RecordedWindow, WindowFromSession
		if opts.RecordedWindowSource != "" {
			b.WindowSource = opts.RecordedWindowSource
		}
	}
	if opts.MaxOutput > 0 {
		b.MaxOutput = opts.MaxOutput
	}
	if b.Window <= 0 {
		return BudgetInfo{}, fmt.Errorf("model %q has no context window; pass --window", b.Model)
	}
	switch {
	case opts.OutputCap > 0:
		b.OutputReserve = opts.OutputCap
	default:
		b.OutputReserve = min(reserveCeiling, b.Window/4)
		if b.MaxOutput > 0 {
			b.OutputReserve = min(b.OutputReserve, b.MaxOutput)
		}
	}
	if b.OutputReserve >= b.Window {
		return BudgetInfo{}, fmt.Errorf("output cap %d leaves no input budget in a %d-token window", b.OutputReserve, b.Window)
	}
	b.InputBudget = b.Window - b.OutputReserve
	return b, nil
}
