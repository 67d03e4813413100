package claudecodeinterop

import (
	"context"
	"encoding/json"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The recorder's own MCP server: a scenario that needs one (its
// instructions reach the model as a system message, and a sub-agent's
// second request repeats them) runs the running binary again with
// MCPServerFlag — the record command, or this package's test binary
// (TestMain) when TestLiveRerecord records — so the recording needs
// nothing installed.

// MCPServerFlag makes the record command serve ServeMCP on its standard
// input and output instead of recording.
const MCPServerFlag = "-mcp-server"

// mcpInstructions is what the server tells the client to put in the
// model's context.
const mcpInstructions = "Scripted recorder server: note_fact keeps one fact for the session; call it only when asked to."

// ServeMCP serves the recorder's MCP server (one tool, instructions) on
// the given streams until the client closes them.
func ServeMCP(ctx context.Context) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "recorder", Version: "1"}, &mcp.ServerOptions{Instructions: mcpInstructions})
	type fact struct {
		Fact string `json:"fact" jsonschema:"the fact to keep"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "note_fact", Description: "Keep one fact for the session."},
		func(context.Context, *mcp.CallToolRequest, fact) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "kept"}}}, nil, nil
		})
	return s.Run(ctx, &mcp.StdioTransport{})
}

// mcpConfig is the --mcp-config value that starts the recorder's server.
func mcpConfig() string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"recorder": map[string]any{"type": "stdio", "command": exe, "args": []string{MCPServerFlag}},
	}})
	return string(b)
}
