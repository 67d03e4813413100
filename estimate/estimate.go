// Package estimate owns every token figure ctxfold prints: exact offline
// BPE counts of the rendered view (seed 001 §01: one measurement basis),
// its breakdown by category, the output reserve and input budget of a
// model, and calibration against provider-recorded usage. Nothing outside
// this package counts tokens. It does not decide what the model reads
// (render/ does) and never writes a session except its own count cache.
package estimate

import (
	"context"
	"fmt"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
)

// Categories of the rendered view; they sum to the total.
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

// Options select the model and budget arithmetic.
type Options struct {
	Model    string
	Encoding string // "" means the model's
	Window   int    // 0 means the model's
	// MaxOutput overrides the model's output capability; OutputCap is an
	// explicit cap used as given.
	MaxOutput int
	OutputCap int
}

// NodeCount is one node's share of the view.
type NodeCount struct {
	ID            string `json:"id"`
	Role          string `json:"role"`
	Category      string `json:"category"`
	ContentTokens int    `json:"content_tokens"`
	Tokens        int    `json:"tokens"`
}

// Result is the occupancy of one rendered view.
type Result struct {
	Model           string         `json:"model"`
	Encoding        string         `json:"encoding"`
	EncodingIsProxy bool           `json:"encoding_is_proxy"`
	Window          int            `json:"window"`
	OutputReserve   int            `json:"output_reserve"`
	InputBudget     int            `json:"input_budget"`
	Total           int            `json:"total"`
	Ratio           float64        `json:"ratio"`
	BudgetPct       float64        `json:"budget_pct"`
	ShouldCompact   bool           `json:"should_compact"`
	Categories      map[string]int `json:"categories"`
	Nodes           []NodeCount    `json:"nodes,omitempty"`
}

// perMessage is the chat-format overhead of one message and replyPriming
// the tokens that prime the reply (OpenAI's published counting rule).
const (
	perMessage   = 3
	replyPriming = 3
)

// Nodes measures rendered nodes in reading order: THE entry point every
// token total goes through (estimate, compact's before/after, graph, fit).
func Nodes(ctx context.Context, nodes []*transcript.Node, opts Options) (*Result, error) {
	enc := opts.Encoding
	if enc == "" {
		enc = O200kBase
	}
	res := &Result{Model: opts.Model, Encoding: enc, Window: opts.Window, Categories: map[string]int{}}
	for _, n := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nc, err := countNode(enc, n)
		if err != nil {
			return nil, err
		}
		res.Nodes = append(res.Nodes, nc)
		res.Total += nc.Tokens
		res.Categories[nc.Category] += nc.ContentTokens
		res.Categories[CatOverhead] += nc.Tokens - nc.ContentTokens
	}
	if len(nodes) > 0 {
		res.Total += replyPriming
		res.Categories[CatOverhead] += replyPriming
	}
	if res.Window > 0 {
		res.Ratio = float64(res.Total) / float64(res.Window)
	}
	return res, nil
}

// View measures a rendered view.
func View(ctx context.Context, v *render.View, opts Options) (*Result, error) {
	nodes, err := v.LoadNodes()
	if err != nil {
		return nil, err
	}
	return Nodes(ctx, nodes, opts)
}

func countNode(enc string, n *transcript.Node) (NodeCount, error) {
	nc := NodeCount{ID: n.ID, Role: string(n.Role), Category: string(n.Role)}
	if n.IsSummary() {
		nc.Category = CatSummary
	}
	if n.Role == transcript.RoleTool {
		nc.Category = CatToolResults
	}
	text := n.Content.PlainText()
	c, err := Text(enc, text)
	if err != nil {
		return nc, fmt.Errorf("node %q: %w", n.ID, err)
	}
	nc.ContentTokens = c
	nc.Tokens = c + perMessage
	return nc, nil
}
