package otlpexport

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"
)

// enc is where the conversion writes one OTLP message, field by field:
// each call names the field both ways, by its protobuf number and by its
// OTLP/JSON name (the proto field's lowerCamelCase JSON name). A field is
// written when the call is made: the conversion leaves out the proto3
// zero values it does not need to send.
type enc interface {
	str(f fieldNum, name, v string)
	// id is a trace or span id: bytes on the wire, hex in OTLP/JSON.
	id(f fieldNum, name string, v []byte)
	// bytes is any other bytes field: base64 in JSON.
	bytes(f fieldNum, name string, v []byte)
	boolean(f fieldNum, name string, v bool)
	// int64v is an int64 (varint; a string in JSON).
	int64v(f fieldNum, name string, v int64)
	// uint32v is a uint32, an int32 that is not negative or an enum
	// (varint; a number in JSON, enums too, as OTLP/JSON asks).
	uint32v(f fieldNum, name string, v uint32)
	// sint32v is a sint32 (zigzag varint; a number in JSON).
	sint32v(f fieldNum, name string, v int32)
	fixed32(f fieldNum, name string, v uint32)
	// fixed64 and sfixed64 are strings in JSON.
	fixed64(f fieldNum, name string, v uint64)
	sfixed64(f fieldNum, name string, v int64)
	double(f fieldNum, name string, v float64)
	// Packed repeated scalars.
	fixed64s(f fieldNum, name string, v []uint64)
	uint64s(f fieldNum, name string, v []uint64)
	doubles(f fieldNum, name string, v []float64)
	// begin opens a singular message field; end closes it.
	begin(f fieldNum, name string)
	end()
	// list opens a repeated message field, whose elements each start with
	// item and close with end; endList closes the field.
	list(f fieldNum, name string)
	item()
	endList()
}

// pbEnc writes protobuf. A nested message's length is known only when it
// ends: end moves its content up by the length's size and writes it in.
type pbEnc struct {
	b     []byte
	open  []int      // where each open message's content starts
	lists []fieldNum // the field of each open list
}

func (e *pbEnc) tag(f fieldNum, t wireType) { e.b = appendTag(e.b, f, t) }

func (e *pbEnc) str(f fieldNum, _ string, v string) {
	e.tag(f, bytesType)
	e.b = appendString(e.b, v)
}
func (e *pbEnc) id(f fieldNum, _ string, v []byte) {
	e.tag(f, bytesType)
	e.b = appendBytes(e.b, v)
}
func (e *pbEnc) bytes(f fieldNum, n string, v []byte) { e.id(f, n, v) }
func (e *pbEnc) boolean(f fieldNum, _ string, v bool) {
	e.tag(f, varintType)
	e.b = appendVarint(e.b, encodeBool(v))
}
func (e *pbEnc) int64v(f fieldNum, _ string, v int64) {
	e.tag(f, varintType)
	e.b = appendVarint(e.b, uint64(v))
}
func (e *pbEnc) uint32v(f fieldNum, _ string, v uint32) {
	e.tag(f, varintType)
	e.b = appendVarint(e.b, uint64(v))
}
func (e *pbEnc) sint32v(f fieldNum, _ string, v int32) {
	e.tag(f, varintType)
	e.b = appendVarint(e.b, encodeZigZag(int64(v)))
}
func (e *pbEnc) fixed32(f fieldNum, _ string, v uint32) {
	e.tag(f, fixed32Type)
	e.b = appendFixed32(e.b, v)
}
func (e *pbEnc) fixed64(f fieldNum, _ string, v uint64) {
	e.tag(f, fixed64Type)
	e.b = appendFixed64(e.b, v)
}
func (e *pbEnc) sfixed64(f fieldNum, n string, v int64) { e.fixed64(f, n, uint64(v)) }
func (e *pbEnc) double(f fieldNum, n string, v float64) {
	e.fixed64(f, n, math.Float64bits(v))
}
func (e *pbEnc) fixed64s(f fieldNum, _ string, v []uint64) {
	e.tag(f, bytesType)
	e.b = appendVarint(e.b, uint64(8*len(v)))
	for _, x := range v {
		e.b = appendFixed64(e.b, x)
	}
}
func (e *pbEnc) uint64s(f fieldNum, _ string, v []uint64) {
	n := 0
	for _, x := range v {
		n += sizeVarint(x)
	}
	e.tag(f, bytesType)
	e.b = appendVarint(e.b, uint64(n))
	for _, x := range v {
		e.b = appendVarint(e.b, x)
	}
}
func (e *pbEnc) doubles(f fieldNum, _ string, v []float64) {
	e.tag(f, bytesType)
	e.b = appendVarint(e.b, uint64(8*len(v)))
	for _, x := range v {
		e.b = appendFixed64(e.b, math.Float64bits(x))
	}
}
func (e *pbEnc) begin(f fieldNum, _ string) {
	e.tag(f, bytesType)
	e.open = append(e.open, len(e.b))
}
func (e *pbEnc) end() {
	start := e.open[len(e.open)-1]
	e.open = e.open[:len(e.open)-1]
	n := len(e.b) - start
	size := sizeVarint(uint64(n))
	for range size {
		e.b = append(e.b, 0)
	}
	copy(e.b[start+size:], e.b[start:start+n])
	appendVarint(e.b[:start], uint64(n))
}
func (e *pbEnc) list(f fieldNum, _ string) { e.lists = append(e.lists, f) }
func (e *pbEnc) item()                     { e.begin(e.lists[len(e.lists)-1], "") }
func (e *pbEnc) endList()                  { e.lists = e.lists[:len(e.lists)-1] }

// jsonEnc writes OTLP/JSON: the protobuf JSON mapping with the OTLP
// exceptions (trace and span ids in hex, enums as numbers).
type jsonEnc struct {
	b []byte
	// first says, for each open object or array, that nothing is in it
	// yet (no comma before the next member).
	first []bool
}

func newJSONEnc() *jsonEnc { return &jsonEnc{b: []byte{'{'}, first: []bool{true}} }

// close ends the top-level object.
func (e *jsonEnc) close() []byte { return append(e.b, '}') }

func (e *jsonEnc) sep() {
	if i := len(e.first) - 1; e.first[i] {
		e.first[i] = false
	} else {
		e.b = append(e.b, ',')
	}
}
func (e *jsonEnc) key(name string) {
	e.sep()
	e.b = appendJSONString(e.b, name)
	e.b = append(e.b, ':')
}
func (e *jsonEnc) str(_ fieldNum, n string, v string) {
	e.key(n)
	e.b = appendJSONString(e.b, v)
}
func (e *jsonEnc) id(_ fieldNum, n string, v []byte) {
	e.key(n)
	e.b = append(e.b, '"')
	e.b = hex.AppendEncode(e.b, v)
	e.b = append(e.b, '"')
}
func (e *jsonEnc) bytes(_ fieldNum, n string, v []byte) {
	e.key(n)
	e.b = append(e.b, '"')
	e.b = base64.StdEncoding.AppendEncode(e.b, v)
	e.b = append(e.b, '"')
}
func (e *jsonEnc) boolean(_ fieldNum, n string, v bool) {
	e.key(n)
	e.b = strconv.AppendBool(e.b, v)
}
func (e *jsonEnc) int64v(_ fieldNum, n string, v int64) {
	e.key(n)
	e.b = append(strconv.AppendInt(append(e.b, '"'), v, 10), '"')
}
func (e *jsonEnc) uint32v(_ fieldNum, n string, v uint32) {
	e.key(n)
	e.b = strconv.AppendUint(e.b, uint64(v), 10)
}
func (e *jsonEnc) sint32v(_ fieldNum, n string, v int32) {
	e.key(n)
	e.b = strconv.AppendInt(e.b, int64(v), 10)
}
func (e *jsonEnc) fixed32(f fieldNum, n string, v uint32) { e.uint32v(f, n, v) }
func (e *jsonEnc) fixed64(_ fieldNum, n string, v uint64) {
	e.key(n)
	e.b = appendQuotedUint(e.b, v)
}
func (e *jsonEnc) sfixed64(f fieldNum, n string, v int64) { e.int64v(f, n, v) }
func (e *jsonEnc) double(_ fieldNum, n string, v float64) {
	e.key(n)
	e.b = appendJSONFloat(e.b, v)
}
func (e *jsonEnc) fixed64s(_ fieldNum, n string, v []uint64) {
	e.key(n)
	e.b = append(e.b, '[')
	for i, x := range v {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendQuotedUint(e.b, x)
	}
	e.b = append(e.b, ']')
}
func (e *jsonEnc) uint64s(f fieldNum, n string, v []uint64) { e.fixed64s(f, n, v) }
func (e *jsonEnc) doubles(_ fieldNum, n string, v []float64) {
	e.key(n)
	e.b = append(e.b, '[')
	for i, x := range v {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendJSONFloat(e.b, x)
	}
	e.b = append(e.b, ']')
}
func (e *jsonEnc) begin(_ fieldNum, n string) {
	e.key(n)
	e.b = append(e.b, '{')
	e.first = append(e.first, true)
}
func (e *jsonEnc) end() {
	e.b = append(e.b, '}')
	e.first = e.first[:len(e.first)-1]
}
func (e *jsonEnc) list(_ fieldNum, n string) {
	e.key(n)
	e.b = append(e.b, '[')
	e.first = append(e.first, true)
}
func (e *jsonEnc) item() {
	e.sep()
	e.b = append(e.b, '{')
	e.first = append(e.first, true)
}
func (e *jsonEnc) endList() {
	e.b = append(e.b, ']')
	e.first = e.first[:len(e.first)-1]
}

func appendQuotedUint(b []byte, v uint64) []byte {
	return append(strconv.AppendUint(append(b, '"'), v, 10), '"')
}

// appendJSONFloat writes v as the protobuf JSON mapping does: a number,
// or the strings "NaN", "Infinity" and "-Infinity".
func appendJSONFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendJSONString writes s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
