package estimate

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
)

func TestForSession(t *testing.T) {
	win, _ := json.Marshal(4096)
	meta := func(model string, window bool) store.Meta {
		m := store.Meta{Model: model}
		if window {
			m.Extra = map[string]json.RawMessage{RecordedWindowKey: win}
		}
		return m
	}
	for _, tc := range []struct{ explicit, session, fallback, want string }{
		{"a", "b", "c", "a"}, {"", "b", "c", "b"}, {"", "", "c", "c"}, {"", "", "", ""},
	} {
		if got := (Options{Model: tc.explicit}).ForSession(meta(tc.session, false), tc.fallback).Model; got != tc.want {
			t.Errorf("ForSession(%q, %q, %q) = %q, want %q", tc.explicit, tc.session, tc.fallback, got, tc.want)
		}
	}
	if got := (Options{}).ForSession(meta("", true), "").RecordedWindow; got != 4096 {
		t.Errorf("recorded window %d, want the session's 4096", got)
	}
	if got := (Options{RecordedWindow: 10}).ForSession(meta("", true), "").RecordedWindow; got != 10 {
		t.Errorf("recorded window %d, want the caller's 10", got)
	}
}

// Session answers an unchanged session from its stored view with the same
// figures it measured, and refuses a session without a model.
func TestSession(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	ctx := context.Background()
	first := Session(ctx, dir, SessionOptions{})
	if first.Err != nil || first.Result == nil || first.Result.Total == 0 {
		t.Fatalf("first: %+v", first)
	}
	again := Session(ctx, dir, SessionOptions{})
	if again.Err != nil || again.Result.Total != first.Result.Total || again.Result.Session != dir {
		t.Fatalf("cached: %+v, want total %d", again, first.Result.Total)
	}
	other := Session(ctx, dir, SessionOptions{Estimate: Options{Model: "gpt-4o", Window: 1000}})
	if other.Err != nil || other.Result.Model != "gpt-4o" {
		t.Fatalf("explicit model: %+v", other)
	}
	if _, err := os.Stat(CachePath(dir, ViewCacheFile)); err != nil {
		t.Fatalf("the view was not stored: %v", err)
	}
	nc := sessiontest.CopyFixture(t, "tools")
	if r := Session(ctx, nc, SessionOptions{Estimate: Options{NoCache: true}}); r.Err != nil || r.Result.Total != first.Result.Total {
		t.Fatalf("no cache: %+v", r)
	}
	if _, err := os.Stat(CachePath(nc, ViewCacheFile)); err == nil {
		t.Fatal("NoCache stored the view")
	}
	if r := Session(ctx, t.TempDir(), SessionOptions{}); r.Err == nil {
		t.Fatal("a directory without a session was measured")
	}
}

// Warm builds the rank table of the session's last measurement, and only
// that one; a session never measured warms nothing.
func TestWarm(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	r := Session(context.Background(), dir, SessionOptions{Estimate: Options{Model: "gpt-4o", Window: 1000}})
	if r.Err != nil || r.Result.Encoding != O200kBase {
		t.Fatalf("measure: %+v", r)
	}
	defer func(old map[string]*rankTable) { tables = old }(tables)
	tables = map[string]*rankTable{O200kBase: {}, Cl100kBase: {}}
	Warm(sessiontest.CopyFixture(t, "tools"))
	if tables[O200kBase].ranks != nil {
		t.Fatal("a session never measured warmed a table")
	}
	Warm(dir)
	if tables[O200kBase].ranks == nil || tables[Cl100kBase].ranks != nil {
		t.Fatalf("warmed o200k %v, cl100k %v; want only the session's o200k", tables[O200kBase].ranks != nil, tables[Cl100kBase].ranks != nil)
	}
}
