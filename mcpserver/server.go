// Package mcpserver owns `ctxfold mcp` (docs/HOOKS.md): an MCP server, on
// the official Go SDK, that gives the agent recall of what its compaction
// folded. Its tools read one transcript (the session the server was
// started in) through its live cache session: search_history (every node,
// covered ones included, each hit naming the summary that covers it:
// render's search), read_turns (nodes' verbatim text, bounded) and
// context_status (estimate's calibrated occupancy, compactions so far). It
// writes nothing but the cache session ctxfold keeps for the transcript.
package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
)

// Options configure the server.
type Options struct {
	Locate   Locate
	CacheDir string
	Store    store.WriteOptions
	Open     store.OpenOptions
	// Model sizes context_status (else the session's).
	Model string
	// Version is ctxfold's, reported to the client.
	Version string
}

// Tool names, as the client shows them (Claude Code prefixes
// mcp__ctxfold__).
const (
	ToolSearch = "search_history"
	ToolRead   = "read_turns"
	ToolStatus = "context_status"
)

// New returns the server with its three tools.
func New(opts Options) *mcp.Server {
	v := opts.Version
	if v == "" {
		v = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "ctxfold", Version: v}, &mcp.ServerOptions{
		Instructions: "Recall of this conversation's history, including the turns the client's compaction folded " +
			"into a summary: search_history finds them, read_turns quotes them verbatim, context_status says how " +
			"full the context is.",
	})
	h := &handlers{opts: opts}
	mcp.AddTool(s, &mcp.Tool{Name: ToolSearch, Description: "Search every turn of this conversation, including turns " +
		"folded into a compaction summary. Each hit gives the node id (for read_turns), whether the model still reads it, " +
		"and the summary that covers it."}, h.search)
	mcp.AddTool(s, &mcp.Tool{Name: ToolRead, Description: "The verbatim text of turns of this conversation: given " +
		"node ids, or a range from one id to another in file order. Bounded in size; a cut result says where to go on."}, h.read)
	mcp.AddTool(s, &mcp.Tool{Name: ToolStatus, Description: "How full the context window is (calibrated on the " +
		"client's recorded usage) and how many compactions the conversation has had."}, h.status)
	return s
}

type handlers struct{ opts Options }

// open brings the served transcript's cache session up to date and opens
// its graph; done closes both (the cache entry is held shared while the
// graph is read, so a refresh by another process waits: docs/LIVE.md).
func (h *handlers) open(ctx context.Context) (g *dag.Graph, file string, done func(), err error) {
	dir := h.opts.Locate.Session
	var entry *live.Entry
	if dir == "" {
		f, err := h.opts.Locate.file()
		if err != nil {
			return nil, "", nil, err
		}
		entry, err = live.Open(ctx, f, live.Options{CacheDir: h.opts.CacheDir, Store: h.opts.Store})
		if err != nil {
			return nil, "", nil, err
		}
		dir, file = entry.Session, entry.File
	}
	g, err = dag.Open(dir, h.opts.Open)
	if err != nil {
		entry.Close()
		return nil, "", nil, err
	}
	if file == "" {
		file = dir
	}
	return g, file, func() { g.S.Close(); entry.Close() }, nil
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func errorResult(err error) *mcp.CallToolResult {
	r := textResult("ctxfold: " + err.Error())
	r.IsError = true
	return r
}

// oneLine collapses whitespace (snippets and ids in a hit list).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, one string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %ss", n, one)
}
