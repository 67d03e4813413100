// Command record re-records the Claude Code interop fixtures: it runs every
// scenario of package claudecodeinterop with the given client binary against
// the fake Anthropic provider and writes the normalised transcripts and
// requests under -out. interop/claude-code/record.sh installs the pinned
// client and calls it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	claudecodeinterop "github.com/ctxfold/ctxfold/interop/claude-code"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == claudecodeinterop.MCPServerFlag {
		// A scenario's MCP server (claudecodeinterop.ServeMCP), started by
		// the client.
		if err := claudecodeinterop.ServeMCP(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "record:", err)
			os.Exit(1)
		}
		return
	}
	client := flag.String("client", "", "path of the claude binary (version "+claudecodeinterop.Version+")")
	out := flag.String("out", "testdata/interop/claude-code/"+claudecodeinterop.Version, "output directory")
	only := flag.String("only", "", "comma-separated scenario names (default all)")
	timeout := flag.Duration("step-timeout", 3*time.Minute, "bound on one client run")
	flag.Parse()
	if *client == "" {
		fmt.Fprintln(os.Stderr, "record: -client is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := claudecodeinterop.Config{Client: *client, Out: *out, StepTimeout: *timeout, Log: os.Stderr}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	if err := claudecodeinterop.Record(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}
