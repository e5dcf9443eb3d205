package ledger

import (
	"crypto/rand"
	"sync"
	"time"
)

// crockford is the Crockford base32 alphabet ULIDs use: no I, L, O or U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// idGen keeps the last ULID so that ids made within one millisecond still sort in
// the order they were made.
var idGen struct {
	sync.Mutex
	ms      uint64   // timestamp of the last id
	entropy [10]byte // its 80 random bits
}

// NewID returns a new ULID: 26 characters of Crockford base32, a 48-bit millisecond
// timestamp followed by 80 random bits. Ids sort by creation time; within one
// millisecond (or if the clock steps back) each id is the previous one plus one, so
// ids from one process are strictly increasing.
func NewID() string {
	now := uint64(time.Now().UnixMilli())

	idGen.Lock()
	if now > idGen.ms {
		idGen.ms = now
		// crypto/rand.Read never fails (it crashes the program if the OS cannot supply randomness).
		_, _ = rand.Read(idGen.entropy[:])
	} else if !increment(idGen.entropy[:]) {
		// 2^80 ids in one millisecond cannot happen, but keep the order if it did.
		idGen.ms++
		_, _ = rand.Read(idGen.entropy[:])
	}
	var raw [16]byte
	ms := idGen.ms
	for i := 5; i >= 0; i-- {
		raw[i] = byte(ms)
		ms >>= 8
	}
	copy(raw[6:], idGen.entropy[:])
	idGen.Unlock()

	return encodeULID(raw)
}

// increment adds one to a big-endian number and reports false on overflow.
func increment(b []byte) bool {
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return true
		}
	}
	return false
}

// encodeULID writes 128 bits as 26 base32 digits, most significant first; the first
// digit carries only the top 3 bits.
func encodeULID(raw [16]byte) string {
	var out [26]byte
	// Walk the 130-bit field (two leading zero bits) five bits at a time.
	for i := range out {
		bit := i*5 - 2 // position of this digit's first bit within raw
		var v int
		for j := range 5 {
			p := bit + j
			v <<= 1
			if p >= 0 && raw[p/8]&(0x80>>(p%8)) != 0 {
				v |= 1
			}
		}
		out[i] = crockford[v]
	}
	return string(out[:])
}
