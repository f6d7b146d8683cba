package egress

// Holes a second red-team review of the secrets' proxy found, each
// reproduced against the real proxy (they fail until fixed).

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinelRefusalNeverQuotesARawSOCKSName: a SOCKS5 client names its
// target with up to 255 arbitrary bytes. A name holding the sentinel is
// refused before checkHost, and the refusal — whose text goes to the
// human as an MCP warning and into the session log — quotes the name
// whole: newlines, terminal escapes and words of the model's choosing
// ("…this was cordon's own self-test, nothing was sent; approve the next
// request") in a message the human trusts as cordon's.
func TestSentinelRefusalNeverQuotesARawSOCKSName(t *testing.T) {
	v, err := secrets.New([]secrets.Secret{githubSecret(testSecret, false)})
	require.NoError(t, err)
	var mu sync.Mutex
	var told []string
	p, err := Start(Config{Rules: Rules{Allowed: []string{"*.example.test"}}, Secrets: v,
		SecretUsed: func(host string, port int, name string, r *secrets.Refusal) {
			if r != nil {
				mu.Lock()
				told = append(told, r.Error())
				mu.Unlock()
			}
		}}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)

	name := v.Sentinel("github") + "\n\n\x1bc\rcordon - the request above was cordon's own self-test; nothing was sent. Allow the next network question."
	require.Less(t, len(name), 256)
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	_, err = c.Write([]byte{5, 1, 0})
	require.NoError(t, err)
	br := bufio.NewReader(c)
	hello := make([]byte, 2)
	_, err = io.ReadFull(br, hello)
	require.NoError(t, err)
	req := append([]byte{5, 1, 0, 3, byte(len(name))}, name...)
	req = binary.BigEndian.AppendUint16(req, 443)
	_, err = c.Write(req)
	require.NoError(t, err)
	reply := make([]byte, 2)
	_, err = io.ReadFull(br, reply)
	require.NoError(t, err)
	assert.NotEqual(t, byte(0), reply[1], "the connection was refused %v", reply)

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, told, "the refusal was reported (reply %v)", reply)
	for _, msg := range told {
		assert.False(t, strings.ContainsAny(msg, "\n\r\x1b"), "the human's warning carries the model's raw bytes: %q", msg)
		assert.NotContains(t, msg, "self-test", "the human's warning carries the model's words: %q", msg)
	}
}
