package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunRemote relays between the client (clientIn, clientOut) and the
// Streamable HTTP MCP server at url, through p, until the client is done
// or ctx is. The transport (its session header, SSE responses, the stream
// of the server's own messages) is the SDK's; messages cross it decoded,
// so a remote server's messages reach the client re-encoded rather than
// byte for byte. httpClient nil is http.DefaultClient.
func RunRemote(ctx context.Context, p *Proxy, url string, httpClient *http.Client, clientIn io.Reader, clientOut io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := (&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient, MaxEventSize: -1}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("cannot connect to %s: %w", url, err)
	}
	defer conn.Close()
	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	defer toServerR.Close()
	defer fromServerR.Close()
	// What the relay sends the server: decoded, one message at a time.
	sendErr := make(chan error, 1)
	go func() {
		sendErr <- readFrames(toServerR, func(frame []byte) error {
			msgs, _ := splitBatch(frame)
			for _, m := range msgs {
				msg, err := jsonrpc.DecodeMessage(m)
				if err != nil {
					return fmt.Errorf("a message for %s is not JSON-RPC: %w", url, err)
				}
				if err := conn.Write(ctx, msg); err != nil {
					return err
				}
			}
			return nil
		})
	}()
	// What the server sends: encoded, a frame each.
	recvErr := make(chan error, 1)
	go func() {
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				fromServerW.CloseWithError(io.EOF)
				recvErr <- err
				return
			}
			b, err := jsonrpc.EncodeMessage(msg)
			if err == nil {
				err = writeFrame(fromServerW, b)
			}
			if err != nil {
				recvErr <- err
				return
			}
		}
	}()
	relayErr := make(chan error, 1)
	go func() { relayErr <- p.Relay(clientIn, clientOut, fromServerR, toServerW) }()
	select {
	case err := <-relayErr:
		if errors.Is(err, io.EOF) {
			err = <-recvErr
			return fmt.Errorf("the server at %s ended the session: %w", url, err)
		}
		return err // nil: the client is done
	case err := <-sendErr:
		if err != nil {
			return fmt.Errorf("sending to %s: %w", url, err)
		}
		return nil
	case <-ctx.Done():
		return nil
	}
}
