package live

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// SourceFile is the transcript file a cache session stands for, read from
// its entry's state.json ("" when session is not a cache entry's session
// or the state is missing, as it is during a refresh). Commands that
// write use it to name the file in their refusal (import it first) and
// never to point a hint into the cache.
func SourceFile(session string) string {
	if filepath.Base(filepath.Clean(session)) != "session" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Clean(session)), "state.json"))
	if err != nil {
		return ""
	}
	var s struct {
		File string `json:"file"`
	}
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	return s.File
}
