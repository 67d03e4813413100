package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

type appendOptions struct {
	IO    *report.IOStreams
	Dir   string
	Node  transcript.Node
	Root  bool
	File  string
	JSON  bool
	Store store.WriteOptions
	// The single node's flags, before they become Node.
	Role, Content, ToolCalls string
	ID, Predecessor, Caller  string
	ToolCallID, Name         string
}

const appendLong = `Append one node (--role, --content, …) or a JSONL batch of nodes in the native
schema (--file F, "-" for stdin), all or nothing, and print one id a line.

Ids are generated when absent. The predecessor defaults to HEAD (in a batch, a
node without one follows the node before it; "predecessor": null is a root, as
in nodes.jsonl), resolved under the session lock.
HEAD advances only when the new node extends it and has no caller (docs/FORMAT.md §1).
Rejected, with nothing written: an unknown predecessor or caller, a duplicate
id, a tool result with no matching open tool call. A node with
metadata.compaction: true is validated as a summary (docs/FORMAT.md §4) and becomes the
active summary.`

func newAppendCmd(f *Factory, runF func(*appendOptions) error) *cobra.Command {
	opts := &appendOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "append DIR (--role ROLE --content TEXT | --file F)",
		Short: "Append one node, or a JSONL batch, and print the new ids",
		Long:  appendLong + exitStatusHelp(""),
		Example: `  ctxfold append ./s --role user --content "Fix the failing test"
  ctxfold append ./s --role assistant --content "" --tool-calls '[{"id":"c1","name":"bash","arguments":{"cmd":"go test ./..."}}]'
  ctxfold append ./s --role tool --tool-call-id c1 --content "ok"
  ctxfold append ./s --file batch.jsonl`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if err := opts.resolve(cmd.Flags().Changed); err != nil {
				return err
			}
			opts.JSON = f.IO.JSON
			opts.Store = f.writeOptions("append")
			if runF != nil {
				return runF(opts)
			}
			return runAppend(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Role, "role", "", "system, user, assistant or tool")
	fl.StringVar(&opts.Content, "content", "", "the node's text content")
	fl.StringVar(&opts.ID, "id", "", "node id (generated when absent)")
	fl.StringVar(&opts.Predecessor, "predecessor", "", "predecessor id (default: HEAD)")
	fl.BoolVar(&opts.Root, "root", false, "start a new root (no predecessor) even though the session has a HEAD")
	fl.StringVar(&opts.Caller, "caller", "", "id of the node whose turn spawned this one (never moves HEAD)")
	fl.StringVar(&opts.ToolCallID, "tool-call-id", "", "the call a tool node answers")
	fl.StringVar(&opts.Name, "name", "", "node name (a tool name, a sub-agent name)")
	fl.StringVar(&opts.ToolCalls, "tool-calls", "", `assistant tool calls as JSON: [{"id","name","arguments"}]`)
	fl.StringVar(&opts.File, "file", "", `append a JSONL batch of nodes ("-" reads stdin)`)
	_ = cmd.RegisterFlagCompletionFunc("role", fixedCompletion("system", "user", "assistant", "tool"))
	_ = cmd.RegisterFlagCompletionFunc("predecessor", nodeIDFlagCompletion(f))
	_ = cmd.RegisterFlagCompletionFunc("caller", nodeIDFlagCompletion(f))
	return cmd
}

// resolve rejects bad flag combinations and, without --file, builds the
// single node; changed says which flags the command line gave.
func (opts *appendOptions) resolve(changed func(string) bool) error {
	single := changed("role") || changed("content")
	if opts.File != "" && single {
		return &UsageError{Err: errors.New("--file cannot be combined with --role or --content")}
	}
	if opts.Root && changed("predecessor") {
		return &UsageError{Err: errors.New("--root cannot be combined with --predecessor")}
	}
	if opts.File != "" {
		return nil
	}
	if !changed("role") {
		return &UsageError{Err: errors.New("--role is required (or --file)")}
	}
	n := transcript.Node{Role: transcript.Role(opts.Role), Content: transcript.TextContent(opts.Content),
		ID: opts.ID, Predecessor: opts.Predecessor, Caller: opts.Caller, ToolCallID: opts.ToolCallID, Name: opts.Name}
	if opts.ToolCalls != "" {
		if err := json.Unmarshal([]byte(opts.ToolCalls), &n.ToolCalls); err != nil {
			return &UsageError{Err: fmt.Errorf("--tool-calls: expected a JSON array of {id, name, arguments}: %v", err)}
		}
	}
	if !n.Role.Valid() {
		return &UsageError{Err: fmt.Errorf("--role must be system, user, assistant or tool, got %q", opts.Role)}
	}
	opts.Node = n
	return nil
}

func runAppend(ctx context.Context, opts *appendOptions) error {
	var nodes []transcript.Node
	var lines []int
	var roots []bool
	if opts.File != "" {
		var err error
		nodes, lines, roots, err = readBatch(ctx, opts)
		if err != nil {
			return err
		}
		if len(nodes) == 0 {
			return &transcript.ParseError{File: opts.File, Msg: "no nodes in batch"}
		}
	} else {
		nodes = []transcript.Node{opts.Node}
	}
	var res *store.AppendResult
	warnings, err := store.Update(ctx, opts.Dir, opts.Store, func(tx *store.Tx) error {
		// The store refuses a session whose graph is broken (a duplicate
		// id, a cycle, HEAD pointing nowhere) before writing anything.
		var err error
		res, err = tx.Append(nodes, store.AppendOptions{RootFirst: opts.Root, Roots: roots, StampTime: true})
		return err
	})
	printWarnings(opts.IO.ErrOut, warnings)
	var ve *store.ValidationError
	if errors.As(err, &ve) && opts.File != "" && ve.File == "" {
		// Name the batch file's line rather than the node's position.
		k := ve.Index
		if k == 0 && len(nodes) == 1 {
			k = 1
		}
		if k > 0 && k <= len(lines) {
			ve.File, ve.Line = batchName(opts.File), lines[k-1]
		}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return report.JSON(opts.IO.Out, appendResult{Session: opts.Dir, IDs: res.IDs, Head: res.Head, HeadMoved: res.HeadMoved})
	}
	w := bufio.NewWriter(opts.IO.Out)
	for _, id := range res.IDs {
		fmt.Fprintln(w, render.TextSafe(id))
	}
	return w.Flush()
}

// readBatch parses a JSONL batch, naming file and line on error; it also
// returns each node's line and whether it is an explicit root.
func readBatch(ctx context.Context, opts *appendOptions) ([]transcript.Node, []int, []bool, error) {
	var r io.Reader
	name := batchName(opts.File)
	if opts.File == "-" {
		r = opts.IO.In
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, nil, &transcript.ParseError{File: name, Msg: err.Error()}
		}
		defer f.Close()
		r = f
	}
	// Parsing a large batch takes seconds: Ctrl-C stops it at the next
	// read rather than after the whole file.
	nodes, lines, roots, err := transcript.ReadBatch(ctxReader{ctx, r}, name, opts.Store.MaxLineBytes)
	if err != nil && ctx.Err() != nil {
		return nil, nil, nil, ctx.Err()
	}
	return nodes, lines, roots, err
}

// ctxReader fails reads once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func batchName(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return file
}

// appendResult is append's --json object.
type appendResult struct {
	Session   string   `json:"session"`
	IDs       []string `json:"ids"`
	Head      string   `json:"head"`
	HeadMoved bool     `json:"head_moved"`
}
