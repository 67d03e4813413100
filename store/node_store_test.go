package store_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// The same fields survive the store: appended through Tx, read back with
// Session.Node and RawLine.
func TestStoreKeepsUnknownFields(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "hello"))
	var n transcript.Node
	if err := json.Unmarshal([]byte(futureLine), &n); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, dir, store.AppendOptions{}, n)
	s := mustOpen(t, dir)
	i, ok := s.Lookup("a1")
	if !ok {
		t.Fatal("a1 missing")
	}
	raw, err := s.RawLine(i)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, []byte(futureLine), raw) {
		t.Fatalf("stored line differs:\nin:     %s\nstored: %s", futureLine, raw)
	}
}

// session.json fields unknown to this version survive every meta rewrite
// (append, checkout, UpdateMeta).
func TestMetaKeepsUnknownFields(t *testing.T) {
	dir := newSession(t)
	path := filepath.Join(dir, store.MetaFile)
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte(`"format_version": 1,`), []byte(`"format_version": 1, "x_owner": {"team": "infra"},`), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "a"), asst("a1", "", "b"))
	if _, err := store.Update(t.Context(), dir, testWrite, func(tx *store.Tx) error {
		if err := tx.SetHead("u1"); err != nil {
			return err
		}
		return tx.UpdateMeta(func(m *store.Meta) { m.Model = "other" })
	}); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir)
	if got := s.Meta.Extra["x_owner"]; got == nil || !jsonEqual(t, got, []byte(`{"team":"infra"}`)) {
		t.Fatalf("x_owner = %q", got)
	}
	if s.Meta.Head != "u1" || s.Meta.Model != "other" {
		t.Fatalf("meta = %+v", s.Meta)
	}
}

// Stored lines keep "<", ">" and "&" as they are (no HTML escaping), at
// every level.
func TestStoreDoesNotEscapeHTML(t *testing.T) {
	dir := newSession(t)
	n := user("u1", "", "a <b> & c")
	n.SetMeta("note", "x<y")
	mustAppend(t, dir, store.AppendOptions{}, n)
	data, _ := os.ReadFile(filepath.Join(dir, store.NodesFile))
	if want := `{"id":"u1","predecessor":null,"role":"user","content":"a <b> & c","metadata":{"note":"x<y"}}` + "\n"; string(data) != want {
		t.Fatalf("stored %s", data)
	}
}

// futureLine is the transcript package's future-version line (its tests
// read the same file).
var futureLine = func() string {
	data, err := os.ReadFile("../transcript/testdata/future-line.json")
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(string(data), "\n")
}()
