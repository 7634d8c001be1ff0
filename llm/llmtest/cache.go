package llmtest

import (
	"crypto/sha256"
	"encoding/binary"
)

// lookback is how many block boundaries before a breakpoint the Anthropic
// API checks for a cache hit.
const lookback = 20

// prefixCache holds the prefix hashes written so far. The Server guards it
// with its mutex.
type prefixCache map[[32]byte]struct{}

// prefixes returns the chained SHA-256 of every prefix of blocks (hash i
// covers blocks 0..i and the model) and the token count of every prefix,
// counted as its bytes / 4.
func prefixes(model string, blocks []cacheBlock) ([][32]byte, []int64) {
	hashes := make([][32]byte, len(blocks))
	tokens := make([]int64, len(blocks))
	h := sha256.Sum256([]byte("model:" + model))
	var size int64
	for i, b := range blocks {
		buf := make([]byte, 0, len(h)+8+len(b.data))
		buf = append(buf, h[:]...)
		buf = binary.BigEndian.AppendUint64(buf, uint64(len(b.data)))
		buf = append(buf, b.data...)
		h = sha256.Sum256(buf)
		hashes[i] = h
		size += int64(len(b.data))
		tokens[i] = size / 4
	}
	return hashes, tokens
}

// anthropic accounts one Messages request: it reads the longest prefix
// written earlier that ends at a breakpoint or within the lookback window
// before one, then writes the prefix of every breakpoint that reaches
// minTokens. It returns the uncached input, cache read and cache write
// tokens.
func (c prefixCache) anthropic(model string, blocks []cacheBlock, minTokens int64) (input, read, write int64) {
	hashes, tokens := prefixes(model, blocks)
	if len(blocks) == 0 {
		return 0, 0, 0
	}
	total := tokens[len(tokens)-1]
	readEnd := -1
	for bp, b := range blocks {
		if !b.breakpoint {
			continue
		}
		for j := bp; j >= 0 && j > bp-lookback && j > readEnd; j-- {
			if _, ok := c[hashes[j]]; ok {
				readEnd = j
				break
			}
		}
	}
	if readEnd >= 0 {
		read = tokens[readEnd]
	}
	writeEnd := -1
	for bp, b := range blocks {
		if b.breakpoint && tokens[bp] >= minTokens && tokens[bp] > 0 {
			c[hashes[bp]] = struct{}{}
			writeEnd = bp
		}
	}
	if writeEnd > readEnd {
		write = tokens[writeEnd] - read
	}
	return total - read - write, read, write
}

// openai accounts one Chat Completions request with automatic prefix
// caching: the longest previously seen prefix at any block boundary is
// read, and every prefix reaching minTokens is written. It returns the
// prompt tokens (cached included) and the cached tokens.
func (c prefixCache) openai(model string, blocks []cacheBlock, minTokens int64) (prompt, cached int64) {
	hashes, tokens := prefixes(model, blocks)
	if len(blocks) == 0 {
		return 0, 0
	}
	for j := len(blocks) - 1; j >= 0; j-- {
		if _, ok := c[hashes[j]]; ok {
			cached = tokens[j]
			break
		}
	}
	for j := range blocks {
		if tokens[j] >= minTokens && tokens[j] > 0 {
			c[hashes[j]] = struct{}{}
		}
	}
	return tokens[len(tokens)-1], cached
}
