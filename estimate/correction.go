package estimate

import "math"

// Correction is a fitted calibration applied to another view of the same
// session (compact's result, render --fit's candidates): the same prefix
// and slope.
type Correction struct {
	Method           string  `json:"method"`
	UnrecordedTokens int     `json:"unrecorded_tokens"`
	Slope            float64 `json:"slope"`
	// CarriedTokens is the hidden output the next request carries;
	// PrefixTokens the client's prefix, what a compacted view is anchored
	// on (ApplyCompacted).
	CarriedTokens int `json:"carried_tokens,omitempty"`
	PrefixTokens  int `json:"prefix_tokens"`
	// FramingTokens is the fitted framing of what followed the anchor in
	// the view the correction was fitted on (Calibration.FramingTokens).
	FramingTokens int `json:"framing_tokens,omitempty"`
	// prefix is PrefixTokens before rounding, when known: a compacted
	// view's figure rounds once, as estimate's own does (predictAt), not
	// the slope's product and the prefix each.
	prefix    float64
	hasPrefix bool
}

// Correction is c's model, to apply to another view; nil for nil.
func (c *Calibration) Correction() *Correction {
	if c == nil {
		return nil
	}
	return &Correction{Method: c.Method, UnrecordedTokens: c.UnrecordedTokens, Slope: c.Slope,
		CarriedTokens: c.CarriedTokens, PrefixTokens: c.PrefixTokens, FramingTokens: c.FramingTokens,
		prefix: c.prefix, hasPrefix: c.hasPrefix}
}

// Apply is the calibrated figure of a raw total.
func (c *Correction) Apply(total int) int {
	return c.apply(total, c.UnrecordedTokens+c.CarriedTokens+c.FramingTokens)
}

// ApplyCompacted is the calibrated figure of a view compacted since the
// latest request: anchored on the client's prefix (docs/ESTIMATE.md, "The
// anchor").
func (c *Correction) ApplyCompacted(total int) int {
	if c.hasPrefix {
		s := c.Slope
		if s <= 0 {
			s = 1
		}
		return max(0, int(math.Round(s*float64(total)+c.prefix)))
	}
	return c.apply(total, c.PrefixTokens)
}

func (c *Correction) apply(total, offset int) int {
	s := c.Slope
	if s <= 0 {
		s = 1
	}
	// A prefix inferred negative (the proxy overcounts) cannot take a
	// small view below nothing.
	return max(0, int(math.Round(s*float64(total)))+offset)
}

// RawBudget is the raw total that calibrates to budget: what a view's own
// count may reach for the provider to count at most budget.
func (c *Correction) RawBudget(budget int) int {
	if c == nil {
		return budget
	}
	s := c.Slope
	if s <= 0 {
		s = 1
	}
	return int(math.Floor(float64(budget-c.UnrecordedTokens-c.CarriedTokens-c.FramingTokens) / s))
}
