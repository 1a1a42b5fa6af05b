//lint:file-ignore SA1019 the relay must carry roots, sampling and logging while clients and servers still use them (protocol 2026-07-28 deprecates them), so these tests exercise them
package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also the upstream server of the proxy's tests: with
// RETVAL_MCP_TEST_SERVER set it runs that server on stdio and exits.
func TestMain(m *testing.M) {
	switch os.Getenv("RETVAL_MCP_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "serve":
		err := upstream(nil).Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: os.Stdout, MaxLineLength: -1})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(0)
	case "exit3":
		fmt.Fprintln(os.Stderr, "upstream: bad configuration")
		os.Exit(3)
	case "lastwords":
		// Writes two messages that the pipe holds, and exits without
		// reading anything.
		fmt.Println(`{"jsonrpc":"2.0","method":"x/one"}`)
		fmt.Printf(`{"jsonrpc":"2.0","method":"x/two","params":{"pad":"%s"}}`+"\n", strings.Repeat("x", 30<<10))
		os.Exit(0)
	case "dies":
		// Reads one request, writes a line that is not JSON-RPC and half
		// a frame, and dies: a server crashing mid-call.
		bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Println("upstream: starting up (a log line on stdout)")
		fmt.Print(`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"te`)
		os.Exit(1)
	case "stubborn":
		// Ignores the end of its stdin and SIGTERM, as some servers do.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "upstream: ready")
		for range sig {
			fmt.Fprintln(os.Stderr, "upstream: SIGTERM ignored")
		}
	}
}

// bigLines is the text of the big results: 3000 numbered lines.
var bigLines = bigText(3000)

// upstreamState records what the upstream server saw.
type upstreamState struct {
	cancelled atomic.Bool
	// slowStarted is closed when the server has the slow call in hand.
	slowStarted     chan struct{}
	slowStartedOnce sync.Once

	mu sync.Mutex
	// recorded are the arguments of each call of record, as the server
	// received them.
	recorded []json.RawMessage
}

// calls returns the arguments record was called with, in order.
func (st *upstreamState) calls() []json.RawMessage {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.recorded)
}

type fileOut struct {
	Content string `json:"content"`
}

// upstream is the MCP server the proxy's tests relay to.
func upstream(st *upstreamState) *mcp.Server {
	if st == nil {
		st = &upstreamState{}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, &mcp.ServerOptions{
		Instructions: "upstream's own instructions", PageSize: 4, Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
	})
	text := func(t string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: t}} }
	raw := func(name string, h func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return h(ctx, req), nil
			})
	}
	// read: big text and a structuredContent copying it, with an
	// outputSchema, as server-filesystem's read_text_file.
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: "a big file"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, fileOut, error) {
			return &mcp.CallToolResult{Content: text(bigLines)}, fileOut{Content: bigLines}, nil
		})
	// record: keeps its arguments, as the server received them.
	raw("record", func(_ context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		st.mu.Lock()
		st.recorded = append(st.recorded, slices.Clone(req.Params.Arguments))
		st.mu.Unlock()
		return &mcp.CallToolResult{Content: text(fmt.Sprintf("recorded %d bytes", len(req.Params.Arguments)))}
	})
	raw("small", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text("small <result> & more"), StructuredContent: map[string]any{"n": 1}}
	})
	raw("stats", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text(bigLines), StructuredContent: map[string]any{"lines": 3000, "kind": "numbers"}}
	})
	// exit: the text and, beside its copy, a member of its own.
	raw("exit", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text(bigLines), StructuredContent: map[string]any{"text": bigLines, "exit_code": 3}}
	})
	// annotated: a small block, then a big one with annotations.
	raw("annotated", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "exit status 0"},
			&mcp.TextContent{Text: bigLines, Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}, Priority: 0.5}}}}
	})
	raw("mixed", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: bigLines[:len(bigLines)/2]},
			&mcp.ImageContent{Data: []byte("PNG..."), MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", MIMEType: "text/plain", Text: bigLines[len(bigLines)/2:]}},
			&mcp.ResourceLink{URI: "file:///c", Name: "c"},
			&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
		}}
	})
	raw("image", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte(strings.Repeat("P", 100<<10)), MIMEType: "image/png"}}}
	})
	raw("fail", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: text("error: " + bigLines)}
	})
	raw("huge", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: text(strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 20<<20/64))}
	})
	raw("progress", func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		tok := req.Params.GetProgressToken()
		for i := 1; i <= 3; i++ {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprint("step ", i)})
		}
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "logged from upstream"})
		return &mcp.CallToolResult{Content: text("done")}
	})
	raw("roots", func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		r, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: text(err.Error())}
		}
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return &mcp.CallToolResult{Content: text(strings.Join(uris, ","))}
	})
	raw("sample", func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		r, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: text(err.Error())}
		}
		return &mcp.CallToolResult{Content: text("sampled: " + r.Content.(*mcp.TextContent).Text)}
	})
	raw("slow", func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		if st.slowStarted != nil {
			st.slowStartedOnce.Do(func() { close(st.slowStarted) })
		}
		select {
		case <-ctx.Done():
			st.cancelled.Store(true)
		case <-time.After(time.Minute):
		}
		return &mcp.CallToolResult{Content: text("slow")}
	})
	raw("grow", func(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
		raw("grown", func(context.Context, *mcp.CallToolRequest) *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: text("new")}
		})
		return &mcp.CallToolResult{Content: text("grew")}
	})
	return s
}
