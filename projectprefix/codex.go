package projectprefix

import (
	"path/filepath"
	"sort"
	"strings"
)

// Codex keeps a user's rollouts by the day they started
// (<home>/sessions/YYYY/MM/DD/rollout-<start>-<id>.jsonl), every project's
// in one folder. The day's folder alone leaves the first rollout of each
// day, and of each project, to the prior, though the project's rollout of
// yesterday — or the user's in another project, which carried the same
// global AGENTS.md and MCP tools — recorded what it read. So a rollout
// looks in the day folders up to its own, newest first (at most
// maxCodexDays of them): the project's newest earlier rollout, else the
// median of the user's (user.go). A rollout's name starts with when it
// started, so the order and "earlier" are read from the names.

// maxCodexDays bounds the day folders a rollout looks in.
const maxCodexDays = 31

// codexRollouts are the rollouts that started before file's, in the day
// folders of a Codex sessions folder up to file's day, newest first (at
// most maxListed); nil when file is not such a rollout. Symlinks are not
// followed.
func codexRollouts(file string) []string {
	abs, err := filepath.Abs(file)
	if err != nil || !strings.HasPrefix(filepath.Base(abs), "rollout-") {
		return nil
	}
	day := filepath.Dir(abs)
	month, year := filepath.Dir(day), filepath.Dir(filepath.Dir(day))
	if !isNumber(filepath.Base(day), 2) || !isNumber(filepath.Base(month), 2) || !isNumber(filepath.Base(year), 4) {
		return nil
	}
	root := filepath.Dir(year)
	self := filepath.Base(abs)
	var out []string
	for _, d := range codexDays(root, filepath.Join(filepath.Base(year), filepath.Base(month), filepath.Base(day))) {
		entries, _ := readDir(filepath.Join(root, d))
		var names []string
		for _, e := range entries {
			n := e.Name()
			if strings.HasPrefix(n, "rollout-") && filepath.Ext(n) == ".jsonl" && e.Type().IsRegular() && n < self {
				names = append(names, n)
			}
		}
		sort.Sort(sort.Reverse(sort.StringSlice(names)))
		for _, n := range names {
			out = append(out, filepath.Join(root, d, n))
		}
		if len(out) >= maxListed {
			return out[:maxListed]
		}
	}
	return out
}

// codexDays are the day folders (YYYY/MM/DD, relative to root) up to
// last, newest first, at most maxCodexDays.
func codexDays(root, last string) []string {
	var days []string
	for _, y := range numberedDirs(root, 4) {
		for _, m := range numberedDirs(filepath.Join(root, y), 2) {
			for _, d := range numberedDirs(filepath.Join(root, y, m), 2) {
				if day := filepath.Join(y, m, d); day <= last {
					days = append(days, day)
				}
			}
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(days)))
	return days[:min(len(days), maxCodexDays)]
}

// numberedDirs are the folders of dir named by a number of digits digits.
func numberedDirs(dir string, digits int) []string {
	entries, _ := readDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() && isNumber(e.Name(), digits) {
			out = append(out, e.Name())
		}
	}
	return out
}

// isNumber says s is digits decimal digits.
func isNumber(s string, digits int) bool {
	return len(s) == digits && strings.Trim(s, "0123456789") == ""
}
