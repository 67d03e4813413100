package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/store"
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
	// of the same input writes (live re-imports then).
	Continued int `json:"-"`
	Differing int `json:"-"`
	// Checkpoint is the meta of the commit a resumable import made right
	// after the nodes planned before its resume point (Options.Resume).
	Checkpoint *store.Meta `json:"-"`
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
	tmpLock *input.TempLock
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
	case t.opts.RewindTo != nil:
		// Written afresh, the session would hold only what follows the
		// resume point.
		return nil, fmt.Errorf("%w: %s is not a session to cut back to its checkpoint", input.ErrCannotResume, t.opts.Out)
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
			t.tmpLock = input.LockTemp(dir)
		}
		c.dir = filepath.Join(t.tmpRoot, fmt.Sprint(len(t.convs)))
		if _, err := store.Init(c.dir, "", t.opts.Store); err != nil {
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
	t.tmpLock.Release()
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

// wroteNothing reports whether no conversation got a node.
func (t *target) wroteNothing() bool {
	for _, c := range t.convs {
		if c.written > 0 || c.present > 0 {
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
	t.report.Warnings = append(t.report.Warnings, store.Warning{File: file, Line: line, Msg: msg}.String())
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
			AttachedFiles: c.attached, MissingFiles: c.missing, Continued: c.continued, Differing: len(c.differ), Checkpoint: c.mark})
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	return &r
}

// RecordedWindowKey is estimate.RecordedWindowKey; the importer sits below
// estimate in the layers, so the name is repeated here and a test keeps
// the two equal.
const RecordedWindowKey = "model_context_window"

// RecordedWindowSourceKey and WindowFromClientConfig are
// estimate.RecordedWindowSourceKey and estimate.WindowFromClientConfig: a
// window the client's configuration gives the model, not the session file.
const (
	RecordedWindowSourceKey = "model_context_window_source"
	WindowFromClientConfig  = "client_config"
)
