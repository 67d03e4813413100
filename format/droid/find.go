package droid

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// Find lists the sessions Droid keeps on this machine: every
// <session id>.jsonl in a folder of ~/.factory/sessions (or of
// $FACTORY_HOME_OVERRIDE/.factory/sessions), with the working directory
// its session_start names and the model its .settings.json records. No
// sessions folder is no error.
func Find(env input.Env) ([]input.Found, error) {
	root := sessionsDir(env)
	dirs, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []input.Found
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(root, d.Name()))
		if err != nil {
			continue
		}
		for _, f := range files {
			if !f.Type().IsRegular() || !strings.HasSuffix(f.Name(), ".jsonl") {
				continue
			}
			path := filepath.Join(root, d.Name(), f.Name())
			if found, ok := foundAt(path, f); ok {
				out = append(out, found)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

// foundAt reads what a session file says cheaply: its first line and the
// settings file beside it. A file that is not a Droid session is left out.
func foundAt(path string, e fs.DirEntry) (input.Found, bool) {
	info, err := e.Info()
	if err != nil {
		return input.Found{}, false
	}
	f, err := os.Open(path)
	if err != nil {
		return input.Found{}, false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return input.Found{}, false
	}
	var start record
	if json.Unmarshal(line, &start) != nil || start.Type != "session_start" {
		return input.Found{}, false
	}
	found := input.Found{File: path, SessionID: start.ID, Project: start.Cwd, Updated: info.ModTime(), Bytes: info.Size()}
	if data, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".settings.json"); err == nil {
		var settings struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(data, &settings) == nil {
			found.Model = settings.Model
		}
	}
	return found, true
}
