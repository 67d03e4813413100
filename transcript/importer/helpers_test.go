package importer_test

import "github.com/ctxfold/ctxfold/transcript/importer/input"

func inputOpts(max int) input.Options { return input.Options{MaxLineBytes: max} }
