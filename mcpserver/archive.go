package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfold/ctxfold/archive"
	"github.com/ctxfold/ctxfold/dag"
)

// Scopes of search_history.
const (
	ScopeSession = "session"
	ScopeArchive = "archive"
)

// searchArchive is search_history with scope "archive": the full-text
// index of every session ctxfold archive keeps (docs/ARCHIVE.md), across
// sessions and clients; read_turns opens a hit with its session.
func (h *handlers) searchArchive(ctx context.Context, in SearchInput, limit int) (*mcp.CallToolResult, SearchOutput, error) {
	var out SearchOutput
	if in.Regexp {
		return errorResult(errors.New("scope archive takes words, \"a phrase\" or prefix*, not a regular expression")), out, nil
	}
	if h.opts.ArchiveDir == "" {
		return errorResult(errors.New("no archive directory: run ctxfold archive first")), out, nil
	}
	hits, err := archive.Search(ctx, h.opts.ArchiveDir, archive.SearchOptions{Query: in.Query, Limit: limit})
	if err != nil {
		return errorResult(err), out, nil
	}
	out.File, out.Total, out.Hits = h.opts.ArchiveDir, len(hits), []SearchHit{}
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %q in the archive %s\n", plural(len(hits), "hit"), clip(in.Query, maxEcho), h.opts.ArchiveDir)
	for _, hit := range hits {
		out.Hits = append(out.Hits, SearchHit{ID: hit.NodeID, Role: hit.Role, Status: hit.Status, Field: "text",
			Snippet: hit.Snippet, Client: hit.Client, Session: hit.Session, Time: hit.Time, Source: hit.File})
		fmt.Fprintf(&b, "- %s · %s · %s · %s · %s (read_turns with session %q): %s\n", hit.Client, hit.Time, hit.NodeID,
			hit.Role, hit.Status, hit.Session, oneLine(hit.Snippet))
	}
	return textResult(b.String()), out, nil
}

// openArchived opens an archived session an archive hit named: only a
// session directory inside the archive is served, never another path.
func (h *handlers) openArchived(session string) (g *dag.Graph, file string, done func(), err error) {
	if h.opts.ArchiveDir == "" {
		return nil, "", nil, errors.New("no archive directory: session names an archived session (search_history scope archive)")
	}
	root, err := filepath.Abs(filepath.Join(h.opts.ArchiveDir, "live"))
	if err != nil {
		return nil, "", nil, err
	}
	dir, err := filepath.Abs(session)
	if err != nil {
		return nil, "", nil, err
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil, "", nil, fmt.Errorf("%q is not an archived session (search_history scope archive names them)", clip(session, maxEcho))
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil, "", nil, fmt.Errorf("%q is not an archived session", clip(session, maxEcho))
	}
	g, err = dag.Open(dir, h.opts.Open)
	if err != nil {
		return nil, "", nil, err
	}
	return g, dir, func() { g.S.Close() }, nil
}
