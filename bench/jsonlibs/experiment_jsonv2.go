//go:build goexperiment.jsonv2

package main

import jsonv2std "encoding/json/v2"

// experimentLibs adds Go's own encoding/json/v2 (GOEXPERIMENT=jsonv2).
var experimentLibs = []lib{
	{"encoding/json/v2 (GOEXPERIMENT, defaults)", func(b []byte, v any) error { return jsonv2std.Unmarshal(b, v) }},
}
