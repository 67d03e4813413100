package openclaw

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
)

// Find lists OpenClaw's sessions: every agent's database under
// $OPENCLAW_STATE_DIR (else $OPENCLAW_HOME/.openclaw, else ~/.openclaw),
// agents/<agent>/agent/openclaw-agent.sqlite, one entry a session (File
// the database, SessionID what --session takes, Updated its last event).
func Find(env input.Env) ([]input.Found, error) {
	state := env.Get("OPENCLAW_STATE_DIR")
	if state == "" {
		home := env.Get("OPENCLAW_HOME")
		if home == "" {
			home = env.Home
		}
		state = filepath.Join(home, ".openclaw")
	}
	stores, _ := filepath.Glob(filepath.Join(state, "agents", "*", "agent", StoreName))
	sort.Strings(stores)
	var out []input.Found
	var firstErr error
	for _, file := range stores {
		st, err := os.Lstat(file)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		db, cleanup, err := openReadOnly(context.Background(), file)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		sessions, err := listSessions(context.Background(), db)
		cleanup()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, s := range sessions {
			out = append(out, input.Found{File: file, SessionID: s.id, Updated: time.UnixMilli(s.last), Bytes: st.Size()})
		}
	}
	return out, firstErr
}
