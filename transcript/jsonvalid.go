package transcript

import "github.com/go-json-experiment/json/jsontext"

// validOpts make jsontext's check accept what json.Valid accepts: a
// repeated name and invalid UTF-8 inside strings (checked elsewhere, or
// left to the full decode) are not syntax errors.
var validOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// validJSON is json.Valid at about three times its speed (jsontext's
// scanner, github.com/go-json-experiment/json, the code Go ships as
// encoding/json/v2; docs/BENCHMARKS.md "decoding transcripts"): the index
// and the node decoder check each line with it before walking it in
// place. Both follow RFC 8259; FuzzValidJSON holds them equal.
func ValidJSON(data []byte) bool { return jsontext.Value(data).IsValid(validOpts...) }
