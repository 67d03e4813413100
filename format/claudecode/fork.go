package claudecode

import (
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// A fork (Claude Code 2.1.2xx: a sub-agent whose .meta.json says
// "isFork", agent type "fork") starts from its parent's whole context: its
// first request reads what the parent's conversation held when it was
// forked, and its file holds only the fork's own lines. What the parent's
// latest request before the fork read and wrote is that context as the
// provider counted it (the held-out forks of docs/ACCURACY.md: 0.1% and
// 1.3% short of their first requests).

// IsFork reports whether file is a fork's file (its .meta.json says so).
func IsFork(file string) bool {
	if _, ok := SubagentParent(file); !ok || !strings.HasSuffix(file, ".jsonl") {
		return false
	}
	m, ok := readMeta(file)
	return ok && m.isFork()
}

// ParentUsage is what a session's request recorded: the input it read
// (uncached, cache-written and cache-read together) and the output it
// wrote.
type ParentUsage struct {
	Input, Output int64
}

// LatestRequestBefore is the usage the latest request of parent's main
// chain recorded at or before the RFC 3339 time before, and whether there
// was one. Only the lines that name a usage are decoded.
func LatestRequestBefore(parent, before string) (ParentUsage, bool) {
	var latest ParentUsage
	found := false
	input.EachLineWith(parent, []string{`"usage"`}, func(line []byte) {
		var r struct {
			Type        string `json:"type"`
			IsSidechain bool   `json:"isSidechain"`
			Timestamp   string `json:"timestamp"`
			Message     struct {
				Usage *struct {
					Input         int64 `json:"input_tokens"`
					CacheCreation int64 `json:"cache_creation_input_tokens"`
					CacheRead     int64 `json:"cache_read_input_tokens"`
					Output        int64 `json:"output_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if input.Unmarshal(line, &r) != nil || r.Type != "assistant" || r.IsSidechain || r.Message.Usage == nil ||
			r.Timestamp == "" || r.Timestamp > before { // RFC 3339 times of one writer compare as strings
			return
		}
		u := r.Message.Usage
		// A message streamed as several lines repeats its input; the
		// last line has the whole output.
		latest, found = ParentUsage{Input: u.Input + u.CacheCreation + u.CacheRead, Output: u.Output}, true
	})
	return latest, found
}
