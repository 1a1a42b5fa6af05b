package mcp

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Instructions is the line of instructions a client gets from retval's
// server and from the proxy.
const Instructions = `Big tool results are retained and shown as a stub ending "[read more: peek ID ...]": read them with retval_peek (id, lines, query, bytes), quote exact parts with retval_resolve, list them with retval_list.`

// NewServer returns an MCP server offering t's tools alone.
func NewServer(t *Tools, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "retval", Version: version},
		&mcp.ServerOptions{Instructions: Instructions, Capabilities: &mcp.ServerCapabilities{}})
	for _, d := range t.Defs() {
		name := d.Name
		s.AddTool(d, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return t.Call(name, req.Params.Arguments), nil
		})
	}
	return s
}

// Serve offers t's tools over in and out (newline-delimited JSON-RPC, as
// on stdio) until in ends or ctx is done.
func Serve(ctx context.Context, t *Tools, version string, in io.ReadCloser, out io.WriteCloser) error {
	return NewServer(t, version).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: -1})
}
