// Command fakegemini runs the fake Gemini API for interop/gemini-cli's
// record script: it writes its base URL to -url-file, appends every request
// to -requests (one JSON line each) and stops on SIGINT/SIGTERM or after
// -max-life, whichever comes first.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/gemini"
)

func main() {
	urlFile := flag.String("url-file", "", "write the base URL here once listening")
	reqFile := flag.String("requests", "", "append each request here as a JSON line")
	maxLife := flag.Duration("max-life", 20*time.Minute, "stop after this long")
	promptTokens := flag.Int("prompt-tokens", 0, "report this promptTokenCount on main-model answers (0: the structural count)")
	flag.Parse()
	if err := run(*urlFile, *reqFile, *maxLife, *promptTokens); err != nil {
		fmt.Fprintln(os.Stderr, "fakegemini:", err)
		os.Exit(1)
	}
}

func run(urlFile, reqFile string, maxLife time.Duration, promptTokens int) error {
	opts := gemini.Options{PromptTokens: promptTokens}
	if reqFile != "" {
		f, err := os.OpenFile(reqFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.Record = f
	}
	s, err := gemini.Start(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	if urlFile != "" {
		if err := os.WriteFile(urlFile+".tmp", []byte(s.URL()+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(urlFile+".tmp", urlFile); err != nil {
			return err
		}
	} else {
		fmt.Println(s.URL())
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-sig:
	case <-time.After(maxLife):
		return fmt.Errorf("stopped after -max-life %s", maxLife)
	}
	return nil
}
