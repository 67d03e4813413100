// Command fakeopenai runs the fake OpenAI provider of internal/fake/openai
// for interop/codex/record.sh: it listens on 127.0.0.1, writes its base URL
// to -url-file once it accepts connections, records request bodies under
// -record, and exits on SIGINT/SIGTERM or after -timeout, whichever comes
// first (a forgotten server never outlives its recording).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/openai"
)

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0 picks a free one)")
	record := flag.String("record", "", "directory for request-NNN.json files")
	urlFile := flag.String("url-file", "", "file that receives the base URL (http://127.0.0.1:PORT/v1)")
	timeout := flag.Duration("timeout", 10*time.Minute, "exit after this long")
	flag.Parse()
	if err := run(*port, *record, *urlFile, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "fakeopenai:", err)
		os.Exit(1)
	}
}

func run(port int, record, urlFile string, timeout time.Duration) error {
	srv, err := openai.New(record)
	if err != nil {
		return err
	}
	l, err := openai.Listen(port)
	if err != nil {
		return err
	}
	url := fmt.Sprintf("http://%s/v1", l.Addr())
	if urlFile != "" {
		if err := os.WriteFile(urlFile+".tmp", []byte(url+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(urlFile+".tmp", urlFile); err != nil {
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "fakeopenai: listening on", url)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return srv.Serve(ctx, l)
}
