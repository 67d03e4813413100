package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// Report is what an import did.
type Report struct {
	Format   string          `json:"format"`
	Files    []string        `json:"files"`
	Out      string          `json:"out"`
	Sessions []SessionReport `json:"sessions"`
	Records  []RecordReport  `json:"records"`
	Warnings []string        `json:"warnings"`
	// WarningsDropped counts warnings beyond the ones kept.
	WarningsDropped int `json:"warnings_dropped,omitempty"`
}

// SessionReport is one conversation written.
type SessionReport struct {
	Name string `json:"name"`
	Dir  string `json:"session"`
	// Nodes is how many nodes this import wrote; AlreadyPresent how many it
	// skipped because an --append target already held their id.
	Nodes          int    `json:"nodes"`
	AlreadyPresent int    `json:"already_present"`
	Head           string `json:"head"`
	Model          string `json:"model,omitempty"`
	Appended       bool   `json:"appended"`
	// MediaReferences counts the images and documents written as a sha256
	// reference instead of their bytes (a session never holds them);
	// MediaBytes is the size of what they stand for.
	MediaReferences int   `json:"media_references"`
	MediaBytes      int64 `json:"media_bytes"`
	// AttachedFiles are the files the importer found and read into this
	// conversation beside the ones given (Claude Code's sub-agent files);
	// MissingFiles the ones the input names and that were not found.
	AttachedFiles []string `json:"attached_files,omitempty"`
	MissingFiles  []string `json:"missing_files,omitempty"`
	// Continued counts the stored nodes an --append completed with a new
	// copy (grow.go) and Differing the stored ones kept although the
	// import differs: after either, the session is not what a fresh import
	// of the same input writes (transcript/live re-imports then).
	Continued int `json:"-"`
	Differing int `json:"-"`
}

// RecordReport tallies one input record type.
type RecordReport struct {
	Record   string   `json:"record"`
	Imported int      `json:"imported"`
	Merged   int      `json:"merged"`
	Skipped  int      `json:"skipped"`
	Reasons  []Reason `json:"reasons,omitempty"`
}

// Reason is why some records were merged or skipped.
type Reason struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
	Count   int    `json:"count"`
}

const maxWarnings = 200

// target implements transcript.ImportTarget.
type target struct {
	ctx     context.Context
	opts    Options
	tmpRoot string
	convs   []*conv
	names   map[string]bool
	cur     *conv
	report  Report
	records map[string]*RecordReport
	reasons map[[3]string]int
	// given maps a spooled or decompressed copy to the input it stands for.
	given map[string]string
	// seen counts the nodes received, for Options.Progress.
	seen int
}

func newTarget(ctx context.Context, opts Options) *target {
	t := &target{ctx: ctx, opts: opts, names: map[string]bool{}, records: map[string]*RecordReport{}, reasons: map[[3]string]int{}}
	t.report.Out = opts.Out
	t.report.Files = opts.Files
	if t.opts.Chunk <= 0 {
		t.opts.Chunk = DefaultChunk
	}
	return t
}

// Conversation starts the next conversation; the previous one ends here.
func (t *target) Conversation(name string) (transcript.ImportSink, error) {
	if err := t.finishCurrent(); err != nil {
		return nil, err
	}
	safe := SafeName(name)
	if safe == "" {
		safe = fmt.Sprintf("conversation-%d", len(t.convs)+1)
	}
	for base, i := safe, 2; t.names[safe]; i++ {
		safe = fmt.Sprintf("%s-%d", base, i)
	}
	t.names[safe] = true
	c := &conv{t: t, name: safe, ch: make(chan batch), done: make(chan struct{})}
	switch {
	case t.opts.Append && isSession(t.opts.Out):
		if len(t.convs) > 0 {
			return nil, fmt.Errorf("%s is one session, but the input holds several conversations; give -o a parent directory", t.opts.Out)
		}
		c.dir, c.inPlace = t.opts.Out, true
	case t.opts.Append && isSession(filepath.Join(t.opts.Out, safe)):
		c.dir, c.inPlace = filepath.Join(t.opts.Out, safe), true
	default:
		if t.tmpRoot == "" {
			parent := filepath.Dir(filepath.Clean(t.opts.Out))
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return nil, err
			}
			dir, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(t.opts.Out))+".import-")
			if err != nil {
				return nil, err
			}
			t.tmpRoot = dir
		}
		c.dir = filepath.Join(t.tmpRoot, fmt.Sprint(len(t.convs)))
		if _, err := transcript.Init(c.dir, "", t.opts.Store); err != nil {
			return nil, err
		}
	}
	t.convs = append(t.convs, c)
	t.cur = c
	go c.run()
	return c, nil
}

func (t *target) finishCurrent() error {
	if t.cur == nil {
		return nil
	}
	c := t.cur
	t.cur = nil
	return c.finish()
}

func (t *target) abortCurrent() {
	if c := t.cur; c != nil && !c.finished {
		t.cur = nil
		c.finished = true
		close(c.ch)
		<-c.done
	}
}

// place renames the finished temporary sessions into Out.
func (t *target) place() error {
	var pending []*conv
	for _, c := range t.convs {
		if !c.inPlace {
			pending = append(pending, c)
		}
	}
	if len(t.convs) == 0 {
		return fmt.Errorf("%s: no conversation found", t.opts.Files[0])
	}
	if len(t.convs) == 1 && len(pending) == 1 {
		c := pending[0]
		if err := vacate(t.opts.Out); err != nil {
			return err
		}
		if err := os.Rename(c.dir, t.opts.Out); err != nil {
			return err
		}
		c.dir = t.opts.Out
		return nil
	}
	if st, err := os.Stat(t.opts.Out); err == nil && !st.IsDir() {
		return fmt.Errorf("%s: exists and is not a directory", t.opts.Out)
	}
	for _, c := range pending {
		dest := filepath.Join(t.opts.Out, c.name)
		if _, err := os.Lstat(dest); err == nil {
			if isSession(dest) {
				return &ExistsError{Dir: dest}
			}
			return fmt.Errorf("%s: exists; refusing to overwrite it", dest)
		}
	}
	if err := os.MkdirAll(t.opts.Out, 0o755); err != nil {
		return err
	}
	for _, c := range pending {
		dest := filepath.Join(t.opts.Out, c.name)
		if err := os.Rename(c.dir, dest); err != nil {
			return err
		}
		c.dir = dest
	}
	return nil
}

// vacate makes room for a single session at dir: an absent or empty
// directory is fine; anything else is refused.
func vacate(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: exists and is not a directory", dir)
	}
	if isSession(dir) {
		return &ExistsError{Dir: dir}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s: exists and is not empty; refusing to write a session into it", dir)
	}
	return os.Remove(dir)
}

func (t *target) cleanup() {
	if t.tmpRoot != "" {
		os.RemoveAll(t.tmpRoot)
	}
}

func (t *target) count(record, outcome, reason string) {
	r := t.records[record]
	if r == nil {
		r = &RecordReport{Record: record}
		t.records[record] = r
	}
	switch outcome {
	case transcript.OutcomeImported:
		r.Imported++
	case transcript.OutcomeMerged:
		r.Merged++
	default:
		outcome = transcript.OutcomeSkipped
		r.Skipped++
	}
	if reason != "" && outcome != transcript.OutcomeImported {
		t.reasons[[3]string{record, outcome, reason}]++
	}
}

// importedNothing reports that no input record became or joined a node.
func (t *target) importedNothing() bool {
	for _, r := range t.records {
		if r.Imported > 0 || r.Merged > 0 {
			return false
		}
	}
	return true
}

func (t *target) warn(file string, line int, msg string) {
	if len(t.report.Warnings) >= maxWarnings {
		t.report.WarningsDropped++
		return
	}
	t.report.Warnings = append(t.report.Warnings, transcript.Warning{File: file, Line: line, Msg: msg}.String())
}

func (t *target) finalReport() *Report {
	r := t.report
	for k, n := range t.reasons {
		rec := t.records[k[0]]
		rec.Reasons = append(rec.Reasons, Reason{Outcome: k[1], Reason: k[2], Count: n})
	}
	for _, rec := range t.records {
		sort.Slice(rec.Reasons, func(i, j int) bool {
			a, b := rec.Reasons[i], rec.Reasons[j]
			if a.Outcome != b.Outcome {
				return a.Outcome < b.Outcome
			}
			return a.Reason < b.Reason
		})
		r.Records = append(r.Records, *rec)
	}
	sort.Slice(r.Records, func(i, j int) bool { return r.Records[i].Record < r.Records[j].Record })
	for _, c := range t.convs {
		r.Sessions = append(r.Sessions, SessionReport{Name: c.name, Dir: c.dir, Nodes: c.written, AlreadyPresent: c.present,
			Head: c.finalHead, Model: c.model, Appended: c.inPlace, MediaReferences: int(c.mediaRefs), MediaBytes: c.mediaBytes,
			AttachedFiles: c.attached, MissingFiles: c.missing, Continued: c.continued, Differing: len(c.differ)})
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	return &r
}

// batch is one append, or (final) the conversation's end.
type batch struct {
	nodes []transcript.Node
	root  bool
	final bool
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
	root    bool
	ch      chan batch
	done    chan struct{}
	err     error
	// head follows the append rule (docs/FORMAT.md §1) over this conversation's
	// nodes; setHead is the vendor's explicit HEAD.
	head, setHead, model string
	// window is the context window the client recorded with its latest
	// request (usage.context_window), 0 when none; it becomes
	// session.json's model_context_window, which beats the model table.
	window           int64
	finalHead        string
	written, present int
	finished         bool
	// warnings of the store, handed to the report once the writer is done.
	warnings []transcript.Warning
	// differ lists ids already present whose stored node differs.
	differ []string
	// follow maps the id of a stored node to the id of the copy standing
	// for it on the live branch (grow.go); continued counts copies written.
	follow    map[string]string
	continued int
	// media counts the references written in place of media bytes.
	mediaRefs, mediaBytes int64
	attached, missing     []string
}

// remapCovers names, in a summary's covers_ids, the copies standing for
// the nodes this --append replaced on the live branch.
func (c *conv) remapCovers(n *transcript.Node) {
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
	warnings, err := transcript.Update(c.t.ctx, c.dir, c.t.opts.Store, func(tx *transcript.Tx) error {
		for b := range c.ch {
			if b.final {
				return c.commitEnd(tx)
			}
			nodes := b.nodes
			if c.inPlace {
				nodes = c.dropPresent(tx, nodes)
			}
			if len(nodes) == 0 {
				continue
			}
			c.countMedia(nodes)
			if _, err := tx.Append(nodes, transcript.AppendOptions{RootFirst: b.root, AsRecorded: true}); err != nil {
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
func (c *conv) dropPresent(tx *transcript.Tx, nodes []transcript.Node) []transcript.Node {
	out := make([]transcript.Node, 0, len(nodes))
	s := tx.Session()
	for _, n := range nodes {
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
			c.continued++
		}
	}
	return out
}

func (c *conv) commitEnd(tx *transcript.Tx) error {
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
	return tx.UpdateMeta(func(m *transcript.Meta) {
		if c.model != "" {
			m.Model = c.model
		}
		if c.window > 0 {
			m.Extra[RecordedWindowKey] = json.RawMessage(fmt.Sprint(c.window))
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

// Node adds the next node, flushing a chunk when it is full or when a new
// root starts (tx.Append chains a node without predecessor to the one
// before it, so a root must open its own append).
func (c *conv) Node(n transcript.Node) error {
	if c.finished {
		return errors.New("import: node after the conversation ended")
	}
	if n.ID == "" {
		n.ID = transcript.NewID(&n)
	}
	if c.t.opts.Progress != nil {
		if c.t.seen++; c.t.seen%1024 == 0 {
			c.t.opts.Progress(1024)
		}
	}
	isRoot := n.Predecessor == "" && !n.IsSummary()
	if isRoot && len(c.chunk) > 0 {
		if err := c.flush(); err != nil {
			return err
		}
	}
	if len(c.chunk) == 0 {
		c.root = isRoot
	}
	if !n.IsSummary() && n.Caller == "" && n.Predecessor == c.head {
		c.head = n.ID
	}
	if n.Usage != nil && n.Usage.ContextWindow() > 0 && n.Caller == "" {
		c.window = n.Usage.ContextWindow()
	}
	c.chunk = append(c.chunk, n)
	if len(c.chunk) >= c.t.opts.Chunk {
		return c.flush()
	}
	return nil
}

func (c *conv) flush() error {
	if len(c.chunk) == 0 {
		return nil
	}
	b := batch{nodes: c.chunk, root: c.root}
	c.chunk = nil
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
func (c *conv) Count(record, outcome, reason string) {
	c.t.count(record, outcome, reason)
}
func (c *conv) Warn(file string, line int, msg string) { c.t.warn(file, line, msg) }

// RecordedWindowKey is estimate.RecordedWindowKey; the importer sits below
// estimate in the layers, so the name is repeated here and a test keeps
// the two equal.
const RecordedWindowKey = "model_context_window"
