package netjoin

import (
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJoinHalfCloses: what one side writes reaches the other, and one
// side's end of stream reaches the other while it can still answer.
func TestJoinHalfCloses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer echo.Close()
	go func() { // the far end: reads to EOF, then answers
		c, err := echo.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		got, _ := io.ReadAll(c)
		c.Write(append([]byte("got "), got...))
	}()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		far, err := net.Dial("tcp", echo.Addr().String())
		if err != nil {
			c.Close()
			return
		}
		Join(c, far)
		c.Close()
		far.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	c.Write([]byte("hello"))
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	answer, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "got hello", string(answer))
}
