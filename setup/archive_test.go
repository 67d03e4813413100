package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --archive makes every client's installed hook 'ctxfold hook … --archive';
// setup run again without it puts the plain hook back (updated, not
// doubled), and --uninstall takes either out.
func TestArchiveHookEveryClient(t *testing.T) {
	for _, c := range Clients() {
		t.Run(c.Name, func(t *testing.T) {
			home := t.TempDir()
			o := Options{Scope: ScopeUser, Home: home, Command: "/opt/ctxfold", Archive: true,
				Getenv: func(string) string { return "" }}
			hooks := func() []string {
				t.Helper()
				var cmds []string
				for _, p := range mustFiles(t, c, o) {
					b, err := os.ReadFile(p)
					if err != nil {
						continue
					}
					for _, line := range strings.Split(string(b), "\n") {
						// A command line, or a plugin's argument list.
						if strings.Contains(line, "/opt/ctxfold hook") || strings.Contains(line, `"hook", "--client"`) {
							cmds = append(cmds, strings.TrimSpace(line))
						}
					}
				}
				return cmds
			}
			if _, err := Run(context.Background(), c.Name, o, false); err != nil {
				t.Fatal(err)
			}
			with := hooks()
			if len(with) == 0 {
				t.Fatal("no hook installed")
			}
			for _, h := range with {
				if !strings.Contains(h, "--archive") || !strings.Contains(h, Marker) {
					t.Errorf("hook %s lacks --archive", h)
				}
			}
			o.Archive = false
			changes, err := Run(context.Background(), c.Name, o, false)
			if err != nil {
				t.Fatal(err)
			}
			updated := false
			for _, ch := range changes {
				for _, d := range ch.Did {
					updated = updated || strings.HasPrefix(d, "updated the ")
				}
			}
			without := hooks()
			if !updated || len(without) != len(with) {
				t.Fatalf("without --archive: %v hooks %v, want %d", changes, without, len(with))
			}
			for _, h := range without {
				if strings.Contains(h, "--archive") {
					t.Errorf("hook %s still archives", h)
				}
			}
			o.Archive, o.Uninstall = true, true
			if _, err := Run(context.Background(), c.Name, o, false); err != nil {
				t.Fatal(err)
			}
			if left := hooks(); len(left) != 0 {
				t.Fatalf("after --uninstall: %v", left)
			}
		})
	}
}

func mustFiles(t *testing.T, c *Client, o Options) []string {
	t.Helper()
	ps, err := c.Files(o)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		ps[i] = filepath.Clean(p)
	}
	return ps
}
