package archive

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
)

// childDir is set in the archive run TestArchiveKilledRunLosesNothing
// starts as a child process and kills.
const childDir = "CTXFOLD_ARCHIVE_CHILD_DIR"

// TestArchiveChild is the child's run, nothing in a normal test run.
func TestArchiveChild(t *testing.T) {
	dir := os.Getenv(childDir)
	if dir == "" {
		return
	}
	env := input.Env{Home: os.Getenv("HOME"), Getenv: os.Getenv}
	if _, _, err := Run(context.Background(), Options{Dir: dir, Env: env}); err != nil {
		t.Fatal(err)
	}
}

// SIGKILL at any moment of a run loses nothing: the next run completes
// the archive, every session is a fresh import of its file and the index
// holds exactly the archive's nodes.
func TestArchiveKilledRunLosesNothing(t *testing.T) {
	sessiontest.Long(t, "SIGKILL during archive")
	env, phrases := testHome(t)
	// More of the large real session, so a run lasts long enough to be
	// killed at many points.
	big := sessiontest.External(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	b, err := os.ReadFile(big)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"-a", "-b", "-c", "-d"} {
		dst := filepath.Join(env.Home, ".claude", "projects", p, filepath.Base(big))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	for _, delay := range []time.Duration{30, 80, 150, 250, 400, 600, 900, 1300, 1800} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestArchiveChild$")
		cmd.Env = append(os.Environ(), childDir+"="+dir, "HOME="+env.Home, "CODEX_HOME="+env.Get("CODEX_HOME"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		done, _ := filepath.Glob(filepath.Join(dir, "live", "*", originFile))
		t.Logf("killed after %v: %d sessions archived", delay*time.Millisecond, len(done))
	}
	c := run(t, env, dir)
	if c.Failed != 0 || c.Files != len(phrases)+4 {
		t.Fatalf("the run after the kills: %+v", c)
	}
	checkConsistent(t, dir)
	for _, p := range phrases {
		if hits, err := Search(context.Background(), dir, SearchOptions{Query: p.query}); err != nil || len(hits) == 0 {
			t.Errorf("%s: %v %v", p.query, hits, err)
		}
	}
	found, _ := importer.Find(env, "")
	for _, f := range found {
		checkFreshImport(t, dir, f.File)
	}
}

// checkFreshImport checks the archived session of file holds exactly a
// fresh import's nodes.
func checkFreshImport(t *testing.T, dir, file string) {
	t.Helper()
	fresh := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{Files: []string{file}, Out: fresh}); err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "live", "*"))
	for _, e := range entries {
		if o, ok := readOrigin(e); ok && o.File == file {
			got, err1 := os.ReadFile(filepath.Join(e, "session", store.NodesFile))
			want, err2 := os.ReadFile(filepath.Join(fresh, store.NodesFile))
			if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: the archived session is not a fresh import (%v %v, %d vs %d bytes)", file, err1, err2, len(got), len(want))
			}
			return
		}
	}
	t.Errorf("%s: not archived", file)
}
