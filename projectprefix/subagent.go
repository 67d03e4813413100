package projectprefix

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/format/claudecode"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
)

// A sub-agent's first request carries its agent type's system prompt and
// tools and the user's additions (CLAUDE.md, MCP tools), none of which
// its file records. The sub-agents of one session are of several kinds
// (an Explore agent on Haiku, a general-purpose one on the parent's
// model, a fork that reads the parent's context), so a sub-agent file
// learns from the newest earlier sub-agent file of the project — of any of
// its sessions — of the same kind: the agent type its call named and the
// model it chose (claudecode.SubagentKinds). A kind that cannot be told,
// a fork and a compaction summariser keep the prior.

// findSubagent is Find for t, a sub-agent's file.
func findSubagent(ctx context.Context, t target, opts Options) (Learned, bool) {
	if t.Format != importer.ClaudeCode {
		return Learned{}, false
	}
	if claudecode.IsFork(t.File) {
		return forkOf(t.Target)
	}
	var kinds claudecode.SubagentKinds
	kind, ok := kinds.Of(t.File)
	if !ok {
		return Learned{}, false
	}
	same := func(file string) bool {
		k, ok := kinds.Of(file)
		return ok && k == kind
	}
	l, ok := findEarlier(ctx, t, projectSubagents(t.File), estimate.PriorSubagent, same, opts)
	if !ok {
		l, ok = findUsers(ctx, t, userSubagents(t.File), estimate.PriorSubagent, same, opts)
	}
	l.Kind = kind
	return l, ok
}

// forkKind is Learned.Kind of a fork.
const forkKind = "fork"

// forkOf is what a fork's first request carries beside its file: its
// parent's context when it was forked, as the parent's latest request
// before it read and wrote it (claudecode.LatestRequestBefore).
func forkOf(t Target) (Learned, bool) {
	parent, ok := claudecode.SubagentParent(t.File)
	if !ok {
		return Learned{}, false
	}
	head, err := input.ReadHead(t.File, headPeek)
	start := input.FirstString(head, "timestamp", nil)
	if err != nil || start == "" {
		return Learned{}, false
	}
	u, ok := claudecode.LatestRequestBefore(parent, start)
	if !ok || u.Input+u.Output <= 0 {
		return Learned{}, false
	}
	return Learned{Tokens: int(u.Input + u.Output), From: parent, Kind: forkKind}, true
}

// projectSubagents are the sub-agent files of the project file's session
// belongs to (subagentsIn), newest first, file itself left out.
func projectSubagents(file string) []string {
	abs, project, ok := subagentProject(file)
	if !ok {
		return nil
	}
	return newestFirst(subagentsIn(nil, project, abs))
}

// userSubagents are the sub-agent files of the user's other projects
// (user.go), newest first.
func userSubagents(file string) []string {
	abs, project, ok := subagentProject(file)
	if !ok {
		return nil
	}
	var out []cand
	for _, p := range userProjects(project, importer.ClaudeCode) {
		out = subagentsIn(out, p, abs)
	}
	return newestFirst(out)
}

// subagentProject is the absolute path of a sub-agent file and the
// project folder of its session.
func subagentProject(file string) (abs, project string, ok bool) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", "", false
	}
	parent, ok := claudecode.SubagentParent(abs)
	if !ok {
		return "", "", false
	}
	return abs, filepath.Dir(parent), true
}

// subagentsIn appends to out the sub-agent files of project's sessions —
// agent-*.jsonl in <project>/<session>/subagents/ and its
// workflows/<run>/ folders, for every session folder — skip left out;
// symlinks are not followed. The listing is bounded as siblings' is.
func subagentsIn(out []cand, project, skip string) []cand {
	isAgent := func(name string) bool { return strings.HasPrefix(name, "agent-") && filepath.Ext(name) == ".jsonl" }
	sessions, _ := readDir(project)
	for _, s := range sessions {
		if !s.IsDir() || len(out) >= maxListed {
			continue
		}
		dir := filepath.Join(project, s.Name(), "subagents")
		out = appendFiles(out, dir, skip, isAgent)
		// A workflow's agents: subagents/workflows/<run>/.
		runs, _ := readDir(filepath.Join(dir, "workflows"))
		for _, r := range runs {
			if r.IsDir() {
				out = appendFiles(out, filepath.Join(dir, "workflows", r.Name()), skip, isAgent)
			}
		}
	}
	return out
}

// appendFiles appends to out the regular files of dir whose name keep
// accepts, skip left out.
func appendFiles(out []cand, dir, skip string, keep func(name string) bool) []cand {
	entries, _ := readDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if p == skip || !keep(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			out = append(out, cand{p, fi.ModTime().UnixNano()})
		}
	}
	return out
}

// readDir lists up to maxListed entries of dir.
func readDir(dir string) ([]os.DirEntry, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir(maxListed)
}

// cand is a candidate file and its modification time.
type cand struct {
	path string
	mod  int64
}

// newestFirst orders cs by modification time, newest first (then by path,
// for a stable order), and returns their paths.
func newestFirst(cs []cand) []string {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].mod != cs[j].mod {
			return cs[i].mod > cs[j].mod
		}
		return cs[i].path > cs[j].path
	})
	paths := make([]string, len(cs))
	for i, c := range cs {
		paths[i] = c.path
	}
	return paths
}
