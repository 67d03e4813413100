package live

// The client configuration files an import consulted (input.Env.Seen): a
// custom model's window comes from them (transcript.WindowReporter), so a
// transcript that did not change is re-read when one of them did — the
// user who sets the key the unknown-model hint names sees it taken.

import (
	"slices"
	"sort"
	"sync"
)

// configWatch collects the paths an import reads configuration from.
type configWatch struct {
	mu    sync.Mutex
	paths []string
}

func (w *configWatch) seen(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paths = append(w.paths, path)
}

// configsOf is each distinct path as it is now: size and hash of a
// regular file, size -1 for one that is missing (or no regular file,
// which the importer reads as nothing either).
func configsOf(paths []string) []sidecar {
	paths = slices.Clone(paths)
	sort.Strings(paths)
	paths = slices.Compact(paths)
	out := make([]sidecar, 0, len(paths))
	for _, p := range paths {
		c := sidecar{Path: p, Size: -1}
		if regularNoLink(p) {
			if sum, size, err := hashWhole(p); err == nil {
				c.SHA256, c.Size = sum, size
			}
		}
		out = append(out, c)
	}
	return out
}

// configChanged reports whether a configuration file the last import
// consulted was created, changed or removed since.
func configChanged(old []sidecar) bool {
	if len(old) == 0 {
		return false
	}
	paths := make([]string, len(old))
	for i, c := range old {
		paths[i] = c.Path
	}
	return !slices.Equal(configsOf(paths), old)
}
