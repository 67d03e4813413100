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
}

// builtinModels: context window, output capability and encoding as the
// providers publish them. OpenAI's o200k/cl100k models are exact; Claude,
// Gemini and the open models count with o200k_base as a stated proxy.
var builtinModels = func() map[string]Model {
	m := map[string]Model{}
	add := func(provider, enc string, proxy bool, window, maxOut int, names ...string) {
		for _, n := range names {
			m[n] = Model{Name: n, Provider: provider, Window: window, MaxOutput: maxOut, Encoding: enc, Proxy: proxy}
		}
	}
	// OpenAI.
	add(ProviderOpenAI, O200kBase, false, 128000, 16384, "gpt-4o", "gpt-4o-mini", "chatgpt-4o-latest")
	add(ProviderOpenAI, O200kBase, false, 1047576, 32768, "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano")
	add(ProviderOpenAI, O200kBase, false, 400000, 128000, "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1", "gpt-5-codex")
	add(ProviderOpenAI, O200kBase, false, 128000, 16384, "gpt-5-chat-latest")
	add(ProviderOpenAI, O200kBase, false, 200000, 100000, "o1", "o3", "o3-mini", "o4-mini", "o3-pro", "o1-pro")
	add(ProviderOpenAI, O200kBase, false, 128000, 65536, "o1-mini")
	add(ProviderOpenAI, O200kBase, false, 131072, 131072, "gpt-oss-20b", "gpt-oss-120b")
	add(ProviderOpenAI, Cl100kBase, false, 128000, 4096, "gpt-4-turbo")
	add(ProviderOpenAI, Cl100kBase, false, 8192, 8192, "gpt-4")
	add(ProviderOpenAI, Cl100kBase, false, 16385, 4096, "gpt-3.5-turbo")
	// Anthropic (tokenizer not public).
	add(ProviderAnthropic, O200kBase, true, 200000, 8192, "claude-3-5-sonnet", "claude-3-5-haiku")
	add(ProviderAnthropic, O200kBase, true, 200000, 64000, "claude-3-7-sonnet", "claude-sonnet-4", "claude-sonnet-4-5", "claude-haiku-4-5")
	add(ProviderAnthropic, O200kBase, true, 200000, 32000, "claude-opus-4", "claude-opus-4-1")
	add(ProviderAnthropic, O200kBase, true, 200000, 64000, "claude-opus-4-5")
	// Google (tokenizer not public).
	add(ProviderGemini, O200kBase, true, 1048576, 8192, "gemini-2.0-flash", "gemini-2.0-flash-lite")
	add(ProviderGemini, O200kBase, true, 1048576, 65536, "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite")
	// Common open models (their own tokenizers; o200k_base as a proxy).
	add(ProviderOpen, O200kBase, true, 131072, 8192, "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b",
		"qwen2.5-72b", "qwen2.5-coder-32b", "mistral-large", "mistral-small")
	add(ProviderOpen, O200kBase, true, 131072, 16384, "qwen3-32b", "qwen3-235b-a22b")
	add(ProviderOpen, O200kBase, true, 128000, 8192, "deepseek-v3", "deepseek-chat")
	add(ProviderOpen, O200kBase, true, 128000, 32768, "deepseek-r1", "deepseek-reasoner")
	return m
}()

// KnownModels returns the built-in model names, sorted.
func KnownModels() []string {
	names := make([]string, 0, len(builtinModels))
	for n := range builtinModels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UnknownModelError: the model is in neither the built-in table nor the
// config's models:, and no --window was given.
type UnknownModelError struct {
	Model   string
	Closest []string
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

// Hint points at the two ways out.
func (e *UnknownModelError) Hint() string {
	return "pass --window N, or add the model under models: in the config file"
}

// ExitCode: an unknown model is a usage error.
func (e *UnknownModelError) ExitCode() int { return 2 }

// LookupModel resolves a name against extra (the config's models:, which
// wins) and the built-in table. A dated or tagged name ("gpt-4o-2024-08-06",
// "claude-3-5-sonnet-20241022", "openai/gpt-4.1") resolves to the longest
// known name it starts with at a "-" boundary.
func LookupModel(name string, extra map[string]Model) (Model, bool) {
	key := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		key = key[i+1:]
	}
	find := func(k string) (Model, bool) {
		for n, m := range extra {
			if strings.EqualFold(n, k) {
				if m.Name == "" {
					m.Name = n
				}
				return m, true
			}
		}
		m, ok := builtinModels[k]
		return m, ok
	}
	if key == "" {
		return Model{}, false
	}
	for k := key; ; {
		if m, ok := find(k); ok {
			return m, true
		}
		i := strings.LastIndexByte(k, '-')
		if i <= 0 {
			break
		}
		k = k[:i]
	}
	// "claude-3-5-sonnet-latest"-style aliases are covered above; a model
	// named with a ":tag" (ollama) drops the tag.
	if i := strings.IndexByte(key, ':'); i > 0 {
		return LookupModel(key[:i], extra)
	}
	return Model{}, false
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
}

// reserveCeiling is the most ever reserved for the reply when no explicit
// cap is given (seed 000, "Compaction inside one user message").
const reserveCeiling = 16384

// Budget resolves opts.Model (through opts.Models and the built-in table)
// and the overrides into the budget arithmetic: output reserve =
// min(output capability, 16384, window/4) unless OutputCap is given, input
// budget = window − reserve. An unknown model without Window is an
// *UnknownModelError naming the closest known names.
func Budget(opts Options) (BudgetInfo, error) {
	m, ok := LookupModel(opts.Model, opts.Models)
	if !ok {
		if opts.Window <= 0 {
			var closest []string
			if opts.Model != "" {
				closest = closestModels(opts.Model, opts.Models)
			}
			return BudgetInfo{}, &UnknownModelError{Model: opts.Model, Closest: closest}
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
		Window: m.Window, MaxOutput: m.MaxOutput}
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
	if opts.Window > 0 {
		b.Window = opts.Window
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
