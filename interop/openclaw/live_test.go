package openclaw_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestLive re-records every scenario with the installed client
// ($CTXFOLD_OPENCLAW_BIN, else the pinned one record.sh installs under
// $HOME/.cache with Node 24) and checks the fresh recording twice: the
// oracle of TestOracle, and the same structure as the committed fixtures
// (entry types and message roles in seq order, the number of requests).
// Off unless CTXFOLD_INTEROP_LIVE=1; OpenClaw takes one to two minutes a
// turn on the loaded 2-core machine, about five for the scenario.
func TestLive(t *testing.T) {
	out := interoptest.Rerecord(t, "OpenClaw "+Version, 25*time.Minute)
	committed := map[string]scenario{}
	for _, s := range scenarios(t, fixturesOf(Version)) {
		committed[s.name] = s
	}
	for _, s := range scenarios(t, out) {
		t.Run(s.name, func(t *testing.T) {
			checkRenders(t, s)
			want, ok := committed[s.name]
			if !ok {
				t.Fatalf("scenario %s is not committed", s.name)
			}
			if got, exp := shape(t, s), shape(t, want); !reflect.DeepEqual(got, exp) {
				t.Errorf("transcript structure changed:\nnow:       %v\ncommitted: %v", got, exp)
			}
			if len(s.requests) != len(want.requests) {
				t.Errorf("%d requests, %d committed", len(s.requests), len(want.requests))
			}
		})
	}
}

// shape is the rows' entry types, a message's role beside its type;
// OpenClaw's own "custom" bookkeeping entries are left out (when it writes
// a cache-TTL marker depends on timing).
func shape(t *testing.T, s scenario) []string {
	t.Helper()
	var out []string
	for _, r := range s.rows {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role string `json:"role"`
			} `json:"message"`
		}
		if err := json.Unmarshal(r.Event, &e); err != nil {
			t.Fatal(err)
		}
		if e.Type != "custom" {
			out = append(out, e.Type+"/"+e.Message.Role)
		}
	}
	return out
}
