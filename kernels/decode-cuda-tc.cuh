/* decode-cuda-tc.cuh: the tensor-core GQA decode kernel of the CUDA backend
 * (mma.sync over the query group), with the PTX wrappers it needs (cp.async,
 * ldmatrix, mma), which cuda-emu.h gives a host meaning.  Built on the
 * conversions and layouts of decode-cuda-core.cuh; dispatched by
 * decode-cuda-kernels.cuh. */
#ifndef KVB_DECODE_CUDA_TC_CUH
#define KVB_DECODE_CUDA_TC_CUH

#include "decode-cuda-core.cuh"

namespace {

/* ------------------------------------------------ PTX wrappers (sm_80+)
 * cp.async, ldmatrix and mma.sync; cuda-emu.h gives each a host meaning. */

#ifdef KVB_CUDA_EMULATE
#define KVB_DYNAMIC_SHARED(name) unsigned char *name = kvb_emu::dyn_shared()
#else
#define KVB_DYNAMIC_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
#endif

/* BYTES (16: bypassing L1, .cg; 4: through it, .ca, for scales) global ->
 * shared; zero-filled when !valid (the source is then not read, but must
 * still be a global address). */
template <int BYTES>
__device__ __forceinline__ void cp_async(void *smem, const void *gmem, bool valid)
{
	static_assert(BYTES == 16 || BYTES == 4, "cp.async sizes used here");
#ifdef KVB_CUDA_EMULATE
	kvb_emu::cp_async(smem, gmem, BYTES, valid);
#else
	const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
	if (BYTES == 16)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
			     "r"(valid ? 16 : 0));
	else
		asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem),
			     "r"(valid ? 4 : 0));
#endif
}

__device__ __forceinline__ void cp_async_commit()
{
#ifdef KVB_CUDA_EMULATE
	kvb_emu::cp_async_commit();
#else
	asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/* Wait until at most N of this thread's groups are still in flight. */
template <int N> __device__ __forceinline__ void cp_async_wait()
{
#ifdef KVB_CUDA_EMULATE
	kvb_emu::cp_async_wait(N);
#else
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

/* Four 8x8 b16 matrices from shared memory, transposed (see cuda-emu.h). */
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *row)
{
#ifdef KVB_CUDA_EMULATE
	kvb_emu::ldmatrix_x4_trans(r, row);
#else
	const unsigned s = (unsigned)__cvta_generic_to_shared(row);
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(s));
#endif
}

/* d += A B: mma.sync m16n8k16, fp32 accumulators, bf16 or fp16 operands. */
template <bool BF16>
__device__ __forceinline__ void mma16816(float d[4], const uint32_t a[4], const uint32_t b[2])
{
#ifdef KVB_CUDA_EMULATE
	kvb_emu::mma_m16n8k16<BF16>(d, a, b, d);
#else
	if (BF16)
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
			     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
	else
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
			     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

/* Two floats to a packed pair of the mma's type (round to nearest). */
template <bool BF16> __device__ __forceinline__ uint32_t pack2(float lo, float hi)
{
	uint32_t u;
	if (BF16) {
		__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
		memcpy(&u, &v, 4);
	} else {
		__half2 v = __floats2half2_rn(lo, hi);
		memcpy(&u, &v, 4);
	}
	return u;
}

/* Two 8-bit KV elements (bits 0-15 of w, element 0 low) to a packed half2:
 * fp8 e4m3 by the hardware's paired conversion (cvt.rn.f16x2.e4m3x2 on
 * sm_89+); int8 by a byte permute into the mantissa of 1024 and one
 * subtraction: half(0x6400 | (x ^ 0x80)) = 1024 + x + 128, exact. */
template <int DT> __device__ __forceinline__ uint32_t cvt8x2(uint32_t w)
{
	if (DT == KVB_DTYPE_FP8) {
		__half2_raw r = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w & 0xffffu), __NV_E4M3);
		return (uint32_t)r.x | (uint32_t)r.y << 16;
	}
	const uint32_t biased = __byte_perm(w ^ 0x8080u, 0x6464u, 0x5140u);
	__half2_raw r;
	r.x = (unsigned short)(biased & 0xffffu);
	r.y = (unsigned short)(biased >> 16);
	const __half2_raw d = __hsub2(__half2(r), __floats2half2_rn(1152.0f, 1152.0f));
	return (uint32_t)d.x | (uint32_t)d.y << 16;
}

/* ---------------------------------------------- tensor-core GQA decode
 * One CTA per (sequence, KV head, chunk, tile of up to 16 query heads):
 * the group's query heads are the 16 rows of mma.sync m16n8k16's A
 * operand (rows past the group are zero and never written), so each K/V
 * row is read once for the whole group.  Tokens come in tiles of TC_TT
 * through a TC_STAGES-deep cp.async pipeline in shared memory: tile i + 2's
 * loads are issued before tile i's math (ST = 2 stages, tile i + 1's,
 * where a GPU's shared memory per block cannot hold 3: pick_tc).  Each warp takes 16 tokens of a
 * tile: S = Q K^T as two n8 tiles (K's rows are B's columns, read from
 * shared memory as they lie), the online softmax on S's fragments (one
 * exponential per score, one rescale per row and tile, none when the max
 * holds), then O += P V with S's fragments reused as P's A operand and V
 * through ldmatrix .trans (16-bit) or byte loads converted in registers
 * (8-bit: fp8 by the paired hardware conversion, int8 by byte permute and
 * a magic-number subtraction; both then use fp16 mma).  The warps' states
 * merge through shared memory at the end.
 *
 * Shared memory per stage: K and V tiles of TC_TT rows, each row padded by
 * 16 bytes (the 8 rows a B fragment spans land in different banks), and
 * int8's per-row scales. */
constexpr int TC_WARPS = 4;
constexpr int TC_THREADS = TC_WARPS * 32;
constexpr int TC_TT = 16 * TC_WARPS; /* tokens per tile: 16 per warp */
constexpr int TC_STAGES = 3;
constexpr int TC_ROWS = 16;          /* query heads per CTA: mma's M */

template <int DT, int D, int ST = TC_STAGES> struct tc_layout {
	static constexpr int EB = kv_elem<DT>::bytes;
	static constexpr int ROWB = D * EB;                 /* bytes of a K or V row */
	static constexpr int STRIDE = ROWB + 16;            /* padded */
	static constexpr int CPR = ROWB / 16;               /* 16-byte chunks per row */
	static constexpr int RPP = TC_THREADS / CPR;        /* rows per copy pass */
	static constexpr int NPASS = TC_TT / RPP;           /* copy passes per tile */
	static constexpr int KV_BYTES = TC_TT * STRIDE;     /* one K (or V) tile */
	static constexpr int SCALE_BYTES = DT == KVB_DTYPE_INT8 ? 2 * TC_TT * 4 : 0;
	static constexpr int STAGE_BYTES = 2 * KV_BYTES + SCALE_BYTES;
	static constexpr int MERGE_BYTES = TC_WARPS * TC_ROWS * (D + 2) * 4;
	static constexpr int SMEM = ST * STAGE_BYTES > MERGE_BYTES ? ST * STAGE_BYTES : MERGE_BYTES;
	static constexpr bool BF16 = DT == KVB_DTYPE_BF16; /* else fp16 mma */
	static_assert(DT != KVB_DTYPE_FP32, "fp32 KV stays on the CUDA-core kernel");
	static_assert(TC_THREADS % CPR == 0 && TC_TT % RPP == 0, "copy passes");
	static_assert(ST >= 2, "a stage ahead of the one in use");
};

/* Issue tile [t0, t0 + TC_TT) of this CTA's K/V rows (and int8 scales)
 * into stage `st`: the row offsets once per row and tile, then NPASS
 * 16-byte copies each of K and V per thread; rows past c1 zero-filled. */
template <int DT, int D, bool POW2>
__device__ __forceinline__ void tc_issue(const dev_args &a, unsigned char *stage, const int32_t *table,
					 int h, int t0, int c1)
{
	using L = tc_layout<DT, D>;
	const int tid = threadIdx.x, col = tid % L::CPR;
	const long long head_rows = (long long)a.h_kv * a.P;
#pragma unroll
	for (int p = 0; p < L::NPASS; p++) {
		const int r = p * L::RPP + tid / L::CPR, t = t0 + r;
		const bool ok = t < c1;
		long long row = 0;
		if (ok) {
			const int blk = POW2 ? t >> a.p_shift : t / a.P;
			const int slot = t - blk * a.P;
			row = (long long)__ldg(table + blk) * head_rows + (long long)h * a.P + slot;
		}
		const char *kp = static_cast<const char *>(a.k_pool) + row * L::ROWB + col * 16;
		const char *vp = static_cast<const char *>(a.v_pool) + row * L::ROWB + col * 16;
		cp_async<16>(stage + r * L::STRIDE + col * 16, kp, ok);
		cp_async<16>(stage + L::KV_BYTES + r * L::STRIDE + col * 16, vp, ok);
	}
	if (DT == KVB_DTYPE_INT8) {
		/* threads 0..TT-1 the K scales, TT..2TT-1 the V scales */
		const int r = tid % TC_TT, t = t0 + r;
		const bool ok = t < c1;
		long long row = 0;
		if (ok) {
			const int blk = POW2 ? t >> a.p_shift : t / a.P;
			row = (long long)__ldg(table + blk) * head_rows + (long long)h * a.P +
			      (t - blk * a.P);
		}
		const float *src = (tid < TC_TT ? a.k_scales : a.v_scales) + row;
		cp_async<4>(stage + 2 * L::KV_BYTES + (tid < TC_TT ? 0 : TC_TT * 4) + r * 4, src, ok);
	}
}

/* B fragment (2 registers) of K for token row `r` of the stage, k chunk
 * kc.  The k order inside a chunk is permuted, the same way for Q's A
 * fragment (a sum over k does not care): logical k 2 tig + e is d
 * 4 tig + e, logical 8 + 2 tig + e is d 4 tig + 2 + e, so a lane's four
 * elements are adjacent: one 8-byte (16-bit KV) or 4-byte (8-bit) load. */
template <int DT, int D>
__device__ __forceinline__ void tc_k_frag(const unsigned char *ks, int r, int kc, int tig, uint32_t b[2])
{
	using L = tc_layout<DT, D>;
	const unsigned char *p = ks + r * L::STRIDE + (kc * 16 + 4 * tig) * L::EB;
	if (L::EB == 2) {
		const uint2 w = *reinterpret_cast<const uint2 *>(p);
		b[0] = w.x;
		b[1] = w.y;
	} else {
		const uint32_t w = *reinterpret_cast<const uint32_t *>(p);
		b[0] = cvt8x2<DT>(w);
		b[1] = cvt8x2<DT>(w >> 16);
	}
}

/* int8 at d 128: 4 CTAs per SM (at most 128 registers a thread), so that
 * GQA-4's 512 CTAs at B 64 run in one wave on 132 SMs (issue 39). */
template <int DT, int D> struct tc_min_ctas {
	static constexpr int value = DT == KVB_DTYPE_INT8 && D == 128 ? 4 : 1;
};

template <int DT, int D, bool POW2, int ST>
__global__ void __launch_bounds__(TC_THREADS, (tc_min_ctas<DT, D>::value)) decode_tc_kernel(const dev_args a)
{
	using L = tc_layout<DT, D, ST>;
	KVB_DYNAMIC_SHARED(smem);

	const cta_unit u = cta_unit_of(a);
	const int tile = u.tile, h = u.h, split = u.split, b = u.b;
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const int gid = lane >> 2, tig = lane & 3;
	const int len = a.lens[b];
	const int c0 = split * a.chunk;
	const int c1 = a.splits == 1 ? len : min(len, c0 + a.chunk);
	const int hq0 = h * a.g + tile * TC_ROWS;
	const int nh = min(TC_ROWS, a.g - tile * TC_ROWS);
	const int32_t *table = a.tables + (long long)b * a.max_blocks;
	const int ntiles = c1 > c0 ? (c1 - c0 + TC_TT - 1) / TC_TT : 0;

	/* Start the pipeline first: its bytes travel while Q is prepared. */
#pragma unroll
	for (int s = 0; s < ST - 1; s++) {
		if (s < ntiles)
			tc_issue<DT, D, POW2>(a, smem + s * L::STAGE_BYTES, table, h, c0 + s * TC_TT, c1);
		cp_async_commit();
	}

	/* Q as A fragments, scaled (base 2), rows past the group zero. */
	uint32_t qa[D / 16][4];
	{
		const int r0 = gid, r1 = gid + 8;
		const float *q0 = a.q + ((long long)b * a.h_q + hq0 + r0) * D;
		const float *q1 = a.q + ((long long)b * a.h_q + hq0 + r1) * D;
#pragma unroll
		for (int kc = 0; kc < D / 16; kc++) {
			/* a0/a1: logical k 2 tig + {0, 1} = d 4 tig + {0, 1};
			 * a2/a3: logical k 8 + 2 tig + {0, 1} = d 4 tig + {2, 3} */
			const int c = kc * 16 + 4 * tig;
			float x[8] = {0, 0, 0, 0, 0, 0, 0, 0};
			if (r0 < nh) {
				x[0] = q0[c] * a.q_scale;
				x[1] = q0[c + 1] * a.q_scale;
				x[4] = q0[c + 2] * a.q_scale;
				x[5] = q0[c + 3] * a.q_scale;
			}
			if (r1 < nh) {
				x[2] = q1[c] * a.q_scale;
				x[3] = q1[c + 1] * a.q_scale;
				x[6] = q1[c + 2] * a.q_scale;
				x[7] = q1[c + 3] * a.q_scale;
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
				qa[kc][i] = pack2<L::BF16>(x[2 * i], x[2 * i + 1]);
		}
	}

	float acc[D / 8][4];
#pragma unroll
	for (int n = 0; n < D / 8; n++)
		acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
	float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

	for (int i = 0; i < ntiles; i++) {
		/* the tile ST - 1 ahead goes out before this one's math */
		const int ahead = i + ST - 1;
		if (ahead < ntiles)
			tc_issue<DT, D, POW2>(a, smem + (ahead % ST) * L::STAGE_BYTES, table, h,
					      c0 + ahead * TC_TT, c1);
		cp_async_commit();
		cp_async_wait<ST - 1>(); /* tile i's copies (this thread's) landed */
		__syncthreads();                /* ... and every thread's */

		const unsigned char *ks = smem + (i % ST) * L::STAGE_BYTES;
		const unsigned char *vs = ks + L::KV_BYTES;
		const float *kscale = reinterpret_cast<const float *>(ks + 2 * L::KV_BYTES);
		const float *vscale = kscale + TC_TT;
		const int t0 = c0 + i * TC_TT, wr = warp * 16; /* this warp's first row */

		/* S = Q K^T for the warp's 16 tokens: n8 tiles 0 and 1. */
		float sc[2][4];
#pragma unroll
		for (int nt = 0; nt < 2; nt++) {
			sc[nt][0] = sc[nt][1] = sc[nt][2] = sc[nt][3] = 0.0f;
#pragma unroll
			for (int kc = 0; kc < D / 16; kc++) {
				uint32_t kb[2];
				tc_k_frag<DT, D>(ks, wr + nt * 8 + gid, kc, tig, kb);
				mma16816<L::BF16>(sc[nt], qa[kc], kb);
			}
		}
		/* Mask the tail, apply int8's K scales; the row maxima. */
		float mx[2] = {m[0], m[1]};
#pragma unroll
		for (int nt = 0; nt < 2; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int r = wr + nt * 8 + 2 * tig + (e & 1);
				float x = DT == KVB_DTYPE_INT8 ? sc[nt][e] * kscale[r] : sc[nt][e];
				x = t0 + r < c1 ? x : -INFINITY; /* zero-filled rows: 0 * scale 0 */
				sc[nt][e] = x;
				mx[e >> 1] = fmaxf(mx[e >> 1], x);
			}
#pragma unroll
		for (int k = 0; k < 2; k++) {
			mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 1));
			mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 2));
		}
		/* Rescale only the rows whose max moved: one exponential per row. */
		if (mx[0] != m[0] || mx[1] != m[1]) {
			float f[2];
#pragma unroll
			for (int k = 0; k < 2; k++) {
				f[k] = m[k] == -INFINITY ? 0.0f : ex2(m[k] - mx[k]);
				l[k] *= f[k];
				m[k] = mx[k];
			}
#pragma unroll
			for (int n = 0; n < D / 8; n++) {
				acc[n][0] *= f[0];
				acc[n][1] *= f[0];
				acc[n][2] *= f[1];
				acc[n][3] *= f[1];
			}
		}
		/* P: one exponential per score; the A operand of P V.  int8
		 * takes the weights as 2^v_shift exp2(x - m) (int8_v_shift:
		 * weight x V scale near 1 in fp16; l carries the same 2^k, so
		 * it cancels in O / l): a subtraction per row here, none per
		 * score. */
		const float mb[2] = {DT == KVB_DTYPE_INT8 ? m[0] - a.v_shift : m[0],
				     DT == KVB_DTYPE_INT8 ? m[1] - a.v_shift : m[1]};
		float p[2][4];
#pragma unroll
		for (int nt = 0; nt < 2; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const float w = m[e >> 1] == -INFINITY ? 0.0f : ex2(sc[nt][e] - mb[e >> 1]);
				l[e >> 1] += w;
				p[nt][e] = DT == KVB_DTYPE_INT8
					? w * vscale[wr + nt * 8 + 2 * tig + (e & 1)] : w;
			}
		uint32_t pa[4] = {pack2<L::BF16>(p[0][0], p[0][1]), pack2<L::BF16>(p[0][2], p[0][3]),
				  pack2<L::BF16>(p[1][0], p[1][1]), pack2<L::BF16>(p[1][2], p[1][3])};
		/* O += P V over the d columns, 8 at a time. */
		if (L::EB == 2) {
			/* ldmatrix .x4 .trans: lanes 0-7 rows 0-7 of d columns
			 * [n, n + 8), lanes 8-15 rows 8-15, lanes 16-31 the same
			 * for [n + 8, n + 16): two n8 tiles' B fragments */
			const int lr = wr + (lane & 7) + ((lane >> 3) & 1) * 8;
			const int lc = (lane >> 4) * 8;
#pragma unroll
			for (int n = 0; n < D / 8; n += 2) {
				uint32_t r4[4];
				ldmatrix_x4_trans(r4, vs + lr * L::STRIDE + (n * 8 + lc) * 2);
				const uint32_t b0[2] = {r4[0], r4[1]}, b1[2] = {r4[2], r4[3]};
				mma16816<L::BF16>(acc[n], pa, b0);
				mma16816<L::BF16>(acc[n + 1], pa, b1);
			}
		} else {
			/* 8-bit V: the n order is permuted in groups of 32 d
			 * columns: n tile 4 G + q, column gid is d 32 G + 4 gid + q
			 * (undone when O is written), so a lane loads one word of
			 * 4 columns per row for 4 n tiles and a byte permute pairs
			 * the rows: 4 loads instead of 16. */
			const unsigned char *v0 = vs + (wr + 2 * tig) * L::STRIDE + 4 * gid;
#pragma unroll
			for (int G = 0; G < D / 32; G++) {
				const uint32_t w0 = *reinterpret_cast<const uint32_t *>(v0 + 32 * G);
				const uint32_t w1 = *reinterpret_cast<const uint32_t *>(v0 + L::STRIDE + 32 * G);
				const uint32_t w8 = *reinterpret_cast<const uint32_t *>(v0 + 8 * L::STRIDE + 32 * G);
				const uint32_t w9 = *reinterpret_cast<const uint32_t *>(v0 + 9 * L::STRIDE + 32 * G);
#pragma unroll
				for (int q = 0; q < 4; q++) {
					const unsigned sel = (unsigned)q | (unsigned)(4 + q) << 4;
					const uint32_t vb[2] = {cvt8x2<DT>(__byte_perm(w0, w1, sel)),
								cvt8x2<DT>(__byte_perm(w8, w9, sel))};
					mma16816<false>(acc[4 * G + q], pa, vb);
				}
			}
		}
		__syncthreads(); /* stage i % ST is free for tile i + ST */
	}
	cp_async_wait<0>();
	__syncthreads();

	/* The quad's partial sums, then the warps' states through shared memory. */
#pragma unroll
	for (int k = 0; k < 2; k++) {
		l[k] += __shfl_xor_sync(0xffffffffu, l[k], 1);
		l[k] += __shfl_xor_sync(0xffffffffu, l[k], 2);
	}
	float *s_o = reinterpret_cast<float *>(smem);            /* [W][16][D] */
	float *s_m = s_o + TC_WARPS * TC_ROWS * D, *s_l = s_m + TC_WARPS * TC_ROWS;
#pragma unroll
	for (int n = 0; n < D / 8; n++)
#pragma unroll
		for (int e = 0; e < 4; e++) {
			const int j = 2 * tig + (e & 1); /* column in the n tile */
			const int c = L::EB == 2 ? n * 8 + j : (n / 4) * 32 + 4 * j + n % 4;
			s_o[(warp * TC_ROWS + gid + 8 * (e >> 1)) * D + c] = acc[n][e];
		}
	if (tig == 0)
#pragma unroll
		for (int k = 0; k < 2; k++) {
			s_m[warp * TC_ROWS + gid + 8 * k] = m[k];
			s_l[warp * TC_ROWS + gid + 8 * k] = l[k];
		}
	__syncthreads();
	for (int idx = threadIdx.x; idx < TC_ROWS * D; idx += TC_THREADS) {
		const int j = idx / D, c = idx % D;
		if (j >= nh)
			continue;
		finish_row<TC_WARPS, D>(a, s_o, s_m, s_l, TC_ROWS, b, split, hq0, j, c);
	}
}

} /* namespace */

#endif
