package helper

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

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
	go joinFDs(bridgeNear, bridgeFar)                          // closes both when done
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

// TestJoinFDsIdleHoldsNoThread: a command may keep many connections open
// through the bridge; idle ones must wait in the poller, not each hold
// threads (two per connection would reach Go's thread limit).
func TestJoinFDsIdleHoldsNoThread(t *testing.T) {
	const conns = 300
	var ends []int
	for range conns {
		a, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		go joinFDs(a[1], b[0])
		ends = append(ends, a[0], b[1])
	}
	defer func() {
		for _, fd := range ends {
			unix.Close(fd)
		}
	}()
	time.Sleep(300 * time.Millisecond) // every join is waiting by now
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if n, ok := strings.CutPrefix(line, "Threads:"); ok {
			threads, _ := strconv.Atoi(strings.TrimSpace(n))
			if threads > 64 {
				t.Fatalf("%d idle joined connections hold %d threads", conns, threads)
			}
			return
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
}
