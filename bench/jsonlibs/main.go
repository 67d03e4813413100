// Command jsonlibs measures the JSON decoders considered for the importers'
// hot path (docs/BENCHMARKS.md "decoding transcripts") side by
// side on the lines of a Claude Code transcript: each line decoded into the
// importer's first-pass record and its content blocks, as
// format/claudecode does; then json.Valid against jsontext's check; then
// which decoders agree with encoding/json on malformed and odd lines
// (error or not, and the same value when both succeed).
//
//	go run ./bench/claudecode-gen -mb 100 -o /tmp/s100.jsonl
//	cd bench/jsonlibs && go run . /tmp/s100.jsonl
//	cd bench/jsonlibs && GOEXPERIMENT=jsonv2 go run . /tmp/s100.jsonl   # adds Go's own encoding/json/v2
//
// A module of its own, so that the candidates never enter ctxfold's go.mod.
package main

import (
	"bufio"
	stdjson "encoding/json"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	goccy "github.com/goccy/go-json"
)

type message struct {
	ID         string             `json:"id"`
	Role       string             `json:"role"`
	Model      string             `json:"model"`
	Content    stdjson.RawMessage `json:"content"`
	Usage      stdjson.RawMessage `json:"usage"`
	StopReason string             `json:"stop_reason"`
}
type progressData struct {
	Type    string `json:"type"`
	AgentID string `json:"agentId"`
}
type record struct {
	Type              string        `json:"type"`
	Subtype           string        `json:"subtype"`
	UUID              string        `json:"uuid"`
	ParentUUID        string        `json:"parentUuid"`
	LogicalParentUUID string        `json:"logicalParentUuid"`
	IsSidechain       bool          `json:"isSidechain"`
	IsCompactSummary  bool          `json:"isCompactSummary"`
	AgentID           string        `json:"agentId"`
	RequestID         string        `json:"requestId"`
	ParentToolUseID   string        `json:"parentToolUseID"`
	Message           *message      `json:"message"`
	Hash              string        `json:"hash"`
	Tail              []string      `json:"tail"`
	Data              *progressData `json:"data"`
}
type scanBlock struct {
	Type      string             `json:"type"`
	Text      string             `json:"text"`
	ID        string             `json:"id"`
	Name      string             `json:"name"`
	Input     stdjson.RawMessage `json:"input"`
	ToolUseID string             `json:"tool_use_id"`
}

type lib struct {
	name string
	un   func([]byte, any) error
}

var v2opts = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

var libs = []lib{
	{"encoding/json", stdjson.Unmarshal},
	{"go-json-experiment (v2, v1-like options)", func(b []byte, v any) error { return jsonv2.Unmarshal(b, v, v2opts) }},
	{"go-json-experiment/v1 Unmarshal", jsonv1.Unmarshal},
	{"go-json-experiment v2 + DefaultOptionsV1", func(b []byte, v any) error { return jsonv2.Unmarshal(b, v, jsonv1.DefaultOptionsV1()) }},
	{"go-json-experiment (v2 defaults)", func(b []byte, v any) error { return jsonv2.Unmarshal(b, v) }},
	{"goccy/go-json", goccy.Unmarshal},
	{"bytedance/sonic (std config)", sonic.ConfigStd.Unmarshal},
}

func decode(u func([]byte, any) error, line []byte) error {
	var r record
	if err := u(line, &r); err != nil {
		return err
	}
	if r.Message != nil && len(r.Message.Content) > 0 && r.Message.Content[0] == '[' {
		var bl []scanBlock
		return u(r.Message.Content, &bl)
	}
	return nil
}

func main() {
	f, _ := os.Open(os.Args[1])
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<20), 64<<20)
	var lines [][]byte
	size := 0
	for sc.Scan() && size < 30<<20 {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
		size += len(sc.Bytes())
	}
	fmt.Printf("%d lines, %d MB\n", len(lines), size>>20)
	libs = append(libs, experimentLibs...)
	for round := 0; round < 3; round++ {
		for _, l := range libs {
			runtime.GC()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			t := time.Now()
			for _, line := range lines {
				if err := decode(l.un, line); err != nil {
					panic(l.name + ": " + err.Error())
				}
			}
			d := time.Since(t)
			runtime.ReadMemStats(&ms1)
			fmt.Printf("%-45s %6.1f MB/s  %5.0f MB alloc  %d allocs\n", l.name, float64(size)/1e6/d.Seconds(), float64(ms1.TotalAlloc-ms0.TotalAlloc)/1e6, ms1.Mallocs-ms0.Mallocs)
		}
	}
	vopts := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	for round := 0; round < 3; round++ {
		t := time.Now()
		for _, l := range lines {
			_ = stdjson.Valid(l)
		}
		d1 := time.Since(t)
		t = time.Now()
		for _, l := range lines {
			_ = jsontext.Value(l).IsValid(vopts...)
		}
		d2 := time.Since(t)
		fmt.Printf("validate: json.Valid %.0f MB/s, jsontext IsValid %.0f MB/s\n", float64(size)/1e6/d1.Seconds(), float64(size)/1e6/d2.Seconds())
	}
	// malformed input: which library errs where encoding/json errs
	bad := []string{
		`{"type":"user","uuid":"a"`,
		`{"type":"user","uuid":"a"}x`,
		`{"type":"user","uuid":"a",}`,
		`{"type":"user","uuid":"a\u00"}`,
		"{\"type\":\"user\",\"uuid\":\"a\tb\"}",
		`{"type":"user","uuid":"a"} {"type":"user"}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"x"},]}}`,
		`{"type":"user","message":{"content":[{"type":"text","text":01}]}}`,
		`{"type":"user","uuid":NaN}`,
		`{"type":"user","isSidechain":"yes"}`,
		"{\"type\":\"user\",\"uuid\":\"\xff\"}",
		`{"type":"user","type":"assistant"}`,
		`{"Type":"user"}`,
		`{"type":"user","parent_uuid":"x"}`,
		`{"type":"user","parent-uuid":"x"}`,
	}
	for _, l := range libs {
		agree := 0
		for _, b := range bad {
			var r1, r2 record
			e1 := stdjson.Unmarshal([]byte(b), &r1) != nil
			e2 := l.un([]byte(b), &r2) != nil
			if e1 == e2 && (e1 || fmt.Sprint(r1) == fmt.Sprint(r2)) {
				agree++
			} else {
				fmt.Printf("  %s differs on %q: std err=%v\n", l.name, b, e1)
			}
		}
		fmt.Printf("%-45s agrees with encoding/json on %d/%d malformed or odd lines\n", l.name, agree, len(bad))
	}
}
