package pi

import (
	"path/filepath"
	"testing"
)

// ProjectsOf knows pi's folder per project and OpenClaw's sessions folder
// per agent, and nothing else.
func TestProjectsOf(t *testing.T) {
	for _, c := range []struct {
		dir, root, sub string
		ok             bool
	}{
		{"/h/.pi/agent/sessions/--home-u-p--", "/h/.pi/agent/sessions", "", true},
		{"/h/.openclaw/agents/main/sessions", "/h/.openclaw/agents", "sessions", true},
		{"/h/.openclaw/agents/main/transcripts", "", "", false},
		{"/h/archive/--home-u-p--", "", "", false},
	} {
		root, sub, ok := ProjectsOf(filepath.FromSlash(c.dir))
		if ok != c.ok || root != filepath.FromSlash(c.root) || sub != c.sub {
			t.Errorf("ProjectsOf(%s) = %q, %q, %v; want %q, %q, %v", c.dir, root, sub, ok, c.root, c.sub, c.ok)
		}
	}
}
