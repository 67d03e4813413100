package estimate

import "strings"

// A model switch (docs/ESTIMATE.md, "A model switch moves the rate"):
// Claude Opus 4.7 and later count with another tokenizer than the Claude
// models before them, so a request of one reads the same conversation as
// another count than a request of the other. Calibration keeps each
// recorded request's tokenizer, fits the latest tokenizer's requests
// alone and rescales a prediction across a switch.

// The tokenizers a recorded request's model counts with, as far as
// calibration tells them apart (MatchedRequest.Tokenizer): Claude's
// earlier one and Claude Opus 4.7's; any other model, or none recorded,
// is tokenizerUnknown and never reads as a switch.
const (
	tokenizerUnknown uint8 = iota
	tokenizerClaude
	tokenizerClaudeV47
)

// tokenizerOf is the tokenizer model counts with, for the provider's
// rules.
func tokenizerOf(provider, model string) uint8 {
	switch {
	case provider != ProviderAnthropic || !strings.Contains(strings.ToLower(model), "claude"):
		return tokenizerUnknown
	case claudeV47Tokenizer(model):
		return tokenizerClaudeV47
	}
	return tokenizerClaude
}

// tokenizerSlope is the prior slope of tokenizer t against the Claude
// proxy (PriorSlope), 0 for tokenizerUnknown.
func tokenizerSlope(t uint8) float64 {
	switch t {
	case tokenizerClaude:
		return ClaudeProxySlope
	case tokenizerClaudeV47:
		return ClaudeV47ProxySlope
	}
	return 0
}

// tokenizerPriors are the priors (PriorSlope, PriorFramingRate) of a
// Claude model counting with tokenizer t through the proxy.
func tokenizerPriors(t uint8) Priors {
	if t == tokenizerClaudeV47 {
		return Priors{Slope: ClaudeV47ProxySlope, FramingRate: ClaudeV47FramingRate}
	}
	return Priors{Slope: ClaudeProxySlope, FramingRate: ClaudeFramingRate}
}

// switched reports whether a request answered with tokenizer b follows one
// answered with a, both known and different: a model switch.
func switched(a, b uint8) bool {
	return a != tokenizerUnknown && b != tokenizerUnknown && a != b
}

// sinceSwitch is the index of the first of reqs' trailing requests that
// one tokenizer answered, looking back over at most FitWindow of them: a
// fit of the latest tokenizer's rate reads no request of another.
func sinceSwitch(reqs []MatchedRequest) int {
	n := len(reqs)
	for k := n - 1; k > 0 && k > n-FitWindow; k-- {
		if switched(reqs[k-1].Tokenizer, reqs[k].Tokenizer) {
			return k
		}
	}
	return max(0, n-FitWindow)
}
