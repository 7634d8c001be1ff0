package otlpexport

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// The hand-written wire format agrees with the protobuf module's.
func TestPBWireMatchesProtowire(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1<<14 - 1, 1 << 14, 1<<32 + 5, math.MaxInt64, math.MaxUint64} {
		if got, want := appendVarint(nil, v), protowire.AppendVarint(nil, v); !bytes.Equal(got, want) {
			t.Errorf("varint %d: %x, protowire %x", v, got, want)
		}
		if sizeVarint(v) != protowire.SizeVarint(v) {
			t.Errorf("size of %d: %d, protowire %d", v, sizeVarint(v), protowire.SizeVarint(v))
		}
		if got, n := consumeVarint(protowire.AppendVarint(nil, v)); got != v || n != protowire.SizeVarint(v) {
			t.Errorf("consume %d: %d, %d", v, got, n)
		}
	}
	for _, v := range []int64{0, -1, 1, math.MinInt64, math.MaxInt64, -300} {
		if encodeZigZag(v) != protowire.EncodeZigZag(v) {
			t.Errorf("zigzag %d", v)
		}
	}
	for _, n := range []fieldNum{1, 15, 16, 2047, maxFieldNum} {
		for _, wt := range []wireType{varintType, fixed64Type, bytesType, fixed32Type} {
			if got, want := appendTag(nil, n, wt), protowire.AppendTag(nil, protowire.Number(n), protowire.Type(wt)); !bytes.Equal(got, want) {
				t.Errorf("tag %d/%d: %x, protowire %x", n, wt, got, want)
			}
		}
	}
	if got, want := appendFixed32(appendFixed64(appendString(appendBytes(nil, []byte("ab")), "cd"), 1<<40+3), 7), protowire.AppendFixed32(protowire.AppendFixed64(protowire.AppendString(protowire.AppendBytes(nil, []byte("ab")), "cd"), 1<<40+3), 7); !bytes.Equal(got, want) {
		t.Errorf("fixed and bytes: %x, protowire %x", got, want)
	}
}

// FuzzConsume holds the readers to protowire's on any input: the same
// lengths, negative together.
func FuzzConsume(f *testing.F) {
	f.Add([]byte{0x08, 0x96, 0x01})
	f.Add([]byte{0x12, 0x03, 'a', 'b', 'c'})
	f.Add([]byte{0x0b, 0x08, 0x01, 0x0c})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n := consumeVarint(b)
		pv, pn := protowire.ConsumeVarint(b)
		if (n < 0) != (pn < 0) || n >= 0 && (v != pv || n != pn) {
			t.Fatalf("varint %x: %d %d, protowire %d %d", b, v, n, pv, pn)
		}
		_, bn := consumeBytes(b)
		if _, pbn := protowire.ConsumeBytes(b); (bn < 0) != (pbn < 0) || bn >= 0 && bn != pbn {
			t.Fatalf("bytes %x: %d, protowire %d", b, bn, pbn)
		}
		num, typ, tn := consumeTag(b)
		pnum, ptyp, ptn := protowire.ConsumeTag(b)
		if (tn < 0) != (ptn < 0) {
			t.Fatalf("tag %x: %d, protowire %d", b, tn, ptn)
		}
		if tn < 0 {
			return
		}
		if num != fieldNum(pnum) || typ != wireType(ptyp) || tn != ptn {
			t.Fatalf("tag %x: %d/%d/%d, protowire %d/%d/%d", b, num, typ, tn, pnum, ptyp, ptn)
		}
		l := consumeFieldValue(num, typ, b[tn:])
		pl := protowire.ConsumeFieldValue(pnum, ptyp, b[tn:])
		if (l < 0) != (pl < 0) || l >= 0 && l != pl {
			t.Fatalf("field value %x: %d, protowire %d", b, l, pl)
		}
	})
}
