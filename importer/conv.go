// conv: the sink of one conversation and the goroutine that writes it,
// apart from target, which opens conversations, places their sessions and
// collects the report.

package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// batch is one append, or (final) the conversation's end.
type batch struct {
	nodes []transcript.Node
	// roots[i]: node i starts a chain of its own (no predecessor, not a
	// summary), so the store does not chain it to the node before it.
	roots []bool
	final bool
	// checkpoint: record the session's meta as committed so far, with
	// the model and the window the producer had seen when it asked (read
	// here, not from conv, which the producer goes on writing).
	checkpoint bool
	model      string
	window     int64
	fromConfig bool
}

// conv is the sink of one conversation. A goroutine holds the session's
// write transaction for the whole conversation, so chunked appends extend
// one snapshot in place and the import stays linear.
type conv struct {
	t       *target
	name    string
	dir     string
	inPlace bool
	chunk   []transcript.Node
	roots   []bool
	ch      chan batch
	done    chan struct{}
	err     error
	// head follows the append rule (docs/FORMAT.md §1) over this conversation's
	// nodes; setHead is the vendor's explicit HEAD.
	head, setHead, model string
	// window is the context window the client recorded with its latest
	// request (usage.context_window), 0 when none; it becomes
	// session.json's model_context_window, which beats the model table.
	window int64
	// cfgWindow is the window the client's configuration gives the
	// model (transcript.WindowReporter); window beats it.
	cfgWindow        int64
	finalHead        string
	written, present int
	finished         bool
	// warnings of the store, handed to the report once the writer is done.
	warnings []store.Warning
	// differ lists ids already present whose stored node differs.
	differ []string
	// follow maps the id of a stored node to the id of the copy standing
	// for it on the live branch (grow.go); continued counts copies written.
	follow    map[string]string
	continued int
	// media counts the references written in place of media bytes.
	mediaRefs, mediaBytes int64
	attached, missing     []string
	// mark is the meta of the commit a Checkpoint asked for.
	mark *store.Meta
}

// remapCovers names, in a summary's covers_ids, the copies standing for
// the nodes this --append replaced on the live branch.
func (c *conv) remapCovers(n *transcript.Node) {
	if sp, ok := n.CoversSpan(); ok {
		// A span's chain runs through the copies from its last node's.
		first, okF := c.follow[sp.First]
		last, okL := c.follow[sp.Last]
		if okF {
			sp.First = first
		}
		if okL {
			sp.Last = last
		}
		if okF || okL {
			n.WithCoverSpan(sp)
		}
		return
	}
	covers := n.CoversIDs()
	var out []string
	changed := false
	for _, id := range covers {
		if f, ok := c.follow[id]; ok {
			out = append(out, f)
			changed = true
			continue
		}
		out = append(out, id)
	}
	if changed {
		n.Metadata = maps.Clone(n.Metadata)
		n.SetMeta("covers_ids", out)
	}
}

func (c *conv) run() {
	defer close(c.done)
	update := store.Update
	if to := c.t.opts.RewindTo; to != nil && c.inPlace {
		update = func(ctx context.Context, dir string, opts store.WriteOptions, fn func(tx *store.Tx) error) ([]store.Warning, error) {
			// Anything that keeps the cut session from being ready for
			// the append — a refused rewind, a session that no longer
			// reads — is a resume point that no longer applies: the
			// caller imports afresh.
			ready := false
			w, err := store.UpdateFrom(ctx, dir, *to, opts, func(tx *store.Tx) error {
				ready = true
				return fn(tx)
			})
			var re *store.RewindError
			switch {
			case errors.As(err, &re):
				err = fmt.Errorf("%w: %v", input.ErrCannotResume, re.Err)
			case err != nil && !ready && ctx.Err() == nil:
				err = fmt.Errorf("%w: %v", input.ErrCannotResume, err)
			}
			return w, err
		}
	}
	warnings, err := update(c.t.ctx, c.dir, c.t.opts.Store, func(tx *store.Tx) error {
		for b := range c.ch {
			if b.final {
				return c.commitEnd(tx)
			}
			if b.checkpoint {
				m := tx.Session().Meta
				m.Extra = maps.Clone(m.Extra)
				if m.NodesBytes != nil {
					n := *m.NodesBytes
					m.NodesBytes = &n
				}
				// The checkpoint is what a resumed import rewinds to: it
				// carries the model and the window recorded so far, which
				// the nodes after it may not repeat (a fresh import's
				// commitEnd writes them from every node).
				if b.model != "" {
					m.Model = b.model
				}
				if b.window > 0 {
					if m.Extra == nil {
						m.Extra = map[string]json.RawMessage{}
					}
					setWindow(m.Extra, b.window, b.fromConfig)
				}
				c.mark = &m
				tx.SnapshotAtCheckpoint()
				continue
			}
			nodes, roots := b.nodes, b.roots
			if c.inPlace {
				nodes, roots = c.dropPresent(tx, nodes, roots)
			}
			if len(nodes) == 0 {
				continue
			}
			c.countMedia(nodes)
			if _, err := tx.Append(nodes, store.AppendOptions{Roots: roots, AsRecorded: true}); err != nil {
				return fmt.Errorf("%s: %w", c.label(), err)
			}
			c.written += len(nodes)
		}
		return nil
	})
	c.warnings = warnings
	c.err = err
}

// countMedia tallies the blocks that reference media by digest: the
// importers keep a sha256 and the size, never the bytes (input.Image), and
// the report says how much was left out.
func (c *conv) countMedia(nodes []transcript.Node) {
	for i := range nodes {
		for _, b := range nodes[i].Content.Blocks {
			if !strings.HasPrefix(b.Source, "sha256:") {
				continue
			}
			c.mediaRefs++
			var n int64
			if json.Unmarshal(b.Extra["bytes"], &n) == nil {
				c.mediaBytes += n
			}
		}
	}
}

// AttachedFile implements transcript.FileReporter.
func (c *conv) AttachedFile(path string) { c.attached = append(c.attached, path) }

// MissingFile implements transcript.FileReporter.
func (c *conv) MissingFile(path string) { c.missing = append(c.missing, path) }

func (c *conv) label() string {
	if c.inPlace {
		return c.dir
	}
	return "conversation " + c.name
}

// dropPresent skips nodes an --append target already holds: re-importing
// a log that has grown adds only what is new. A stored node that the
// import extends (the first import ended inside a streamed request) or
// places after another node gets a new copy on the live branch (grow.go);
// one that differs otherwise (a request that gained its usage since) is
// kept as stored, and reported. New nodes that follow a replaced node
// follow its copy.
func (c *conv) dropPresent(tx *store.Tx, nodes []transcript.Node, roots []bool) ([]transcript.Node, []bool) {
	out := make([]transcript.Node, 0, len(nodes))
	outRoots := make([]bool, 0, len(nodes))
	s := tx.Session()
	for i, n := range nodes {
		if f, ok := c.follow[n.Predecessor]; ok {
			n.Predecessor = f
		}
		if f, ok := c.follow[n.Caller]; ok {
			n.Caller = f
		}
		if n.IsSummary() && len(c.follow) > 0 {
			c.remapCovers(&n)
		}
		if _, ok := s.Lookup(n.ID); !ok || n.ID == "" {
			out = append(out, n)
			outRoots = append(outRoots, roots[i])
			continue
		}
		c.present++
		g := continuation(s, &n)
		if g.differs {
			c.differ = append(c.differ, n.ID)
		}
		if g.follow != "" {
			if c.follow == nil {
				c.follow = map[string]string{}
			}
			c.follow[n.ID] = g.follow
		}
		if g.node != nil {
			out = append(out, *g.node)
			outRoots = append(outRoots, g.node.Predecessor == "" && !g.node.IsSummary())
			c.continued++
		}
	}
	return out, outRoots
}

func (c *conv) commitEnd(tx *store.Tx) error {
	head := c.setHead
	if head == "" {
		head = c.head
	}
	if f, ok := c.follow[head]; ok {
		head = f
	}
	if head != "" {
		if _, ok := tx.Session().Lookup(head); !ok {
			return fmt.Errorf("%s: HEAD %q names no imported node", c.label(), head)
		}
		if err := tx.SetHead(head); err != nil {
			return fmt.Errorf("%s: %w", c.label(), err)
		}
	}
	c.finalHead = tx.Session().Meta.Head
	format, files := c.t.report.Format, c.t.opts.Files
	return tx.UpdateMeta(func(m *store.Meta) {
		if c.model != "" {
			m.Model = c.model
		}
		if w, cfg := c.recordedWindow(); w > 0 {
			setWindow(m.Extra, w, cfg)
		}
		names := make([]string, len(files))
		for i, f := range files {
			if g, ok := c.t.given[f]; ok {
				f = g
			}
			names[i] = filepath.Base(f)
		}
		raw, _ := json.Marshal(map[string]any{"format": format, "files": names})
		m.Extra["imported_from"] = raw
	})
}

func (c *conv) send(b batch) error {
	select {
	case c.ch <- b:
		return nil
	case <-c.done:
		if c.err != nil {
			return c.err
		}
		return errors.New("import: conversation already finished")
	}
}

// Node adds the next node, flushing a chunk when it is full. A root is
// marked as one in the chunk's roots (tx.Append would otherwise chain a
// node without predecessor to the one before it), so a session of many
// roots still commits once per chunk, not once per root.
func (c *conv) Node(n transcript.Node) error {
	if c.finished {
		return errors.New("import: node after the conversation ended")
	}
	if n.ID == "" {
		n.ID = store.NewID(&n)
	}
	if c.t.opts.Progress != nil {
		if c.t.seen++; c.t.seen%1024 == 0 {
			c.t.opts.Progress(1024)
		}
	}
	isRoot := n.Predecessor == "" && !n.IsSummary()
	if !n.IsSummary() && n.Caller == "" && n.Predecessor == c.head {
		c.head = n.ID
	}
	if n.Usage != nil && n.Usage.ContextWindow() > 0 && n.Caller == "" {
		c.window = n.Usage.ContextWindow()
	}
	c.chunk = append(c.chunk, n)
	c.roots = append(c.roots, isRoot)
	if len(c.chunk) >= c.t.opts.Chunk {
		return c.flush()
	}
	return nil
}

// Checkpoint implements claudecode.Checkpointer: what the conversation
// has handed over so far is committed, and that commit's meta kept for
// the report (a resumable import, Options.Resume).
func (c *conv) Checkpoint() error {
	if err := c.flush(); err != nil {
		return err
	}
	w, cfg := c.recordedWindow()
	return c.send(batch{checkpoint: true, model: c.model, window: w, fromConfig: cfg})
}

func (c *conv) flush() error {
	if len(c.chunk) == 0 {
		return nil
	}
	b := batch{nodes: c.chunk, roots: c.roots}
	c.chunk, c.roots = nil, nil
	return c.send(b)
}

func (c *conv) finish() error {
	if c.finished {
		return c.err
	}
	c.finished = true
	err := c.flush()
	if err == nil {
		err = c.send(batch{final: true})
	}
	close(c.ch)
	<-c.done
	for _, w := range c.warnings {
		c.t.warn(w.File, w.Line, w.Msg)
	}
	if c.continued > 0 {
		c.t.warn(c.dir, 0, fmt.Sprintf("%d node(s) stored by an earlier import were cut short (it ended inside a streamed request) or now follow another node; their full versions were appended as new copies (id~N, metadata.import_replaces), the stored ones kept off the branch", c.continued))
	}
	if n := len(c.differ); n > 0 {
		c.t.warn(c.dir, 0, fmt.Sprintf("%d node(s) already in the session differ from the import and were kept as stored (first %q)", n, c.differ[0]))
	}
	if c.err != nil {
		return c.err
	}
	return err
}

func (c *conv) SetHead(id string)     { c.setHead = id }
func (c *conv) SetModel(model string) { c.model = model }

// SetConfiguredWindow implements transcript.WindowReporter.
func (c *conv) SetConfiguredWindow(tokens int64) {
	if tokens > 0 {
		c.cfgWindow = tokens
	}
}

// recordedWindow is the window session.json records: the session file's
// own, else its client's configuration's (fromConfig).
func (c *conv) recordedWindow() (w int64, fromConfig bool) {
	if c.window > 0 {
		return c.window, false
	}
	return c.cfgWindow, c.cfgWindow > 0
}

// setWindow records w in session.json, and where it came from when it is
// the client's configuration rather than the session file
// (RecordedWindowSourceKey), so estimate says so.
func setWindow(extra map[string]json.RawMessage, w int64, fromConfig bool) {
	extra[RecordedWindowKey] = json.RawMessage(fmt.Sprint(w))
	if fromConfig {
		extra[RecordedWindowSourceKey] = json.RawMessage(`"` + WindowFromClientConfig + `"`)
	} else {
		delete(extra, RecordedWindowSourceKey)
	}
}
func (c *conv) Count(record, outcome, reason string) {
	c.t.count(record, outcome, reason)
}
func (c *conv) Warn(file string, line int, msg string) { c.t.warn(file, line, msg) }
