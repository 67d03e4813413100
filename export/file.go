package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/store"
)

// ExistsError refuses to replace a transcript that is already there.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string { return fmt.Sprintf("%s: already exists", e.Path) }
func (e *ExistsError) Hint() string {
	return "pass --force to replace it, or --session-id with another id"
}

// WriteFile writes a transcript to path through fn: into a temporary file
// beside it, synced, then moved into place, so a failed run leaves no
// partial file and the client never reads half a session. Without force an
// existing path (a symlink included) is refused, atomically: the file is
// linked into place, which fails when the name is taken. With force the
// name is replaced, a symlink itself and never what it points to. Missing
// parent directories are created private (0700), as a client's own are.
func WriteFile(path string, force bool, fn func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if !force {
		if _, err := os.Lstat(path); err == nil {
			return &ExistsError{Path: path}
		}
	}
	// Private like a client's own transcripts.
	err = store.WriteFileAtomic(path, store.AtomicOptions{Perm: 0o600, Sync: true, NoClobber: !force}, fn)
	if !force && errors.Is(err, fs.ErrExist) {
		return &ExistsError{Path: path}
	}
	return err
}

// CheckSessionID refuses a --session-id that is not a UUID, before any
// path is made from it (an id such as ../../x would otherwise name
// directories outside the client's folder).
func CheckSessionID(id string) error {
	if id != "" && !uuidRE.MatchString(id) {
		return fmt.Errorf("--session-id %q: expected a UUID like %s", id, NewUUID())
	}
	return nil
}

// CodexRollouts lists the rollouts under codexHome (sessions/ and
// archived_sessions/) that carry sessionID: Codex names a rollout after
// its start time and id, so a second export with the same id would write
// a second rollout beside the first instead of replacing it.
func CodexRollouts(codexHome, sessionID string) []string {
	var out []string
	for _, pat := range []string{
		filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*-"+sessionID+".jsonl*"),
		filepath.Join(codexHome, "archived_sessions", "rollout-*-"+sessionID+".jsonl*"),
	} {
		m, _ := filepath.Glob(pat)
		out = append(out, m...)
	}
	return out
}
