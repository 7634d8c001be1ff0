package retry

import (
	"context"
	"io"
	"net"
	"sync"
)

// A request body reaches the connection through an io.LimitedReader
// (net/http bounds it by its Content-Length), which hides the body's own
// WriteTo: net's generic copy then allocates a buffer of up to 32 KiB
// for every request on a plain-HTTP/1 connection — a local or gateway
// endpoint, the scripted model of the benchmarks — about as many bytes as
// the whole rest of a model call. HTTPClient's connections copy through
// buffers kept for reuse instead (TLS connections are the transport's own
// and HTTP/2 keeps its own buffers: they are not affected).

// copyBufSize is the size of a copy buffer, io.Copy's own.
const copyBufSize = 32 << 10

// copyConn is a dialed connection whose ReadFrom copies through a reused
// buffer.
type copyConn struct {
	net.Conn
	bufs *sync.Pool
}

// ReadFrom implements io.ReaderFrom.
func (c *copyConn) ReadFrom(r io.Reader) (int64, error) {
	if wt, ok := r.(io.WriterTo); ok {
		return wt.WriteTo(c.Conn)
	}
	bp, _ := c.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, copyBufSize)
		bp = &b
	}
	defer c.bufs.Put(bp)
	return io.CopyBuffer(writerOnly{c.Conn}, r, *bp)
}

// writerOnly hides a writer's ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }

// dialFunc is a transport's DialContext.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// reuseCopyBuffers returns dial with its connections wrapped in copyConn,
// the buffers shared by the connections of one transport.
func reuseCopyBuffers(dial dialFunc) dialFunc {
	bufs := &sync.Pool{}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &copyConn{Conn: c, bufs: bufs}, nil
	}
}
