package llmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Defaults of the server's bounds.
const (
	// DefaultMaxRequests is the request cap when WithMaxRequests is not given.
	DefaultMaxRequests = 10000
	// DefaultMaxBodyBytes is the body size limit (the Anthropic API's 32 MB).
	DefaultMaxBodyBytes = 32 << 20
)

// Option configures a Server.
type Option func(*config)

type config struct {
	latency     time.Duration
	maxRequests int
	maxBody     int64
	minCache    int64
	log         io.Writer
	models      []string
}

// WithLatency delays every model reply by d before its first byte.
func WithLatency(d time.Duration) Option { return func(c *config) { c.latency = d } }

// WithMaxRequests caps how many requests the server answers; every request
// past the cap gets HTTP 400 with x-should-retry: false and the first one
// records a violation. The default is [DefaultMaxRequests].
func WithMaxRequests(n int) Option { return func(c *config) { c.maxRequests = n } }

// WithMaxBodyBytes limits request bodies; a larger body gets HTTP 413. The
// default is [DefaultMaxBodyBytes].
func WithMaxBodyBytes(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithMinCacheTokens sets the smallest prefix, in tokens, that is written
// to the prompt cache (the real APIs use 1024 to 4096). The default is 0:
// every marked prefix is cached.
func WithMinCacheTokens(n int64) Option { return func(c *config) { c.minCache = n } }

// WithLogger writes one line per request to w, for debugging.
func WithLogger(w io.Writer) Option { return func(c *config) { c.log = w } }

// WithModels sets the model ids GET /v1/models lists (default
// "llmtest-model").
func WithModels(ids ...string) Option { return func(c *config) { c.models = ids } }

// Server is a scripted model server: a real HTTP server on 127.0.0.1 that
// answers the Anthropic Messages API and the OpenAI Chat Completions API
// from turn scripts. Its methods are safe for concurrent use.
type Server struct {
	cfg    config
	ts     *httptest.Server
	closed chan struct{}
	once   sync.Once

	mu         sync.Mutex
	scripts    map[string]*script
	requests   []*Request
	violations []string
	anthCache  prefixCache
	oaiCache   prefixCache
	seq        int
	capHit     bool
	toolSeq    map[string]int

	logMu sync.Mutex
}

// script is the turns of one key.
type script struct {
	turns  []Turn
	fn     func(*Request) Turn
	served int
}

// NewServer starts a server on 127.0.0.1. Close it when done.
func NewServer(opts ...Option) *Server {
	s := newServer(opts...)
	s.ts = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// newServer builds a server that does not listen yet.
func newServer(opts ...Option) *Server {
	s := &Server{
		cfg:       config{maxRequests: DefaultMaxRequests, maxBody: DefaultMaxBodyBytes, models: []string{"llmtest-model"}},
		closed:    make(chan struct{}),
		scripts:   map[string]*script{},
		anthCache: prefixCache{},
		oaiCache:  prefixCache{},
		toolSeq:   map[string]int{},
	}
	for _, o := range opts {
		o(&s.cfg)
	}
	return s
}

// URL is the server's base URL without /v1: the Anthropic SDK's base URL
// as it is; the OpenAI SDK's is URL()+"/v1".
func (s *Server) URL() string { return s.ts.URL }

// Close stops the server, ending pending delays, and waits for the
// handlers to return.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.ts.CloseClientConnections()
		s.ts.Close()
	})
}

// Script appends turns to the script of key. A request belongs to the
// longest key that occurs in the text of its first user message, or to
// key "" when none does; the n-th request of a key is answered by the n-th
// turn of its script.
func (s *Server) Script(key string, turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.script(key)
	sc.turns = append(sc.turns, turns...)
}

// ScriptFunc makes key answer requests with fn once its fixed turns (if
// any) are used up; fn sees a copy of the captured request. A zero Turn
// from fn counts as an exhausted script. fn may be called concurrently.
func (s *Server) ScriptFunc(key string, fn func(r *Request) Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script(key).fn = fn
}

func (s *Server) script(key string) *script {
	sc := s.scripts[key]
	if sc == nil {
		sc = &script{}
		s.scripts[key] = sc
	}
	return sc
}

// Requests returns copies of the captured requests in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.clone()
	}
	return out
}

// RequestsFor returns copies of the captured model requests of key, in
// arrival order.
func (s *Server) RequestsFor(key string) []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Request
	for _, r := range s.requests {
		if r.Protocol != "" && r.Key == key {
			out = append(out, r.clone())
		}
	}
	return out
}

// Violations returns every recorded violation: broken invariants of
// captured requests, exhausted scripts, the request cap, bodies that did
// not decode.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Remaining returns how many fixed turns of key have not been used yet.
func (s *Server) Remaining(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scripts[key]
	if sc == nil {
		return 0
	}
	return max(len(sc.turns)-sc.served, 0)
}

// matchKey returns the longest script key contained in text, or "".
// Equal lengths are broken by the smaller key, so routing is stable.
func (s *Server) matchKey(text string) string {
	best := ""
	found := false
	for k := range s.scripts {
		if k == "" || !strings.Contains(text, k) {
			continue
		}
		if !found || len(k) > len(best) || (len(k) == len(best) && k < best) {
			best, found = k, true
		}
	}
	return best
}

func keyHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:4])
}

// reply is a resolved turn ready to be written.
type reply struct {
	seq    int
	id     string
	model  string
	parts  []part
	stop   llm.StopReason
	usage  llm.Usage
	fault  *fault
	stream bool
	// includeUsage is OpenAI's stream_options.include_usage.
	includeUsage bool
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.serveModel(w, r, Anthropic, false)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.serveModel(w, r, Anthropic, true)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.serveModel(w, r, OpenAI, false)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.serveOther(w, r, http.StatusOK, s.modelsBody())
	default:
		s.serveOther(w, r, http.StatusNotFound, notFoundBody(r))
	}
}

// serveOther answers and captures a request that is no model call.
func (s *Server) serveOther(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), RemoteAddr: r.RemoteAddr, Arrived: time.Now()}
	if !s.admit(req) {
		writeCapError(w, "")
		return
	}
	writeJSON(w, status, body)
	s.finish(req, status)
}

// admit numbers and captures req, or refuses it past the request cap.
func (s *Server) admit(req *Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	req.Seq = s.seq
	if s.seq > s.cfg.maxRequests {
		if !s.capHit {
			s.capHit = true
			s.violations = append(s.violations, fmt.Sprintf("request #%d: request cap of %d reached; further requests refused", req.Seq, s.cfg.maxRequests))
		}
		return false
	}
	s.requests = append(s.requests, req)
	return true
}

// finish records the end of a request and logs it.
func (s *Server) finish(req *Request, status int) {
	s.mu.Lock()
	req.Finished = time.Now()
	req.Status = status
	line := fmt.Sprintf("llmtest: #%d %s %s %s key=%q turn=%d status=%d in=%d read=%d write=%d out=%d\n",
		req.Seq, req.Protocol, req.Method, req.Path, req.Key, req.Turn, status,
		req.Usage.InputTokens, req.Usage.CacheReadTokens, req.Usage.CacheWriteTokens, req.Usage.OutputTokens)
	s.mu.Unlock()
	s.logf("%s", line)
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.log, format, args...)
}

func (s *Server) violate(req *Request, msg string) {
	s.violations = append(s.violations, fmt.Sprintf("request #%d (%s %s, key %q): %s", req.Seq, req.Protocol, req.Path, req.Key, msg))
}

// serveModel handles a Messages, count_tokens or Chat Completions request.
func (s *Server) serveModel(w http.ResponseWriter, r *http.Request, proto Protocol, countOnly bool) {
	req := &Request{Protocol: proto, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), RemoteAddr: r.RemoteAddr, Arrived: time.Now()}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.maxBody))
	req.Body = body
	if !s.admit(req) {
		writeCapError(w, proto)
		return
	}
	status := http.StatusOK
	defer func() { s.finish(req, status) }()
	if err != nil {
		var tooBig *http.MaxBytesError
		status = http.StatusBadRequest
		if errors.As(err, &tooBig) {
			status = http.StatusRequestEntityTooLarge
		}
		s.mu.Lock()
		req.DecodeError = err.Error()
		s.mu.Unlock()
		writeError(w, proto, &fault{status: status, message: fmt.Sprintf("llmtest: read body: %v", err)}, req.Seq)
		return
	}

	var d *decoded
	if proto == Anthropic {
		d, err = decodeAnthropic(body)
	} else {
		d, err = decodeOpenAI(body)
	}
	if err != nil {
		s.mu.Lock()
		req.DecodeError = err.Error()
		s.violate(req, "cannot decode body: "+err.Error())
		s.mu.Unlock()
		status = http.StatusBadRequest
		writeError(w, proto, &fault{status: status, message: "llmtest: " + err.Error()}, req.Seq)
		return
	}

	s.mu.Lock()
	req.Model, req.System, req.Tools, req.Messages = d.model, d.system, d.tools, d.messages
	req.ServerTools = d.serverTools
	req.MaxTokens, req.Stream, req.Thinking, req.Breakpoints = d.maxTokens, d.stream, d.thinking, d.breakpoints
	// The key first, so violations name the agent that sent the request.
	req.Key = s.matchKey(req.FirstUserText())
	for _, v := range checkRequest(proto, d) {
		s.violate(req, v)
	}
	if countOnly {
		_, tokens := prefixes(d.model, d.blocks)
		var n int64
		if len(tokens) > 0 {
			n = tokens[len(tokens)-1]
		}
		req.Usage.InputTokens = n
		s.mu.Unlock()
		b, _ := json.Marshal(map[string]int64{"input_tokens": n})
		writeJSON(w, status, b)
		return
	}
	sc := s.script(req.Key)
	sc.served++
	req.Turn = sc.served
	var turn Turn
	fn := sc.fn
	if req.Turn <= len(sc.turns) {
		turn, fn = sc.turns[req.Turn-1], nil
	}
	var snapshot *Request
	if fn != nil {
		snapshot = req.clone()
	}
	s.mu.Unlock()

	if fn != nil {
		turn = s.call(req, fn, snapshot)
	}
	s.mu.Lock()
	if turn.isZero() {
		msg := fmt.Sprintf("llmtest: script for key %q exhausted", req.Key)
		s.violate(req, fmt.Sprintf("script for key %q exhausted at turn %d", req.Key, req.Turn))
		turn = Text(msg)
	}
	rp := s.resolve(req, d, turn)
	s.mu.Unlock()

	if !s.wait(r, s.cfg.latency+turn.delay) {
		status = 499
		return
	}
	if proto == Anthropic {
		status = writeAnthropic(w, rp)
	} else {
		status = writeOpenAI(w, rp)
	}
}

// call runs a ScriptFunc; a panic in it is recorded as a violation and
// answered with a text saying so, so one bad script cannot take the server
// down.
func (s *Server) call(req *Request, fn func(*Request) Turn, snapshot *Request) (turn Turn) {
	defer func() {
		if p := recover(); p != nil {
			s.mu.Lock()
			s.violate(req, fmt.Sprintf("script function for key %q panicked: %v", req.Key, p))
			s.mu.Unlock()
			turn = Text(fmt.Sprintf("llmtest: script function for key %q panicked", req.Key))
		}
	}()
	return fn(snapshot)
}

// resolve turns a turn into a reply: usage from the prompt cache and ids
// for its tool uses. The caller holds s.mu.
func (s *Server) resolve(req *Request, d *decoded, turn Turn) *reply {
	rp := &reply{seq: req.Seq, model: d.model, stop: turn.stopReason(), fault: turn.fault, stream: d.stream, includeUsage: d.includeUsage}
	if req.Protocol == Anthropic {
		rp.id = fmt.Sprintf("msg_llmtest_%d", req.Seq)
	} else {
		rp.id = fmt.Sprintf("chatcmpl-llmtest-%d", req.Seq)
	}
	if rp.fault != nil && rp.fault.kind == faultHTTP {
		return rp
	}
	rp.parts = clone(turn.parts)
	serverToolIDs(rp.parts, req.Seq)
	for i := range rp.parts {
		p := &rp.parts[i]
		if p.kind != partToolUse || p.id != "" {
			continue
		}
		s.toolSeq[req.Key]++
		if req.Protocol == Anthropic {
			p.id = ToolUseID(req.Key, s.toolSeq[req.Key])
		} else {
			p.id = CallID(req.Key, s.toolSeq[req.Key])
		}
	}
	if req.Protocol == Anthropic {
		in, read, write := s.anthCache.anthropic(d.model, d.blocks, s.cfg.minCache)
		rp.usage = llm.Usage{InputTokens: in, CacheReadTokens: read, CacheWriteTokens: write}
	} else {
		prompt, cached := s.oaiCache.openai(d.model, d.blocks, s.cfg.minCache)
		rp.usage = llm.Usage{InputTokens: prompt - cached, CacheReadTokens: cached}
	}
	rp.usage.OutputTokens = turn.outputTokens()
	if turn.usage != nil {
		rp.usage = *turn.usage
	}
	req.Usage = rp.usage
	return rp
}

// wait sleeps d, or less when the client leaves or the server closes; it
// reports whether the reply should still be written.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closed:
		return false
	}
}

func (s *Server) modelsBody() []byte {
	type model struct {
		ID          string `json:"id"`
		Type        string `json:"type"`
		Object      string `json:"object"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
	}
	ids := append([]string(nil), s.cfg.models...)
	sort.Strings(ids)
	data := make([]model, len(ids))
	for i, id := range ids {
		data[i] = model{ID: id, Type: "model", Object: "model", DisplayName: id, CreatedAt: "2025-01-01T00:00:00Z", Created: 1735689600, OwnedBy: "llmtest"}
	}
	body := map[string]any{"object": "list", "data": data, "has_more": false}
	if len(ids) > 0 {
		body["first_id"], body["last_id"] = ids[0], ids[len(ids)-1]
	}
	b, _ := json.Marshal(body)
	return b
}

// notFoundBody is an error body both SDKs can read.
func notFoundBody(r *http.Request) []byte {
	b, _ := json.Marshal(map[string]any{
		"type": "error",
		"error": map[string]any{
			"type":    "not_found_error",
			"message": fmt.Sprintf("llmtest: no route for %s %s", r.Method, r.URL.Path),
			"code":    "not_found",
			"param":   nil,
		},
	})
	return b
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeCapError(w http.ResponseWriter, proto Protocol) {
	w.Header().Set("x-should-retry", "false")
	writeError(w, proto, &fault{status: http.StatusBadRequest, message: "llmtest: request cap reached"}, 0)
}

// writeError writes an HTTP error in the protocol's shape, with the
// retry headers of a rate-limit fault.
func writeError(w http.ResponseWriter, proto Protocol, f *fault, seq int) {
	h := w.Header()
	if f.hasRetry {
		secs := int64((f.retryAfter + time.Second - 1) / time.Second)
		h.Set("retry-after", fmt.Sprint(secs))
		h.Set("retry-after-ms", fmt.Sprint(f.retryAfter.Milliseconds()))
	}
	var b []byte
	if proto == OpenAI {
		typ, code := openaiErrorType(f.status)
		h.Set("x-request-id", fmt.Sprintf("req_llmtest_%d", seq))
		b, _ = json.Marshal(map[string]any{"error": map[string]any{"message": f.message, "type": typ, "param": nil, "code": code}})
	} else {
		typ := f.errType
		if typ == "" {
			typ = anthropicErrorType(f.status)
		}
		h.Set("request-id", fmt.Sprintf("req_llmtest_%d", seq))
		b, _ = json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": f.message}, "request_id": fmt.Sprintf("req_llmtest_%d", seq)})
	}
	writeJSON(w, f.status, b)
}
