package input

// A client's own configuration, read-only: where a custom model's context
// window is configured (OpenCode's provider.<id>.models.<id>.limit.context,
// pi's models.json contextWindow, …). An importer hands what it finds to a
// transcript.WindowReporter; nothing here writes a client's file.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxConfigBytes bounds one configuration file: they are a few KB, and a
// huge one is no configuration worth reading whole.
const maxConfigBytes = 8 << 20

// ConfigHome is $XDG_CONFIG_HOME, else ~/.config: where OpenCode, Kilo and
// Crush keep their global configuration; "" with no HOME.
func (e Env) ConfigHome() string {
	if x := e.Get("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	if e.Home == "" {
		return ""
	}
	return filepath.Join(e.Home, ".config")
}

// ReadConfig parses a client's JSON (or JSONC: comments and trailing
// commas, as OpenCode, Kilo and Qwen Code accept) configuration file. A
// missing file is (nil, nil); an unreadable or malformed one an error
// naming it, which a caller may report as a warning.
func ReadConfig(path string) (any, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxConfigBytes)
	}
	return ParseConfig(path, data)
}

// ReadConfig is ReadConfig that first tells e.Seen the path, and e.Warn
// why a file that is there was not read.
func (e Env) ReadConfig(path string) (any, error) {
	if e.Seen != nil {
		e.Seen(path)
	}
	doc, err := ReadConfig(path)
	if err != nil && e.Warn != nil {
		e.Warn(path, 0, "client configuration not read (no context window taken from it): "+strings.TrimPrefix(err.Error(), path+": "))
	}
	return doc, err
}

// ParseConfig parses JSON or JSONC text (an env override's content).
func ParseConfig(name string, data []byte) (any, error) {
	var v any
	if err := json.Unmarshal(StripJSONC(data), &v); err != nil {
		return nil, fmt.Errorf("%s: not a JSON configuration: %w", name, err)
	}
	return v, nil
}

// StripJSONC removes // and /* */ comments and the commas that trail the
// last member of an object or array, outside strings; plain JSON passes
// unchanged.
func StripJSONC(data []byte) []byte {
	out := make([]byte, 0, len(data))
	comma := -1 // index in out of a comma that may trail
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(data) {
				j = len(data) - 1
			}
			out = append(out, data[i:j+1]...)
			i, comma = j, -1
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i--
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			i += 2
			for i+1 < len(data) && (data[i] != '*' || data[i+1] != '/') {
				i++
			}
			i++
		case c == ',':
			comma = len(out)
			out = append(out, c)
		case c == '}' || c == ']':
			if comma >= 0 {
				out = append(out[:comma], out[comma+1:]...)
			}
			comma = -1
			out = append(out, c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			out = append(out, c)
		default:
			comma = -1
			out = append(out, c)
		}
	}
	return out
}

// ConfigValue follows keys through nested objects (an int key indexes an
// array); ok is false where a step is missing.
func ConfigValue(doc any, keys ...any) (any, bool) {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := doc.(map[string]any)
			if !ok {
				return nil, false
			}
			if doc, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			a, ok := doc.([]any)
			if !ok || k < 0 || k >= len(a) {
				return nil, false
			}
			doc = a[k]
		default:
			return nil, false
		}
	}
	return doc, true
}

// ConfigTokens is v as a positive token count (a JSON number, or a string
// of digits); 0 otherwise.
func ConfigTokens(v any) int64 {
	switch v := v.(type) {
	case float64:
		if v >= 1 && v < 1e12 && v == float64(int64(v)) {
			return int64(v)
		}
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < 1e12 {
			return n
		}
	}
	return 0
}

// DirsRootFirst lists dir and its parents, the filesystem root first: the
// order the clients merge project configuration files in (a deeper file
// overrides a shallower one).
func DirsRootFirst(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		out = append(out, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// ConfigModel is the entry of a models array (pi's, OpenClaw's and Crush's
// providers.<id>.models[]) whose "id" is id; ok is false when none is.
func ConfigModel(models any, id string) (entry map[string]any, ok bool) {
	list, _ := models.([]any)
	for _, m := range list {
		if e, _ := m.(map[string]any); e != nil && ConfigString(e["id"]) == id {
			return e, true
		}
	}
	return nil, false
}

// ConfigString is v as a string, "" when it is none.
func ConfigString(v any) string {
	s, _ := v.(string)
	return s
}
