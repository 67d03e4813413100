// Command fakeanthropic runs the fake Anthropic Messages provider for
// interop/claude-code/record.sh: it writes its base URL to --url-file, records
// every request under --record, and exits on SIGTERM/SIGINT or after
// --max-lifetime, so a forgotten server cannot outlive the recording.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/anthropic"
)

func main() {
	record := flag.String("record", "", "directory receiving one file per request")
	urlFile := flag.String("url-file", "", "file receiving the base URL once listening")
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	life := flag.Duration("max-lifetime", 20*time.Minute, "exit after this long regardless")
	flag.Parse()
	s, err := anthropic.Start(anthropic.Options{RecordDir: *record, Addr: *addr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeanthropic:", err)
		os.Exit(1)
	}
	if *urlFile != "" {
		if err := os.WriteFile(*urlFile, []byte(s.URL+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fakeanthropic:", err)
			os.Exit(1)
		}
	}
	fmt.Fprintln(os.Stderr, "fakeanthropic: listening on", s.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sig:
	case <-time.After(*life):
		fmt.Fprintln(os.Stderr, "fakeanthropic: max lifetime reached")
	}
	_ = s.Close()
	fmt.Fprintf(os.Stderr, "fakeanthropic: %d request(s) recorded\n", s.Requests())
}
