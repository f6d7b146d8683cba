package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStreamBuffer: output is sanitised as bash output is, taken as it
// comes, and what overflows the limit is dropped (oldest first) and
// counted.
func TestStreamBuffer(t *testing.T) {
	b := NewStreamBuffer(10)
	b.Write([]byte("\x1b[31mred\x1b[0m\r\n"))
	got, dropped := b.Take()
	assert.Equal(t, "red\n", got)
	assert.Zero(t, dropped)
	wake := b.Written()
	b.Write([]byte(strings.Repeat("é", 25)))
	select {
	case <-wake:
	default:
		t.Fatal("a write wakes the waiters")
	}
	got, dropped = b.Take()
	assert.Equal(t, strings.Repeat("é", 10), got, "the newest are kept")
	assert.Equal(t, int64(15), dropped)
	got, dropped = b.Take()
	assert.Empty(t, got)
	assert.Zero(t, dropped)
	assert.False(t, b.Pending())
}
