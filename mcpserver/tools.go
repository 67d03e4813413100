package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/projectprefix"
	"github.com/ctxfold/ctxfold/render"
)

// SearchInput is search_history's arguments.
type SearchInput struct {
	Query  string `json:"query" jsonschema:"text to find (case-insensitive substring), or a regular expression with regexp"`
	Regexp bool   `json:"regexp,omitempty" jsonschema:"treat query as an RE2 regular expression"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most hits returned (default 20, at most 100)"`
	Scope  string `json:"scope,omitempty" jsonschema:"session (default): this session; archive: every session of every agent that ctxfold archive keeps (query: words, \"a phrase\", prefix*)"`
}

// SearchHit is one hit.
type SearchHit struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	// Status is visible, covered, off-branch or relic (render.Hit).
	Status string `json:"status"`
	// CoveredBy is the summary standing in for a covered node.
	CoveredBy string   `json:"covered_by,omitempty"`
	Summaries []string `json:"summaries,omitempty"`
	Field     string   `json:"field"`
	Snippet   string   `json:"snippet"`
	// Client, Session (read_turns' session), Time and Source (the
	// client's file) name an archive hit's origin.
	Client  string `json:"client,omitempty"`
	Session string `json:"session,omitempty"`
	Time    string `json:"time,omitempty"`
	Source  string `json:"source,omitempty"`
}

// SearchOutput is search_history's result.
type SearchOutput struct {
	File  string      `json:"file"`
	Total int         `json:"total"`
	Hits  []SearchHit `json:"hits"`
}

const defaultLimit, maxLimit = 20, 100

func (h *handlers) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	var out SearchOutput
	if strings.TrimSpace(in.Query) == "" {
		return errorResult(errors.New("query is empty")), out, nil
	}
	if err := checkQuery(in.Query, in.Regexp); err != nil {
		return errorResult(err), out, nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	switch in.Scope {
	case "", ScopeSession:
	case ScopeArchive:
		return h.searchArchive(ctx, in, limit)
	default:
		return errorResult(fmt.Errorf("scope must be %q or %q, got %q", ScopeSession, ScopeArchive, clip(in.Scope, maxEcho))), out, nil
	}
	g, file, done, err := h.open(ctx)
	if err != nil {
		return errorResult(err), out, nil
	}
	defer done()
	out.File, out.Hits = file, []SearchHit{}
	view, err := render.Build(g, "", false)
	if err != nil {
		return errorResult(err), out, nil
	}
	err = render.Search(ctx, view, render.SearchOptions{Query: in.Query, Regexp: in.Regexp, SnippetRunes: 80}, func(hit render.Hit) error {
		out.Total++
		if len(out.Hits) < limit {
			out.Hits = append(out.Hits, SearchHit{ID: hit.ID, Role: string(hit.Role), Status: hit.Status,
				CoveredBy: hit.CoveredBy, Summaries: hit.Summaries, Field: hit.Field, Snippet: hit.Snippet})
		}
		return nil
	})
	if err != nil {
		return errorResult(err), out, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %q in %s", plural(out.Total, "hit"), clip(in.Query, maxEcho), file)
	if out.Total > len(out.Hits) {
		fmt.Fprintf(&b, " (first %d shown)", len(out.Hits))
	}
	b.WriteString("\n")
	for _, hit := range out.Hits {
		status := hit.Status
		if hit.Status == render.HitCovered {
			status = "covered by summary " + hit.CoveredBy + " (the model no longer reads it; read_turns quotes it)"
		}
		fmt.Fprintf(&b, "- %s · %s · %s · %s: %s\n", hit.ID, hit.Role, status, hit.Field, oneLine(hit.Snippet))
	}
	return textResult(b.String()), out, nil
}

// ReadInput is read_turns' arguments.
type ReadInput struct {
	IDs      []string `json:"ids,omitempty" jsonschema:"node ids to quote"`
	From     string   `json:"from,omitempty" jsonschema:"first node id of a range (file order)"`
	To       string   `json:"to,omitempty" jsonschema:"last node id of the range (default: 20 nodes on)"`
	MaxBytes int      `json:"max_bytes,omitempty" jsonschema:"most bytes returned (default 32000, at most 200000)"`
	Session  string   `json:"session,omitempty" jsonschema:"an archive hit's session (search_history scope archive); default this session"`
}

// Turn is one quoted node.
type Turn struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Summary   bool   `json:"summary,omitempty"`
	CoveredBy string `json:"covered_by,omitempty"`
	Text      string `json:"text"`
}

// ReadOutput is read_turns' result.
type ReadOutput struct {
	File  string `json:"file"`
	Turns []Turn `json:"turns"`
	// Cut is set when the size bound stopped the list: the id to ask from.
	Cut string `json:"cut_at,omitempty"`
}

const defaultReadBytes, maxReadBytes, defaultRange = 32_000, 200_000, 20

// maxReadIDs bounds the distinct ids of one read_turns call.
const maxReadIDs = 1000

func (h *handlers) read(ctx context.Context, _ *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, ReadOutput, error) {
	var out ReadOutput
	if len(in.IDs) == 0 && in.From == "" {
		return errorResult(errors.New("give ids, or from (and to)")), out, nil
	}
	in.IDs = dedupe(in.IDs)
	if len(in.IDs) > maxReadIDs {
		return errorResult(fmt.Errorf("%d ids: at most %d at once", len(in.IDs), maxReadIDs)), out, nil
	}
	bound := in.MaxBytes
	if bound <= 0 {
		bound = defaultReadBytes
	}
	bound = min(bound, maxReadBytes)
	open := h.open
	if in.Session != "" {
		open = func(context.Context) (*dag.Graph, string, func(), error) { return h.openArchived(in.Session) }
	}
	g, file, done, err := open(ctx)
	if err != nil {
		return errorResult(err), out, nil
	}
	defer done()
	out.File, out.Turns = file, []Turn{}
	idx, err := selectNodes(g, in)
	if err != nil {
		return errorResult(err), out, nil
	}
	covering := coveringSummary(g)
	// The bound is on the response as sent: the text and the structured
	// turns each carry every turn's text, JSON-escaped.
	budget := bound - readOverhead - 2*jsonLen(file)
	var b strings.Builder
	for k, i := range idx {
		if err := ctx.Err(); err != nil {
			return errorResult(err), out, nil
		}
		n, err := g.S.Node(i)
		if err != nil {
			return errorResult(err), out, nil
		}
		var t strings.Builder
		audit.ReadText(&t, n)
		turn := Turn{ID: n.ID, Role: string(n.Role), Summary: n.IsSummary(), CoveredBy: covering[i], Text: strings.TrimSpace(t.String())}
		head := fmt.Sprintf("=== %s · %s", turn.ID, turn.Role)
		if turn.CoveredBy != "" {
			head += " · covered by summary " + turn.CoveredBy
		}
		fixed := turnOverhead(turn, head)
		cost := fixed + 2*jsonLen(turn.Text)
		if cost > budget && len(out.Turns) > 0 {
			out.Cut = n.ID
			fmt.Fprintf(&b, "[cut at %d bytes: ask read_turns from %q for the rest]\n", bound, n.ID)
			break
		}
		note := ""
		if cost > budget {
			turn.Text = turn.Text[:fitJSON(turn.Text, max(0, budget-fixed)/2)]
			note = "[this turn is cut at the size bound]\n"
			budget = 0
		} else {
			budget -= cost
		}
		b.WriteString(head + "\n" + turn.Text + "\n" + note)
		out.Turns = append(out.Turns, turn)
		if budget == 0 {
			if k+1 < len(idx) {
				out.Cut = g.ID(idx[k+1])
				fmt.Fprintf(&b, "[cut at %d bytes: ask read_turns from %q for the rest]\n", bound, out.Cut)
			}
			break
		}
	}
	return textResult(b.String()), out, nil
}

// selectNodes resolves ids, or the range from..to in file order.
func selectNodes(g *dag.Graph, in ReadInput) ([]int, error) {
	var idx []int
	for _, id := range in.IDs {
		i, ok := g.Lookup(id)
		if !ok {
			return nil, fmt.Errorf("no node %q in this conversation", clip(id, maxEcho))
		}
		idx = append(idx, i)
	}
	if in.From == "" {
		return idx, nil
	}
	from, ok := g.Lookup(in.From)
	if !ok {
		return nil, fmt.Errorf("no node %q in this conversation", clip(in.From, maxEcho))
	}
	to := min(g.Len()-1, from+defaultRange-1)
	if in.To != "" {
		if to, ok = g.Lookup(in.To); !ok {
			return nil, fmt.Errorf("no node %q in this conversation", clip(in.To, maxEcho))
		}
	}
	if to < from {
		return nil, fmt.Errorf("%q comes after %q", in.From, in.To)
	}
	for i := from; i <= to; i++ {
		idx = append(idx, i)
	}
	return idx, nil
}

// coveringSummary maps each node the active summary covers to its id.
func coveringSummary(g *dag.Graph) map[int]string {
	out := map[int]string{}
	a := g.ActiveSummary()
	if a < 0 {
		return out
	}
	covered, _ := g.Covered(a)
	for _, i := range covered {
		out[i] = g.ID(a)
	}
	return out
}

// StatusInput is context_status' (empty) arguments.
type StatusInput struct{}

// StatusOutput is context_status' result.
type StatusOutput struct {
	File        string `json:"file"`
	Model       string `json:"model"`
	Window      int    `json:"window"`
	InputBudget int    `json:"input_budget"`
	// Tokens is what BudgetPct measures: calibrated on the client's
	// recorded usage when Basis is "calibrated" (estimate.StatusOf).
	Tokens        int     `json:"tokens"`
	BudgetPct     float64 `json:"budget_pct"`
	Basis         string  `json:"budget_basis"`
	Compactions   int     `json:"compactions"`
	ActiveSummary string  `json:"active_summary,omitempty"`
	Nodes         int     `json:"nodes"`
}

func (h *handlers) status(ctx context.Context, _ *mcp.CallToolRequest, _ StatusInput) (*mcp.CallToolResult, StatusOutput, error) {
	var out StatusOutput
	g, file, done, err := h.open(ctx)
	if err != nil {
		return errorResult(err), out, nil
	}
	defer done()
	dir := g.S.Dir
	out.File, out.Nodes = file, g.Len()
	for i := 0; i < g.Len(); i++ {
		if g.S.IsSummary(i) {
			out.Compactions++
		}
	}
	if a := g.ActiveSummary(); a >= 0 {
		out.ActiveSummary = g.ID(a)
	}
	g.S.Close()
	so := estimate.SessionOptions{Open: h.opts.Open}
	so.Estimate.Model = h.opts.Model
	res := estimate.Session(ctx, dir, so)
	if res.Err != nil {
		return errorResult(res.Err), out, nil
	}
	// Before its first recorded request, what the project's earlier
	// session beside the transcript carried (as estimate FILE and the
	// status line say).
	projectprefix.Apply(ctx, projectprefix.Target{File: file, Session: dir}, res.Result,
		projectprefix.Options{Live: h.liveOptions(), Session: so, MemoDir: h.opts.CacheDir})
	st := estimate.StatusOf(res.Result, 0)
	out.Model, out.Window, out.InputBudget, out.Tokens, out.BudgetPct, out.Basis = st.Model, st.Window, st.InputBudget, st.Tokens, st.Pct, st.Basis
	b, _ := json.Marshal(out)
	text := fmt.Sprintf("%s: %.0f%% of the input budget (%d of %d tokens, %s; window %d), %s so far.\n%s",
		out.Model, out.BudgetPct, out.Tokens, out.InputBudget, out.Basis, out.Window, plural(out.Compactions, "compaction"), b)
	return textResult(text), out, nil
}
