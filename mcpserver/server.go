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
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
)

// Options configure the server.
type Options struct {
	Locate   Locate
	CacheDir string
	// ArchiveDir is ctxfold archive's directory: search_history's scope
	// "archive" and read_turns' session read it ("" none).
	ArchiveDir string
	Store      store.WriteOptions
	Open       store.OpenOptions
	// Model sizes context_status (else the session's).
	Model string
	// Version is ctxfold's, reported to the client.
	Version string
	// CallTimeout bounds every tool call (CallTimeout when 0).
	CallTimeout time.Duration
}

// CallTimeout is the default bound of a tool call: a search or a read
// that takes longer answers with an error saying so, and stops working.
const CallTimeout = 30 * time.Second

// Tool names, as the client shows them (Claude Code prefixes
// mcp__ctxfold__).
const (
	ToolSearch = "search_history"
	ToolRead   = "read_turns"
	ToolStatus = "context_status"
)

// New returns the server with its three tools.
func New(opts Options) *mcp.Server {
	s, _ := newServer(opts)
	return s
}

// WorkDrain bounds how long Serve waits, once the client has gone, for
// the work of calls answered at their bound: it was cancelled and stops at
// its next check, so a cache refresh it had begun ends at a commit rather
// than being cut off by the process's exit.
const WorkDrain = 10 * time.Second

// Serve runs the server on t until the client ends, then waits (at most
// WorkDrain) for the cancelled work of calls it answered at their bound.
func Serve(ctx context.Context, opts Options, t mcp.Transport) error {
	s, h := newServer(opts)
	err := s.Run(ctx, t)
	h.wait(WorkDrain)
	return err
}

func newServer(opts Options) (*mcp.Server, *handlers) {
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
	if h.opts.CallTimeout <= 0 {
		h.opts.CallTimeout = CallTimeout
	}
	mcp.AddTool(s, &mcp.Tool{Name: ToolSearch, Annotations: readOnly, Description: "Search every turn of this conversation, including turns " +
		"folded into a compaction summary. Each hit gives the node id (for read_turns), whether the model still reads it, " +
		"and the summary that covers it."}, bounded(h, h.search))
	mcp.AddTool(s, &mcp.Tool{Name: ToolRead, Annotations: readOnly, Description: "The verbatim text of turns of this conversation: given " +
		"node ids, or a range from one id to another in file order. Bounded in size; a cut result says where to go on."}, bounded(h, h.read))
	mcp.AddTool(s, &mcp.Tool{Name: ToolStatus, Annotations: readOnly, Description: "How full the context window is (calibrated on the " +
		"client's recorded usage) and how many compactions the conversation has had."}, bounded(h, h.status))
	return s, h
}

// readOnly says every tool only reads (the cache session's refresh aside):
// clients that ask before a tool with effects run these without asking
// (Factory Droid 0.215 rates an MCP tool marked readOnlyHint "low" impact,
// which `droid exec --auto low` runs; any other it rejects).
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}

// bounded runs a tool call under the call's time bound: at the bound (or
// when the client cancels the call) it answers at once, and the work,
// which checks its context, stops.
func bounded[In, Out any](h *handlers, fn mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		ctx, cancel := context.WithTimeout(ctx, h.opts.CallTimeout)
		defer cancel()
		type answer struct {
			res *mcp.CallToolResult
			out Out
			err error
		}
		done := make(chan answer, 1)
		h.work.Add(1)
		go func() {
			defer h.work.Done()
			var a answer
			defer func() {
				if p := recover(); p != nil {
					a = answer{res: errorResult(fmt.Errorf("internal error: %v", p))}
				}
				done <- a
			}()
			a.res, a.out, a.err = fn(ctx, req, in)
		}()
		var zero Out
		select {
		case a := <-done:
			if ctx.Err() != nil && (a.res == nil || a.res.IsError) {
				return timeoutResult(ctx, h.opts.CallTimeout), zero, nil
			}
			return a.res, a.out, a.err
		case <-ctx.Done():
			return timeoutResult(ctx, h.opts.CallTimeout), zero, nil
		}
	}
}

func timeoutResult(ctx context.Context, bound time.Duration) *mcp.CallToolResult {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errorResult(fmt.Errorf("gave up after %s: narrow the query (a plainer pattern, fewer ids)", bound))
	}
	return errorResult(errors.New("cancelled"))
}

type handlers struct {
	opts Options
	// work counts the calls' goroutines, which outlive a call answered at
	// its bound until they see its context cancelled (wait).
	work sync.WaitGroup
}

// wait returns once every call's work has stopped, or after bound.
func (h *handlers) wait(bound time.Duration) bool {
	done := make(chan struct{})
	go func() {
		h.work.Wait()
		close(done)
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// liveOptions are how the server reads a transcript file through its cache.
func (h *handlers) liveOptions() live.Options {
	return live.Options{CacheDir: h.opts.CacheDir, Store: h.opts.Store,
		Input: input.Options{Env: input.Env{Home: h.opts.Locate.Home, Getenv: h.opts.Locate.Getenv}}}
}

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
		entry, err = live.Open(ctx, f, h.liveOptions())
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
