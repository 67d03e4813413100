package pi_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// inflated is the input the fake reports for [[inflate]] (900,000, to push
// pi into a compaction): not a count of the request.
const inflated = 900000

// TestEstimateNextRequest is issue 37's check for pi: `estimate FILE` on
// the session file as it was before each recorded request k ≥ 2
// (calibrated on requests 1…k−1, which the file records) against request
// k's recorded input. Requests whose recorded input, or whose
// predecessor's, is the fake's inflated figure are left out: no estimate
// from the transcript can reach them. The fake's usage is a quarter of the
// request's bytes, not a token count, and these sessions are short (the
// second request is calibrated on one, with the prior framing rate): the
// median is 0.99% over 32 requests and the test holds issue 37's 1%
// (on real pi sessions: 0.03% on the public one, docs/INTEROP-pi.md).
func TestEstimateNextRequest(t *testing.T) {
	var errs []float64
	for _, s := range scenarios(t, fixturesOf(Version)) {
		all, answers := lines(t, s.session)
		var seqs []int
		for seq := range answers {
			seqs = append(seqs, seq)
		}
		sort.Ints(seqs)
		prevInflated := false
		for k, seq := range seqs {
			at := answers[seq]
			measured := recordedInput(t, all[at])
			skip := k == 0 || measured == inflated || prevInflated
			prevInflated = measured == inflated
			if skip {
				continue
			}
			prefix := filepath.Join(t.TempDir(), "session.jsonl")
			if err := os.WriteFile(prefix, append(bytes.Join(all[:at], []byte("\n")), '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			var res struct {
				Calibration *struct {
					CalibratedTotal int64 `json:"calibrated_total"`
				} `json:"calibration"`
			}
			if err := json.Unmarshal([]byte(must(t, "estimate", prefix, "--json")), &res); err != nil {
				t.Fatal(err)
			}
			if res.Calibration == nil {
				t.Fatalf("%s request %d: no calibration", s.name, seq)
			}
			e := math.Abs(float64(res.Calibration.CalibratedTotal-measured)) / float64(measured)
			t.Logf("%s request %d: predicted %d, recorded %d (%.2f%%)", s.name, seq, res.Calibration.CalibratedTotal, measured, 100*e)
			errs = append(errs, e)
		}
	}
	if len(errs) < 10 {
		t.Fatalf("%d predicted requests, want at least 10", len(errs))
	}
	sort.Float64s(errs)
	med := errs[len(errs)/2]
	t.Logf("median next-request error %.2f%% over %d requests", 100*med, len(errs))
	if med > 0.01 {
		t.Errorf("median next-request error %.2f%% over %d requests; want ≤ 1%%", 100*med, len(errs))
	}
}

func recordedInput(t *testing.T, line []byte) int64 {
	t.Helper()
	var e struct {
		Message struct {
			Usage struct {
				Input, CacheRead, CacheWrite int64
			} `json:"usage"`
		} `json:"message"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		t.Fatal(err)
	}
	u := e.Message.Usage
	return u.Input + u.CacheRead + u.CacheWrite
}
