package setup

// ClientKilo is Kilo's name in setup.
const ClientKilo = "kilo"

// kiloClient is Kilo (OpenCode's code under another name: the same
// plugin, in ~/.config/kilo/plugins/, and the MCP server in kilo.json).
var kiloClient = &Client{
	Name: ClientKilo, Title: "Kilo", Program: "kilo", Folder: ".config/kilo", Format: "kilo",
	Files: func(o Options) ([]string, error) {
		a, b, err := openCodeFlavourKilo.paths(o)
		return []string{a, b}, err
	},
	Plan:    openCodeFlavourKilo.plan,
	Inspect: openCodeFlavourKilo.inspect,
}
