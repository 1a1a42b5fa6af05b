package cmd

import (
	"io"
	"testing"
)

// The MCP server and proxy live as long as their client: their store keeps
// the small values they read, checked, for the next call.
func TestServerStoreKeepsValues(t *testing.T) {
	e := &env{stdout: io.Discard, stderr: io.Discard}
	for _, cmd := range []string{"mcp serve", "mcp proxy"} {
		if st := serverStore(t.TempDir(), e, cmd); st.Cache == nil || st.OnLogError == nil {
			t.Errorf("%s: store without a value cache or a read-log warning", cmd)
		}
	}
	if st := logStore(t.TempDir(), e, "peek"); st.Cache != nil {
		t.Error("a one-call command's store keeps values it will never read again")
	}
}
