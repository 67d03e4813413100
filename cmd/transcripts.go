package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
)

// expandArgs turns the read-only commands' arguments (estimate, verify,
// audit) into one argument per session or transcript file:
//
//   - a ctxfold session directory (it holds session.json) stays as it is;
//   - any other directory — a client's folder such as
//     ~/.claude/projects/<project>/ or ~/.codex/sessions/ — stands for the
//     transcripts under it (transcriptsIn), each measured on its own
//     through its cache session. Nothing is ever written into such a folder
//     (no hint to `ctxfold init` it);
//   - an argument that does not exist but holds a glob pattern (quoted, so
//     the shell left it) is expanded, sorted; a pattern that matches
//     nothing is an error.
//
// many is true when a folder or a pattern was expanded, or when several
// arguments include a transcript file: each file is then opened in its own
// parallel run, an unreadable one is reported and the others go on, and a
// summary line ends the text output. Several session directories alone
// keep the plain fan-out.
func expandArgs(args []string) (out []string, many bool, err error) {
	for _, a := range args {
		st, statErr := os.Stat(a)
		switch {
		case statErr == nil && st.IsDir() && !isSessionDir(a):
			files, err := transcriptsIn(a)
			if err != nil {
				return nil, false, err
			}
			if len(files) == 0 {
				return nil, false, fmt.Errorf("%s: neither a ctxfold session nor a folder holding transcripts (*.jsonl)", a)
			}
			out = append(out, files...)
			many = true
		case statErr != nil && errors.Is(statErr, fs.ErrNotExist) && strings.ContainsAny(a, "*?["):
			matches, err := filepath.Glob(a)
			if err != nil {
				return nil, false, fmt.Errorf("%s: %w", a, err)
			}
			if len(matches) == 0 {
				return nil, false, fmt.Errorf("%s: no file matches the pattern", a)
			}
			sort.Strings(matches)
			out = append(out, matches...)
			many = true
		default:
			out = append(out, a)
		}
	}
	if !many && len(out) > 1 {
		for _, a := range out {
			many = many || live.IsTranscriptFile(a)
		}
	}
	return out, many, nil
}

func isSessionDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, store.MetaFile))
	return err == nil
}

// transcriptsIn lists the transcripts under a client's folder, sorted: the
// regular *.jsonl files (Claude Code sessions, Codex rollouts) and Gemini
// CLI's chats/session-*.json, at any depth. Claude Code's sub-agent files
// (agent-*.jsonl, and anything under a subagents/ folder) are left out:
// they belong to the session beside them, which reads them itself
// (docs/LIVE.md). Symbolic links are not followed, and a ctxfold session
// found inside the folder is measured as a session.
func transcriptsIn(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "subagents" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if path != root && isSessionDir(path) {
				files = append(files, path)
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(name, "agent-") {
			return nil
		}
		if strings.HasSuffix(name, ".jsonl") ||
			(strings.HasPrefix(name, "session-") && strings.HasSuffix(name, ".json") && filepath.Base(filepath.Dir(path)) == "chats") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// fanJobs is how many arguments run at once: one per core (each run also
// uses every core while it counts), at least two so that one run's disk
// waits overlap another's work. Memory stays bounded: each import streams
// (docs/BENCHMARKS.md), and a run's result is dropped once printed.
func fanJobs(gomaxprocs int) int { return max(2, gomaxprocs) }
