/* decode-cpu-vec.h: the vectors and the two products (scores and weighted
 * values) of the CPU decode's inner loops, the first half of
 * decode-cpu-attend.h, which includes it; written once and compiled once per
 * ISA by decode-cpu.c: for the baseline ISA (16-byte
 * vectors: SSE2 on x86-64, NEON on arm64) and, on x86-64, for AVX2 with FMA
 * (32-byte) and AVX-512 (64-byte, KVB_AVX512), picked at run time.  That is how the default -O2 build, which may not assume
 * more than SSE2, still uses the wider vectors of the machine it runs on.
 *
 * The includer defines VW (floats per vector) and SFX(name), which gives
 * each copy's functions their own names, plus CHUNK, LANES, FOR_LANES,
 * LOG2E, exp2_nonpos, struct unit, the ROW_ kinds and FP8_IN_PLACE, and KVB_F16C where the copy may use
 * the F16C instructions (through <immintrin.h>) for fp16 and fp8 rows.  The two products run on the GNU
 * vector extension: plain C cannot say that a float reduction may be
 * reordered (that takes -ffast-math), and -O2 keeps an accumulator array in
 * memory; explicit vectors keep the running sums in registers.  Compilers
 * without the extension get plain loops.  The conversions and the
 * exponentials are plain loops of fixed width that -O2 vectorizes. */

#define vf SFX(vf)
#define vload SFX(vload)
#define vstore SFX(vstore)
#define vsum SFX(vsum)
#define vmax SFX(vmax)
#define rload SFX(rload)
#define rload2 SFX(rload2)
#define v8i16 SFX(v8i16)
#define v16i16 SFX(v16i16)
#define rscalar SFX(rscalar)
#define vh SFX(vh)
#define vu SFX(vu)
#define vi SFX(vi)
#define in_register SFX(in_register)
#define softmax_chunk SFX(softmax_chunk)
#define scale_floats SFX(scale_floats)
#define mul_floats SFX(mul_floats)
#define tile_rows SFX(tile_rows)
#define chunk_rows SFX(chunk_rows)
#define row_pointers SFX(row_pointers)
#define vsums SFX(vsums)
#define qk_block SFX(qk_block)
#define qk_pair SFX(qk_pair)
#define qk_heads SFX(qk_heads)
#define qk_rows SFX(qk_rows)
#define pv_cols SFX(pv_cols)
#define pv_block SFX(pv_block)
#define pv_rows SFX(pv_rows)
#define block_heads SFX(block_heads)
#define block_rows SFX(block_rows)
#define pv_cols_per_block SFX(pv_cols_per_block)
#define even_odd SFX(even_odd)
#define convert_row SFX(convert_row)
#define convert_f16c SFX(convert_f16c)
#define attend SFX(attend)
#define fma_peak SFX(fma_peak)
#define q_quantize SFX(q_quantize)
#define qk_block_vnni SFX(qk_block_vnni)
#define dpwssd SFX(dpwssd)
#define qk_rows_vnni SFX(qk_rows_vnni)
#define vnni_group SFX(vnni_group)
#define w_quantize SFX(w_quantize)
#define pv_cols_vnni SFX(pv_cols_vnni)
#define pv_int8_vnni SFX(pv_int8_vnni)

/* Inlined where called, so that the block shapes (H, R, C) and the row
 * kind are constants there. */
#if defined(__GNUC__)
#define INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#else
#define INLINE inline
#define NOINLINE
#endif

/* Element i of a row of the given kind (the ROW_ kinds, below), as the
 * vector reads give it. */
static inline float rscalar(const void *p, int i, int kind)
{
	switch (kind) {
	case ROW_BF16: return kvb_bf16_to_float(((const uint16_t *)p)[i]);
	case ROW_FP16: return kvb_fp16_to_float(((const uint16_t *)p)[i]);
	case ROW_INT8: return (float)((const int8_t *)p)[i];
	case ROW_FP8: return kvb_e4m3_to_float(((const uint8_t *)p)[i]) * FP8_IN_PLACE;
	default: return ((const float *)p)[i];
	}
}

#if defined(__GNUC__)
typedef float vf __attribute__((vector_size(VW * sizeof(float))));

static inline vf vload(const float *p)
{
	vf v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline void vstore(float *p, vf v)
{
	memcpy(p, &v, sizeof v);
}

static inline float vsum(vf v)
{
#ifdef KVB_AVX512
	return _mm512_reduce_add_ps((__m512)v);
#elif defined(KVB_F16C) /* halves, then pairs: GCC adds a lane loop one lane at a time */
	__m128 x = _mm_add_ps(_mm256_castps256_ps128((__m256)v), _mm256_extractf128_ps((__m256)v, 1));
	x = _mm_add_ps(x, _mm_movehl_ps(x, x));
	return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
#else
	float s = 0;
	for (int l = 0; l < VW; l++)
		s += v[l];
	return s;
#endif
}

/* The largest lane of v, which holds no NaN. */
static inline float vmax(vf v)
{
#ifdef KVB_AVX512
	return _mm512_reduce_max_ps((__m512)v);
#elif defined(KVB_F16C)
	__m128 x = _mm_max_ps(_mm256_castps256_ps128((__m256)v), _mm256_extractf128_ps((__m256)v, 1));
	x = _mm_max_ps(x, _mm_movehl_ps(x, x));
	return _mm_cvtss_f32(_mm_max_ss(x, _mm_movehdup_ps(x)));
#else
	float m = v[0];
	for (int l = 1; l < VW; l++)
		m = v[l] > m ? v[l] : m;
	return m;
#endif
}

/* Where K and V rows are read from: ROW_F32 for fp32 (a converted tile,
 * or an fp32 pool), or the pool's own elements widened inside the
 * products so that no tile is written: bf16 everywhere (a bf16 value is the
 * top half of an fp32 one), fp16, int8 and fp8 in the AVX2 copy (F16C and
 * AVX2 conversions; written with plain vector code int8 measured 2-4x
 * slower than through a tile, so the baseline copy keeps tiles for all
 * three).  fp8 read in place gives the value times 2^-8 (FP8_IN_PLACE).
 * The callers pass the kind as a constant, so each use is compiled for one
 * kind. */
typedef uint16_t vh __attribute__((vector_size(VW * sizeof(uint16_t))));
typedef uint32_t vu __attribute__((vector_size(VW * sizeof(uint32_t))));
typedef int32_t vi __attribute__((vector_size(VW * sizeof(int32_t))));

#ifdef KVB_F16C
/* e4m3 codes S.EEEE.MMM, sign-extended to 16 bits (w), to the fp16 bits of
 * their value times 2^-8: shifted left by 7 they are S.S.EEEE.MMM.0000000;
 * clearing bit 14 leaves S.0EEEE.MMM0000000, and fp16's exponent bias 15
 * against e4m3's 7 makes that the value times 2^-8, normal and subnormal
 * codes alike, exactly (the callers fold the 2^8 into the query and the
 * sum).  The NaN codes S.1111.111 would read as +-480 (1.875 * 2^8): for
 * them bit 14 is set instead, making the exponent 11111 over a mantissa of
 * 1110000000, an fp16 NaN, so that a NaN in the cache still spoils the
 * output.  Bit 14 of the shifted code plus 2^7 is bit 7 of w + 1, which
 * differs from the sign (bit 14 of the shifted code) exactly when the low
 * 7 bits of w are all ones: so bit 14 becomes the xor of the two, and the
 * rest is the shifted code.  A shift, an add and one three-input logic
 * operation (vpternlog) in the AVX-512 copies, where clearing bit 14 and
 * or-ing in a compare took 5 (w << 7 lies in [-2^14, 2^14 - 2^7]: the add
 * cannot overflow).  Written once for 8, 16 and 32 lanes. */
typedef int16_t v8i16 __attribute__((vector_size(16)));
typedef int16_t v16i16 __attribute__((vector_size(32)));
#ifdef KVB_AVX512
typedef int16_t v32i16 __attribute__((vector_size(64)));
#endif
#define FP8_FP16_BITS(w) (((w) << 7) ^ ((((w) << 7) + (int16_t)0x80) & (int16_t)0x4000))
#endif

static inline vf rload(const void *p, int i, int kind)
{
	if (kind == ROW_BF16) {
#ifdef KVB_AVX512
		/* The AVX-512 copy: one word permute with zero masking puts
		 * the 16 values in the top halves of their lanes (a load and
		 * one shuffle-port operation, like the AVX2 byte shuffle). */
		const __m512i idx = _mm512_setr_epi32(0 << 16, 1 << 16, 2 << 16, 3 << 16, 4 << 16, 5 << 16,
						      6 << 16, 7 << 16, 8 << 16, 9 << 16, 10 << 16, 11 << 16,
						      12 << 16, 13 << 16, 14 << 16, 15 << 16);
		__m512i w = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)((const uint16_t *)p + i)));
		__m512 x = _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(0xaaaaaaaau, idx, w));
		vf y;
		memcpy(&y, &x, sizeof y);
		return y;
#elif defined(KVB_F16C)
		/* The AVX2 copy: the 8 values in both halves of a vector (a
		 * load, no arithmetic port), then one byte shuffle puts each in
		 * the top half of its lane.  Widening (vpmovzxwd) and a shift
		 * would take a slot of the ports the multiply-adds run on. */
		const __m256i top = _mm256_setr_epi8(-1, -1, 0, 1, -1, -1, 2, 3, -1, -1, 4, 5, -1, -1, 6, 7,
						     -1, -1, 8, 9, -1, -1, 10, 11, -1, -1, 12, 13, -1, -1, 14, 15);
		__m256i w = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
		__m256 x = _mm256_castsi256_ps(_mm256_shuffle_epi8(w, top));
		vf y;
		memcpy(&y, &x, sizeof y);
		return y;
#else
		vh h;
		memcpy(&h, (const uint16_t *)p + i, sizeof h);
		vu u = __builtin_convertvector(h, vu) << 16;
		vf f;
		memcpy(&f, &u, sizeof f);
		return f;
#endif
	}
#ifdef KVB_AVX512
	if (kind == ROW_FP16) {
		vf f;
		__m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)p + i)));
		memcpy(&f, &x, sizeof f);
		return f;
	}
	if (kind == ROW_INT8) {
		vf f;
		__m512 x = _mm512_cvtepi32_ps(
			_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)((const int8_t *)p + i))));
		memcpy(&f, &x, sizeof f);
		return f;
	}
	if (kind == ROW_FP8) {
		v16i16 w = (v16i16)_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)((const int8_t *)p + i)));
		vf f;
		__m512 x = _mm512_cvtph_ps((__m256i)FP8_FP16_BITS(w));
		memcpy(&f, &x, sizeof f);
		return f;
	}
#elif defined(KVB_F16C)
	if (kind == ROW_FP16) {
		vf f;
		__m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
		memcpy(&f, &x, sizeof f);
		return f;
	}
	if (kind == ROW_INT8) {
		vf f;
		__m256 x = _mm256_cvtepi32_ps(
			_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)((const int8_t *)p + i))));
		memcpy(&f, &x, sizeof f);
		return f;
	}
	if (kind == ROW_FP8) {
		v8i16 w = (v8i16)_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)((const int8_t *)p + i)));
		vf f;
		__m256 x = _mm256_cvtph_ps((__m128i)FP8_FP16_BITS(w));
		memcpy(&f, &x, sizeof f);
		return f;
	}
#endif
	return vload((const float *)p + i);
}

/* The AVX-512 copies read bf16 rows 32 values at a time as their even and
 * odd elements (BF16_EVEN_ODD): one 64-byte load, then a shift left by 16
 * (the even values, the low halves of the 32-bit lanes) and an and (the
 * odd ones, already the top halves): 2 operations, one of them on either
 * port, where the permute (vpermw, shuffle port only) took 2 loads and 2
 * permutes; measured here 2.6 pairs of (multiply-add, shift) per ns
 * against 1.8 of (multiply-add, vpermw).  The products then see the 32
 * elements in the order e0 e2 .. e30 e1 e3 .. e31: attend stores the query
 * rows in that order (for the elements the score pairs cover) and puts the
 * accumulator columns that the PV pairs cover back at the end. */
#ifdef KVB_AVX512
#define BF16_EVEN_ODD 1
#else
#define BF16_EVEN_ODD 0
#endif

/* Elements [i, i + 2 VW) of a row as two vectors, as two rloads would give
 * them (bf16 in the AVX-512 copies: the even and the odd ones); fp8's bit work is done 16 values at a time in the AVX2 copy (one
 * 256-bit pass, then two conversions), a third fewer operations. */
static inline void rload2(const void *p, int i, int kind, vf *lo, vf *hi)
{
#ifdef KVB_AVX512
	if (kind == ROW_BF16) { /* even and odd elements: see BF16_EVEN_ODD */
		__m512i x = _mm512_loadu_si512((const uint16_t *)p + i);
		__m512 e = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
		__m512 o = _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32((int)0xffff0000u)));
		memcpy(lo, &e, sizeof *lo);
		memcpy(hi, &o, sizeof *hi);
		return;
	}
	if (kind == ROW_FP8) {
		v32i16 w = (v32i16)_mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)((const int8_t *)p + i)));
		__m512i h = (__m512i)FP8_FP16_BITS(w);
		__m512 x0 = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
		__m512 x1 = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
		memcpy(lo, &x0, sizeof *lo);
		memcpy(hi, &x1, sizeof *hi);
		return;
	}
#elif defined(KVB_F16C)
	if (kind == ROW_FP8) {
		v16i16 w = (v16i16)_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)((const int8_t *)p + i)));
		__m256i h = (__m256i)FP8_FP16_BITS(w);
		__m256 x0 = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
		__m256 x1 = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
		memcpy(lo, &x0, sizeof *lo);
		memcpy(hi, &x1, sizeof *hi);
		return;
	}
#endif
	*lo = rload(p, i, kind);
	*hi = rload(p, i + VW, kind);
}

/* The score and PV products work on blocks of running sums held in
 * registers: H heads x R K rows for the scores, H heads x C column vectors
 * for PV, H * C = SUMS and H * R = SUMS too but for MHA (4 x 2 for GQA-4
 * and wider groups; MHA 1 x 4 scores, see block_rows, and 1 x 8 PV).  8
 * independent sums cover the latency of the fused multiply-adds
 * (4 cycles, 2 a cycle); each K or V vector is loaded and widened once for
 * H heads, each query vector once for R rows: per VW elements of a 4 x 2
 * score block, 4 query and 2 K loads feed 8 multiply-adds, where a head
 * pair and one row took 3 loads for 2.  H, R and C are constants wherever
 * the blocks are used (always_inline, unrolled), so the arrays of sums
 * live in registers.  (Clang 14 leaves the head loops rolled, and the sums
 * in memory, under a plain "#pragma unroll": GQA-4 ran half as fast.) */
#ifdef KVB_AVX512 /* 32 vector registers: twice the sums */
#define SUMS 16
#define NREGS 32
#else
#define SUMS 8
#define NREGS 16
#endif
/* Fully: a loop over the 16 sums of the AVX-512 copy that GCC unrolls
 * only 8 times ("GCC unroll 8", as this was) indexes the array at run
 * time, so the array is kept in memory too: each score block began by
 * zeroing 1 KiB of stack with `rep stos` (15% of the score time, perf on a
 * Sapphire Rapids), and unrolled 16 times the loops cost 10-35% less per
 * token in L2 (bench/decode-cpu.sh loops). */
#if defined(__clang__)
#define UNROLL _Pragma("clang loop unroll(full)")
#else
#define UNROLL _Pragma("GCC unroll 16")
#endif

/* out[x] = the lanes of a[x] summed, x < n (n <= SUMS, a constant). */
static INLINE void vsums(const vf *a, int n, float *out)
{
#ifdef KVB_AVX512
	if (n <= 8) { /* each sum's halves added, then the AVX2 tree */
		__m256 h[8];
		UNROLL for (int x = 0; x < 8; x++)
			h[x] = x < n ? _mm256_add_ps(_mm512_castps512_ps256((__m512)a[x]),
						     _mm256_castpd_ps(_mm512_extractf64x4_pd((__m512d)a[x], 1)))
				     : _mm256_setzero_ps();
		__m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(h[0], h[1]), _mm256_hadd_ps(h[2], h[3]));
		__m256 u1 = n > 4 ? _mm256_hadd_ps(_mm256_hadd_ps(h[4], h[5]), _mm256_hadd_ps(h[6], h[7]))
				  : _mm256_setzero_ps();
		__m256 s = _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
					 _mm256_permute2f128_ps(u0, u1, 0x31));
		_mm256_storeu_ps(out, s);
		return;
	}
	/* a transpose-add tree over 16 sums: quarters of pairs, then
	 * quarters of those, then pairs of lanes twice (45 operations for 16
	 * sums).  Lane l of the result sums input slot (l % 4) * 4 + l / 4;
	 * that map is its own inverse, so feeding a[] in that order puts
	 * out[x] in lane x. */
	__m512 x[8], y[4], z[2];
	UNROLL for (int k = 0; k < 8; k++) {
		__m512 u = (__m512)a[(2 * k % 4) * 4 + 2 * k / 4];
		__m512 v = (__m512)a[((2 * k + 1) % 4) * 4 + (2 * k + 1) / 4];
		x[k] = _mm512_add_ps(_mm512_shuffle_f32x4(u, v, 0x44), _mm512_shuffle_f32x4(u, v, 0xee));
	}
	UNROLL for (int k = 0; k < 4; k++)
		y[k] = _mm512_add_ps(_mm512_shuffle_f32x4(x[2 * k], x[2 * k + 1], 0x88),
				     _mm512_shuffle_f32x4(x[2 * k], x[2 * k + 1], 0xdd));
	UNROLL for (int k = 0; k < 2; k++)
		z[k] = _mm512_add_ps(_mm512_shuffle_ps(y[2 * k], y[2 * k + 1], 0x88),
				     _mm512_shuffle_ps(y[2 * k], y[2 * k + 1], 0xdd));
	_mm512_storeu_ps(out, _mm512_add_ps(_mm512_shuffle_ps(z[0], z[1], 0x88),
					    _mm512_shuffle_ps(z[0], z[1], 0xdd)));
#elif defined(KVB_F16C)
	(void)n;
	/* a transpose-add tree: 6 horizontal adds leave [a0..a3 | a0..a3]
	 * halves in two vectors, one cross-lane shuffle pair and an add
	 * finish all 8 sums */
	__m256 t0 = _mm256_hadd_ps((__m256)a[0], (__m256)a[1]);
	__m256 t1 = _mm256_hadd_ps((__m256)a[2], (__m256)a[3]);
	__m256 t2 = _mm256_hadd_ps((__m256)a[4], (__m256)a[5]);
	__m256 t3 = _mm256_hadd_ps((__m256)a[6], (__m256)a[7]);
	__m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
	__m256 s = _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
				 _mm256_permute2f128_ps(u0, u1, 0x31));
	_mm256_storeu_ps(out, s);
#else
	for (int x = 0; x < n; x++)
		out[x] = vsum(a[x]);
#endif
}

/* Make the compiler hold *v in a register: left alone, GCC folds a load
 * used by R multiply-adds into each of them and loads it R times, which
 * makes the score block load-bound. */
static inline void in_register(vf *v)
{
#if defined(__x86_64__) && defined(KVB_AVX512)
	__asm__("" : "+v"(*v));
#elif defined(__x86_64__)
	__asm__("" : "+x"(*v));
#endif
}

/* One step of qk_block over 2 VW elements, K read by rload2.  With H + R
 * <= 7 the second halves of the K rows wait in registers while the first
 * query halves are used (H + R + SUMS + 1 vectors live of the 16);
 * otherwise (one head, 8 rows) both query halves are held instead. */
static INLINE void
qk_pair(vf *a, const float *q, int H, const void *const *k, int R, int kind, int d, int i)
{
	vf q0[SUMS], q1[SUMS], k1[SUMS];
	UNROLL for (int h = 0; h < H; h++) {
		q0[h] = vload(q + (size_t)h * d + i);
		in_register(&q0[h]);
	}
	if (H + R + SUMS < NREGS) {
		UNROLL for (int r = 0; r < R; r++) {
			vf k0;
			rload2(k[r], i, kind, &k0, &k1[r]);
			UNROLL for (int h = 0; h < H; h++)
				a[h * R + r] += q0[h] * k0;
		}
		UNROLL for (int h = 0; h < H; h++) {
			q1[h] = vload(q + (size_t)h * d + i + VW);
			in_register(&q1[h]);
			UNROLL for (int r = 0; r < R; r++)
				a[h * R + r] += q1[h] * k1[r];
		}
	} else {
		UNROLL for (int h = 0; h < H; h++) {
			q1[h] = vload(q + (size_t)h * d + i + VW);
			in_register(&q1[h]);
		}
		UNROLL for (int r = 0; r < R; r++) {
			vf k0;
			rload2(k[r], i, kind, &k0, &k1[0]);
			UNROLL for (int h = 0; h < H; h++) {
				a[h * R + r] += q0[h] * k0;
				a[h * R + r] += q1[h] * k1[0];
			}
		}
	}
}

/* s[h * CHUNK + r] = q_h . k_r for H heads (rows of d floats from q) and R
 * K rows. */
static INLINE void
qk_block(const float *restrict q, int H, const void *const *restrict k, int R, int kind, int d,
	 float *restrict s)
{
	vf a[SUMS], qh[SUMS];
	UNROLL for (int x = 0; x < SUMS; x++)
		a[x] = (vf){0};
	int i = 0;
	if (kind == ROW_FP8 || (BF16_EVEN_ODD && kind == ROW_BF16)) /* see rload2 */
		for (; i + 2 * VW <= d; i += 2 * VW)
			qk_pair(a, q, H, k, R, kind, d, i);
	for (; i + VW <= d; i += VW) {
		/* the H query vectors first, then each K vector used as soon
		 * as it is read: live are H + SUMS + 1 vectors of the 16 */
		UNROLL for (int h = 0; h < H; h++) {
			qh[h] = vload(q + (size_t)h * d + i);
			in_register(&qh[h]);
		}
		UNROLL for (int r = 0; r < R; r++) {
			vf kr = rload(k[r], i, kind);
			UNROLL for (int h = 0; h < H; h++)
				a[h * R + r] += qh[h] * kr;
		}
	}
	float t[SUMS];
	vsums(a, H * R, t);
	UNROLL for (int h = 0; h < H; h++)
		UNROLL for (int r = 0; r < R; r++) {
			float x = t[h * R + r];
			for (int e = i; e < d; e++)
				x += q[(size_t)h * d + e] * rscalar(k[r], e, kind);
			s[h * CHUNK + r] = x;
		}
}

/* acc_h[i0, i0 + C * VW) += sum_r p[h * CHUNK + r] v_r[...] for H heads
 * (rows of d floats from acc) over n V rows, the sums held in registers
 * across all the rows. */
static INLINE void
pv_cols(float *restrict acc, int H, int C, const float *p, const void *const *v, int kind, int n,
	int d, int i0)
{
	vf a[SUMS];
	float x[SUMS];
	UNROLL for (int h = 0; h < H; h++)
		UNROLL for (int c = 0; c < C; c++)
			a[h * C + c] = vload(acc + (size_t)h * d + i0 + c * VW);
	for (int r = 0; r < n; r++) {
		/* as in qk_block: the H weights, then each V vector used as
		 * soon as it is read */
		UNROLL for (int h = 0; h < H; h++)
			x[h] = p[h * CHUNK + r];
		UNROLL for (int c = 0; c + 1 < C; c += 2) {
			vf v0, v1;
			rload2(v[r], i0 + c * VW, kind, &v0, &v1);
			UNROLL for (int h = 0; h < H; h++) {
				a[h * C + c] += x[h] * v0;
				a[h * C + c + 1] += x[h] * v1;
			}
		}
		if (C % 2) {
			vf vc = rload(v[r], i0 + (C - 1) * VW, kind);
			UNROLL for (int h = 0; h < H; h++)
				a[h * C + C - 1] += x[h] * vc;
		}
	}
	UNROLL for (int h = 0; h < H; h++)
		UNROLL for (int c = 0; c < C; c++)
			vstore(acc + (size_t)h * d + i0 + c * VW, a[h * C + c]);
}

/* Column vectors a PV block of H heads takes at once: SUMS / H, at most 8
 * (all of d = 128 in the AVX-512 copy); even, so rload2's pairs start at
 * multiples of 2 VW. */
static inline int pv_cols_per_block(int H)
{
	return SUMS / H > 8 ? 8 : SUMS / H;
}

/* PV of n rows for H heads over all d columns: blocks of SUMS / H vectors,
 * then single vectors, then the columns left one by one. */
static INLINE void
pv_block(float *restrict acc, int H, const float *p, const void *const *v, int kind, int n, int d)
{
	const int C = pv_cols_per_block(H);
	int i = 0;
	for (; i + C * VW <= d; i += C * VW)
		pv_cols(acc, H, C, p, v, kind, n, d, i);
	for (; i + VW <= d; i += VW)
		pv_cols(acc, H, 1, p, v, kind, n, d, i);
	for (; i < d; i++)
		for (int h = 0; h < H; h++)
			for (int r = 0; r < n; r++)
				acc[(size_t)h * d + i] += p[h * CHUNK + r] * rscalar(v[r], i, kind);
}

#else

#define SUMS 8
#define UNROLL

static inline void qk_block(const float *restrict q, int H, const void *const *restrict k, int R,
			    int kind, int d, float *restrict s)
{
	for (int h = 0; h < H; h++)
		for (int r = 0; r < R; r++) {
			float x = 0;
			for (int i = 0; i < d; i++)
				x += q[(size_t)h * d + i] * rscalar(k[r], i, kind);
			s[h * CHUNK + r] = x;
		}
}

static inline void pv_block(float *restrict acc, int H, const float *p, const void *const *v,
			    int kind, int n, int d)
{
	for (int h = 0; h < H; h++)
		for (int r = 0; r < n; r++)
			for (int i = 0; i < d; i++)
				acc[(size_t)h * d + i] += p[h * CHUNK + r] * rscalar(v[r], i, kind);
}
#endif

/* Heads per block for a group of g: 4, 2 or 1, whichever divides g. */
static inline int block_heads(int g)
{
	return g % 4 == 0 ? 4 : g % 2 == 0 ? 2 : 1;
}

/* K rows per score block of H heads: SUMS / H, but 4 for a single head.
 * MHA with 1 x 8 blocks cost 5% less per row in cache, yet read fp32 and
 * bf16 KV 5-8 points of the read ceiling slower from memory (2 threads,
 * three alternating rounds; the next rows' prefetches go out per block,
 * 8 rows' worth at once, which may be the reason). */
static inline int block_rows(int H)
{
	return H == 1 ? 4 : SUMS / H;
}

/* Scores S[j * CHUNK + r] of K rows [0, nr) for all g heads, H at a time:
 * one block of block_rows(H) rows, or nr rows one by one. */
static INLINE void
qk_heads(const float *qs, int g, int H, const void *const *k, int kind, int nr, int d, float *S)
{
	const int R = block_rows(H);
	for (int j = 0; j < g; j += H) {
		if (nr == R)
			qk_block(qs + (size_t)j * d, H, k, R, kind, d, S + j * CHUNK);
		else
			for (int r = 0; r < nr; r++)
				qk_block(qs + (size_t)j * d, H, k + r, 1, kind, d, S + j * CHUNK + r);
	}
}

static INLINE void
qk_rows(const float *qs, int g, const void *const *k, int kind, int nr, int d, float *S)
{
	switch (block_heads(g)) {
	case 4: qk_heads(qs, g, 4, k, kind, nr, d, S); break;
	case 2: qk_heads(qs, g, 2, k, kind, nr, d, S); break;
	default: qk_heads(qs, g, 1, k, kind, nr, d, S); break;
	}
}

/* acc[j] += sum_r S[j * CHUNK + r] v_r for all g heads over n V rows. */
static INLINE void
pv_rows(float *acc, int g, const float *S, const void *const *v, int kind, int n, int d)
{
	const int H = block_heads(g);
	for (int j = 0; j < g; j += H)
		switch (H) {
		case 4: pv_block(acc + (size_t)j * d, 4, S + j * CHUNK, v, kind, n, d); break;
		case 2: pv_block(acc + (size_t)j * d, 2, S + j * CHUNK, v, kind, n, d); break;
		default: pv_block(acc + (size_t)j * d, 1, S + j * CHUNK, v, kind, n, d); break;
		}
}

#if defined(__GNUC__) && defined(KVB_VNNI)
/* int8 scores as integer dot products (AVX512-VNNI, the avx512vnni copy).
 * Each query row is held as two int16 rows, hi and lo, with a power-of-two
 * step c per head (q_quantize): q = c (hi + lo 2^-15) to about 2^-30 of
 * the row's largest element, as close as fp32 itself holds q.  A K row's
 * 32 int8 values are widened to int16 once (vpmovsxbw) and each
 * `vpdpwssd` adds 32 exact products into 16 int32 lanes, so 32 elements
 * of one head and row cost 1 widening and 2 dot products where the fp32
 * path spent 4 widening operations and 2 multiply-adds; the two ports
 * run `vpdpwssd` at 2 a cycle like the multiply-adds (measured: 5.2 per ns
 * against 4.9 for `vfmadd231ps zmm`, 12 chains, one thread).  The int32
 * lanes cannot overflow: |hi|, |lo| <= 2^14 and |k| <= 2^7, so a lane
 * gathers at most d / 16 products of 2^21 (the copy is used for d <=
 * VNNI_MAX_D).  The lanes become floats before the horizontal sums:
 * hi + lo 2^-15, then times c.  Elements past the last multiple of 32
 * (d % 32) are done in fp32 from q itself. */
#define VNNI_MAX_D 4096

/* Rows hi[0, d), lo[0, d) of qi and step *c for the query row q[0, d);
 * -1 if q holds a non-finite value (the caller keeps the fp32 path, which
 * carries it to the output). */
static inline int q_quantize(const float *q, int d, int16_t *hi, int16_t *lo, float *c)
{
	float mx = 0;
	for (int i = 0; i < d; i++) {
		float a = fabsf(q[i]);
		if (!(a <= FLT_MAX))
			return -1;
		mx = a > mx ? a : mx;
	}
	int e = 0;
	(void)frexpf(mx, &e); /* mx = f 2^e, f in [0.5, 1); 0 for mx 0 */
	const float step = ldexpf(1.0f, e - 14), inv = ldexpf(1.0f, 14 - e);
	for (int i = 0; i < d; i++) {
		float x = q[i] * inv; /* |x| < 2^14, exact */
		float h = rintf(x);
		hi[i] = (int16_t)h;
		lo[i] = (int16_t)rintf((x - h) * 0x1p15f); /* x - h exact, |.| <= 1/2 */
	}
	*c = step;
	return 0;
}

/* a += the pairwise products of x and y (vpdpwssd), written in asm: through
 * the intrinsic GCC 12 copied every sum to another register and back each
 * step and spilled four of them (MHA 1 x 8), a third slower per row. */
static inline __m512i dpwssd(__m512i a, __m512i x, __m512i y)
{
	__asm__("vpdpwssd %2, %1, %0" : "+v"(a) : "v"(x), "v"(y));
	return a;
}

/* s[h * CHUNK + r] = q_h . k_r for H heads and R int8 K rows: qi holds
 * head h's hi row at 2 h d and its lo row d further, qc its step; q (the
 * fp32 rows) serves the last d % 32 elements. */
static INLINE void qk_block_vnni(const float *restrict q, const int16_t *restrict qi,
				 const float *restrict qc, int H, const void *const *restrict k, int R,
				 int d, float *restrict s)
{
	__m512i ah[SUMS], al[SUMS];
	UNROLL for (int x = 0; x < H * R; x++)
		ah[x] = al[x] = _mm512_setzero_si512();
	int i = 0;
	for (; i + 32 <= d; i += 32) {
		__m512i qh[4], ql[4];
		UNROLL for (int h = 0; h < H; h++) {
			qh[h] = _mm512_loadu_si512(qi + (size_t)2 * h * d + i);
			ql[h] = _mm512_loadu_si512(qi + (size_t)2 * h * d + d + i);
		}
		UNROLL for (int r = 0; r < R; r++) {
			__m512i kw = _mm512_cvtepi8_epi16(
				_mm256_loadu_si256((const __m256i *)((const int8_t *)k[r] + i)));
			UNROLL for (int h = 0; h < H; h++) {
				ah[h * R + r] = dpwssd(ah[h * R + r], qh[h], kw);
				al[h * R + r] = dpwssd(al[h * R + r], ql[h], kw);
			}
		}
	}
	vf f[SUMS];
	float t[SUMS];
	UNROLL for (int x = 0; x < H * R; x++) {
		__m512 y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(al[x]), _mm512_set1_ps(0x1p-15f),
					   _mm512_cvtepi32_ps(ah[x]));
		memcpy(&f[x], &y, sizeof y);
	}
	vsums(f, H * R, t);
	UNROLL for (int h = 0; h < H; h++)
		UNROLL for (int r = 0; r < R; r++) {
			float x = t[h * R + r] * qc[h];
			for (int e = i; e < d; e++)
				x += q[(size_t)h * d + e] * (float)((const int8_t *)k[r])[e];
			s[h * CHUNK + r] = x;
		}
}

/* Scores S[j * CHUNK + r] of int8 K rows [0, nr) for all g heads, one at a
 * time (see vnni_group): blocks of 1 x 8 rows, 16 int32 sums (hi and lo)
 * and 2 query vectors in the 32 registers, then rows one by one. */
static INLINE void qk_rows_vnni(const float *qs, const int16_t *qi, const float *qc, int g,
				const void *const *k, int nr, int d, float *S)
{
	for (int j = 0; j < g; j++) {
		int r = 0;
		for (; r + 8 <= nr; r += 8)
			qk_block_vnni(qs + (size_t)j * d, qi + (size_t)2 * j * d, qc + j, 1, k + r, 8, d,
				      S + j * CHUNK + r);
		for (; r < nr; r++)
			qk_block_vnni(qs + (size_t)j * d, qi + (size_t)2 * j * d, qc + j, 1, k + r, 1, d,
				      S + j * CHUNK + r);
	}
}

/* Whether the scores of a group of g take qk_rows_vnni: one head a block
 * (MHA, odd groups).  With more, a widened K vector already feeds several
 * multiply-adds in the fp32 path, and the hi and lo products double them
 * while the sums' conversion and reduction grow: 4 x 2 blocks measured
 * 15-30% slower per token in cache (GQA-4 int8), 2 x 4 blocks 10-20%
 * (GQA-2 32:16 int8; one thread's CPU time, alternating). */
static inline int vnni_group(int g)
{
	return block_heads(g) == 1;
}

/* int8 PV as integer dot products, for MHA (g 1; with more heads a widened
 * V vector already feeds several multiply-adds).  The chunk's weights
 * (softmax weight times V's row scale, w >= 0) are held as hi and lo
 * int16 with one power-of-two step c for the chunk (as q_quantize: w = c
 * (hi + lo 2^-15) to about 2^-30 of the chunk's largest weight), and V rows
 * are taken in pairs: each row's 32 values widened to int16, the two rows
 * interleaved word by word (vpunpcklwd, vpunpckhwd), so that one
 * `vpdpwssd` with the pair's weights broadcast adds w_r v_r + w_r+1 v_r+1
 * to 16 columns.  Per 2 rows and 32 columns: 2 widenings, 2 interleaves and
 * 4 dot products, where fp32 took 4 widenings of 2 operations and 4
 * multiply-adds.  The interleave works inside 128-bit lanes, so the low
 * half holds columns 8L..8L+3 of lane L and the high half 8L+4..8L+7:
 * one two-source permute per 16 columns puts them back, once a chunk,
 * when the int32 sums (at most 64 x 2^14 x 2^7 = 2^27) join acc as
 * floats. */

/* Weights w[0, n) (n even, w >= 0) as int16 pairs: wq[0, n) hi, wq[CHUNK,
 * CHUNK + n) lo, step *c; -1 if a weight is not finite. */
static inline int w_quantize(const float *w, int n, int16_t *wq, float *c)
{
	__m512 mx = _mm512_setzero_ps();
	__mmask16 ok = 0xffff;
	int r = 0;
	for (; r + 16 <= n; r += 16) {
		__m512 x = _mm512_loadu_ps(w + r);
		ok &= _mm512_cmp_ps_mask(x, _mm512_set1_ps(FLT_MAX), _CMP_LE_OQ);
		mx = _mm512_max_ps(mx, x);
	}
	float m = _mm512_reduce_max_ps(mx);
	for (int t = r; t < n; t++) {
		if (!(w[t] <= FLT_MAX))
			return -1;
		m = w[t] > m ? w[t] : m;
	}
	if (ok != 0xffff)
		return -1;
	int e = 0;
	(void)frexpf(m, &e);
	const float inv = ldexpf(1.0f, 14 - e);
	for (r = 0; r + 16 <= n; r += 16) {
		__m512 x = _mm512_mul_ps(_mm512_loadu_ps(w + r), _mm512_set1_ps(inv));
		__m512 h = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		__m512 l = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_sub_ps(x, h), _mm512_set1_ps(0x1p15f)),
						_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		_mm256_storeu_si256((__m256i *)(wq + r), _mm512_cvtepi32_epi16(_mm512_cvtps_epi32(h)));
		_mm256_storeu_si256((__m256i *)(wq + CHUNK + r),
				    _mm512_cvtepi32_epi16(_mm512_cvtps_epi32(l)));
	}
	for (; r < n; r++) {
		float x = w[r] * inv, h = rintf(x);
		wq[r] = (int16_t)h;
		wq[CHUNK + r] = (int16_t)rintf((x - h) * 0x1p15f);
	}
	*c = ldexpf(1.0f, e - 14);
	return 0;
}

/* acc[i0, i0 + 32 B) += c sum over the np row pairs of (hi + lo 2^-15)
 * weighted V rows (the pairs' weights as int32 words of wq). */
static INLINE void pv_cols_vnni(float *restrict acc, const int16_t *wq, float c,
				const void *const *v, int np, int i0, int B)
{
	__m512i a[16];
	UNROLL for (int x = 0; x < 4 * B; x++)
		a[x] = _mm512_setzero_si512();
	for (int p = 0; p < np; p++) {
		int32_t h2, l2;
		memcpy(&h2, wq + 2 * p, sizeof h2);
		memcpy(&l2, wq + CHUNK + 2 * p, sizeof l2);
		const __m512i bh = _mm512_set1_epi32(h2), bl = _mm512_set1_epi32(l2);
		const int8_t *r0 = (const int8_t *)v[2 * p] + i0, *r1 = (const int8_t *)v[2 * p + 1] + i0;
		UNROLL for (int b = 0; b < B; b++) {
			__m512i wa = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(r0 + 32 * b)));
			__m512i wb = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(r1 + 32 * b)));
			__m512i u0 = _mm512_unpacklo_epi16(wa, wb), u1 = _mm512_unpackhi_epi16(wa, wb);
			a[4 * b] = dpwssd(a[4 * b], u0, bh);
			a[4 * b + 1] = dpwssd(a[4 * b + 1], u0, bl);
			a[4 * b + 2] = dpwssd(a[4 * b + 2], u1, bh);
			a[4 * b + 3] = dpwssd(a[4 * b + 3], u1, bl);
		}
	}
	const __m512i idx0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
	const __m512i idx1 = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
	const __m512 lo = _mm512_set1_ps(0x1p-15f), cv = _mm512_set1_ps(c);
	UNROLL for (int b = 0; b < B; b++) {
		__m512 f0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[4 * b + 1]), lo, _mm512_cvtepi32_ps(a[4 * b]));
		__m512 f1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a[4 * b + 3]), lo, _mm512_cvtepi32_ps(a[4 * b + 2]));
		float *o = acc + i0 + 32 * b;
		_mm512_storeu_ps(o, _mm512_fmadd_ps(_mm512_permutex2var_ps(f0, idx0, f1), cv, _mm512_loadu_ps(o)));
		_mm512_storeu_ps(o + 16,
				 _mm512_fmadd_ps(_mm512_permutex2var_ps(f0, idx1, f1), cv, _mm512_loadu_ps(o + 16)));
	}
}

/* acc[0, d) += sum_r w[r] v_r over n int8 V rows (v[n] readable when n is
 * odd: its weight is taken as 0); -1 (nothing done) if a weight is not
 * finite. */
static INLINE int pv_int8_vnni(float *restrict acc, const float *w, const void *const *v, int n, int d)
{
	int16_t wq[2 * CHUNK];
	float c;
	const int ne = (n + 1) & ~1;
	if (w_quantize(w, ne, wq, &c) != 0)
		return -1;
	if (ne > n) /* the odd row's partner: weight 0 */
		wq[n] = wq[CHUNK + n] = 0;
	int i = 0;
	for (; i + 128 <= d; i += 128)
		pv_cols_vnni(acc, wq, c, v, ne / 2, i, 4);
	for (; i + 32 <= d; i += 32)
		pv_cols_vnni(acc, wq, c, v, ne / 2, i, 1);
	for (; i < d; i++)
		for (int r = 0; r < n; r++)
			acc[i] += w[r] * (float)((const int8_t *)v[r])[i];
	return 0;
}
#endif
