package qwen

// This file attaches a session's sub-agent transcripts: Qwen Code writes
// each sub-agent's records (the chat recording's shape, with agentId and
// isSidechain) to <project>/subagents/<session id>/agent-<agent id>.jsonl,
// beside an .meta.json naming the call that started it (toolUseId). They
// become caller subtrees of the node holding that call.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// unsafeName is what the client replaces by "_" in a session id used as a
// folder name (its sanitizeFilenameComponent).
var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// agentMeta is the part of a sub-agent's .meta.json the import uses.
type agentMeta struct {
	ToolUseID string `json:"toolUseId"`
	CreatedAt string `json:"createdAt"`
}

// child is the importer of a sub-agent's transcript: the parent's
// conversation, ids and calls, its nodes called by nextCaller.
func (im *importer) child(file string) *importer {
	return &importer{sink: im.sink, file: file, eff: map[string]string{}, pred: im.pred, calls: im.calls,
		sub: true, caller: im.nextCaller}
}

// subagentFiles lists a session's sub-agent transcripts, oldest first (a
// nested sub-agent's caller is in its parent's transcript), with their
// metadata. Only regular files count.
func subagentFiles(file, session string) ([]string, map[string]agentMeta) {
	dir := filepath.Dir(file)
	if session == "" || filepath.Base(dir) != "chats" {
		return nil, nil
	}
	root := filepath.Join(filepath.Dir(dir), "subagents", unsafeName.ReplaceAllString(session, "_"))
	found, _ := filepath.Glob(filepath.Join(root, "agent-*.jsonl"))
	metas := map[string]agentMeta{}
	var out []string
	for _, p := range found {
		if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		var m agentMeta
		if data, err := os.ReadFile(strings.TrimSuffix(p, ".jsonl") + ".meta.json"); err == nil {
			_ = json.Unmarshal(data, &m)
		}
		metas[p] = m
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := metas[out[i]], metas[out[j]]
		if a.CreatedAt != b.CreatedAt {
			return a.CreatedAt < b.CreatedAt
		}
		return out[i] < out[j]
	})
	return out, metas
}

// subagents imports the sub-agent transcripts of the session im read.
func (im *importer) subagents(ctx context.Context, opts Options, attached map[string]bool) error {
	files, metas := subagentFiles(im.file, im.session)
	for _, file := range files {
		attached[cleanPath(file)] = true
		m := metas[file]
		im.nextCaller = im.calls[m.ToolUseID]
		if im.nextCaller == "" {
			im.sink.Warn(file, 1, fmt.Sprintf("sub-agent transcript: no call in the session has its toolUseId %q; imported as a root of its own", m.ToolUseID))
		}
		if _, err := importFile(ctx, file, opts, nil, im); err != nil {
			return err
		}
		im.sink.Count("subagent file", transcript.OutcomeImported, "")
	}
	return nil
}

func cleanPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// isSubagent reports whether a file's first record belongs to a sub-agent
// (it names an agentId).
func isSubagent(file string, opts Options) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	first, err := input.NewLines(f, file, opts).Next()
	if err != nil {
		return false
	}
	var r struct {
		AgentID string `json:"agentId"`
	}
	return json.Unmarshal(first, &r) == nil && r.AgentID != ""
}
