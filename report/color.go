package report

// Palette applies ANSI colours when enabled and is the identity otherwise.
type Palette struct{ on bool }

// NewPalette returns a palette for the streams' colour decision.
func NewPalette(s *IOStreams) Palette { return Palette{on: s.ColorEnabled()} }

func (p Palette) wrap(code, s string) string {
	if !p.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p Palette) Red(s string) string    { return p.wrap("31", s) }
func (p Palette) Green(s string) string  { return p.wrap("32", s) }
func (p Palette) Yellow(s string) string { return p.wrap("33", s) }
func (p Palette) Cyan(s string) string   { return p.wrap("36", s) }
func (p Palette) Bold(s string) string   { return p.wrap("1", s) }
func (p Palette) Dim(s string) string    { return p.wrap("2", s) }
func (p Palette) Magenta(s string) string {
	return p.wrap("35", s)
}

// Enabled reports whether colours are on.
func (p Palette) Enabled() bool { return p.on }
