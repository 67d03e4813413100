package live

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"

	"github.com/ctxfold/ctxfold/importer"
)

// refreshCuts are the sizes a growing file is refreshed at, in order: line
// ends (every one for a short file or with CTXFOLD_ALL_CUTS=1, else evenly
// spread ones) and, after each, a cut in the middle of the next line (a
// client caught writing it).
func refreshCuts(b []byte, most int) []int {
	if os.Getenv("CTXFOLD_ALL_CUTS") != "" {
		most = len(b)
	}
	ends := cutPoints(b, most)
	var out []int
	for _, end := range ends {
		out = append(out, end)
		next := len(b)
		if i := bytes.IndexByte(b[end:], '\n'); i >= 0 {
			next = end + i + 1
		}
		if mid := end + (next-end)/2; mid > end && mid < next {
			out = append(out, mid)
		}
	}
	return append(out, len(b))
}

// A file refreshed at cut after cut — between the lines of one streamed
// request, inside a line, several times in a row — always leaves a cache
// session whose nodes.jsonl is byte for byte a fresh import of the file
// as it is then. A Claude Code session without sub-agent files and a Codex
// rollout go through the incremental path: each refresh parses only the
// bytes from the saved resume point on, fewer than the file holds.
func TestIncrementalRefreshes(t *testing.T) { checkRefreshes(t, sharedTranscripts(t)) }

// The same on what the real clients wrote (testdata/interop, recorded by
// interop/<client>: compaction, a fork, resume, parallel and failing tool
// calls, a sub-agent's caller file left aside).
func TestIncrementalRefreshesRealClients(t *testing.T) {
	var files []string
	// The pinned clients' recordings; the newer versions' (the same record
	// types, docs/INTEROP.md) only in the long run.
	pats := []string{"claude-code/2.1.328/*/transcript/*.jsonl", "codex/0.169.0/*/*.jsonl"}
	if longRun() {
		pats = []string{"claude-code/*/*/transcript/*.jsonl", "codex/*/*/*.jsonl"}
	}
	for _, pat := range pats {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", "interop", pat))
		files = append(files, m...)
	}
	if len(files) < 8 {
		t.Fatalf("found %d real-client transcripts under testdata/interop", len(files))
	}
	if !longRun() {
		// Every other recording (both clients, most scenarios); the long
		// run takes them all.
		var some []string
		for i := 0; i < len(files); i += 2 {
			some = append(some, files[i])
		}
		files = some
	}
	checkRefreshes(t, files)
}

func checkRefreshes(t *testing.T, files []string) {
	// Enough cuts in the short run that the few whole parses before a
	// file's first complete turn stay under a tenth.
	most := 40
	if !longRun() {
		most = 20
	}
	ctx := context.Background()
	for _, src := range files {
		t.Run(strings.TrimPrefix(filepath.ToSlash(src), "../testdata/interop/"), func(t *testing.T) {
			t.Parallel() // each file has its own work file and cache
			full, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			// Claude Code sessions (without sub-agent files) and Codex
			// rollouts resume; the rest take the whole-file path.
			resumes := strings.Contains(src, "claude-code") || strings.Contains(src, "codex")
			file := workFile(t, src, false)
			cache := t.TempDir()
			var incremental, parsed, grown, held int64
			// The collector is held back around every refresh from a
			// resume point, and put back after it.
			var holding bool
			opts := Options{CacheDir: cache, ResumeGC: func() func() {
				if holding {
					t.Error("ResumeGC called again before its restore")
				}
				holding = true
				held++
				return func() { holding = false }
			}}
			opened := false
			for _, cut := range refreshCuts(full, most) {
				if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
					t.Fatal(err)
				}
				e, err := openClosed(ctx, file, opts)
				if holding {
					t.Fatalf("cut %d: the collector is still held back after the refresh", cut)
				}
				if err != nil {
					if !opened && (strings.Contains(err.Error(), "no ") || strings.Contains(err.Error(), "nothing") || strings.Contains(err.Error(), "empty")) {
						continue // a prefix that holds no conversation yet
					}
					t.Fatalf("cut %d: %v", cut, err)
				}
				switch {
				case !opened || e.Update == Unchanged:
				case e.Update == Fresh && !resumes && strings.Contains(e.Reason, "streamed request"):
					// The path of a format that does not resume: the cut
					// part of a request is re-imported whole.
				case e.Update == Fresh && !(resumes && strings.Contains(e.Reason, "resume point")):
					t.Errorf("cut %d: a grown file was imported afresh (%s)", cut, e.Reason)
				case resumes:
					grown++
					if e.Update == Appended && e.ParsedBytes < int64(cut) {
						incremental++
					} else {
						t.Logf("cut %d: %s, parsed %d of %d bytes (%s)", cut, e.Update, e.ParsedBytes, cut, e.Reason)
					}
					parsed += e.ParsedBytes
				}
				opened = true
				got, err := os.ReadFile(filepath.Join(e.Session, "nodes.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				fresh := freshImport(t, file)
				if want := readNodes(t, fresh); !bytes.Equal(got, want) {
					t.Fatalf("cut %d (%s, parsed %d): nodes.jsonl differs from a fresh import (%d vs %d bytes)", cut, e.Update, e.ParsedBytes, len(got), len(want))
				}
				// session.json too: HEAD, the model and the recorded window.
				if g, w := metaJSON(t, e.Session), metaJSON(t, fresh); g != w {
					t.Fatalf("cut %d (%s): session.json %s, a fresh import's %s", cut, e.Update, g, w)
				}
			}
			// Whole parses are due only where no turn is complete yet (the
			// resume point is the file's start) or where a line answers or
			// extends a node before the point (a parallel branch): rare.
			if resumes && grown > 0 && incremental*10 < grown*9 {
				t.Errorf("only %d of %d refreshes of a grown file were incremental", incremental, grown)
			}
			if held < incremental {
				t.Errorf("the collector was held back for %d refreshes, %d were incremental", held, incremental)
			}
			t.Logf("%d refreshes of a grown file, %d incremental, %d bytes parsed in all", grown, incremental, parsed)
		})
	}
}

// A sub-agent file beside a Claude Code session is part of what the cache
// consumed: one that only grew brings the session up to date, one that
// was cut or rewritten has it imported afresh, and either way the cache
// session then holds what a fresh import of the files holds. (With
// sub-agent files the import is not incremental: ParsedBytes is the whole
// session file.)
func TestSubagentFileChanges(t *testing.T) {
	src := sharedTranscript(t, func(f string) bool {
		st, err := os.Stat(strings.TrimSuffix(f, ".jsonl"))
		return err == nil && st.IsDir()
	}, "no shared Claude Code session with sub-agent files")
	agents, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(src, ".jsonl"), "subagents", "agent-*.jsonl"))
	if len(agents) == 0 {
		t.Skip("no sub-agent files")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, filepath.Base(src))
	sub := filepath.Join(strings.TrimSuffix(file, ".jsonl"), "subagents")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := os.ReadFile(agents[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		b, _ := os.ReadFile(a)
		if err := os.WriteFile(filepath.Join(sub, filepath.Base(a)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agentFile := filepath.Join(sub, filepath.Base(agents[0]))
	half := sessiontest.LineEnds(agent)[len(sessiontest.LineEnds(agent))/2]
	mainHalf := sessiontest.LineEnds(main)[len(sessiontest.LineEnds(main))/2]
	cache := t.TempDir()
	ctx := context.Background()
	steps := []struct {
		name         string
		main, agent  []byte
		update, want string
	}{
		{"first", main[:mainHalf], agent, Fresh, ""},
		{"sub-agent file cut", main[:mainHalf], agent[:half], Fresh, "sub-agent"},
		{"sub-agent file grown", main[:mainHalf], agent, Appended, ""},
		{"unchanged", main[:mainHalf], agent, Unchanged, ""},
		{"session grown", main, agent, Appended, ""},
	}
	for _, s := range steps {
		if err := os.WriteFile(file, s.main, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(agentFile, s.agent, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := openClosed(ctx, file, Options{CacheDir: cache})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		// A sub-agent file cut inside a streamed request cannot be
		// appended to exactly; it is re-imported (importInto).
		grownFresh := s.update == Appended && e.Update == Fresh && strings.Contains(e.Reason, "streamed request")
		if (e.Update != s.update || !strings.Contains(e.Reason, s.want)) && !grownFresh {
			t.Fatalf("%s: update %q (%s), want %q", s.name, e.Update, e.Reason, s.update)
		}
		if e.Update != Unchanged && e.ParsedBytes != int64(len(s.main)) {
			t.Errorf("%s: parsed %d bytes, want the whole session file (%d)", s.name, e.ParsedBytes, len(s.main))
		}
		got, err := os.ReadFile(filepath.Join(e.Session, "nodes.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if want := freshNodes(t, file); !bytes.Equal(got, want) && !sameLines(got, want) {
			t.Errorf("%s: the cache session differs from a fresh import", s.name)
		}
	}
}

// A resume point that cannot be used — resume.bin damaged or missing, or a
// cache session that is no longer the one the checkpoint was taken of —
// has the grown file imported afresh, never a session that differs from
// a fresh import.
func TestDamagedResumePoint(t *testing.T) {
	src := sharedTranscript(t, func(f string) bool {
		return strings.Contains(f, "d-kimuson") && strings.HasPrefix(filepath.Base(f), "5c03")
	}, "shared Claude Code transcript not present")
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	half := sessiontest.LineEnds(full)[len(sessiontest.LineEnds(full))*3/4]
	damage := map[string]func(t *testing.T, dir, session string){
		"resume.bin damaged": func(t *testing.T, dir, _ string) {
			p := filepath.Join(dir, resumeFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0xff
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"resume.bin removed": func(t *testing.T, dir, _ string) {
			if err := os.Remove(filepath.Join(dir, resumeFile)); err != nil {
				t.Fatal(err)
			}
		},
		"cache session replaced": func(t *testing.T, _, session string) {
			// Another import's session in its place: the checkpoint is not
			// one of its commits, and the rewind refuses it.
			other := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(other, full[:sessiontest.LineEnds(full)[3]], 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(session); err != nil {
				t.Fatal(err)
			}
			if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{other}, Out: session}); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.jsonl")
			cache := t.TempDir()
			if err := os.WriteFile(file, full[:half], 0o644); err != nil {
				t.Fatal(err)
			}
			e, err := openClosed(context.Background(), file, Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			f(t, filepath.Dir(e.Session), e.Session)
			if err := os.WriteFile(file, full, 0o644); err != nil {
				t.Fatal(err)
			}
			if e, err = openClosed(context.Background(), file, Options{CacheDir: cache}); err != nil {
				t.Fatal(err)
			}
			// A replaced session is caught before the rewind: its
			// session.json is not the one the last refresh left.
			if e.Update != Fresh || !strings.Contains(e.Reason, "resume point") && !strings.Contains(e.Reason, "does not check out") {
				t.Errorf("update %q (%s), want fresh because of the resume point", e.Update, e.Reason)
			}
			if !bytes.Equal(readNodes(t, e.Session), freshNodes(t, file)) {
				t.Error("the cache session differs from a fresh import")
			}
		})
	}
}

// A resume point whose checkpoint is not a commit of the cache session
// (the session checks out, state.json names another commit) is refused
// by the rewind, which runs inside the import's own transaction
// (store.UpdateFrom), and the grown file is imported afresh.
func TestRewindRefusedInsideImport(t *testing.T) {
	full, ends := marotLines(t)
	ctx := context.Background()
	for k := len(ends) / 2; k+1 < len(ends); k += 7 {
		file := filepath.Join(t.TempDir(), "s.jsonl")
		grow := func(n int, opts Options) *Entry {
			if err := os.WriteFile(file, full[:n], 0o644); err != nil {
				t.Fatal(err)
			}
			e, err := openClosed(ctx, file, opts)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		clean := Options{CacheDir: t.TempDir()}
		grow(ends[k], clean)
		if e := grow(ends[k+1], clean); e.Update != Appended {
			continue // this cut does not resume; try a later one
		}
		opts := Options{CacheDir: t.TempDir()}
		e := grow(ends[k], opts)
		dir := filepath.Dir(e.Session)
		st, ok := readState(dir)
		if !ok || st.Resume == nil {
			t.Fatal("the refresh left no state.json with a resume point")
		}
		st.Resume.Checkpoint.NodesSHA256 = strings.Repeat("0", 64)
		if err := writeState(dir, st); err != nil {
			t.Fatal(err)
		}
		e = grow(ends[k+1], opts)
		if e.Update != Fresh || !strings.Contains(e.Reason, "the state to rewind to") {
			t.Fatalf("update %q (%s), want fresh because the rewind refused the checkpoint", e.Update, e.Reason)
		}
		if !bytes.Equal(readNodes(t, e.Session), freshNodes(t, file)) {
			t.Error("the cache session differs from a fresh import")
		}
		return
	}
	t.Fatal("no cut of the transcript resumed")
}

// A Claude Code file whose tool result is written before the assistant
// line it answers (the desktop app's order, docs/INTEROP-claude-code.md):
// cut between the two, the result waits for its parent and is a root
// while it never came; every refresh is still a fresh import's bytes.
func TestIncrementalRefreshesParentWrittenLate(t *testing.T) {
	src := filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "tool", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
	dir := filepath.Join(t.TempDir(), "claude-code")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	moved := sessiontest.ResultBeforeItsCall(t, src, dir)
	checkRefreshes(t, []string{moved})
}
