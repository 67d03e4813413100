package graph

import (
	"context"
	"io"
)

func writeHTML(ctx context.Context, w io.Writer, l *layout, c *counter, opts Options) error {
	return nil
}
