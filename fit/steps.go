// This file holds the three request-local steps Fit runs in order (docs/FIT.md):
// summarize completed tool results, checkpoint older history, snip.

package fit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// ---- step 1: summarize text-only results of completed tool groups ----

func (f *fitter) summarizeToolResults(ctx context.Context) error {
	if f.opts.Summarizer == nil {
		return nil
	}
	for _, g := range groups(f.nodes) {
		if !g.Complete {
			continue
		}
		for _, k := range g.Results {
			if f.total <= f.budget {
				return nil
			}
			n := f.nodes[k]
			if hasImage(n) || f.tokens[k] <= f.opts.SummaryTokens+summaryOverheadPadding {
				continue
			}
			if err := f.summarizeResult(ctx, g.Call, k); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fitter) summarizeResult(ctx context.Context, call, k int) error {
	orig := f.nodes[k]
	repl := cloneNode(orig)
	changed := false
	summarize := func(text, callID string) (string, bool) {
		ctxNode := callContext(f.nodes[call], callID)
		result := &transcript.Node{ID: orig.ID, Role: transcript.RoleTool, ToolCallID: callID, Content: transcript.TextContent(text)}
		s, ok := f.summary("tool_result", []*transcript.Node{ctxNode, result})
		if !ok {
			return "", false
		}
		return ToolSummaryPrefix + s, true
	}
	if orig.Role == transcript.RoleTool {
		if s, ok := summarize(orig.Content.PlainText(), orig.ToolCallID); ok {
			repl.Content = transcript.TextContent(s)
			changed = true
		}
	} else {
		for bi, b := range repl.Content.Blocks {
			if b.Type != transcript.BlockToolResult || b.Text == "" {
				continue
			}
			if s, ok := summarize(b.Text, b.ToolCallID); ok {
				repl.Content.Blocks[bi].Text = s
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	before := f.tokens[k]
	f.nodes[k] = repl
	if err := f.recount(ctx, k); err != nil {
		return err
	}
	if f.tokens[k] >= before {
		// A summary that does not shrink the result is not used.
		f.total += before - f.tokens[k]
		f.tokens[k] = before
		f.nodes[k] = orig
		return nil
	}
	f.rep.Transformations = append(f.rep.Transformations, Transformation{Step: StepToolResults, NodeIDs: []string{orig.ID}, TokensBefore: before, TokensAfter: f.tokens[k]})
	return nil
}

// callContext is the assistant node reduced to the one call a result
// answers, so the summarizer knows what produced the output.
func callContext(assistant *transcript.Node, callID string) *transcript.Node {
	n := &transcript.Node{ID: assistant.ID, Role: transcript.RoleAssistant}
	for _, c := range assistant.AllToolCalls() {
		if c.ID == callID {
			n.ToolCalls = []transcript.ToolCall{c}
		}
	}
	return n
}

func cloneNode(n *transcript.Node) *transcript.Node {
	c := *n
	if n.Content.IsBlocks {
		c.Content.Blocks = append([]transcript.Block(nil), n.Content.Blocks...)
	}
	return &c
}

// ---- step 2: a request-local checkpoint ----

func (f *fitter) checkpoint(ctx context.Context) error {
	if f.opts.Summarizer == nil {
		return nil
	}
	units := eligibleUnits(f.nodes)
	if len(units) == 0 {
		return nil
	}
	// The smallest prefix of eligible history whose replacement by a
	// checkpoint of at most SummaryTokens brings the request within budget.
	need := f.total - f.budget + f.opts.SummaryTokens + summaryOverheadPadding
	saved, take := 0, len(units)
	for i, u := range units {
		for k := u.first; k <= u.last; k++ {
			saved += f.tokens[k]
		}
		if saved >= need {
			take = i + 1
			break
		}
	}
	chosen := units[:take]
	var covered []*transcript.Node
	var ids []string
	before := 0
	drop := map[int]bool{}
	for _, u := range chosen {
		for k := u.first; k <= u.last; k++ {
			covered = append(covered, f.nodes[k])
			ids = append(ids, f.nodes[k].ID)
			before += f.tokens[k]
			drop[k] = true
		}
	}
	text, ok := f.summary("checkpoint", covered)
	if !ok {
		return nil
	}
	sum := sha256.Sum256([]byte(strings.Join(ids, "\x00")))
	cp := &transcript.Node{ID: CheckpointIDPrefix + hex.EncodeToString(sum[:6]), Role: transcript.RoleAssistant,
		Content: transcript.TextContent(CheckpointPrefix + text)}
	// The checkpoint stands where the folded history ended, after the user
	// messages it interleaved with, which stay verbatim and in order.
	at := chosen[len(chosen)-1].last
	var nodes []*transcript.Node
	var tokens []int
	for k, n := range f.nodes {
		if !drop[k] {
			nodes, tokens = append(nodes, n), append(tokens, f.tokens[k])
		}
		if k == at {
			nodes, tokens = append(nodes, cp), append(tokens, 0)
		}
	}
	cpIndex := 0
	for k, n := range nodes {
		if n == cp {
			cpIndex = k
		}
	}
	oldNodes, oldTokens, oldTotal := f.nodes, f.tokens, f.total
	f.nodes, f.tokens = nodes, tokens
	f.total -= before
	if err := f.recount(ctx, cpIndex); err != nil {
		return err
	}
	if f.total >= oldTotal {
		f.nodes, f.tokens, f.total = oldNodes, oldTokens, oldTotal
		return nil
	}
	f.rep.Transformations = append(f.rep.Transformations, Transformation{Step: StepCheckpoint, NodeIDs: ids, NewID: cp.ID, TokensBefore: before, TokensAfter: f.tokens[cpIndex]})
	return nil
}

// ---- step 3: snip ----

// snip drops the oldest eligible units until the request fits. Dropping a
// whole unit changes neither what is protected nor the other units (a
// complete tool group leaves as one), so the units are computed once and
// the nodes compacted once.
func (f *fitter) snip(ctx context.Context) error {
	drop := make([]bool, len(f.nodes))
	dropped := false
	for _, u := range eligibleUnits(f.nodes) {
		if f.total <= f.budget {
			break
		}
		var ids []string
		before := 0
		for k := u.first; k <= u.last; k++ {
			ids = append(ids, f.nodes[k].ID)
			before += f.tokens[k]
			drop[k] = true
		}
		dropped = true
		f.total -= before
		f.rep.Transformations = append(f.rep.Transformations, Transformation{Step: StepSnip, NodeIDs: ids, TokensBefore: before, TokensAfter: 0})
	}
	if !dropped {
		return nil
	}
	nodes, tokens := f.nodes[:0:0], f.tokens[:0:0]
	for k, n := range f.nodes {
		if !drop[k] {
			nodes, tokens = append(nodes, n), append(tokens, f.tokens[k])
		}
	}
	f.nodes, f.tokens = nodes, tokens
	return nil
}
