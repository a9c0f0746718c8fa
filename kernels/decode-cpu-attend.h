/* decode-cpu-attend.h: the inner loops of the CPU decode, written once and
 * compiled twice by decode-cpu.c: for the baseline ISA (16-byte vectors:
 * SSE2 on x86-64, NEON on arm64) and, on x86-64, for AVX2 with FMA
 * (32-byte), picked at run time.  That is how the default -O2 build, which may not assume
 * more than SSE2, still uses the wider vectors of the machine it runs on.
 *
 * The includer defines VW (floats per vector) and SFX(name), which gives
 * each copy's functions their own names, plus CHUNK, LANES, FOR_LANES,
 * LOG2E, exp2_nonpos, struct unit and the ROW_ kinds, and KVB_F16C where the copy may use
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
#define rload SFX(rload)
#define rscalar SFX(rscalar)
#define vh SFX(vh)
#define vu SFX(vu)
#define dot SFX(dot)
#define dot2 SFX(dot2)
#define pv1 SFX(pv1)
#define pv2 SFX(pv2)
#define convert_row SFX(convert_row)
#define convert_f16c SFX(convert_f16c)
#define exp2_rows SFX(exp2_rows)
#define attend SFX(attend)

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
	float s = 0;
	for (int l = 0; l < VW; l++)
		s += v[l];
	return s;
}

/* Where K and V rows are read from: ROW_F32 for fp32 (a converted tile,
 * or an fp32 pool), or the pool's own elements widened inside the
 * products so that no tile is written: bf16 everywhere (a bf16 value is the
 * top half of an fp32 one), fp16 and int8 in the AVX2 copy (F16C and AVX2
 * conversions; written with plain vector code int8 measured 2-4x slower
 * than through a tile, so the baseline copy keeps tiles for them).  fp8
 * always goes through a tile: widened in place it measured no faster for
 * MHA and slower for GQA, whose head pairs would convert it again.  The
 * callers pass the kind as a constant, so each use is compiled for one
 * kind. */
typedef uint16_t vh __attribute__((vector_size(VW * sizeof(uint16_t))));
typedef uint32_t vu __attribute__((vector_size(VW * sizeof(uint32_t))));

static inline vf rload(const void *p, int i, int kind)
{
	if (kind == ROW_BF16) {
#ifdef KVB_F16C /* the AVX2 copy: GCC 12 widens the generic form in 128-bit halves */
		vf y;
		__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
		__m256 x = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
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
#ifdef KVB_F16C
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
#endif
	return vload((const float *)p + i);
}

static inline float rscalar(const void *p, int i, int kind)
{
	switch (kind) {
	case ROW_BF16: return kvb_bf16_to_float(((const uint16_t *)p)[i]);
	case ROW_FP16: return kvb_fp16_to_float(((const uint16_t *)p)[i]);
	case ROW_INT8: return (float)((const int8_t *)p)[i];
	default: return ((const float *)p)[i];
	}
}

/* q0 . k and q1 . k, each K element loaded once for both heads. */
static inline void dot2(const float *restrict q0, const float *restrict q1,
			const void *restrict k, int kind, int d, float *s0, float *s1)
{
	vf a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
	int i = 0;
	for (; i + 4 * VW <= d; i += 4 * VW) {
		vf k0 = rload(k, i, kind), k1 = rload(k, i + VW, kind);
		vf k2 = rload(k, i + 2 * VW, kind), k3 = rload(k, i + 3 * VW, kind);
		a0 += vload(q0 + i) * k0;
		a1 += vload(q0 + i + VW) * k1;
		a2 += vload(q0 + i + 2 * VW) * k2;
		a3 += vload(q0 + i + 3 * VW) * k3;
		b0 += vload(q1 + i) * k0;
		b1 += vload(q1 + i + VW) * k1;
		b2 += vload(q1 + i + 2 * VW) * k2;
		b3 += vload(q1 + i + 3 * VW) * k3;
	}
	float x = vsum((a0 + a1) + (a2 + a3)), y = vsum((b0 + b1) + (b2 + b3));
	for (; i < d; i++) {
		x += q0[i] * rscalar(k, i, kind);
		y += q1[i] * rscalar(k, i, kind);
	}
	*s0 = x;
	*s1 = y;
}

static inline float dot(const float *restrict q, const void *restrict k, int kind, int d)
{
	vf a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
	int i = 0;
	for (; i + 4 * VW <= d; i += 4 * VW) {
		a0 += vload(q + i) * rload(k, i, kind);
		a1 += vload(q + i + VW) * rload(k, i + VW, kind);
		a2 += vload(q + i + 2 * VW) * rload(k, i + 2 * VW, kind);
		a3 += vload(q + i + 3 * VW) * rload(k, i + 3 * VW, kind);
	}
	float x = vsum((a0 + a1) + (a2 + a3));
	for (; i < d; i++)
		x += q[i] * rscalar(k, i, kind);
	return x;
}

/* acc0 += sum_r p0[r] v[r] and acc1 += sum_r p1[r] v[r] over n rows,
 * 4 * VW columns at a time held in registers across all the rows, so each
 * V element is loaded once per pair of heads and each accumulator once per
 * chunk. */
static inline void pv2(float *restrict acc0, float *restrict acc1, const float *p0,
		       const float *p1, const void *const *v, int kind, int n, int d)
{
	int i = 0;
	for (; i + 4 * VW <= d; i += 4 * VW) {
		vf a0 = vload(acc0 + i), a1 = vload(acc0 + i + VW);
		vf a2 = vload(acc0 + i + 2 * VW), a3 = vload(acc0 + i + 3 * VW);
		vf b0 = vload(acc1 + i), b1 = vload(acc1 + i + VW);
		vf b2 = vload(acc1 + i + 2 * VW), b3 = vload(acc1 + i + 3 * VW);
		for (int r = 0; r < n; r++) {
			vf v0 = rload(v[r], i, kind), v1 = rload(v[r], i + VW, kind);
			vf v2 = rload(v[r], i + 2 * VW, kind), v3 = rload(v[r], i + 3 * VW, kind);
			float x = p0[r], y = p1[r];
			a0 += x * v0;
			a1 += x * v1;
			a2 += x * v2;
			a3 += x * v3;
			b0 += y * v0;
			b1 += y * v1;
			b2 += y * v2;
			b3 += y * v3;
		}
		vstore(acc0 + i, a0);
		vstore(acc0 + i + VW, a1);
		vstore(acc0 + i + 2 * VW, a2);
		vstore(acc0 + i + 3 * VW, a3);
		vstore(acc1 + i, b0);
		vstore(acc1 + i + VW, b1);
		vstore(acc1 + i + 2 * VW, b2);
		vstore(acc1 + i + 3 * VW, b3);
	}
	for (; i < d; i++)
		for (int r = 0; r < n; r++) {
			acc0[i] += p0[r] * rscalar(v[r], i, kind);
			acc1[i] += p1[r] * rscalar(v[r], i, kind);
		}
}

static inline void pv1(float *restrict acc, const float *p, const void *const *v, int kind, int n,
		       int d)
{
	int i = 0;
	for (; i + 4 * VW <= d; i += 4 * VW) {
		vf a0 = vload(acc + i), a1 = vload(acc + i + VW);
		vf a2 = vload(acc + i + 2 * VW), a3 = vload(acc + i + 3 * VW);
		for (int r = 0; r < n; r++) {
			float x = p[r];
			a0 += x * rload(v[r], i, kind);
			a1 += x * rload(v[r], i + VW, kind);
			a2 += x * rload(v[r], i + 2 * VW, kind);
			a3 += x * rload(v[r], i + 3 * VW, kind);
		}
		vstore(acc + i, a0);
		vstore(acc + i + VW, a1);
		vstore(acc + i + 2 * VW, a2);
		vstore(acc + i + 3 * VW, a3);
	}
	for (; i < d; i++)
		for (int r = 0; r < n; r++)
			acc[i] += p[r] * rscalar(v[r], i, kind);
}
#else

static inline float rscalar(const void *p, int i, int kind)
{
	switch (kind) {
	case ROW_BF16: return kvb_bf16_to_float(((const uint16_t *)p)[i]);
	case ROW_FP16: return kvb_fp16_to_float(((const uint16_t *)p)[i]);
	case ROW_INT8: return (float)((const int8_t *)p)[i];
	default: return ((const float *)p)[i];
	}
}

static inline float dot(const float *restrict q, const void *restrict k, int kind, int d)
{
	float x = 0;
	for (int i = 0; i < d; i++)
		x += q[i] * rscalar(k, i, kind);
	return x;
}

static inline void dot2(const float *restrict q0, const float *restrict q1,
			const void *restrict k, int kind, int d, float *s0, float *s1)
{
	*s0 = dot(q0, k, kind, d);
	*s1 = dot(q1, k, kind, d);
}

static inline void pv1(float *restrict acc, const float *p, const void *const *v, int kind, int n,
		       int d)
{
	for (int r = 0; r < n; r++)
		for (int i = 0; i < d; i++)
			acc[i] += p[r] * rscalar(v[r], i, kind);
}

static inline void pv2(float *restrict acc0, float *restrict acc1, const float *p0,
		       const float *p1, const void *const *v, int kind, int n, int d)
{
	pv1(acc0, p0, v, kind, n, d);
	pv1(acc1, p1, v, kind, n, d);
}
#endif

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

static void exp2_rows(float *x, int n)
{
	FOR_LANES(n, i, x[i] = exp2_nonpos(x[i]));
}

/* Scores of row r for all g heads, and the chunk's V rows into the
 * accumulators, for rows of one kind (a constant, so each is compiled for
 * it). */
#define QK_ROW(KIND)                                                                    \
	do {                                                                            \
		int j_ = 0;                                                             \
		for (; j_ + 2 <= g; j_ += 2)                                            \
			dot2(qs + (size_t)j_ * d, qs + (size_t)(j_ + 1) * d, krow[r], KIND, d, \
			     &S[j_ * CHUNK + r], &S[(j_ + 1) * CHUNK + r]);             \
		if (j_ < g)                                                             \
			S[j_ * CHUNK + r] = dot(qs + (size_t)j_ * d, krow[r], KIND, d); \
	} while (0)
#define PV_CHUNK(KIND)                                                                  \
	do {                                                                            \
		int j_ = 0;                                                             \
		for (; j_ + 2 <= g; j_ += 2)                                            \
			pv2(acc + (size_t)j_ * d, acc + (size_t)(j_ + 1) * d, S + j_ * CHUNK, \
			    S + (j_ + 1) * CHUNK, vrow, KIND, n, d);                    \
		if (j_ < g)                                                             \
			pv1(acc + (size_t)j_ * d, S + j_ * CHUNK, vrow, KIND, n, d);    \
	} while (0)

/* Attend the g query heads of KV head u->h over tokens [t0, t1) of
 * sequence u->b: leaves unnormalised acc[g][d], running max m[g] (base 2)
 * and sum l[g]. */
static void attend(const struct kvb_paged_kv *kv, const float *q, const struct unit *u,
		   float *ws, float **acc_out, float **m_out, float **l_out)
{
	const struct kvb_shape *s = &kv->shape;
	const int g = s->h_q / s->h_kv, d = s->d, P = s->block_size;
	const enum kvb_dtype dt = s->dtype;
	const size_t eb = kvb_dtype_bytes(dt);
	float *qs = ws;
	float *acc = qs + (size_t)g * d;
	float *S = acc + (size_t)g * d;
	float *m = S + (size_t)g * CHUNK;
	float *l = m + g;
	float *kt = l + g;
	float *vt = kt + (size_t)CHUNK * d;
	float *ks = vt + (size_t)CHUNK * d;
	float *vs = ks + CHUNK;
	const void *krow[CHUNK], *vrow[CHUNK];
	/* rows read in place (their kind), or converted into tiles (fp32 kind) */
	int kind = ROW_F32;
	if (dt == KVB_DTYPE_BF16)
		kind = ROW_BF16;
#ifdef KVB_F16C
	else if (dt == KVB_DTYPE_FP16)
		kind = ROW_FP16;
	else if (dt == KVB_DTYPE_INT8)
		kind = ROW_INT8;
#endif
	const int raw = dt == KVB_DTYPE_FP32 || kind != ROW_F32;
	const int32_t *table = kv->block_tables + (int64_t)u->b * kv->max_blocks;
	const char *kpool = kv->k_pool, *vpool = kv->v_pool;
	const size_t rowbytes = (size_t)d * eb;

	/* log2(e) folds the base change in; fp8's per-tensor K scale too. */
	float qscale = kv->sm_scale * LOG2E * (dt == KVB_DTYPE_FP8 ? kv->k_scale : 1.0f);
	const float *qb = q + ((int64_t)u->b * s->h_q + (int64_t)u->h * g) * d;
	for (int j = 0; j < g * d; j++) {
		qs[j] = qb[j] * qscale;
		acc[j] = 0;
	}
	for (int j = 0; j < g; j++) {
		m[j] = -INFINITY;
		l[j] = 0;
	}

	for (int32_t t = u->t0; t < u->t1; t += CHUNK) {
		const int n = u->t1 - t < CHUNK ? u->t1 - t : CHUNK;
		/* The next chunk's rows, to be asked for while this chunk
		 * computes: its blocks are anywhere in the pool, so no hardware
		 * prefetcher guesses them.  The requests are spread over the
		 * score loop, a row at a time, so they overlap the arithmetic
		 * instead of stalling on a full set of fill buffers. */
		int64_t next[CHUNK];
		int nn = 0;
		for (int32_t tok = t + CHUNK; tok < t + 2 * CHUNK && tok < u->t1; tok++)
			next[nn++] = kvb_row_index(s, table[tok / P], u->h, tok % P) * (int64_t)eb;
		/* Resolve the chunk's rows once. */
		for (int r = 0; r < n; r++) {
			int32_t tok = t + r;
			int32_t blk = table[tok / P];
			int slot = tok % P;
			int64_t row = kvb_row_index(s, blk, u->h, slot);
			krow[r] = kpool + row * (int64_t)eb;
			vrow[r] = vpool + row * (int64_t)eb;
			if (dt == KVB_DTYPE_INT8) {
				int64_t sr = kvb_scale_index(s, blk, u->h, slot);
				ks[r] = kv->k_scales[sr];
				vs[r] = kv->v_scales[sr];
			}
		}
		if (!raw)
			for (int r = 0; r < n; r++) {
				convert_row(dt, krow[r], kt + (size_t)r * d, d);
				krow[r] = kt + (size_t)r * d;
			}
		/* Scores, each K row used by all g heads while it is in L1. */
		for (int r = 0; r < n; r++) {
#if defined(__GNUC__)
			if (r < nn) {
				for (size_t off = 0; off < rowbytes; off += 64) {
					__builtin_prefetch(kpool + next[r] + off, 0, 3);
					if (raw) /* no V pass per row: both here */
						__builtin_prefetch(vpool + next[r] + off, 0, 3);
				}
				if (dt == KVB_DTYPE_INT8) { /* the row's scales: row index / d */
					__builtin_prefetch(kv->k_scales + next[r] / (int64_t)rowbytes, 0, 3);
					__builtin_prefetch(kv->v_scales + next[r] / (int64_t)rowbytes, 0, 3);
				}
			}
#endif
			switch (kind) {
			case ROW_BF16: QK_ROW(ROW_BF16); break;
			case ROW_FP16: QK_ROW(ROW_FP16); break;
			case ROW_INT8: QK_ROW(ROW_INT8); break;
			default: QK_ROW(ROW_F32); break;
			}
		}
		if (dt == KVB_DTYPE_INT8)
			for (int j = 0; j < g; j++)
				for (int r = 0; r < n; r++)
					S[j * CHUNK + r] *= ks[r];
		/* Online softmax: one rescale of acc per chunk and head. */
		for (int j = 0; j < g; j++) {
			float *Sj = S + j * CHUNK;
			float mx = m[j];
			for (int r = 0; r < n; r++)
				mx = Sj[r] > mx ? Sj[r] : mx;
			for (int r = 0; r < n; r++)
				Sj[r] -= mx;
			exp2_rows(Sj, n);
			/* -inf on the first chunk gives 0: acc is 0 anyway */
			float alpha = exp2_nonpos(m[j] - mx);
			float sum = 0;
			for (int r = 0; r < n; r++)
				sum += Sj[r];
			l[j] = l[j] * alpha + sum;
			if (alpha != 1.0f)
				scale_row(acc + (size_t)j * d, alpha, d);
			m[j] = mx;
			if (dt == KVB_DTYPE_INT8) /* V's row scale goes on the weight */
				for (int r = 0; r < n; r++)
					Sj[r] *= vs[r];
		}
		if (!raw)
			for (int r = 0; r < n; r++) {
#if defined(__GNUC__)
				if (r < nn)
					for (size_t off = 0; off < rowbytes; off += 64)
						__builtin_prefetch(vpool + next[r] + off, 0, 3);
#endif
				convert_row(dt, vrow[r], vt + (size_t)r * d, d);
				vrow[r] = vt + (size_t)r * d;
			}
		switch (kind) {
		case ROW_BF16: PV_CHUNK(ROW_BF16); break;
		case ROW_FP16: PV_CHUNK(ROW_FP16); break;
		case ROW_INT8: PV_CHUNK(ROW_INT8); break;
		default: PV_CHUNK(ROW_F32); break;
		}
	}
	*acc_out = acc;
	*m_out = m;
	*l_out = l;
}


#undef vf
#undef vload
#undef vstore
#undef vsum
#undef rload
#undef rscalar
#undef vh
#undef vu
#undef dot
#undef dot2
#undef pv1
#undef pv2
#undef convert_row
#undef convert_f16c
#undef exp2_rows
#undef attend
#undef QK_ROW
#undef PV_CHUNK
