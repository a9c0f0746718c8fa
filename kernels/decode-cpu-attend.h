/* decode-cpu-attend.h: the inner loops of the CPU decode, written once and
 * compiled once per ISA by decode-cpu.c (decode-cpu-vec.h says how and why):
 * row conversions, the softmax of a chunk, the attention of one unit of work
 * and the FMA peak probe, over the vectors and products of decode-cpu-vec.h.
 * Each inclusion ends by undefining every per-copy name, so the next copy
 * starts clean. */

#include "decode-cpu-vec.h"

#ifdef KVB_F16C
/* fp16 and fp8 rows with the F16C conversion instruction, 8 at a time
 * (exact, subnormals, infinities and NaN included).  An e4m3 byte becomes
 * an fp16 one with its magnitude bits shifted left by 7: the exponent bias
 * 7 against fp16's 15 makes that the value times 2^-8 for normal and
 * subnormal codes alike, so a multiply by 256 finishes it; S.1111.111 is
 * made NaN.  The rest of the row, if d is not a multiple of 8, goes
 * through the plain conversions. */
static int convert_f16c(enum kvb_dtype dtype, const void *restrict src, float *restrict dst, int d)
{
	int i = 0;
	if (dtype == KVB_DTYPE_FP16) {
		const uint16_t *s = src;
		for (; i + 8 <= d; i += 8)
			_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
	} else {
		const uint8_t *s = src;
		const __m128i mag = _mm_set1_epi16(0x7f), sgn = _mm_set1_epi16(0x80);
		const __m256 scale = _mm256_set1_ps(256.0f), nan = _mm256_set1_ps(NAN);
		for (; i + 8 <= d; i += 8) {
			__m128i x = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(s + i)));
			__m128i m = _mm_and_si128(x, mag);
			__m128i h = _mm_or_si128(_mm_slli_epi16(m, 7),
						 _mm_slli_epi16(_mm_and_si128(x, sgn), 8));
			__m256 f = _mm256_mul_ps(_mm256_cvtph_ps(h), scale);
			__m256 isnan = _mm256_castsi256_ps(_mm256_cvtepi16_epi32(_mm_cmpeq_epi16(m, mag)));
			_mm256_storeu_ps(dst + i, _mm256_blendv_ps(f, nan, isnan));
		}
	}
	return i;
}
#endif

/* One row of d stored elements to fp32 (scales applied elsewhere). */
static void convert_row(enum kvb_dtype dtype, const void *restrict src, float *restrict dst, int d)
{
	int done = 0;
#ifdef KVB_F16C
	if (dtype == KVB_DTYPE_FP16 || dtype == KVB_DTYPE_FP8)
		done = convert_f16c(dtype, src, dst, d);
#endif
	switch (dtype) {
	case KVB_DTYPE_FP16: {
		const uint16_t *restrict s = (const uint16_t *)src + done;
		FOR_LANES(d - done, i, dst[done + i] = kvb_fp16_to_float(s[i]));
		break;
	}
	case KVB_DTYPE_BF16: {
		const uint16_t *restrict s = src;
		FOR_LANES(d, i, dst[i] = kvb_bf16_to_float(s[i]));
		break;
	}
	case KVB_DTYPE_FP8: {
		const uint8_t *restrict s = (const uint8_t *)src + done;
		FOR_LANES(d - done, i, dst[done + i] = kvb_e4m3_to_float(s[i]));
		break;
	}
	case KVB_DTYPE_INT8: {
		const int8_t *restrict s = src;
		FOR_LANES(d, i, dst[i] = (float)s[i]);
		break;
	}
	default:
		memcpy(dst, src, (size_t)d * sizeof *dst);
		break;
	}
}

/* The products for rows of one kind (a constant, so each is compiled for
 * it), one function per kind and product: compiled into one function,
 * GCC allocated registers across every kind's loops at once, and the fp16
 * blocks took spills (10% per row) when the fp8 ones grew. */
#define KIND_PRODUCTS(KIND)                                                                  \
	static NOINLINE void SFX(qk_##KIND)(const float *qs, int g, const void *const *k, int nr, \
					     int d, float *S)                                  \
	{                                                                                    \
		qk_rows(qs, g, k, KIND, nr, d, S);                                            \
	}                                                                                    \
	static NOINLINE void SFX(pv_##KIND)(float *acc, int g, const float *S,                \
					     const void *const *v, int n, int d)                \
	{                                                                                    \
		pv_rows(acc, g, S, v, KIND, n, d);                                            \
	}
KIND_PRODUCTS(ROW_F32)
KIND_PRODUCTS(ROW_BF16)
KIND_PRODUCTS(ROW_FP16)
KIND_PRODUCTS(ROW_INT8)
KIND_PRODUCTS(ROW_FP8)
#if defined(__GNUC__) && defined(KVB_VNNI)
static NOINLINE void SFX(qk_int8_vnni)(const float *qs, const int16_t *qi, const float *qc, int g,
					const void *const *k, int nr, int d, float *S)
{
	qk_rows_vnni(qs, qi, qc, g, k, nr, d, S);
}

static NOINLINE int SFX(pv_int8_vnni1)(float *acc, const float *S, const void *const *v, int n, int d)
{
	return pv_int8_vnni(acc, S, v, n, d);
}
#endif

/* The scores of nr rows from row r, and the chunk's V rows into the
 * accumulators. */
#define QK_ROWS(KIND) SFX(qk_##KIND)(qh, g, krow + r, nr, d, S + r)
#define PV_ROWS(KIND) SFX(pv_##KIND)(acch, g, S, vrow, n, d)

/* One chunk of head j's online softmax (base 2): the scores S[0, n)
 * become their weights 2^(S - max), the running max *m and sum *l take
 * the chunk in, and the factor the accumulator must be scaled by is
 * returned.  The chunk is padded to CHUNK with -inf (weight 0), so the max,
 * the exponentials and the sum run over whole vectors of fixed length.  A
 * NaN score never wins the max (a comparison with NaN is false) and turns
 * the sum NaN, so it still spoils the output. */
static inline float softmax_chunk(float *S, int n, float *m, float *l)
{
	for (int r = n; r < CHUNK; r++)
		S[r] = -INFINITY;
	float mx = *m;
#if defined(__GNUC__)
	vf mv = (vf){0} + mx;
	for (int r = 0; r < CHUNK; r += VW) {
		vf x = vload(S + r);
		vi gt = x > mv; /* false for NaN: mv stays free of them */
		mv = (vf)(((vi)x & gt) | ((vi)mv & ~gt));
	}
	mx = vmax(mv);
#else
	for (int r = 0; r < CHUNK; r++)
		mx = S[r] > mx ? S[r] : mx;
#endif
	FOR_LANES(CHUNK, r, S[r] = exp2_nonpos(S[r] - mx));
	/* -inf on the first chunk gives 0: acc is 0 anyway.  Once the
	 * running max has settled it rarely moves: no exponential then. */
	float alpha = mx == *m ? 1.0f : exp2_nonpos(*m - mx), sum = 0;
#if defined(__GNUC__)
	vf sv = vload(S);
	for (int r = VW; r < CHUNK; r += VW)
		sv += vload(S + r);
	sum = vsum(sv);
#else
	for (int r = 0; r < CHUNK; r++)
		sum += S[r];
#endif
	*l = *l * alpha + sum;
	*m = mx;
	return alpha;
}

/* x[0, d) *= a. */
static inline void scale_floats(float *x, float a, int d)
{
	int i = 0;
#if defined(__GNUC__)
	for (; i + VW <= d; i += VW)
		vstore(x + i, vload(x + i) * a);
#endif
	for (; i < d; i++)
		x[i] *= a;
}

/* x[0, CHUNK) *= y[0, CHUNK): int8's row scales on a chunk's scores and
 * weights.  In explicit vectors: the plain loop, which -O2 should
 * vectorize, stayed scalar (x and y both point into the worker's scratch,
 * and -O2's cost model will not add the overlap check), and was a tenth of
 * the int8 decode's time on a Sapphire Rapids (perf). */
static inline void mul_floats(float *restrict x, const float *restrict y)
{
#if defined(__GNUC__)
	for (int i = 0; i < CHUNK; i += VW)
		vstore(x + i, vload(x + i) * vload(y + i));
#else
	for (int i = 0; i < CHUNK; i++)
		x[i] *= y[i];
#endif
}

/* Rows [0, n) converted into tile (fp32, d apart) and pointed there. */
static void tile_rows(enum kvb_dtype dt, const void **row, float *tile, int n, int d)
{
	for (int r = 0; r < n; r++) {
		float *t = tile + (size_t)r * d;
		convert_row(dt, row[r], t, d);
		row[r] = t;
	}
}

/* Pool rows of tokens [t, t + n) of a sequence whose block table is
 * `table`, KV head h: a row's scale index (int8), and its elements start at
 * the row times d.  The block and slot are walked, one division per chunk
 * instead of two per token (a division by the run-time block size costs as
 * much as a row's arithmetic). */
static void chunk_rows(const struct kvb_shape *s, const int32_t *table, int h, int32_t t, int n,
		       int64_t *row)
{
	int32_t j = t / s->block_size;
	int slot = t % s->block_size;
	for (int r = 0; r < n; r++) {
		row[r] = kvb_scale_index(s, table[j], h, slot);
		if (++slot == s->block_size) {
			slot = 0;
			j++;
		}
	}
}

#if defined(__GNUC__)
/* x[0, n) (n a multiple of 2 VW) to the order rload2 reads bf16 in, each
 * 2 VW elements their even ones then their odd ones, or (back) from it. */
static void even_odd(float *x, int n, int back)
{
	float t[2 * VW];
	for (int i = 0; i < n; i += 2 * VW) {
		for (int e = 0; e < VW; e++) {
			if (back) {
				t[2 * e] = x[i + e];
				t[2 * e + 1] = x[i + VW + e];
			} else {
				t[e] = x[i + 2 * e];
				t[VW + e] = x[i + 2 * e + 1];
			}
		}
		memcpy(x + i, t, sizeof t);
	}
}
#endif

/* krow[r] = kpool + rowb[r] + off and vrow[r] = vpool + rowb[r] + off, r <
 * n.  Written with 64-bit vectors where pointers are 64 bits: -O2 left the
 * loop scalar, two stores a row, and it was 5% of the int8 MHA decode's
 * time in L1 (perf, 17% of attend's own samples). */
static inline void row_pointers(const void **krow, const void **vrow, const char *kpool,
				const char *vpool, const int64_t *rowb, int64_t off, int n)
{
	int r = 0;
#if defined(__GNUC__)
	if (sizeof(void *) == sizeof(int64_t)) {
		typedef int64_t vl __attribute__((vector_size(VW * sizeof(float))));
		enum { NL = (int)(sizeof(vl) / sizeof(int64_t)) };
		const vl kb = (vl){0} + ((int64_t)(intptr_t)kpool + off);
		const vl vb = (vl){0} + ((int64_t)(intptr_t)vpool + off);
		for (; r + NL <= n; r += NL) {
			vl x;
			memcpy(&x, rowb + r, sizeof x);
			vl a = x + kb, b = x + vb;
			memcpy(krow + r, &a, sizeof a);
			memcpy(vrow + r, &b, sizeof b);
		}
	}
#endif
	for (; r < n; r++) {
		krow[r] = kpool + (rowb[r] + off);
		vrow[r] = vpool + (rowb[r] + off);
	}
}

/* Attend the g query heads of each of KV heads [u->h, u->h + u->nh) over
 * tokens [t0, t1) of sequence u->b: leaves unnormalised acc[nh * g][d],
 * running max m[nh * g] (base 2) and sum l[nh * g], head by head.  Each
 * chunk of tokens is taken for every head of the unit in turn, so the K
 * (and V) rows read one after the other are those of consecutive heads in
 * one block, which the pool stores side by side ([N][H_kv][P][d]): nh
 * heads' runs of P rows make one contiguous run that the hardware
 * prefetchers follow, where one head's P rows alone (2-8 KiB at d 128) were
 * a run too short for them.  While a head computes, the rows the next head
 * (or, after the last head, the next chunk) will read are prefetched;
 * prefetch KVB_PREFETCH_OFF leaves them to the hardware (KVB_PREFETCH=0, for
 * measuring what the software prefetch is worth), KVB_PREFETCH_JUMP asks
 * for the next chunk's alone (KVB_PREFETCH=jump: in L1 and L2 the
 * prefetches of the next head's rows cost 10-20% of the time per token,
 * MHA int8 and GQA-4 bf16, and from memory the L2 streamer may follow
 * those runs by itself). */
static void attend(const struct kvb_paged_kv *kv, const float *q, const struct unit *u,
		   int prefetch, float *ws, float **acc_out, float **m_out, float **l_out)
{
	const struct kvb_shape *s = &kv->shape;
	const int g = s->h_q / s->h_kv, d = s->d, nh = u->nh, P = s->block_size;
	const enum kvb_dtype dt = s->dtype;
	const size_t eb = kvb_dtype_bytes(dt);
	float *qs = ws;
	float *acc = qs + (size_t)nh * g * d;
	float *S = acc + (size_t)nh * g * d;
	float *m = S + (size_t)g * CHUNK;
	float *l = m + nh * g;
	float *kt = l + nh * g;
	float *vt = kt + (size_t)CHUNK * d;
	float *ks = vt + (size_t)CHUNK * d;
	float *vs = ks + CHUNK;
	int16_t *qi = (int16_t *)(vs + CHUNK); /* VNNI: nh * g rows of hi and lo */
	float *qc = (float *)(qi + (size_t)2 * nh * g * d);
	(void)qi;
	(void)qc;
	const void *krow[CHUNK], *vrow[CHUNK + 1];
	/* rows read in place (their kind), or converted into tiles (fp32 kind) */
	int kind = ROW_F32;
	if (dt == KVB_DTYPE_BF16)
		kind = ROW_BF16;
#ifdef KVB_F16C
	else if (dt == KVB_DTYPE_FP16)
		kind = ROW_FP16;
	else if (dt == KVB_DTYPE_INT8)
		kind = ROW_INT8;
	else if (dt == KVB_DTYPE_FP8)
		kind = ROW_FP8;
#endif
	const int tiled = kind == ROW_F32 && dt != KVB_DTYPE_FP32;
	const int32_t *table = kv->block_tables + (int64_t)u->b * kv->max_blocks;
	const char *kpool = kv->k_pool, *vpool = kv->v_pool;
	const size_t rowbytes = (size_t)d * eb;

	/* log2(e) folds the base change in; fp8's per-tensor K scale too. */
	float qscale = kv->sm_scale * LOG2E * (dt == KVB_DTYPE_FP8 ? kv->k_scale : 1.0f);
	if (kind == ROW_FP8)
		qscale /= FP8_IN_PLACE;
	const float *qb = q + ((int64_t)u->b * s->h_q + (int64_t)u->h * g) * d;
	for (int j = 0; j < nh * g * d; j++) {
		qs[j] = qb[j] * qscale;
		acc[j] = 0;
	}
	for (int j = 0; j < nh * g; j++) {
		m[j] = -INFINITY;
		l[j] = 0;
	}
#if defined(__GNUC__)
	if (BF16_EVEN_ODD && kind == ROW_BF16) /* the order rload2 reads K in */
		for (int j = 0; j < nh * g; j++)
			even_odd(qs + (size_t)j * d, d / (2 * VW) * (2 * VW), 0);
#endif
	int vnni = 0; /* int8 scores as integer dot products (qk_block_vnni) */
#if defined(__GNUC__) && defined(KVB_VNNI)
	if (kind == ROW_INT8 && d <= VNNI_MAX_D && vnni_group(g)) {
		vnni = 1;
		for (int j = 0; vnni && j < nh * g; j++)
			vnni = q_quantize(qs + (size_t)j * d, d, qi + (size_t)2 * j * d,
					  qi + (size_t)2 * j * d + d, qc + j) == 0;
	}
#endif

	/* Pool rows of this chunk and of the next one, for head u->h; head
	 * u->h + x's row is P * x further (kvb_scale_index). */
	int64_t rows[CHUNK], next[CHUNK], rowb[CHUNK];
	chunk_rows(s, table, u->h, u->t0, u->t1 - u->t0 < CHUNK ? u->t1 - u->t0 : CHUNK, next);
	for (int32_t t = u->t0; t < u->t1; t += CHUNK) {
		const int n = u->t1 - t < CHUNK ? u->t1 - t : CHUNK;
		memcpy(rows, next, (size_t)n * sizeof *rows);
		const int nn = u->t1 - (t + CHUNK) < CHUNK ? u->t1 - (t + CHUNK) : CHUNK;
		if (nn > 0)
			chunk_rows(s, table, u->h, t + CHUNK, nn, next);
		for (int r = 0; r < n; r++) /* head u->h's rows in bytes: a head adds P rows */
			rowb[r] = rows[r] * (int64_t)rowbytes;
		for (int hh = 0; hh < nh; hh++) {
			const int64_t off = (int64_t)hh * P;
			const float *qh = qs + (size_t)hh * g * d;
			float *acch = acc + (size_t)hh * g * d, *mh = m + hh * g, *lh = l + hh * g;
			/* The rows to be asked for while this head computes:
			 * the next head's of this chunk, or after the last head
			 * the first head's of the next chunk (its blocks are
			 * anywhere in the pool, so no hardware prefetcher
			 * guesses them).  The requests are spread over the
			 * score loop, a block of rows at a time, so they
			 * overlap the arithmetic instead of stalling on a full
			 * set of fill buffers. */
			const int64_t *pf = hh + 1 < nh ? rows : next;
			const int64_t pfoff = hh + 1 < nh ? off + P : 0;
			/* KVB_PREFETCH_JUMP: the next chunk's rows alone */
			const int npf = hh + 1 < nh ? (prefetch == KVB_PREFETCH_JUMP ? 0 : n) : nn;
			const int64_t offb = off * (int64_t)rowbytes;
			row_pointers(krow, vrow, kpool, vpool, rowb, offb, n);
			/* int8's row scales: a block's rows are consecutive, so
			 * are their scales: whole vectors of them, then one by one */
			for (int r = 0; dt == KVB_DTYPE_INT8 && r < n;) {
#if defined(__GNUC__)
				if (r + VW <= n && (t + r) % P + VW <= P) { /* VW rows in one block */
					vstore(ks + r, vload(kv->k_scales + rows[r] + off));
					vstore(vs + r, vload(kv->v_scales + rows[r] + off));
					r += VW;
					continue;
				}
#endif
				ks[r] = kv->k_scales[rows[r] + off];
				vs[r] = kv->v_scales[rows[r] + off];
				r++;
			}
			for (int r = n; r < CHUNK; r++) /* scales of the padding: see softmax_chunk */
				ks[r] = vs[r] = 0;
			if (tiled)
				tile_rows(dt, krow, kt, n, d);
			/* Scores, a block of rows at a time, each K row used by
			 * all g heads while it is in L1. */
			const int rb = vnni && block_heads(g) == 1 ? 8 : block_rows(block_heads(g));
			for (int r = 0; r < n; r += rb) {
				const int nr = n - r < rb ? n - r : rb;
#if defined(__GNUC__)
				/* rows of one block are consecutive: each run
				 * of them is asked for line by line */
				for (int x = r; prefetch && x < r + nr && x < npf;) {
					int y = x + 1;
					while (y < r + nr && y < npf && pf[y] == pf[y - 1] + 1)
						y++;
					const int64_t r0 = pf[x] + pfoff, r1 = pf[y - 1] + pfoff + 1;
					for (int64_t o = r0 * (int64_t)rowbytes & ~(int64_t)63;
					     o < r1 * (int64_t)rowbytes; o += 64) {
						__builtin_prefetch(kpool + o, 0, 3);
						__builtin_prefetch(vpool + o, 0, 3);
					}
					if (dt == KVB_DTYPE_INT8) { /* and their scales' lines */
						for (uintptr_t o = (uintptr_t)(kv->k_scales + r0) & ~(uintptr_t)63;
						     o < (uintptr_t)(kv->k_scales + r1); o += 64)
							__builtin_prefetch((const void *)o, 0, 3);
						for (uintptr_t o = (uintptr_t)(kv->v_scales + r0) & ~(uintptr_t)63;
						     o < (uintptr_t)(kv->v_scales + r1); o += 64)
							__builtin_prefetch((const void *)o, 0, 3);
					}
					x = y;
				}
#endif
				switch (kind) {
				case ROW_BF16: QK_ROWS(ROW_BF16); break;
				case ROW_FP16: QK_ROWS(ROW_FP16); break;
				case ROW_INT8:
#if defined(__GNUC__) && defined(KVB_VNNI)
					if (vnni) {
						SFX(qk_int8_vnni)(qh, qi + (size_t)2 * hh * g * d, qc + hh * g,
								  g, krow + r, nr, d, S + r);
						break;
					}
#endif
					QK_ROWS(ROW_INT8);
					break;
				case ROW_FP8: QK_ROWS(ROW_FP8); break;
				default: QK_ROWS(ROW_F32); break;
				}
			}
			if (dt == KVB_DTYPE_INT8) /* whole chunks, padding's scales 0 */
				for (int j = 0; j < g; j++)
					mul_floats(S + j * CHUNK, ks);
			/* Online softmax: one rescale of acc per chunk and head. */
			for (int j = 0; j < g; j++) {
				float *Sj = S + j * CHUNK;
				float alpha = softmax_chunk(Sj, n, &mh[j], &lh[j]);
				if (alpha != 1.0f)
					scale_floats(acch + (size_t)j * d, alpha, d);
				if (dt == KVB_DTYPE_INT8) /* V's row scale goes on the weight */
					mul_floats(Sj, vs);
			}
			if (tiled)
				tile_rows(dt, vrow, vt, n, d);
			switch (kind) {
			case ROW_BF16: PV_ROWS(ROW_BF16); break;
			case ROW_FP16: PV_ROWS(ROW_FP16); break;
			case ROW_INT8:
#if defined(__GNUC__) && defined(KVB_VNNI)
				if (g == 1) { /* MHA: weights as integers too */
					if (n % 2)
						vrow[n] = vrow[n - 1];
					if (SFX(pv_int8_vnni1)(acch, S, vrow, n, d) == 0)
						break;
				}
#endif
				PV_ROWS(ROW_INT8);
				break;
			case ROW_FP8: PV_ROWS(ROW_FP8); break;
			default: PV_ROWS(ROW_F32); break;
			}
		}
	}
#if defined(__GNUC__)
	if (BF16_EVEN_ODD && kind == ROW_BF16) { /* the columns PV's pairs covered, back in order */
		const int w = pv_cols_per_block(block_heads(g)) * VW;
		for (int j = 0; j < nh * g; j++)
			even_odd(acc + (size_t)j * d, d / w * w, 1);
	}
#endif
	if (kind == ROW_FP8) /* V was read times 2^-8: so is acc, and acc / l is what counts */
		for (int j = 0; j < nh * g; j++)
			l[j] *= FP8_IN_PLACE;
	*acc_out = acc;
	*m_out = m;
	*l_out = l;
}

/* The multiply-add peak of one thread in this copy's vectors: 12
 * independent chains of VW lanes (more than the 4-cycle latency times 2
 * ports of the machines we run on), `iters` steps, 2 FLOP per lane and
 * step.  Returns the FLOP done; the caller times it.  (The baseline copy
 * has no FMA on x86-64: a multiply and an add, the same 2 FLOP.) */
static double fma_peak(long iters)
{
#if defined(__GNUC__)
	enum { CHAINS = 12 };
	const vf m = (vf){0} + 0.999999f, c = (vf){0} + 1e-7f;
	/* twelve named sums: an array of them, GCC keeps in memory */
	vf a0 = m, a1 = m + c, a2 = m - c, a3 = c, a4 = m * m, a5 = m + m, a6 = c + c, a7 = m * c,
	   a8 = a1 + c, a9 = a2 - c, a10 = a4 + c, a11 = a5 - c;
#define FMA_STEP(x) x = x * m + c; in_register(&x)
	for (long i = 0; i < iters; i++) {
		FMA_STEP(a0); FMA_STEP(a1); FMA_STEP(a2); FMA_STEP(a3);
		FMA_STEP(a4); FMA_STEP(a5); FMA_STEP(a6); FMA_STEP(a7);
		FMA_STEP(a8); FMA_STEP(a9); FMA_STEP(a10); FMA_STEP(a11);
	}
#undef FMA_STEP
	vf t = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) + ((a8 + a9) + (a10 + a11));
	volatile float sink = vsum(t);
	(void)sink;
	return 2.0 * CHAINS * VW * (double)iters;
#else
	float a = 1, m = 0.999999f;
	for (long i = 0; i < iters; i++)
		a = a * m + 1e-7f;
	volatile float sink = a;
	(void)sink;
	return 2.0 * (double)iters;
#endif
}

#undef fma_peak
#undef q_quantize
#undef qk_block_vnni
#undef dpwssd
#undef qk_rows_vnni
#undef vnni_group
#undef w_quantize
#undef pv_cols_vnni
#undef pv_int8_vnni
#undef VNNI_MAX_D
#undef vf
#undef vload
#undef vstore
#undef vsum
#undef vmax
#undef rload
#undef rload2
#undef v8i16
#undef v16i16
#undef v32i16
#undef FP8_FP16_BITS
#undef rscalar
#undef vh
#undef vu
#undef vi
#undef in_register
#undef softmax_chunk
#undef scale_floats
#undef mul_floats
#undef tile_rows
#undef chunk_rows
#undef row_pointers
#undef vsums
#undef qk_block
#undef qk_pair
#undef qk_heads
#undef qk_rows
#undef pv_cols
#undef pv_block
#undef pv_rows
#undef block_heads
#undef block_rows
#undef pv_cols_per_block
#undef even_odd
#undef BF16_EVEN_ODD
#undef SUMS
#undef NREGS
#undef INLINE
#undef NOINLINE
#undef KIND_PRODUCTS
#undef UNROLL
#undef convert_row
#undef convert_f16c
#undef attend
#undef QK_ROWS
#undef PV_ROWS
