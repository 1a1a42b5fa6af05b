#include "textflag.h"

// func indexAVX2(p []byte, c1, c2 byte, d int) int
TEXT ·indexAVX2(SB), NOSPLIT, $0-48
	MOVQ    p_base+0(FP), SI
	MOVQ    p_len+8(FP), BX
	MOVQ    d+32(FP), DX
	SUBQ    DX, BX            // BX: positions to look at (a multiple of 32)
	LEAQ    (SI)(DX*1), R9    // R9: p[d:]
	MOVBLZX c1+24(FP), AX
	MOVBLZX c2+25(FP), CX
	MOVD    AX, X1
	VPBROADCASTB X1, Y1
	MOVD    CX, X2
	VPBROADCASTB X2, Y2
	XORQ    DI, DI
	CMPQ    BX, $64
	JB      single

pair:
	VPCMPEQB (SI)(DI*1), Y1, Y3
	VPCMPEQB (R9)(DI*1), Y2, Y4
	VPCMPEQB 32(SI)(DI*1), Y1, Y5
	VPCMPEQB 32(R9)(DI*1), Y2, Y6
	VPAND   Y3, Y4, Y3
	VPAND   Y5, Y6, Y5
	VPOR    Y3, Y5, Y7
	VPTEST  Y7, Y7
	JNZ     found64
	ADDQ    $64, DI
	LEAQ    64(DI), R8
	CMPQ    R8, BX
	JBE     pair

single:
	CMPQ    DI, BX
	JAE     notfound
	VPCMPEQB (SI)(DI*1), Y1, Y3
	VPCMPEQB (R9)(DI*1), Y2, Y4
	VPAND   Y3, Y4, Y3
	VPMOVMSKB Y3, R10
	TESTL   R10, R10
	JNZ     found
	ADDQ    $32, DI
	JMP     single

found64:
	VPMOVMSKB Y3, R10
	TESTL   R10, R10
	JNZ     found
	VPMOVMSKB Y5, R10
	ADDQ    $32, DI

found:
	BSFL    R10, R10
	ADDQ    R10, DI
	VZEROUPPER
	MOVQ    DI, ret+40(FP)
	RET

notfound:
	VZEROUPPER
	MOVQ    $-1, ret+40(FP)
	RET
