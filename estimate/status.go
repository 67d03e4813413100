package estimate

// Status is the handful of figures a status line shows for a live
// session, taken from one Result so that they agree with estimate's
// (docs/ESTIMATE.md): Tokens is the gated total (calibrated when a
// calibration exists), Pct its share of the input budget.
type Status struct {
	Model string `json:"model"`
	// Tokens is what BudgetPct measures: the calibrated total when Basis
	// is "calibrated", else the raw total.
	Tokens    int `json:"tokens"`
	RawTokens int `json:"raw_tokens"`
	Window    int `json:"window"`
	// WindowSource says where Window comes from: "flag", "session",
	// "table" (BudgetInfo.WindowSource), or the status line's "client".
	WindowSource string  `json:"window_source"`
	InputBudget  int     `json:"input_budget"`
	Pct          float64 `json:"budget_pct"`
	Basis        string  `json:"budget_basis"`
	// CompactAt is the threshold as a budget percentage, and ToCompact
	// how many percentage points remain before it (≤ 0: compact now).
	CompactAt     float64 `json:"compact_at"`
	ToCompact     float64 `json:"to_compact"`
	ShouldCompact bool    `json:"should_compact"`
}

// StatusOf summarises r; compactAt is the threshold as a fraction of the
// input budget (DefaultCompactAt when ≤ 0).
func StatusOf(r *Result, compactAt float64) Status {
	if compactAt <= 0 {
		compactAt = DefaultCompactAt
	}
	s := Status{
		Model: r.Model, Tokens: r.Total, RawTokens: r.Total, Window: r.Window, WindowSource: r.WindowSource, InputBudget: r.InputBudget,
		Pct: r.BudgetPct, Basis: r.BudgetBasis, CompactAt: 100 * compactAt, ShouldCompact: r.ShouldCompact,
	}
	if c := r.Calibration; c != nil && r.BudgetBasis == BasisCalibrated {
		s.Tokens = c.CalibratedTotal
	}
	s.ToCompact = s.CompactAt - s.Pct
	return s
}
