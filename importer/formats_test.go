package importer_test

import (
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/importer"
)

// The formats whose fixtures live in their own packages: detected, each
// session verified and rendered (with and without its summaries), and the
// report's node counts match what the sessions hold.
func TestFormatFixtures(t *testing.T) {
	for _, tc := range []struct {
		path, format string
		// Counted by hand from the fixtures (see each package's test).
		sessions, nodes, summaries, results int
	}{
		{"../format/aider/testdata/.aider.chat.history.md", importer.Aider, 2, 8, 0, 0},
		{"../format/cline/testdata/tasks", importer.Cline, 2, 11, 1, 1},
		{"../format/openhands/testdata/output.jsonl", importer.OpenHands, 2, 18, 1, 5},
		{"../format/openhands/testdata/sessions", importer.OpenHands, 1, 6, 0, 2},
		{"../format/opencode/testdata/opencode.db", importer.OpenCode, 2, 11, 1, 3},
		{"../format/opencode/testdata/storage", importer.OpenCode, 2, 11, 1, 3},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rep, err := run(t, importer.Auto, filepath.Join(t.TempDir(), "out"), tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Format != tc.format || len(rep.Sessions) != tc.sessions {
				t.Fatalf("format %q, %d sessions", rep.Format, len(rep.Sessions))
			}
			nodes, summaries, results := 0, 0, 0
			for _, s := range rep.Sessions {
				st, _ := check(t, s.Dir)
				if st.Nodes != s.Nodes {
					t.Errorf("%s: report says %d nodes, session holds %d", s.Dir, s.Nodes, st.Nodes)
				}
				nodes += st.Nodes
				summaries += st.Summaries
				results += st.Results
			}
			if nodes != tc.nodes || summaries != tc.summaries || results != tc.results {
				t.Errorf("nodes %d summaries %d results %d, want %d %d %d", nodes, summaries, results, tc.nodes, tc.summaries, tc.results)
			}
		})
	}
}
