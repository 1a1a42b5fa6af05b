#include "textflag.h"

// MASK turns the byte masks (0xff where a byte matched) of a block's four
// vectors V4-V7 into one bit a byte in R: each byte is ANDed with its bit
// (V15: 1, 2, 4, … 128 over every 8 bytes), then pairwise sums gather the
// bits of each 8 bytes into one byte, in order (simdjson's NEON bitmask).
#define MASK(R) \
	VAND  V15.B16, V4.B16, V4.B16; \
	VAND  V15.B16, V5.B16, V5.B16; \
	VAND  V15.B16, V6.B16, V6.B16; \
	VAND  V15.B16, V7.B16, V7.B16; \
	VADDP V5.B16, V4.B16, V4.B16; \
	VADDP V7.B16, V6.B16, V6.B16; \
	VADDP V6.B16, V4.B16, V4.B16; \
	VADDP V4.B16, V4.B16, V4.B16; \
	VMOV  V4.D[0], R

// EQ4 sets V4-V7 to the byte masks of the block's vectors V0-V3 equal
// to the bytes of V.
#define EQ4(V) \
	VCMEQ V.B16, V0.B16, V4.B16; \
	VCMEQ V.B16, V1.B16, V5.B16; \
	VCMEQ V.B16, V2.B16, V6.B16; \
	VCMEQ V.B16, V3.B16, V7.B16

// func classifyNEON(src unsafe.Pointer, blocks int, out *blockMasks)
// For each block of 64 bytes: the masks of '"', '\\', c|0x26 == 0x7f and
// ',', as classifyBytes computes them.
TEXT ·classifyNEON(SB), NOSPLIT, $0-24
	MOVD src+0(FP), R0
	MOVD blocks+8(FP), R1
	MOVD out+16(FP), R2
	MOVD $0x22, R3
	VDUP R3, V8.B16
	MOVD $0x5c, R3
	VDUP R3, V9.B16
	MOVD $0x26, R3
	VDUP R3, V10.B16
	MOVD $0x7f, R3
	VDUP R3, V11.B16
	MOVD $0x2c, R3
	VDUP R3, V12.B16
	MOVD $0x8040201008040201, R3
	VMOV R3, V15.D[0]
	VMOV R3, V15.D[1]
	CBZ  R1, done

loop:
	VLD1.P 64(R0), [V0.B16, V1.B16, V2.B16, V3.B16]

	EQ4(V8)
	MASK(R4)

	EQ4(V9)
	MASK(R5)

	VORR  V10.B16, V0.B16, V4.B16
	VORR  V10.B16, V1.B16, V5.B16
	VORR  V10.B16, V2.B16, V6.B16
	VORR  V10.B16, V3.B16, V7.B16
	VCMEQ V11.B16, V4.B16, V4.B16
	VCMEQ V11.B16, V5.B16, V5.B16
	VCMEQ V11.B16, V6.B16, V6.B16
	VCMEQ V11.B16, V7.B16, V7.B16
	MASK(R6)

	EQ4(V12)
	MASK(R7)

	STP  (R4, R5), 0(R2)
	STP  (R6, R7), 16(R2)
	ADD  $32, R2
	SUB  $1, R1
	CBNZ R1, loop

done:
	RET
