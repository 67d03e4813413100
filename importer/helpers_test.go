package importer_test

import "github.com/ctxfold/ctxfold/format/input"

func inputOpts(max int) input.Options { return input.Options{MaxLineBytes: max} }
