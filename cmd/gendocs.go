package cmd

// The hidden gen-docs command: man pages and completion scripts,
// generated deterministically and checked for freshness in CI.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/ctxfold/ctxfold/report"
)

// completionFiles maps each shell to its committed file under completions/.
var completionFiles = map[string]string{
	"bash":       "ctxfold.bash",
	"zsh":        "_ctxfold",
	"fish":       "ctxfold.fish",
	"powershell": "ctxfold.ps1",
}

// docsDate is the date every generated man page carries, fixed so that
// regenerating gives identical bytes. Change it when cutting a release.
var docsDate = time.Date(2026, time.November, 30, 0, 0, 0, 0, time.UTC)

type genDocsOptions struct {
	IO    *report.IOStreams
	Dir   string
	Check bool
	Root  *cobra.Command
}

func newGenDocsCmd(f *Factory, runF func(*genDocsOptions) error) *cobra.Command {
	opts := &genDocsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Regenerate completions/ and man/ (maintainers)",
		Hidden: true,
		Long: `Write the shell completion scripts to DIR/completions/ and one man page per
command to DIR/man/ (section 1), deterministically: a fixed date and no
auto-generated tag, so regenerating an unchanged tree changes nothing.
Hand-written pages in other sections (man/ctxfold-format.5) are left alone.

With --check nothing is written: the pages and scripts are generated in
memory and compared with the committed ones; any difference is listed and
the exit status is 1 (a CI freshness gate).` + exitStatusHelp(""),
		Example: `  go run . gen-docs              # after changing a flag or a help text
  go run . gen-docs --check      # in CI: fail when completions/ or man/ are stale`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Root = cmd.Root()
			if runF != nil {
				return runF(opts)
			}
			return runGenDocs(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", ".", "repository root holding completions/ and man/")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "compare instead of writing; exit 1 on a difference")
	return cmd
}

// generateDocs renders every generated file, keyed by its path relative
// to the repository root (completions/…, man/….1).
func generateDocs(root *cobra.Command) (map[string][]byte, error) {
	out := map[string][]byte{}
	for shell, name := range completionFiles {
		var buf bytes.Buffer
		if err := writeCompletion(root, shell, &buf); err != nil {
			return nil, err
		}
		out[filepath.Join("completions", name)] = buf.Bytes()
	}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() && c != root || c.IsAdditionalHelpTopicCommand() {
			return nil
		}
		c.DisableAutoGenTag = true
		if c == root {
			c.Long += rootManSections
		}
		c.Long = manLong(c.Long)
		date := docsDate
		var buf bytes.Buffer
		header := &doc.GenManHeader{Title: strings.ToUpper(strings.ReplaceAll(c.CommandPath(), " ", "-")),
			Section: "1", Date: &date, Source: "ctxfold", Manual: "ctxfold manual"}
		if err := doc.GenMan(c, header, &buf); err != nil {
			return err
		}
		page := buf.Bytes()
		// Pages of commands that read sessions point at the format page.
		if (c == root || strings.Contains(c.Use, "DIR")) && bytes.Contains(page, []byte(".SH SEE ALSO")) {
			page = append(bytes.TrimRight(page, "\n"), ", \\fBctxfold-format(5)\\fP\n"...)
		}
		out[filepath.Join("man", strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")] = page
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	return out, nil
}

// rootManSections are the conventional closing sections of ctxfold(1),
// after EXIT STATUS (man-pages(7) order).
const rootManSections = `

# ENVIRONMENT

  CTXFOLD_<SETTING>   each setting ctxfold-config(1) lists, the flag name in
                      upper case with dashes as underscores: CTXFOLD_MODEL
  CTXFOLD_CONFIG      the config file to read
  CTXFOLD_API_KEY     the key of the openai summarizer (else OPENAI_API_KEY)
  CTXFOLD_DEBUG       print a stack trace with an internal error
  NO_COLOR            a non-empty value turns colour off (so does TERM=dumb)
  XDG_CONFIG_HOME     where the default config file lives

# FILES

  $XDG_CONFIG_HOME/ctxfold/config.yaml   the config file (~/.config/ctxfold/config.yaml)
  DIR/session.json, DIR/nodes.jsonl      a session; see ctxfold-format(5)`

// manLong adapts a Long help text (plain text for a terminal) to the
// markdown cobra/doc renders: EXIT STATUS becomes a man section and
// indented blocks (tables, lists of codes) stay preformatted instead of
// being reflowed into one paragraph.
func manLong(long string) string {
	long = strings.Replace(long, "\n\nEXIT STATUS\n", "\n\n# EXIT STATUS\n\n", 1)
	lines := strings.Split(long, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "  ") {
			if i > 0 && lines[i-1] != "" && !strings.HasPrefix(lines[i-1], "    ") {
				lines[i-1] += "\n"
			}
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}

func runGenDocs(_ context.Context, opts *genDocsOptions) error {
	files, err := generateDocs(opts.Root)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	// Section-1 pages on disk that no command generates any more.
	stale, _ := filepath.Glob(filepath.Join(opts.Dir, "man", "*.1"))
	var orphans []string
	for _, p := range stale {
		rel, _ := filepath.Rel(opts.Dir, p)
		if _, ok := files[rel]; !ok {
			orphans = append(orphans, rel)
		}
	}
	if opts.Check {
		var diffs []string
		for _, name := range names {
			have, err := os.ReadFile(filepath.Join(opts.Dir, name))
			switch {
			case err != nil:
				diffs = append(diffs, name+": missing")
			case !bytes.Equal(have, files[name]):
				diffs = append(diffs, name+": differs")
			}
		}
		for _, o := range orphans {
			diffs = append(diffs, o+": no command generates it")
		}
		for _, d := range diffs {
			fmt.Fprintf(opts.IO.ErrOut, "ctxfold: stale: %s\n", d)
		}
		if len(diffs) > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "ctxfold: hint: run 'go run . gen-docs' and commit completions/ and man/\n")
			return &SilentError{Code: ExitCheckFailed}
		}
		return nil
	}
	for _, dir := range []string{"completions", "man"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, dir), 0o755); err != nil {
			return err
		}
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(opts.Dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	for _, o := range orphans {
		if err := os.Remove(filepath.Join(opts.Dir, o)); err != nil {
			return err
		}
	}
	fmt.Fprintf(opts.IO.ErrOut, "wrote %d files under %s\n", len(names), opts.Dir)
	return nil
}
