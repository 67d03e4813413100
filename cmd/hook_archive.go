package cmd

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/archive"
	"github.com/ctxfold/ctxfold/importer"
)

// hookArchive fills the archive run of hook --archive: the default
// archive, the options 'ctxfold archive' would use.
func (f *Factory) hookArchive(opts *hookOptions) error {
	ao := &archiveOptions{IO: f.IO}
	if err := f.resolveArchive(ao); err != nil {
		return err
	}
	opts.Archive = &ao.Run
	return nil
}

// archiveShare is the part of the hook's time left that archiving may
// take: the rest is the hook's answer's.
const archiveShare = 0.8

// archiveTranscript keeps the hook's transcript in the archive: only that
// file, found among its client's sessions (importer.Find: a walk of the
// client's folders, no other file hashed). It never fails the hook: what
// goes wrong is logged to hook.log, and a run cut short by the deadline
// loses nothing (the next run completes it, docs/ARCHIVE.md).
func archiveTranscript(ctx context.Context, opts *hookOptions, file string) {
	run := *opts.Archive
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	run.Only = []string{file}
	run.Clients = archiveClientOf(opts.Client)
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(float64(time.Until(dl))*archiveShare))
		defer cancel()
	}
	c, errs, err := archive.Run(ctx, run)
	for _, e := range errs {
		appendCacheLog(opts.CacheDir, "hook.log", fmt.Errorf("hook: archive: %w", e))
	}
	if err != nil {
		appendCacheLog(opts.CacheDir, "hook.log", fmt.Errorf("hook: archive %s: %w", file, err))
		return
	}
	appendCacheLog(opts.CacheDir, "hook.log", fmt.Errorf("info: archived %s into %s: %d new, %d grown, %d unchanged, %d nodes indexed",
		file, run.Dir, c.New, c.Grown, c.Unchanged, c.Indexed))
}

// archiveClientOf is the importer's client of the hook's --client
// ("Claude Code" → claude-code), nil (every client) for one it does not
// name.
func archiveClientOf(client string) []string {
	key := func(s string) string {
		return strings.ToLower(strings.NewReplacer(" ", "", "-", "", "_", "").Replace(s))
	}
	for _, name := range importer.Finders() {
		if key(name) == key(client) || strings.HasPrefix(key(client), key(name)) {
			return []string{name}
		}
	}
	return nil
}
