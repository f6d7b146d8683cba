package egress

import (
	"io"
	"sync"
)

// A forwarded response body is copied in large blocks: Response.Write
// would otherwise copy it 32 KiB at a time, a read and a write (and a
// wakeup) per block, which made plain-HTTP downloads through the proxy
// half as fast as CONNECT tunnels (BenchmarkProxyTransferCurl). Each block
// is written as soon as it is read, so a streamed answer (server-sent
// events, a long poll) is passed on as it comes, never held to fill a
// buffer.

const bulkSize = 256 << 10

var bulkBufs = sync.Pool{New: func() any { b := make([]byte, bulkSize); return &b }}

func bulkCopy(dst io.Writer, src io.Reader) (int64, error) {
	buf := bulkBufs.Get().(*[]byte)
	defer bulkBufs.Put(buf)
	// The wrappers hide ReadFrom and WriteTo, so CopyBuffer uses buf.
	return io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, *buf)
}

// bulkWriter is the client connection for Response.Write: a body of known
// length arrives through ReadFrom.
type bulkWriter struct{ w io.Writer }

func (b bulkWriter) Write(p []byte) (int, error)         { return b.w.Write(p) }
func (b bulkWriter) ReadFrom(r io.Reader) (int64, error) { return bulkCopy(b.w, r) }

// bulkBody is the upstream body: a chunked or close-delimited one is
// copied through WriteTo.
type bulkBody struct{ io.ReadCloser }

func (b bulkBody) WriteTo(w io.Writer) (int64, error) { return bulkCopy(w, b.ReadCloser) }
