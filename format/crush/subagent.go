package crush

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// Crush runs a sub-agent (its agent tool, agentic_fetch) in a session of
// its own whose id is "<assistant message id>$$<tool call id>" (its
// CreateTaskSession; from April to October 2025 the tool call id alone)
// and whose parent_session_id is the caller's session:
// that session imports as a caller subtree of the node holding the call,
// in the caller's conversation (docs/FORMAT.md: caller), as other
// clients' sub-agents do.

// subagentCall returns the tool call id a sub-agent session's id names:
// after "$$", or the whole id in a session older than that form.
func subagentCall(id string) (string, bool) {
	i := strings.Index(id, "$$")
	if i < 0 {
		return id, id != ""
	}
	if i == 0 || i+2 >= len(id) {
		return "", false
	}
	return id[i+2:], true
}

// children maps each session to its sub-agent sessions that name a call,
// in creation order; absorbed holds every such session, which imports
// with its caller and not as a conversation of its own. A child whose id
// has no "$$" is a sub-agent only when an assistant message of its parent
// holds a call of that id (Crush's other child sessions, title-<parent>,
// are not).
func children(ctx context.Context, db *sql.DB, sessions []sessionRow) (kids map[string][]sessionRow, absorbed map[string]bool) {
	ids := map[string]bool{}
	for _, s := range sessions {
		ids[s.id] = true
	}
	kids, absorbed = map[string][]sessionRow{}, map[string]bool{}
	for _, s := range sessions {
		if s.parent == "" || s.parent == s.id || !ids[s.parent] {
			continue
		}
		if _, ok := subagentCall(s.id); ok && (strings.Contains(s.id, "$$") || callIn(ctx, db, s.parent, s.id)) {
			kids[s.parent] = append(kids[s.parent], s)
			absorbed[s.id] = true
		}
	}
	return kids, absorbed
}

// topLevel is sessions without the absorbed ones.
func topLevel(sessions []sessionRow, absorbed map[string]bool) []sessionRow {
	var out []sessionRow
	for _, s := range sessions {
		if !absorbed[s.id] {
			out = append(out, s)
		}
	}
	return out
}

// subagents imports the sub-agent sessions of c's session, each called by
// the node of its call (nested ones by theirs); seen stops a cycle of
// parent ids.
func (c *conv) subagents(ctx context.Context, db *sql.DB, kids map[string][]sessionRow, opts Options, seen map[string]bool) error {
	for _, k := range kids[c.session] {
		if seen[k.id] {
			continue
		}
		seen[k.id] = true
		callID, _ := subagentCall(k.id)
		caller := c.callNodes[callID]
		if caller == "" {
			c.sink.Warn(c.file, 0, fmt.Sprintf("sub-agent session %s: no call %q in session %s; imported as a root of its own", k.id, callID, c.session))
		}
		sub := newConv(c.file, k.id, c.sink, c.used, caller)
		sub.summaryID = k.summaryID
		if _, err := sub.run(ctx, db, opts); err != nil {
			return err
		}
		c.sink.Count("session/subagent", transcript.OutcomeImported, "")
		if err := sub.subagents(ctx, db, kids, opts, seen); err != nil {
			return err
		}
	}
	return nil
}

// callIn reports whether an assistant message of session holds a tool
// call of that id (parts are compact JSON: {"type":"tool_call","data":
// {"id":…}}).
func callIn(ctx context.Context, db *sql.DB, session, callID string) bool {
	key, _ := json.Marshal(callID)
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE session_id = ? AND role = 'assistant' AND instr(parts, ?) > 0`,
		session, `"id":`+string(key)).Scan(&n)
	return err == nil && n > 0
}
