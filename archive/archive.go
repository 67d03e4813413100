// Package archive keeps every session of every client ctxfold can find on
// this machine, and a full-text index over them (docs/ARCHIVE.md). The
// archive is a live cache rooted at the archive directory with
// live.Options.Archive set: a grown transcript costs its new bytes, an
// unchanged one a stat and a hash, a rewritten one a fresh session beside
// the old one (versions/N), so nothing the archive held is ever dropped,
// not even when the client deletes its file. The package owns the run
// over importer.Find's sessions, the archive's lock and its index
// (index.go, SQLite FTS5); it must not write anywhere but the archive
// directory, and it decides neither what the model reads nor where a hit
// stands (render.Classifier does).
package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/store"
)

// How a run treated one found session.
const (
	New       = "new"
	Grown     = "grown"
	Unchanged = "unchanged"
	Rewritten = "rewritten"
	Failed    = "failed"
)

// Options say what to archive and where.
type Options struct {
	// Dir is the archive's root (DefaultDir when "").
	Dir string
	// Env is where the clients' sessions are looked for.
	Env input.Env
	// Clients limits the run to these importer format names (all the
	// registry can find when empty).
	Clients []string
	// Only, when set, limits the run to these transcript files among the
	// ones found (a hook archives the transcript it was called for: a
	// walk of the clients' folders, no hash of the others). A file not
	// found is an error in errs.
	Only []string
	// Live carries the store and input options of each refresh; its
	// CacheDir and Archive are set by Run.
	Live live.Options
	// Reindex rebuilds the index from the archive alone after the run.
	Reindex bool
	// Progress, when set, is told of each session as it is done.
	Progress func(done, total int, f input.Found, how string)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Counts is what one run did (the --json line).
type Counts struct {
	Files     int   `json:"files"`
	New       int   `json:"new"`
	Grown     int   `json:"grown"`
	Unchanged int   `json:"unchanged"`
	Rewritten int   `json:"rewritten"`
	Failed    int   `json:"failed"`
	Bytes     int64 `json:"bytes"`
	// Indexed is how many nodes were added to the index.
	Indexed   int     `json:"indexed_nodes"`
	Reindexed bool    `json:"reindexed"`
	Seconds   float64 `json:"seconds"`
}

// Origin is what the archive keeps of where an entry came from
// (origin.json in the entry's directory): the index is rebuilt from it.
type Origin struct {
	Client    string `json:"client"`
	File      string `json:"file"`
	SessionID string `json:"session_id,omitempty"`
	Project   string `json:"project,omitempty"`
}

// originFile is an entry's Origin.
const originFile = "origin.json"

// DefaultDir is $XDG_DATA_HOME/ctxfold/archive, else
// ~/.local/share/ctxfold/archive: data, never the cache (which may be
// pruned).
func DefaultDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ctxfold", "archive"), nil
	}
	if home := getenv("HOME"); home != "" && filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "share", "ctxfold", "archive"), nil
	}
	return "", errors.New("no archive directory: set XDG_DATA_HOME or HOME, or give --dir")
}

// Run brings the archive up to every session the clients keep, under the
// archive's lock, and adds what it archived to the index. A session that
// cannot be read is reported in errs and the others are still archived.
func Run(ctx context.Context, opts Options) (c Counts, errs []error, err error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return c, nil, fmt.Errorf("archive: %w", err)
	}
	unlock, err := Lock(ctx, opts.Dir)
	if err != nil {
		return c, nil, err
	}
	defer unlock()
	var found []input.Found
	clients := opts.Clients
	if len(clients) == 0 {
		clients = []string{""}
	}
	for _, client := range clients {
		got, ferrs := importer.Find(opts.Env, client)
		found = append(found, got...)
		errs = append(errs, ferrs...)
	}
	if opts.Only != nil {
		found, errs = only(found, opts.Only, errs)
	}
	idx, rebuilt, err := OpenIndex(opts.Dir, opts.Reindex)
	if err != nil {
		return c, errs, err
	}
	defer idx.Close()
	c.Reindexed = rebuilt
	lopts := opts.Live
	lopts.CacheDir, lopts.Archive = opts.Dir, true
	jobs, wait := startIndexer(ctx, idx)
	for i, f := range found {
		if ctx.Err() != nil {
			break
		}
		how, job, err := keep(ctx, f, lopts, &c)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.File, err))
		} else {
			jobs <- job
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(found), f, how)
		}
	}
	close(jobs)
	n, ierrs := wait()
	c.Indexed = n + idx.Rebuilt
	errs = append(errs, ierrs...)
	if err := ctx.Err(); err != nil {
		return c, errs, err
	}
	c.Files = len(found)
	c.Seconds = now().Sub(start).Seconds()
	return c, errs, nil
}

// only keeps the found sessions of the given files; a file none is of is
// an error.
func only(found []input.Found, files []string, errs []error) ([]input.Found, []error) {
	want := map[string]bool{}
	for _, f := range files {
		want[filepath.Clean(f)] = false
	}
	var kept []input.Found
	for _, f := range found {
		if _, ok := want[filepath.Clean(f.File)]; ok {
			kept = append(kept, f)
			want[filepath.Clean(f.File)] = true
		}
	}
	for _, f := range files {
		if !want[filepath.Clean(f)] {
			errs = append(errs, fmt.Errorf("%s: not a transcript of the clients' default folders (docs/ARCHIVE.md): not archived", f))
			want[filepath.Clean(f)] = true
		}
	}
	return kept, errs
}

// indexJob is one archived entry to index, held (e) until it is.
type indexJob struct {
	e     *live.Entry
	entry string
	o     Origin
}

// startIndexer indexes the entries Run hands it on a goroutine of its
// own, so that one session's import overlaps the indexing of the one
// before (the two cost about the same; the index has one writer). wait
// returns the nodes it indexed and the errors.
func startIndexer(ctx context.Context, idx *Index) (chan<- indexJob, func() (int, []error)) {
	jobs := make(chan indexJob, 1)
	var n int
	var errs []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for j := range jobs {
			k, err := idx.UpdateEntry(ctx, j.entry, j.o)
			j.e.Close()
			n += k
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", j.o.File, err))
			}
		}
	}()
	return jobs, func() (int, []error) { <-done; return n, errs }
}

// keep archives one found session; it says how the session was treated
// and hands back the entry, held, to index.
func keep(ctx context.Context, f input.Found, lopts live.Options, c *Counts) (string, indexJob, error) {
	lopts.Input.SessionID = f.SessionID
	e, err := live.Open(ctx, f.File, lopts)
	if err != nil {
		c.Failed++
		return Failed, indexJob{}, err
	}
	entry := filepath.Dir(e.Session)
	how := Unchanged
	switch {
	case e.Update == live.Appended:
		how = Grown
	case e.Update == live.Fresh && hasVersions(entry):
		how = Rewritten
	case e.Update == live.Fresh:
		how = New
	}
	c.Bytes += e.ParsedBytes
	switch how {
	case New:
		c.New++
	case Grown:
		c.Grown++
	case Rewritten:
		c.Rewritten++
	default:
		c.Unchanged++
	}
	o := Origin{Client: f.Client, File: e.File, SessionID: f.SessionID, Project: f.Project}
	if err := writeOrigin(entry, o); err != nil {
		e.Close()
		return how, indexJob{}, err
	}
	return how, indexJob{e: e, entry: entry, o: o}, nil
}

func hasVersions(entry string) bool {
	ds, err := os.ReadDir(live.VersionsDir(entry))
	return err == nil && len(ds) > 0
}

// writeOrigin writes origin.json unless it already says o.
func writeOrigin(entry string, o Origin) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	p := filepath.Join(entry, originFile)
	if old, err := store.ReadCacheFile(p, 1<<20); err == nil && string(old) == string(b) {
		return nil
	}
	tmp, err := os.CreateTemp(entry, ".origin-*")
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("archive: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("archive: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	return os.Rename(tmp.Name(), p)
}

// readOrigin reads an entry's origin.json.
func readOrigin(entry string) (Origin, bool) {
	b, err := store.ReadCacheFile(filepath.Join(entry, originFile), 1<<20)
	if err != nil {
		return Origin{}, false
	}
	var o Origin
	if json.Unmarshal(b, &o) != nil || o.File == "" {
		return Origin{}, false
	}
	return o, true
}

// Lock takes the archive's lock (the file lock in Dir), waiting for
// another run to end: runs from cron and hooks may overlap, and the
// second then finds the first's work done. It returns the release.
func Lock(ctx context.Context, dir string) (func(), error) {
	f, err := osfile.OpenNoFollow(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	for {
		err := osfile.TryLock(f, osfile.Exclusive)
		if err == nil {
			break
		}
		if !osfile.IsLockBusy(err) {
			f.Close()
			return nil, fmt.Errorf("archive: lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, &BusyError{Dir: dir, Holder: holder(f)}
		case <-time.After(50 * time.Millisecond):
		}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}

func holder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	return string(b[:n])
}

// BusyError is another archive run still holding the lock when the
// caller gave up waiting.
type BusyError struct {
	Dir, Holder string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("archive %s is locked by another run (pid %s)", e.Dir, trimNL(e.Holder))
}

func trimNL(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == 0) {
		s = s[:len(s)-1]
	}
	return s
}
