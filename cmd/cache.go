package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

// The cache of transcript files (docs/LIVE.md, "The cache's size"): listed
// by `ctxfold cache`, pruned by `ctxfold cache prune`, and kept under
// cache-max-bytes by every command that reads a transcript file.

type cacheOptions struct {
	IO       *report.IOStreams
	JSON     bool
	CacheDir string
	// MaxBytes is the configured cap (negative: no cap).
	MaxBytes int64
	// All: prune every entry not in use, not only down to the cap.
	All bool
	Now func() time.Time
}

// cacheList is `ctxfold cache --json`.
type cacheList struct {
	CacheDir string            `json:"cache_dir"`
	MaxBytes int64             `json:"max_bytes"`
	Bytes    int64             `json:"bytes"`
	Entries  []live.CacheEntry `json:"entries"`
}

// cachePrune is `ctxfold cache prune --json`.
type cachePrune struct {
	CacheDir string `json:"cache_dir"`
	MaxBytes int64  `json:"max_bytes"`
	*live.PruneResult
}

func newCacheCmd(f *Factory, runF func(*cacheOptions) error) *cobra.Command {
	opts := &cacheOptions{IO: f.IO}
	resolve := func() error {
		opts.JSON, opts.Now = f.IO.JSON, f.Now
		var err error
		if opts.CacheDir, err = f.cacheDir(); err != nil {
			return err
		}
		opts.MaxBytes, err = f.cacheMaxBytes()
		return err
	}
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List the cache of transcript files: file, size, last use",
		Long: `List the cache sessions ctxfold keeps for the transcript files commands were
given (docs/LIVE.md), least recently used first: the transcript file, the
size on disk and when a command last used it. Status-line tail copies are
marked "tail".

The cache is kept under cache-max-bytes (default 2 GiB; CTXFOLD_CACHE_MAX_BYTES
or the config file, in bytes or with a unit: 500MiB, 2GiB; 0 turns the cap
off): after a command imports a file, the least recently used entries are
evicted until the cache fits. An entry another ctxfold is using is never
evicted. Everything in the cache is safe to delete: a file is imported again
the next time it is given.` + exitStatusHelp(""),
		Example: `  ctxfold cache
  ctxfold cache --json | jq '.entries[] | {file, bytes}'
  ctxfold cache prune          # evict down to cache-max-bytes
  ctxfold cache prune --all    # evict every entry not in use`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := resolve(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runCache(cmd.Context(), opts)
		},
	}
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Evict cache entries down to cache-max-bytes, or all with --all",
		Long: `Evict the least recently used cache entries until the cache holds at most
cache-max-bytes, or every entry with --all. Entries another ctxfold is using
are kept and listed. Only ctxfold's own copies are removed, never a
transcript file.` + exitStatusHelp(""),
		Example: `  ctxfold cache prune
  ctxfold cache prune --all --json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := resolve(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runCachePrune(cmd.Context(), opts)
		},
	}
	prune.Flags().BoolVar(&opts.All, "all", false, "evict every entry not in use")
	cmd.AddCommand(prune)
	return cmd
}

func runCache(_ context.Context, opts *cacheOptions) error {
	entries, err := live.Entries(opts.CacheDir)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []live.CacheEntry{}
	}
	var total int64
	for _, e := range entries {
		total += e.Bytes
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, cacheList{CacheDir: opts.CacheDir, MaxBytes: opts.MaxBytes, Bytes: total, Entries: entries})
	}
	out := opts.IO.Out
	for _, e := range entries {
		file := e.File
		if file == "" {
			file = "(unknown file) " + e.Dir
		}
		if e.Tail {
			file += " (tail)"
		}
		if opts.IO.StdoutTTY {
			fmt.Fprintf(out, "%9s  %s  %s\n", byteSize(e.Bytes), age(opts.Now(), e.LastUse), render.TextSafe(file))
		} else {
			fmt.Fprintf(out, "%d\t%s\t%s\n", e.Bytes, e.LastUse.UTC().Format(time.RFC3339), render.TextSafe(file))
		}
	}
	if opts.IO.StderrTTY {
		fmt.Fprintf(opts.IO.ErrOut, "ctxfold: %d entries, %s of %s in %s\n", len(entries), byteSize(total), capText(opts.MaxBytes), opts.CacheDir)
	}
	return nil
}

func runCachePrune(_ context.Context, opts *cacheOptions) error {
	limit := opts.MaxBytes
	if opts.All {
		limit = -1
	} else if limit < 0 {
		limit = -2 // no cap: nothing to evict down to
	}
	res := &live.PruneResult{Removed: []live.CacheEntry{}, InUse: []live.CacheEntry{}}
	var err error
	if limit != -2 {
		res, err = live.Prune(opts.CacheDir, limit, "")
		if err != nil {
			return err
		}
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, cachePrune{CacheDir: opts.CacheDir, MaxBytes: opts.MaxBytes, PruneResult: res})
	}
	var freed int64
	for _, e := range res.Removed {
		freed += e.Bytes
		fmt.Fprintf(opts.IO.Out, "removed\t%d\t%s\n", e.Bytes, render.TextSafe(orDir(e)))
	}
	for _, e := range res.InUse {
		fmt.Fprintf(opts.IO.Out, "in use\t%d\t%s\n", e.Bytes, render.TextSafe(orDir(e)))
	}
	if opts.IO.StderrTTY {
		fmt.Fprintf(opts.IO.ErrOut, "ctxfold: %d entries removed (%s); the cache holds %s of %s\n", len(res.Removed), byteSize(freed), byteSize(res.Bytes), capText(opts.MaxBytes))
	}
	return nil
}

func orDir(e live.CacheEntry) string {
	if e.File == "" {
		return e.Dir
	}
	return e.File
}

func capText(max int64) string {
	if max < 0 {
		return "no cap"
	}
	return byteSize(max) + " allowed"
}

// byteSize is n in binary units, one decimal.
func byteSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// age is how long ago t was, in the largest whole unit.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// cacheMaxBytes is the cache-max-bytes setting (live.DefaultMaxBytes
// unset; negative when 0 turns the cap off).
func (f *Factory) cacheMaxBytes() (int64, error) {
	v := f.Config.Get("cache-max-bytes")
	if v == nil {
		return live.DefaultMaxBytes, nil
	}
	n, err := parseBytes(fmt.Sprint(v))
	if err != nil {
		where := envName("cache-max-bytes")
		if s, ok := f.Settings["cache-max-bytes"]; ok && s.Source == SourceFile {
			where = fmt.Sprintf("config file %s: cache-max-bytes", f.ConfigFile)
		}
		return 0, &UsageError{Err: fmt.Errorf("%s: invalid value %q: %v", where, fmt.Sprint(v), err)}
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}

// parseBytes reads a size: a whole number of bytes, optionally with a
// unit (KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers
// of 1024; a bare K, M, G, T is binary).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("want a size in bytes (2147483648, 500MiB, 2GiB)")
	}
	mult := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "kb": 1e3, "m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9, "t": 1 << 40, "tib": 1 << 40, "tb": 1e12}
	m, ok := mult[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s[i:])
	}
	return int64(v * m), nil
}
