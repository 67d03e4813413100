package anthropic

// crushTitleCue starts the user message of Crush's title request
// (docs/INTEROP-crush.md), which quotes the user's text, markers included:
// it gets a title, never the marker's tool call.
const crushTitleCue = "Generate a concise title for the following content:"
