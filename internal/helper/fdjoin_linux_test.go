package helper

import (
	"bytes"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestJoinFDsHalfCloses: what one side writes reaches the other, a large
// stream arrives whole, and one side's end of stream reaches the other
// while it can still answer.
func TestJoinFDsHalfCloses(t *testing.T) {
	pair := func() (int, int) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fds[0], fds[1]
	}
	client, bridgeNear := pair()
	bridgeFar, server := pair()
	go func() {
		joinFDs(bridgeNear, bridgeFar)
		unix.Close(bridgeNear)
		unix.Close(bridgeFar)
	}()
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	answered := make(chan []byte)
	go func() { // the far end: reads to EOF, then answers with what it got
		f := os.NewFile(uintptr(server), "server")
		defer f.Close()
		got, _ := io.ReadAll(f)
		f.Write(append([]byte("got "), got[len(got)-5:]...))
		unix.Shutdown(server, unix.SHUT_WR)
		answered <- got
	}()
	c := os.NewFile(uintptr(client), "client")
	defer c.Close()
	if _, err := c.Write(append(payload, "hello"...)); err != nil {
		t.Fatal(err)
	}
	if err := unix.Shutdown(client, unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	answer, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(answer) != "got hello" {
		t.Fatalf("answer %q, want %q", answer, "got hello")
	}
	if got := <-answered; !bytes.Equal(got, append(payload, "hello"...)) {
		t.Fatalf("the server got %d bytes, want %d", len(got), len(payload)+5)
	}
}
