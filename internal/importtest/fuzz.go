package importtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// ImportFunc is a vendor importer's Import.
type ImportFunc func(ctx context.Context, files []string, opts input.Options, target transcript.ImportTarget) error

// Fuzz is every vendor importer's fuzz target: the seed files in dir, then
// fuzzed bytes written to a file called name, are imported into a Target.
// Any input either imports or fails with a *transcript.ParseError (one
// line a user can act on); a panic, or a node that names an unknown id
// (which Target rejects), fails the target.
func Fuzz(f *testing.F, dir string, seeds []string, name string, imp ImportFunc) {
	for _, seed := range seeds {
		data, err := os.ReadFile(filepath.Join(dir, seed))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := imp(context.Background(), []string{path}, input.Options{MaxLineBytes: 1 << 16}, &Target{})
		var pe *transcript.ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("not a parse error: %v", err)
		}
	})
}
