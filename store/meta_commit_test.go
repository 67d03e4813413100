package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ctxfold/ctxfold/store"
)

// SetHead and UpdateMeta change the open session's meta without opening
// it again (the index is unchanged), and leave it as a fresh open reads
// it: the same meta, the same nodes.
func TestMetaWritesKeepTheSession(t *testing.T) {
	dir := newSession(t)
	mustAppend(t, dir, store.AppendOptions{}, user("u1", "", "hi"), asst("a1", "u1", "hello"), user("u2", "a1", "more"))
	var inTx store.Meta
	var ids []string
	_, err := store.Update(context.Background(), dir, writerOf(dir), func(tx *store.Tx) error {
		s := tx.Session()
		if err := tx.SetHead("a1"); err != nil {
			return err
		}
		if err := tx.UpdateMeta(func(m *store.Meta) {
			m.Model = "claude-sonnet-4-5"
			m.Extra["imported_from"] = json.RawMessage(`{"format": "claude-code",  "files": ["x.jsonl"]}`)
		}); err != nil {
			return err
		}
		if tx.Session() != s {
			t.Error("a meta write opened the session again")
		}
		inTx = tx.Session().Meta
		for i := range tx.Session().Len() {
			ids = append(ids, tx.Session().ID(i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir)
	defer s.Close()
	a, _ := json.MarshalIndent(inTx, "", "  ")
	b, _ := json.MarshalIndent(s.Meta, "", "  ")
	if string(a) != string(b) {
		t.Errorf("the meta in the transaction is not the one written:\n%s\n%s", a, b)
	}
	if s.Meta.Head != "a1" || len(ids) != s.Len() {
		t.Errorf("head %q, %d nodes in the transaction, %d on disk", s.Meta.Head, len(ids), s.Len())
	}
}
