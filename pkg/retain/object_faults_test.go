package retain

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/retval/retval/internal/s3fake"
	"github.com/retval/retval/internal/s3test"
	"github.com/retval/retval/pkg/retain/s3store"
)

// faultyStore is a Store on a fresh bucket of srv whose calls go through
// a Faults wrapper, and a Bucket on the same prefix for the test's own
// looks.
func faultyStore(t *testing.T, srv *s3test.Server) (*Store, *s3store.Bucket, *s3fake.Faults) {
	t.Helper()
	loc := s3store.Location{Bucket: srv.NewBucket(t), Prefix: "fleet"}
	raw := srv.Open(loc)
	f := s3fake.Wrap(raw.API())
	b := s3store.New(f, loc)
	b.PartSize = 5 << 20
	return OpenBucket(b), raw, f
}

// The answer to the create of a value's descriptor is lost after the
// descriptor was made (found by the fault matrix): the writer cannot tell
// whether its value exists. It must not then delete the content the
// descriptor may name — a value whose content is missing — and, when its
// client's retry finds the descriptor there (412), must not take its own
// descriptor for another writer's and print a stub of content it has just
// deleted. Either the value is whole and its stub printed, or the input
// goes out verbatim; verify finds nothing missing.
func TestObjectDescriptorCreateAnswerLost(t *testing.T) {
	s3test.Each(t, testObjectDescriptorCreateAnswerLost)
}

func testObjectDescriptorCreateAnswerLost(t *testing.T, srv *s3test.Server) {
	for _, fault := range []struct {
		name  string
		fault s3fake.Fault
	}{{"dropped", s3fake.Drop()}, {"dropped and retried", s3fake.DropRetried()}} {
		t.Run(fault.name, func(t *testing.T) {
			s, _, f := faultyStore(t, srv)
			f.Add(s3fake.Rule{Match: func(c s3fake.Call) bool {
				return c.Op == s3fake.OpPut && strings.HasSuffix(c.Key, ".meta.json")
			}, Times: 1, Fault: fault.fault})
			in := numbered(3000)
			var out bytes.Buffer
			res, err := s.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			if f.Injected(s3fake.KindDrop) != 1 {
				t.Fatal("the descriptor's create was not faulted")
			}
			switch {
			case res.Retained:
				v, err := s.OpenValue("r", "c1")
				if err != nil {
					t.Fatalf("a stub was printed, and its value does not open: %v", err)
				}
				got, err := io.ReadAll(v.Section(0, v.Size()))
				v.Close()
				if err != nil || !bytes.Equal(got, in) {
					t.Fatalf("a stub was printed, and its value reads %d bytes of %d: %v", len(got), len(in), err)
				}
			case !res.Verbatim || !bytes.Equal(out.Bytes(), in):
				t.Fatalf("neither a stub nor the input: %+v, %d bytes out", res, out.Len())
			}
			rep, err := s.Verify(VerifyOptions{})
			if err != nil || rep.Missing != 0 || rep.Corrupt != 0 {
				t.Fatalf("verify after the lost answer: %+v, %v", rep, err)
			}
		})
	}
}

// A writer whose check after the commit fails (here a 500 on the HEAD of
// its content) takes its descriptor back; when that delete fails too (a
// second 500), the descriptor is still there, naming the content, which
// must then stay: deleting it would leave a value whose content is
// missing. The input goes out verbatim; the
// value stays whole (no stub names it), and verify finds nothing wrong.
func TestObjectTakeBackFailsKeepsContent(t *testing.T) {
	s3test.Each(t, testObjectTakeBackFailsKeepsContent)
}

func testObjectTakeBackFailsKeepsContent(t *testing.T, srv *s3test.Server) {
	for _, fault := range []struct {
		name  string
		fault s3fake.Fault
	}{{"refused", s3fake.InternalError()}, {"reset", s3fake.Reset()}, {"dropped", s3fake.Drop()}} {
		t.Run(fault.name, func(t *testing.T) {
			s, _, f := faultyStore(t, srv)
			f.Add(s3fake.Rule{Match: func(c s3fake.Call) bool {
				return c.Op == s3fake.OpHead && strings.HasSuffix(c.Key, "/r.values/c1.txt")
			}, Times: 1, Fault: s3fake.InternalError()})
			f.Add(s3fake.Rule{Match: func(c s3fake.Call) bool {
				return c.Op == s3fake.OpDelete && strings.HasSuffix(c.Key, "/r.values/c1.meta.json")
			}, Times: 1, Fault: fault.fault})
			in := numbered(3000)
			var out bytes.Buffer
			res, err := s.Retain(bytes.NewReader(in), &out, RetainOptions{Run: "r", Call: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			if f.Injected(s3fake.KindFail)+f.Injected(fault.fault.Kind) < 2 {
				t.Fatalf("the faults did not land: %v", f.Calls())
			}
			if res.Retained || !bytes.Equal(out.Bytes(), in) {
				t.Fatalf("retain after a failed check: %+v, %d bytes out; want the input verbatim", res, out.Len())
			}
			rep, err := s.Verify(VerifyOptions{})
			if err != nil || rep.Missing != 0 || rep.Corrupt != 0 {
				t.Fatalf("verify after the failed take-back: %+v, %v", rep, err)
			}
			if rep.Values == 1 {
				got, err := readValue(s, "r", "c1")
				if err != nil || !bytes.Equal(got, in) {
					t.Fatalf("the value left reads %d bytes of %d: %v", len(got), len(in), err)
				}
			}
		})
	}
}

func readValue(s *Store, run, id string) ([]byte, error) {
	v, err := s.OpenValue(run, id)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return io.ReadAll(v.Section(0, v.Size()))
}
