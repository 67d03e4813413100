package claudecodeinterop

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// TestMain lets the test binary serve the recorder's MCP server
// (mcpserver.go): a scenario recorded in process (TestLiveRerecord) starts
// the running binary, the test binary here, with MCPServerFlag.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == MCPServerFlag {
		if err := ServeMCP(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "mcp server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
