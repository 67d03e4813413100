package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ctxfold/ctxfold/cmd"
)

var update = flag.Bool("update", false, "rewrite expected output in testdata/script")

// TestMain lets testscript run the real ctxfold entry point as the command
// "ctxfold" inside txtar scripts (testdata/script/*.txtar).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ctxfold": func() { os.Exit(cmd.Main()) },
	})
}

// TestScripts runs every end-to-end script. $FIXTURES points at fixtures/,
// $TESTDATA at testdata/ (the real clients' recordings),
// and $SHARED at the shared real transcripts' directory (../shared, or
// $CTXFOLD_SHARED_DIR: sessiontest.SharedRoot); the scripts needing it
// skip when it is absent, saying so ([!shared] skip '…').
// Refresh expected output with: go test -run TestScripts -update
func TestScripts(t *testing.T) {
	fixtures, _ := filepath.Abs("fixtures")
	testdata, _ := filepath.Abs("testdata")
	shared := sessiontest.SharedRoot()
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			env.Setenv("TESTDATA", testdata)
			env.Setenv("SHARED", shared)
			env.Setenv("NO_COLOR", "")
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "shared" {
				return shared != "", nil
			}
			return false, nil
		},
	})
}
