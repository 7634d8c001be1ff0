package otlpexport

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// client sends encoded export requests to one receiver.
type client struct {
	cfg Config
	hc  *http.Client
}

func newClient(cfg Config) (*client, error) {
	if cfg.URL == nil {
		return nil, errors.New("OTLP exporter: no endpoint URL")
	}
	switch cfg.Protocol {
	case HTTPProtobuf, HTTPJSON, GRPC:
	default:
		return nil, fmt.Errorf("OTLP exporter: protocol %q is not http/protobuf, http/json or grpc", cfg.Protocol)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	if cfg.Protocol == GRPC {
		// gRPC is HTTP/2 only: over TLS (ALPN h2), or cleartext with
		// prior knowledge for http:// endpoints.
		var p http.Protocols
		if cfg.URL.Scheme == "http" {
			p.SetUnencryptedHTTP2(true)
		} else {
			p.SetHTTP2(true)
		}
		tr.Protocols = &p
	}
	return &client{cfg: cfg, hc: &http.Client{Transport: tr}}, nil
}

// close drops the idle connections.
func (c *client) close() { c.hc.CloseIdleConnections() }

// attempt is the outcome of one request.
type attempt struct {
	err        error
	retryable  bool
	retryAfter time.Duration // the receiver's, 0 when it named none
}

// export sends msg (an encoded Export request), retrying as cfg.Retry
// says, within cfg.Timeout.
func (c *client) export(ctx context.Context, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	body, err := c.body(msg)
	if err != nil {
		return err
	}
	r := c.cfg.Retry
	wait, maxWait, maxElapsed := cmpDur(r.Initial, 5*time.Second), cmpDur(r.Max, 30*time.Second), cmpDur(r.MaxElapsed, time.Minute)
	start := time.Now()
	for {
		a := c.send(ctx, body)
		if a.err == nil || !a.retryable || r.Disabled {
			return a.err
		}
		d := a.retryAfter
		if d == 0 {
			// ±50 % jitter around the current wait.
			d = wait/2 + rand.N(wait+1)
			wait = min(time.Duration(float64(wait)*1.5), maxWait)
		}
		if time.Since(start)+d > maxElapsed {
			return fmt.Errorf("%w (gave up retrying after %s)", a.err, time.Since(start).Round(time.Millisecond))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return fmt.Errorf("%w (no time left to retry)", a.err)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (retry stopped: %w)", a.err, ctx.Err())
		case <-t.C:
		}
	}
}

func cmpDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// body is what goes on the wire for msg: compressed if asked, and for
// gRPC inside its 5-byte frame (compressed flag, big-endian length).
func (c *client) body(msg []byte) ([]byte, error) {
	if c.cfg.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(msg); err != nil {
			return nil, fmt.Errorf("gzip OTLP request: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("gzip OTLP request: %w", err)
		}
		msg = buf.Bytes()
	}
	if c.cfg.Protocol != GRPC {
		return msg, nil
	}
	framed := make([]byte, 5, 5+len(msg))
	if c.cfg.Gzip {
		framed[0] = 1
	}
	binary.BigEndian.PutUint32(framed[1:], uint32(len(msg)))
	return append(framed, msg...), nil
}

// send makes one request.
func (c *client) send(ctx context.Context, body []byte) attempt {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL.String(), bytes.NewReader(body))
	if err != nil {
		return attempt{err: fmt.Errorf("OTLP request to %s: %w", c.cfg.URL.Redacted(), err)}
	}
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "cadre-otlp")
	if c.cfg.Protocol == GRPC {
		return c.sendGRPC(ctx, req)
	}
	if c.cfg.Protocol == HTTPJSON {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
	}
	if c.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// The receiver is unreachable or the connection broke: worth
		// another try while the deadline allows.
		return attempt{err: fmt.Errorf("OTLP export to %s: %w", c.cfg.URL.Redacted(), err), retryable: ctx.Err() == nil}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return attempt{err: fmt.Errorf("OTLP export to %s: read the answer: %w", c.cfg.URL.Redacted(), err), retryable: true}
	}
	if resp.StatusCode/100 == 2 {
		return attempt{err: c.partial(resp.Header.Get("Content-Type"), data)}
	}
	a := attempt{err: fmt.Errorf("OTLP export to %s: %s%s", c.cfg.URL.Redacted(), resp.Status, statusMessage(resp.Header.Get("Content-Type"), data))}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		a.retryable = true
		a.retryAfter = retryAfter(resp.Header.Get("Retry-After"))
	}
	return a
}

// sendGRPC makes one unary gRPC call: the request is already framed; the
// answer's status is in the trailers (or, for a call that failed at once,
// in the headers).
func (c *client) sendGRPC(ctx context.Context, req *http.Request) attempt {
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	if c.cfg.Gzip {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	req.Header.Set("Grpc-Accept-Encoding", "gzip")
	if dl, ok := ctx.Deadline(); ok {
		if ms := time.Until(dl).Milliseconds(); ms > 0 {
			req.Header.Set("Grpc-Timeout", strconv.FormatInt(ms, 10)+"m")
		}
	}
	where := c.cfg.URL.Scheme + "://" + c.cfg.URL.Host
	resp, err := c.hc.Do(req)
	if err != nil {
		return attempt{err: fmt.Errorf("OTLP/gRPC export to %s: %w", where, err), retryable: ctx.Err() == nil}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return attempt{err: fmt.Errorf("OTLP/gRPC export to %s: read the answer: %w", where, err), retryable: true}
	}
	if resp.StatusCode != http.StatusOK {
		// No gRPC status: the HTTP one, mapped as gRPC maps it.
		a := attempt{err: fmt.Errorf("OTLP/gRPC export to %s: HTTP %s", where, resp.Status)}
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			a.retryable = true
		}
		return a
	}
	code := resp.Trailer.Get("Grpc-Status")
	msg := resp.Trailer.Get("Grpc-Message")
	if code == "" {
		code, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	if code == "" {
		return attempt{err: fmt.Errorf("OTLP/gRPC export to %s: the answer has no grpc-status", where)}
	}
	n, err := strconv.Atoi(code)
	if err != nil {
		return attempt{err: fmt.Errorf("OTLP/gRPC export to %s: grpc-status %q is not a number", where, code)}
	}
	if n != 0 {
		if m, err := url.PathUnescape(msg); err == nil {
			msg = m
		}
		return attempt{err: fmt.Errorf("OTLP/gRPC export to %s: %s: %s", where, grpcCode(n), msg), retryable: grpcRetryable(n)}
	}
	reply, err := unframe(data, resp.Header.Get("Grpc-Encoding"))
	if err != nil {
		return attempt{err: fmt.Errorf("OTLP/gRPC export to %s: %w", where, err)}
	}
	return attempt{err: c.partial("application/x-protobuf", reply)}
}

// unframe returns the message of a gRPC answer's first frame (empty when
// the answer has none), gunzipped when its flag says compressed and the
// answer's grpc-encoding is gzip.
func unframe(data []byte, encoding string) ([]byte, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if len(data) < 5 {
		return nil, fmt.Errorf("gRPC answer of %d bytes, shorter than a frame header", len(data))
	}
	n := binary.BigEndian.Uint32(data[1:5])
	if uint64(len(data)-5) < uint64(n) {
		return nil, fmt.Errorf("gRPC frame says %d bytes, %d came", n, len(data)-5)
	}
	msg := data[5 : 5+n]
	if data[0] == 0 {
		return msg, nil
	}
	if encoding != "gzip" {
		return nil, fmt.Errorf("gRPC answer compressed with %q, which was not offered", encoding)
	}
	zr, err := gzip.NewReader(bytes.NewReader(msg))
	if err != nil {
		return nil, fmt.Errorf("gRPC answer: gzip: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("gRPC answer: gzip: %w", err)
	}
	return out, nil
}

// grpcRetryable: the codes the OTLP specification retries (CANCELLED,
// DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS).
// RESOURCE_EXHAUSTED is retried only with a RetryInfo, which this
// exporter does not read, so it is not.
func grpcRetryable(code int) bool {
	switch code {
	case 1, 4, 10, 11, 14, 15:
		return true
	}
	return false
}

// grpcCode names a gRPC status code.
func grpcCode(code int) string {
	names := [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
		"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
		"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}
	if code >= 0 && code < len(names) {
		return names[code]
	}
	return "code " + strconv.Itoa(code)
}

// retryAfter reads a Retry-After header in seconds (0 when absent or a
// date, which then falls back to the backoff).
func retryAfter(h string) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || s <= 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// partial reads an Export response: a partial success (rejected items or
// a message) is an error that says so; an empty or unreadable answer is
// success.
func (c *client) partial(contentType string, data []byte) error {
	rejected, msg := int64(0), ""
	if strings.HasPrefix(contentType, "application/json") {
		var r map[string]struct {
			RejectedSpans      json.Number `json:"rejectedSpans"`
			RejectedDataPoints json.Number `json:"rejectedDataPoints"`
			ErrorMessage       string      `json:"errorMessage"`
		}
		if json.Unmarshal(data, &r) != nil {
			return nil
		}
		p := r["partialSuccess"]
		n := p.RejectedSpans
		if n == "" {
			n = p.RejectedDataPoints
		}
		rejected, _ = strconv.ParseInt(strings.Trim(string(n), `"`), 10, 64)
		msg = p.ErrorMessage
	} else {
		// ExportTraceServiceResponse / ExportMetricsServiceResponse:
		// field 1 partial_success {1: rejected, 2: error_message}.
		ps, ok := field(data, 1)
		if !ok {
			return nil
		}
		if v, ok := varintField(ps, 1); ok {
			rejected = int64(v)
		}
		if m, ok := field(ps, 2); ok {
			msg = string(m)
		}
	}
	if rejected == 0 && msg == "" {
		return nil
	}
	what := "spans"
	if c.cfg.Signal == Metrics {
		what = "data points"
	}
	return fmt.Errorf("OTLP receiver %s accepted the export in part: %d %s rejected: %s", c.cfg.URL.Redacted(), rejected, what, msg)
}

// statusMessage is ": message" of an error answer's google.rpc.Status
// (protobuf field 2, or JSON "message"), or of a short text body.
func statusMessage(contentType string, data []byte) string {
	switch {
	case strings.HasPrefix(contentType, "application/x-protobuf"):
		if m, ok := field(data, 2); ok {
			return ": " + string(m)
		}
	case strings.HasPrefix(contentType, "application/json"):
		var s struct{ Message string }
		if json.Unmarshal(data, &s) == nil && s.Message != "" {
			return ": " + s.Message
		}
	}
	if t := strings.TrimSpace(string(data)); t != "" && len(t) < 512 {
		return ": " + t
	}
	return ""
}

// field is the last bytes-typed field num of a protobuf message.
func field(msg []byte, num fieldNum) ([]byte, bool) {
	raw, ok := lastField(msg, num, bytesType)
	if !ok {
		return nil, false
	}
	v, l := consumeBytes(raw)
	return v, l >= 0
}

// varintField is the last varint field num of a protobuf message.
func varintField(msg []byte, num fieldNum) (uint64, bool) {
	raw, ok := lastField(msg, num, varintType)
	if !ok {
		return 0, false
	}
	v, l := consumeVarint(raw)
	return v, l >= 0
}

// lastField is the encoded value of the last field num of type typ in a
// protobuf message, up to the first malformed field.
func lastField(msg []byte, num fieldNum, typ wireType) ([]byte, bool) {
	var out []byte
	found := false
	for len(msg) > 0 {
		n, t, l := consumeTag(msg)
		if l < 0 {
			break
		}
		msg = msg[l:]
		if l = consumeFieldValue(n, t, msg); l < 0 {
			break
		}
		if n == num && t == typ {
			out, found = msg[:l], true
		}
		msg = msg[l:]
	}
	return out, found
}
