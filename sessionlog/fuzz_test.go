package sessionlog

import (
	"bytes"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the reader and the verifier. Neither may
// panic, and they must agree: what Check accepts, ReadEvents returns event
// for event, and re-encoding those events reproduces the input up to the
// torn tail byte for byte (so the parser accepts nothing the writer would
// not have written). Seeds are in testdata/fuzz/FuzzRead: a valid log, a
// torn one, an altered one and some that are not logs at all.
func FuzzRead(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, readErr := ReadEvents(bytes.NewReader(b))
		rep, checkErr := Check(bytes.NewReader(b))
		if checkErr != nil {
			return
		}
		if readErr != nil {
			t.Fatalf("Check accepts what ReadEvents refuses: %v", readErr)
		}
		if len(evs) != rep.Events {
			t.Fatalf("ReadEvents returned %d events, Check counted %d", len(evs), rep.Events)
		}
		var again []byte
		prev := genesis
		for _, e := range evs {
			line := encodeLine(e, prev)
			again = append(append(again, line...), '\n')
			prev = hashLine(line)
		}
		if want := b[:len(b)-int(rep.TornBytes)]; !bytes.Equal(again, want) {
			t.Fatalf("re-encoded log differs:\n got %q\nwant %q", again, want)
		}
	})
}
