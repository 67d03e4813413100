package estimate

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// Categories of the rendered view; they sum to the total. Overhead is the
// chat format itself (message framing, reply priming, a provider's
// tool-use preamble), kept apart so the content categories are exact
// counts of what the session holds.
const (
	CatSystem      = "system"
	CatTools       = "tool_definitions"
	CatSummary     = "summary"
	CatUser        = "user"
	CatAssistant   = "assistant"
	CatToolCalls   = "tool_calls"
	CatToolResults = "tool_results"
	CatThinking    = "thinking"
	CatImages      = "images"
	CatOverhead    = "overhead"
)

// Categories lists every category in display order.
var Categories = []string{CatSystem, CatTools, CatSummary, CatUser, CatAssistant, CatToolCalls, CatToolResults, CatThinking, CatImages, CatOverhead}

// parts is one node's count split by category. It depends only on the
// node's bytes, the encoding and the provider rules, which is what makes it
// cacheable by content hash. Measured carries the node's provider-recorded
// input tokens (0 when none) so calibration needs no second read.
type parts struct {
	Text, Thinking, Calls, Results, Images, ToolDefs, Overhead int32
	Measured                                                   int64
	// Hidden is output the provider recorded for this node's request that
	// the transcript does not show but the next request of the same turn
	// carries (Codex's encrypted reasoning: usage.reasoning_output_tokens).
	Hidden int32
	// Tokenizer is the tokenizer of the model that answered this node's
	// request (tokenizerOf), tokenizerUnknown for other nodes.
	Tokenizer uint8
}

func (p parts) content() int {
	return int(p.Text + p.Thinking + p.Calls + p.Results + p.Images + p.ToolDefs)
}

func (p parts) total() int { return p.content() + int(p.Overhead) }

// Chat-format constants (docs/ESTIMATE.md gives the sources).
const (
	// perMessage frames every message (<|start|>role<|message|>…<|end|>)
	// and replyPriming primes the reply (<|start|>assistant<|message|>):
	// OpenAI's published rule for Chat Completions, used as the stated
	// rule for the other providers, whose framing is not published.
	perMessage   = 3
	replyPriming = 3
	// perToolCall frames one tool call beside its name and arguments.
	perToolCall = 3
	// anthropicToolPreamble is the system prompt Anthropic adds when a
	// request carries tools (tool_choice auto/none), per its tool-use docs.
	anthropicToolPreamble = 346
)

// countNode splits one node's tokens into parts under the provider's rules.
func countNode(c *counter, provider string, n *transcript.Node) parts {
	var p parts
	add := func(dst *int32, s string) { *dst += int32(c.count(s)) }
	textDst := &p.Text
	if n.Role == transcript.RoleTool {
		textDst = &p.Results
	}
	if !n.Content.IsBlocks {
		add(textDst, n.Content.Text)
	} else {
		for _, b := range n.Content.Blocks {
			switch b.Type {
			case transcript.BlockText:
				add(textDst, b.Text)
			case transcript.BlockThinking:
				// Counted as the stored view holds it (docs/ESTIMATE.md: count
				// after folding, including thinking blocks).
				add(&p.Thinking, b.Text)
			case transcript.BlockToolResult:
				add(&p.Results, b.Text)
				p.Overhead += perMessage
			case transcript.BlockToolCall:
				add(&p.Calls, b.Name)
				add(&p.Calls, transcript.ArgumentsText(b.Arguments))
				p.Overhead += perToolCall
			case transcript.BlockImage:
				p.Images += int32(imageTokens(provider, b))
			default:
				// An unknown block is sent as its text, if it has one.
				add(textDst, b.Text)
			}
		}
	}
	for _, tc := range n.ToolCalls {
		add(&p.Calls, tc.Name)
		add(&p.Calls, tc.ArgumentsText())
		p.Overhead += perToolCall
	}
	// A node whose blocks are all tool results becomes only tool messages
	// (render.OpenAIMessagesOf); any other node is one message of its own.
	if ownMessage(n) {
		p.Overhead += perMessage
	}
	if defs, ok := n.Metadata["tools"]; ok {
		p.ToolDefs = int32(toolDefTokens(c, provider, defs))
	}
	if n.Usage != nil && n.Role == transcript.RoleAssistant {
		if m := measuredInput(n.Usage); m > 0 && m <= measuredMask {
			p.Measured = m
		}
		p.Hidden = hiddenOutput(n.Usage)
		if provider == ProviderAnthropic {
			if omitted := omitsThinking(n); omitted || summarisesThinking(n.Usage, p) {
				p.Hidden = omittedThinking(n, p, omitted)
			}
		}
		p.Tokenizer = tokenizerOf(provider, n.AnsweringModel())
	}
	return p
}

// omitsThinking reports whether n holds a thinking block whose text the
// transcript does not have, only its signature: Claude Opus 4.7 and later
// return their thinking so by default, and Claude Code records it so. The
// block is sent back (render.AnthropicRequest) and the provider counts the
// thinking the signature stands for in every later request of the segment.
func omitsThinking(n *transcript.Node) bool {
	if !n.Content.IsBlocks {
		return false
	}
	omitted := false
	for _, b := range n.Content.Blocks {
		if b.Type == transcript.BlockThinking {
			if b.Text != "" {
				return false
			}
			omitted = omitted || b.Signature != ""
		}
	}
	return omitted
}

// summaryRatio is how many times what the transcript shows of a request's
// output (its text, thinking and calls, as counted) the recorded output
// must be for its thinking to be a summary: a tokenizer's rate against
// the proxy is at most about 1.5 (ClaudeV47ProxySlope), so a thinking
// shown in full never comes near it.
const summaryRatio = 3

// minSummarised is the least output beyond what is shown that is taken
// for a summarised thinking: only a long thinking is summarised, and a
// short reply's counts are too small to tell a rate from a summary.
const minSummarised = 1024

// summarisesThinking reports whether the thinking n shows is a summary of
// a longer one (Claude 4 models summarise a long thinking; the provider
// reads the whole of it, which the signature stands for, in the later
// requests, as it does an omitted one): its request's output is more than
// summaryRatio times what the transcript shows of it, and minSummarised
// more.
func summarisesThinking(u *transcript.Usage, p parts) bool {
	shown := int64(p.Text + p.Thinking + p.Calls)
	return p.Thinking > 0 && u.OutputTokens > summaryRatio*shown && u.OutputTokens-shown >= minSummarised
}

// omittedThinking is the size of the thinking n's signatures stand for:
// the request's recorded output less what the transcript shows of it (its
// text and tool calls, as counted), in the provider's units where the
// output is. A recorded output below what is shown is not the reply's
// final count — Claude Code writes each block of a streamed reply as a
// line of its own, and 2.1.222 writes a sub-agent's with the count the
// stream started with when the final usage comes late
// (docs/INTEROP-claude-code.md, "A sub-agent's thinking, counted at its
// start") — so an omitted thinking is then sized by its signatures
// (signatureTokens) when they stand for a long one (minSummarised or
// more: a short one's carry is within the fit's noise).
func omittedThinking(n *transcript.Node, p parts, omitted bool) int32 {
	shown := int64(p.Text + p.Thinking + p.Calls)
	v := n.Usage.OutputTokens - shown
	if omitted && n.Usage.OutputTokens < shown {
		if sig := signatureTokens(n); sig >= minSummarised {
			v = sig
		}
	}
	if v <= 0 {
		return 0
	}
	return int32(min(v, maxHidden))
}

// signatureRate is the thinking, in the provider's output tokens, one
// byte of an omitted thinking's signature stands for: the signature
// carries the thinking encrypted, so its length follows the thinking's.
// Pooled over the held-out Claude Code 2.1.161–2.1.232 replies whose
// output count is final (docs/ACCURACY.md, "A thinking sized by its
// signature"): Σ(output − shown) / Σ signature bytes, 0.3403 over 11.9
// MB of signatures (0.3414 and 0.3327 for the two publishers).
const signatureRate = 0.340

// signatureTokens is the thinking n's omitted thinking blocks stand for,
// by their signatures' length (signatureRate).
func signatureTokens(n *transcript.Node) int64 {
	size := 0
	for _, b := range n.Content.Blocks {
		if b.Type == transcript.BlockThinking && b.Text == "" {
			size += len(b.Signature)
		}
	}
	return int64(signatureRate * float64(size))
}

// hiddenKeptAcrossTurns reports whether the provider keeps a request's
// hidden output in the requests after a new user message: Claude keeps
// an earlier turn's thinking (the models whose thinking the transcript
// omits, Claude Opus 4.7 and later, keep it for the whole conversation:
// docs/ESTIMATE.md, "The anchor"); OpenAI's Responses API drops the
// reasoning items of an earlier turn.
func hiddenKeptAcrossTurns(provider string) bool { return provider == ProviderAnthropic }

func ownMessage(n *transcript.Node) bool {
	if !n.Content.IsBlocks || len(n.Content.Blocks) == 0 || len(n.ToolCalls) > 0 {
		return true
	}
	for _, b := range n.Content.Blocks {
		if b.Type != transcript.BlockToolResult {
			return true
		}
	}
	return false
}

// measuredInput is the whole prompt the provider read for the request that
// produced a node. The session format defines usage.input_tokens as exactly
// that (cached reads and cache writes included; docs/FORMAT.md): importers
// normalise each provider's fields into it, so nothing is added here —
// Anthropic's cache_read/cache_creation figures kept beside it are already
// part of it.
func measuredInput(u *transcript.Usage) int64 { return u.InputTokens }

// hiddenOutput is the part of a request's output the transcript does not
// hold but the provider feeds back with the next request of the same turn
// (docs/ESTIMATE.md, "The anchor"): Codex's reasoning items are stored
// encrypted, and the rollout's token_count gives their size as
// reasoning_output_tokens. Claude's thinking is in the transcript as text
// (counted in the view) or as a signature only (omittedThinking); Gemini
// CLI's thoughts are not sent back: nothing hidden for them.
func hiddenOutput(u *transcript.Usage) int32 {
	raw, ok := u.Extra["reasoning_output_tokens"]
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil || v < 0 || v > maxHidden {
		return 0
	}
	return int32(v)
}

// maxHidden bounds Hidden to what the count cache's entry keeps (24 bits).
const maxHidden = 1<<24 - 1

// Image rules: with the image's size known (width/height on the block),
// the provider's published formula; without it, a stated fixed estimate.
const (
	openAIImageDefault    = 765 // a 1024×1024 image at high detail
	anthropicImageDefault = 1600
	geminiImageTokens     = 258
)

func imageTokens(provider string, b transcript.Block) int {
	w, h := extraInt(b.Extra, "width"), extraInt(b.Extra, "height")
	switch provider {
	case ProviderAnthropic:
		if w <= 0 || h <= 0 {
			return anthropicImageDefault
		}
		// Images are scaled to fit 1568 px on the long edge; tokens ≈ w·h/750.
		if long := max(w, h); long > 1568 {
			s := 1568 / float64(long)
			w, h = int(float64(w)*s), int(float64(h)*s)
		}
		return min(int(math.Ceil(float64(w*h)/750)), anthropicImageDefault)
	case ProviderGemini:
		return geminiImageTokens
	}
	var detail string
	if raw, ok := b.Extra["detail"]; ok {
		_ = json.Unmarshal(raw, &detail)
	}
	if detail == "low" {
		return 85
	}
	if w <= 0 || h <= 0 {
		return openAIImageDefault
	}
	// High detail: fit in 2048×2048, shortest side to 768, then 170 per
	// 512-px tile plus 85.
	fw, fh := float64(w), float64(h)
	if long := math.Max(fw, fh); long > 2048 {
		fw, fh = fw*2048/long, fh*2048/long
	}
	if short := math.Min(fw, fh); short > 768 {
		fw, fh = fw*768/short, fh*768/short
	}
	tiles := int(math.Ceil(fw/512) * math.Ceil(fh/512))
	return 85 + 170*tiles
}

func extraInt(m map[string]json.RawMessage, key string) int {
	raw, ok := m[key]
	if !ok {
		return 0
	}
	var v float64
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	return int(v)
}

// toolDef is a tool definition in any of the shapes providers use:
// OpenAI {"type":"function","function":{…}}, a bare function object, or
// Anthropic's {name, description, input_schema}.
type toolDef struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type schemaProp struct {
	Type        any      `json:"type"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
}

// toolDefTokens counts the tool definitions a node declares in
// metadata.tools. OpenAI: the OpenAI cookbook's function-definition rule
// (per function 7 + "name:description", per property 3 +
// "name:type:description", enums −3 + 3 per item, 12 to close; 10 per
// function for the cl100k models). Others: the definitions' JSON text.
func toolDefTokens(c *counter, provider string, raw json.RawMessage) int {
	var defs []json.RawMessage
	if json.Unmarshal(raw, &defs) != nil || len(defs) == 0 {
		return 0
	}
	if provider != ProviderOpenAI {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return c.count(string(raw))
		}
		return c.count(buf.String())
	}
	funcInit := 7
	if c.enc == Cl100kBase {
		funcInit = 10
	}
	n := 0
	for _, d := range defs {
		var td toolDef
		if json.Unmarshal(d, &td) != nil {
			n += c.count(string(d))
			continue
		}
		name, desc, params := td.Name, td.Description, td.Parameters
		if td.Function != nil {
			name, desc, params = td.Function.Name, td.Function.Description, td.Function.Parameters
		}
		if params == nil {
			params = td.InputSchema
		}
		n += funcInit + c.count(name+":"+strings.TrimSuffix(desc, "."))
		var schema struct {
			Properties map[string]schemaProp `json:"properties"`
		}
		_ = json.Unmarshal(params, &schema)
		if len(schema.Properties) > 0 {
			n += 3
			for key, prop := range schema.Properties {
				n += 3
				if len(prop.Enum) > 0 {
					n -= 3
					for _, item := range prop.Enum {
						n += 3 + c.count(item)
					}
				}
				typ, _ := prop.Type.(string)
				n += c.count(key + ":" + typ + ":" + strings.TrimSuffix(prop.Description, "."))
			}
		}
	}
	return n + 12
}

// viewExtras are the tokens a request adds once, beside its messages:
// reply priming, and Anthropic's tool-use preamble when tools are defined.
func viewExtras(provider string, nodes int, anyTools bool) int {
	if nodes == 0 {
		return 0
	}
	n := replyPriming
	if anyTools && provider == ProviderAnthropic {
		n += anthropicToolPreamble
	}
	return n
}
