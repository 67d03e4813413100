package main

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/ctxfold/ctxfold/importer"
)

func main() {
	cf, _ := os.Create(os.Args[3] + ".cpu")
	pprof.StartCPUProfile(cf)
	runtime.MemProfileRate = 64 << 10
	_, err := importer.Import(context.Background(), importer.Options{From: "auto", Files: []string{os.Args[1]}, Out: os.Args[2]})
	pprof.StopCPUProfile()
	if err != nil {
		panic(err)
	}
	hf, _ := os.Create(os.Args[3] + ".heap")
	pprof.Lookup("allocs").WriteTo(hf, 0)
}
