package setup

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestEphemeral(t *testing.T) {
	for exe, want := range map[string]bool{
		"/home/u/.npm/_npx/3f2a1c/node_modules/ctxfold-linux-x64/bin/ctxfold":            true,
		`C:\Users\u\AppData\Local\npm-cache\_npx\3f2a\node_modules\ctxfold-win32-x64`:    filepath.Separator == '\\',
		"/usr/local/lib/node_modules/ctxfold/node_modules/ctxfold-linux-x64/bin/ctxfold": false,
		"/home/u/go/bin/ctxfold": false,
	} {
		if got := Ephemeral(exe); got != want {
			t.Errorf("Ephemeral(%q) = %v, want %v", exe, got, want)
		}
	}
}

func TestInstallCopy(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "npx", "ctxfold")
	_ = os.MkdirAll(filepath.Dir(exe), 0o755)
	if err := os.WriteFile(exe, []byte("binary v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	dest := StablePath(filepath.Join(dir, "home"), false)
	if wrote, err := InstallCopy(exe, dest); err != nil || !wrote {
		t.Fatalf("first copy: wrote %v, %v", wrote, err)
	}
	fi, err := os.Stat(dest)
	if err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("copy not executable: %v %v", fi, err)
	}
	if wrote, err := InstallCopy(exe, dest); err != nil || wrote {
		t.Errorf("same bytes again: wrote %v, %v", wrote, err)
	}
	_ = os.WriteFile(exe, []byte("binary v2"), 0o755)
	if wrote, err := InstallCopy(exe, dest); err != nil || !wrote {
		t.Errorf("a newer binary: wrote %v, %v", wrote, err)
	}
	if b, _ := os.ReadFile(dest); !bytes.Equal(b, []byte("binary v2")) {
		t.Errorf("dest holds %q", b)
	}
	// Never through a link: the target stays as it was.
	target := filepath.Join(dir, "elsewhere")
	_ = os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	_ = os.Symlink(target, link)
	if _, err := InstallCopy(exe, link); err == nil {
		t.Error("copied through a symlink")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("link target changed: %q", b)
	}
}
