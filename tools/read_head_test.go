package tools

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingReader counts the reads made of r.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// TestReadHead: a file that one read returns whole, as big as it was when
// opened, costs that one read; any other reads on to the end or the head.
func TestReadHead(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000) // 10000 bytes
	for _, tc := range []struct {
		name        string
		data        []byte
		size        int64
		short       bool
		want, reads int
	}{
		{name: "whole in one read", data: data[:100], size: 100, want: 100, reads: 1},
		{name: "empty", data: nil, size: 0, want: 0, reads: 1},
		{name: "grew since opened", data: data[:100], size: 50, want: 100, reads: 2},
		{name: "shrank since opened", data: data[:100], size: 200, want: 100, reads: 2},
		{name: "larger than the head", data: data, size: 10000, want: 8192, reads: 1},
		{name: "short reads", data: data[:100], size: 100, short: true, want: 100, reads: 101},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = bytes.NewReader(tc.data)
			if tc.short {
				r = iotest.OneByteReader(r)
			}
			c := &countingReader{r: r}
			head := make([]byte, 8192)
			n, err := readHead(c, head, tc.size)
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
			assert.Equal(t, string(tc.data[:n]), string(head[:n]))
			assert.Equal(t, tc.reads, c.reads)
		})
	}
	t.Run("error", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := readHead(iotest.ErrReader(boom), make([]byte, 8192), 100)
		require.ErrorIs(t, err, boom)
		_, err = readHead(io.MultiReader(bytes.NewReader(data[:10]), iotest.ErrReader(boom)), make([]byte, 8192), 100)
		require.ErrorIs(t, err, boom)
	})
}
