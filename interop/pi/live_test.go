package pi_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/interoptest"
)

// TestLive re-records every scenario with the installed client
// ($CTXFOLD_PI_BIN, else the pinned one record.sh installs under
// $HOME/.cache) and checks the fresh recording twice: the oracle of
// TestOracle, and the same structure as the committed fixtures (the
// sequence of entry types and message roles, the number of requests).
// Off unless CTXFOLD_INTEROP_LIVE=1; 190–260 s for the seven scenarios on
// the loaded 2-core machine once the client is cached.
func TestLive(t *testing.T) {
	out := interoptest.Rerecord(t, "pi "+Version, 10*time.Minute)
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
				t.Errorf("session structure changed:\nnow:       %v\ncommitted: %v", got, exp)
			}
			if len(s.requests) != len(want.requests) {
				t.Errorf("%d requests, %d committed", len(s.requests), len(want.requests))
			}
		})
	}
}

// shape is the session's entry types, a message's role beside its type.
func shape(t *testing.T, s scenario) []string {
	t.Helper()
	all, _ := lines(t, s.session)
	var out []string
	for _, line := range all {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role string `json:"role"`
			} `json:"message"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Type+"/"+e.Message.Role)
	}
	return out
}
