package codex

import (
	"bufio"
	"encoding/json"
	"os"

	"github.com/ctxfold/ctxfold/transcript"
)

// A fork (Codex 0.1xx `codex exec fork`) is a rollout whose session_meta
// names the thread it was forked from (history_base.thread_id) and where in
// that thread's rollout its history ends (end_ordinal_exclusive); the fork's
// file holds only what came after. Imported together with its parent, the
// fork continues the parent's conversation from the last node recorded
// before that point, as a branch of the same session; alone, it is a
// conversation of its own (with a warning: the history before the fork is
// in the parent's rollout).
//
// A sub-agent (spawn_agent of Codex's multi_agent_v1 tools) is a rollout
// whose session_meta names its parent_thread_id. Imported with its parent,
// its nodes join the parent's session as a chain of their own whose caller
// is the parent's assistant node that spawned it (the call whose output
// returned the sub-agent's id); they never move HEAD.

// head is what Import reads of a file before importing it.
type head struct {
	file, id, parent string
	end              int64
	// subagent: parent spawned this thread (else parent, if set, was forked).
	subagent bool
}

func readHead(file string) head {
	h := head{file: file}
	f, err := os.Open(file)
	if err != nil {
		return h // importFile reports it
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	line, _ := r.ReadSlice('\n')
	var rec struct {
		Type    string `json:"type"`
		Payload struct {
			ID          string `json:"id"`
			ForkedFrom  string `json:"forked_from_id"`
			Parent      string `json:"parent_thread_id"`
			HistoryBase *struct {
				ThreadID string `json:"thread_id"`
				End      int64  `json:"end_ordinal_exclusive"`
			} `json:"history_base"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.Type != "session_meta" {
		return h
	}
	h.id = rec.Payload.ID
	switch hb := rec.Payload.HistoryBase; {
	case hb != nil && hb.ThreadID != "" && hb.End > 0:
		h.parent, h.end = hb.ThreadID, hb.End
	case rec.Payload.Parent != "":
		h.parent, h.subagent = rec.Payload.Parent, true
	}
	return h
}

// order puts every fork right after its parent's family (depth first), so
// one conversation stays open for the whole family; other files keep their
// order.
func order(files []string) []head {
	heads := make([]head, len(files))
	byID := map[string]bool{}
	for i, f := range files {
		heads[i] = readHead(f)
		if heads[i].id != "" {
			byID[heads[i].id] = true
		}
	}
	children := map[string][]head{}
	var roots []head
	for _, h := range heads {
		if h.parent != "" && byID[h.parent] && h.parent != h.id {
			children[h.parent] = append(children[h.parent], h)
		} else {
			roots = append(roots, h)
		}
	}
	var out []head
	seen := map[string]bool{}
	var walk func(h head)
	walk = func(h head) {
		out = append(out, h)
		if h.id == "" || seen[h.id] {
			return
		}
		seen[h.id] = true
		for _, c := range children[h.id] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	if len(out) < len(heads) { // a cycle of forks: import the rest as they come
		for _, h := range heads {
			if !seen[h.id] {
				out = append(out, h)
				seen[h.id] = true
			}
		}
	}
	return out
}

// thread is what a later fork needs of an imported rollout.
type thread struct {
	// sink is the conversation the thread's family shares.
	sink    transcript.ImportSink
	emitted []emitted
	base    string
	model   string
	// spawned maps a sub-agent's thread id to the node that spawned it.
	spawned map[string]string
}

// emitted is a real (non-summary) node of the thread, in chain order.
type emitted struct {
	id      string
	ordinal int64 // -1 when the record had none
}

// forkPoint is the chain tail of t as it stood before ordinal end: the last
// node emitted from a record before it, and the real nodes up to it.
func (t *thread) forkPoint(end int64) (tail string, real []string, ok bool) {
	for _, e := range t.emitted {
		if e.ordinal < 0 || e.ordinal >= end {
			continue
		}
		tail, ok = e.id, true
	}
	if !ok {
		return "", nil, false
	}
	for _, e := range t.emitted {
		real = append(real, e.id)
		if e.id == tail {
			break
		}
	}
	return tail, real, true
}
