package otlpexport

import "encoding/binary"

// The protobuf wire format, the part the exporter needs: it writes the
// OTLP messages field by field and reads two fields of a partial-success
// reply. Written here rather than linked from the protobuf module, whose
// internal/detrand package reads the executable at every process start,
// cadre's and its reaper's (issue 24). wire_test.go checks it against
// the official generated OTLP messages.

// fieldNum is a protobuf field number.
type fieldNum int32

// wireType is a protobuf wire type.
type wireType int8

const (
	varintType     wireType = 0
	fixed64Type    wireType = 1
	bytesType      wireType = 2
	startGroupType wireType = 3
	endGroupType   wireType = 4
	fixed32Type    wireType = 5
)

// maxFieldNum is the largest valid field number.
const maxFieldNum = 1<<29 - 1

// maxTagNum is the largest field number a tag is read with (MessageSet
// goes past maxFieldNum), as protowire reads them.
const maxTagNum = 1<<31 - 1

// maxGroupDepth bounds the nesting of groups consumeFieldValue skips
// (protowire's default recursion limit).
const maxGroupDepth = 10000

func appendTag(b []byte, n fieldNum, t wireType) []byte {
	return appendVarint(b, uint64(n)<<3|uint64(t&7))
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func sizeVarint(v uint64) int {
	n := 1
	for v >= 0x80 {
		n++
		v >>= 7
	}
	return n
}

func appendFixed32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendFixed64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func appendBytes(b, v []byte) []byte {
	return append(appendVarint(b, uint64(len(v))), v...)
}

func appendString(b []byte, v string) []byte {
	return append(appendVarint(b, uint64(len(v))), v...)
}

func encodeBool(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

func encodeZigZag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// consumeVarint reads a varint; its length is negative when b does not
// start with a valid one (cut short, or over 64 bits).
func consumeVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		if i == 9 && c > 1 {
			return 0, -1
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// consumeTag reads a field's tag; the length is negative for a bad one.
func consumeTag(b []byte) (fieldNum, wireType, int) {
	v, n := consumeVarint(b)
	if n < 0 || v>>3 < 1 || v>>3 > maxTagNum {
		return 0, 0, -1
	}
	return fieldNum(v >> 3), wireType(v & 7), n
}

// consumeBytes reads a length-delimited value: its content and the
// length of the whole, negative when b is cut short.
func consumeBytes(b []byte) ([]byte, int) {
	l, n := consumeVarint(b)
	if n < 0 || l > uint64(len(b)-n) {
		return nil, -1
	}
	return b[n : n+int(l)], n + int(l)
}

// consumeFieldValue is the length of the value of field num of type t at
// the start of b, negative when it is malformed.
func consumeFieldValue(num fieldNum, t wireType, b []byte) int {
	return consumeValue(num, t, b, 0)
}

func consumeValue(num fieldNum, t wireType, b []byte, depth int) int {
	switch t {
	case varintType:
		_, n := consumeVarint(b)
		return n
	case fixed32Type:
		if len(b) < 4 {
			return -1
		}
		return 4
	case fixed64Type:
		if len(b) < 8 {
			return -1
		}
		return 8
	case bytesType:
		_, n := consumeBytes(b)
		return n
	case startGroupType:
		if depth >= maxGroupDepth {
			return -1
		}
		total := 0
		for {
			n2, t2, l := consumeTag(b[total:])
			if l < 0 {
				return -1
			}
			total += l
			if t2 == endGroupType {
				if n2 != num {
					return -1
				}
				return total
			}
			l = consumeValue(n2, t2, b[total:], depth+1)
			if l < 0 {
				return -1
			}
			total += l
		}
	}
	return -1
}
