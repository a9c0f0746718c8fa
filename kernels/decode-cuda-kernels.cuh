/* decode-cuda-kernels.cuh: the decode kernels of the CUDA backend (the
 * attention step and the merge of split partials) and the host arithmetic
 * that shapes their launch.  Compiled by nvcc inside decode-cuda.cu, and by
 * the host C++ compiler with KVB_CUDA_EMULATE under cuda-emu.h, which runs
 * this same source on fibers in `make check` (tests/check-cuda-emu.cc).
 *
 * Legend as in decode.h: B, H_q, H_kv, g = H_q / H_kv, d, P.
 *
 * Stance (../shared/reference/kernel-anchors.md section 6): decode reads the
 * cache once and does little arithmetic on it, so the kernel is built to
 * keep bytes in flight.
 *   - One CTA per (sequence, KV head[, chunk][, head tile]) holds the whole
 *     query group (up to GT heads; larger groups are cut into tiles whose
 *     CTAs are launched side by side, so the second read of a K/V tile
 *     comes from L2): each K/V row is loaded once for all its query heads.
 *   - Each row is read with 16-byte loads by LPR lanes; a warp covers
 *     32/LPR rows, each lane group ("row group") keeps its own online
 *     softmax state for all its heads in registers, and U rows per row
 *     group are loaded before any is used.  States merge across row groups
 *     with shuffles and across warps through shared memory at the end.
 *   - Block-table entries of the next TILE tokens are staged in shared
 *     memory before use; offsets are 64-bit.
 *   - Scores are base 2: the query is premultiplied by sm_scale * log2(e)
 *     (and fp8's K scale), ex2.approx does the exponentials; int8 scales
 *     multiply the score (K) and the weight (V); fp8's V scale the output.
 *   - When (sequence, KV head, tile) units are fewer than the GPU holds at
 *     once, each sequence is cut into chunks of at least MIN_CHUNK tokens;
 *     each chunk writes a partial (unnormalised output, max, sum) and a
 *     merge kernel combines them.
 *   - Slots past a sequence's length are never loaded.
 * The few places that are PTX (ex2, streamed loads) go through the
 * wrappers below, which cuda-emu.h provides on the host. */
#ifndef KVB_DECODE_CUDA_KERNELS_CUH
#define KVB_DECODE_CUDA_KERNELS_CUH

#include "decode.h"

#ifdef KVB_CUDA_EMULATE
#include "cuda-emu.h"
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

#include <cstdint>

namespace {

constexpr int NWARPS = 4;
constexpr int NTHREADS = NWARPS * 32;
constexpr int TILE = 256;      /* tokens whose block ids are staged at once */
constexpr int MIN_CHUNK = 256; /* fewest tokens a split chunk gets */
constexpr float LOG2E = 1.4426950408889634f;

/* ------------------------------------------------------------ conversions */

template <int DT> struct kv_elem;
template <> struct kv_elem<KVB_DTYPE_FP32> { static constexpr int bytes = 4; };
template <> struct kv_elem<KVB_DTYPE_FP16> { static constexpr int bytes = 2; };
template <> struct kv_elem<KVB_DTYPE_BF16> { static constexpr int bytes = 2; };
template <> struct kv_elem<KVB_DTYPE_FP8> { static constexpr int bytes = 1; };
template <> struct kv_elem<KVB_DTYPE_INT8> { static constexpr int bytes = 1; };

/* 16 stored bytes to 16 / bytes floats, element 0 in the lowest bytes. */
template <int DT> __device__ __forceinline__ void convert16(const uint4 &r, float *f);

template <> __device__ __forceinline__ void convert16<KVB_DTYPE_FP32>(const uint4 &r, float *f)
{
	f[0] = __uint_as_float(r.x);
	f[1] = __uint_as_float(r.y);
	f[2] = __uint_as_float(r.z);
	f[3] = __uint_as_float(r.w);
}

template <> __device__ __forceinline__ void convert16<KVB_DTYPE_BF16>(const uint4 &r, float *f)
{
	const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
	for (int i = 0; i < 4; i++) {
		f[2 * i] = __uint_as_float(w[i] << 16);
		f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
	}
}

template <> __device__ __forceinline__ void convert16<KVB_DTYPE_FP16>(const uint4 &r, float *f)
{
	const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
	for (int i = 0; i < 4; i++) {
		__half2_raw raw;
		raw.x = (unsigned short)(w[i] & 0xffffu);
		raw.y = (unsigned short)(w[i] >> 16);
		float2 v = __half22float2(__half2(raw));
		f[2 * i] = v.x;
		f[2 * i + 1] = v.y;
	}
}

template <> __device__ __forceinline__ void convert16<KVB_DTYPE_FP8>(const uint4 &r, float *f)
{
	const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
	for (int i = 0; i < 4; i++) {
#pragma unroll
		for (int k = 0; k < 2; k++) {
			__nv_fp8x2_storage_t pair = (__nv_fp8x2_storage_t)((w[i] >> (16 * k)) & 0xffffu);
			__half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3);
			float2 v = __half22float2(__half2(raw));
			f[4 * i + 2 * k] = v.x;
			f[4 * i + 2 * k + 1] = v.y;
		}
	}
}

/* int8 without I2F (a quarter-rate conversion that alone would keep pace
 * with HBM): byte k of w, biased by 128, permuted into the low mantissa
 * byte of 2^23 (bits 0x4b0000xx), minus 2^23 + 128: exact. */
template <> __device__ __forceinline__ void convert16<KVB_DTYPE_INT8>(const uint4 &r, float *f)
{
	const unsigned w[4] = {r.x ^ 0x80808080u, r.y ^ 0x80808080u, r.z ^ 0x80808080u,
			       r.w ^ 0x80808080u};
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int k = 0; k < 4; k++)
			f[4 * i + k] = __uint_as_float(__byte_perm(w[i], 0x4b00u, 0x5440u | k)) -
				       8388736.0f;
}

/* 2^x; 2^-inf = 0.  Relative error 2^-22 (PTX ex2.approx). */
__device__ __forceinline__ float ex2(float x)
{
#ifdef KVB_CUDA_EMULATE
	return exp2f(x);
#else
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
#endif
}

/* A streamed 16-byte load: the KV cache is read once, so it should not
 * push Q, the block ids or the partials out of L1/L2. */
__device__ __forceinline__ uint4 load_stream(const uint4 *p)
{
	return __ldcs(p);
}

/* --------------------------------------------------------------- decode */

struct dev_args {
	const void *k_pool, *v_pool;
	const float *k_scales, *v_scales; /* int8 */
	float v_scale;                    /* fp8 */
	float q_scale;                    /* sm_scale * log2(e) (* fp8 K scale) */
	const int32_t *tables;
	const int32_t *lens;
	const float *q;
	float *o;
	float *part_o;  /* [B][splits][H_q][d] unnormalised, when splits > 1 */
	float *part_ml; /* [B][splits][H_q][2]: max (base 2) and sum */
	int max_blocks, h_q, h_kv, g, P, p_shift; /* p_shift = log2 P, or -1 */
	int splits, chunk, tiles;
};

/* The thread layout of one instantiation. */
template <int DT, int D, int GT> struct layout {
	static constexpr int EB = kv_elem<DT>::bytes;
	static constexpr int VEC = 16 / EB;               /* elements per 16-byte load */
	static constexpr int ROWV = D / VEC;              /* 16-byte loads per row */
	static constexpr int LPR = ROWV < 32 ? ROWV : 32; /* lanes per row */
	static constexpr int NV = ROWV / LPR;             /* loads per lane per row */
	static constexpr int EPL = NV * VEC;              /* elements per lane */
	static constexpr int RPW = 32 / LPR;              /* rows per warp */
	static constexpr int RG = NWARPS * RPW;           /* row groups per CTA */
	static constexpr int U = GT >= 8 ? 2 : 4;         /* rows per row group per step */
	static constexpr int STEP = RG * U;               /* tokens per CTA step */
	static_assert(D % VEC == 0 && ROWV % LPR == 0, "head dim");
	static_assert(TILE % STEP == 0, "a tile is whole steps");
};

__device__ __forceinline__ int div_p(int t, const dev_args &a)
{
	return a.p_shift >= 0 ? t >> a.p_shift : t / a.P;
}

/* What a CTA of the decode grid works on: blockIdx.x = ((b splits + split)
 * H_kv + h) tiles + tile. */
struct cta_unit {
	int tile, h, split, b;
};

__device__ __forceinline__ cta_unit cta_unit_of(const dev_args &a)
{
	long long bid = blockIdx.x;
	cta_unit u;
	u.tile = (int)(bid % a.tiles);
	bid /= a.tiles;
	u.h = (int)(bid % a.h_kv);
	bid /= a.h_kv;
	u.split = (int)(bid % a.splits);
	u.b = (int)(bid / a.splits);
	return u;
}

/* Column c of query head hq0 + j from NW warps' states in shared memory
 * (warp w's max, sum and output row at s_m[w R + j], s_l[w R + j],
 * s_o[(w R + j) D + c]; max and sum base 2): the output, or this split's
 * partial (unnormalised O, and with column 0 the max and sum). */
template <int NW, int D>
__device__ __forceinline__ void finish_row(const dev_args &a, const float *s_o, const float *s_m,
					   const float *s_l, int R, int b, int split, int hq0, int j,
					   int c)
{
	float M = -INFINITY;
#pragma unroll
	for (int w = 0; w < NW; w++)
		M = fmaxf(M, s_m[w * R + j]);
	float Ls = 0.0f, O = 0.0f;
	if (M != -INFINITY)
#pragma unroll
		for (int w = 0; w < NW; w++) {
			const float mw = s_m[w * R + j];
			const float wt = mw == -INFINITY ? 0.0f : ex2(mw - M);
			Ls += s_l[w * R + j] * wt;
			O += s_o[(w * R + j) * D + c] * wt;
		}
	const long long hq = (long long)b * a.h_q + hq0 + j;
	if (a.splits == 1) {
		a.o[hq * D + c] = Ls > 0.0f ? O / Ls * a.v_scale : 0.0f;
	} else {
		const long long slot = ((long long)b * a.splits + split) * a.h_q + hq0 + j;
		a.part_o[slot * D + c] = O;
		if (c == 0) {
			a.part_ml[2 * slot] = M;
			a.part_ml[2 * slot + 1] = Ls;
		}
	}
}

template <int DT, int D, int GT>
__global__ void __launch_bounds__(NTHREADS) decode_kernel(const dev_args a)
{
	using L = layout<DT, D, GT>;
	__shared__ int32_t sids[TILE + 1];
	__shared__ float s_acc[NWARPS][GT][D];
	__shared__ float s_m[NWARPS][GT], s_l[NWARPS][GT];

	const cta_unit u = cta_unit_of(a);
	const int tile = u.tile, h = u.h, split = u.split, b = u.b;
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const int rg = warp * L::RPW + lane / L::LPR; /* this lane's row group */
	const int col = lane % L::LPR;                /* its place in the row */
	const int len = a.lens[b];
	const int c0 = split * a.chunk;
	const int c1 = a.splits == 1 ? len : min(len, c0 + a.chunk);
	const int hq0 = h * a.g + tile * GT;          /* first query head here */
	const int nh = min(GT, a.g - tile * GT);      /* heads present in this tile */

	/* This lane's slice of the GT query rows, scaled. */
	float q[GT][L::EPL];
#pragma unroll
	for (int j = 0; j < GT; j++)
#pragma unroll
		for (int v = 0; v < L::NV; v++)
#pragma unroll
			for (int e = 0; e < L::VEC; e++) {
				int c = (v * L::LPR + col) * L::VEC + e;
				q[j][v * L::VEC + e] = j < nh
					? a.q[((long long)b * a.h_q + hq0 + j) * D + c] * a.q_scale
					: 0.0f;
			}
	float acc[GT][L::EPL], m[GT], l[GT];
#pragma unroll
	for (int j = 0; j < GT; j++) {
		m[j] = -INFINITY;
		l[j] = 0.0f;
#pragma unroll
		for (int e = 0; e < L::EPL; e++)
			acc[j][e] = 0.0f;
	}

	const int32_t *table = a.tables + (long long)b * a.max_blocks;
	const long long head_rows = (long long)a.h_kv * a.P; /* rows per block */
	for (int t0 = c0; t0 < c1; t0 += TILE) {
		const int t1 = min(c1, t0 + TILE);
		const int fb = div_p(t0, a), nb = div_p(t1 - 1, a) - fb + 1;
		__syncthreads(); /* the previous tile's ids are no longer read */
		for (int i = threadIdx.x; i < nb; i += NTHREADS)
			sids[i] = table[fb + i];
		__syncthreads();

		for (int ts = t0; ts < t1; ts += L::STEP) {
			uint4 kr[L::U][L::NV], vr[L::U][L::NV];
			float ks[L::U], vs[L::U];
			bool ok[L::U];
			/* Issue every load of the step before using any. */
#pragma unroll
			for (int u = 0; u < L::U; u++) {
				const int t = ts + u * L::RG + rg;
				ok[u] = t < t1;
				ks[u] = vs[u] = 1.0f;
#pragma unroll
				for (int v = 0; v < L::NV; v++)
					kr[u][v] = vr[u][v] = make_uint4(0, 0, 0, 0);
				if (ok[u]) {
					const int blk = div_p(t, a);
					const int slot = t - blk * a.P;
					const long long row = sids[blk - fb] * head_rows +
							      (long long)h * a.P + slot;
					const uint4 *kp = reinterpret_cast<const uint4 *>(
						static_cast<const char *>(a.k_pool) + row * (D * L::EB));
					const uint4 *vp = reinterpret_cast<const uint4 *>(
						static_cast<const char *>(a.v_pool) + row * (D * L::EB));
#pragma unroll
					for (int v = 0; v < L::NV; v++) {
						kr[u][v] = load_stream(kp + v * L::LPR + col);
						vr[u][v] = load_stream(vp + v * L::LPR + col);
					}
					if (DT == KVB_DTYPE_INT8) {
						ks[u] = a.k_scales[row];
						vs[u] = a.v_scales[row];
					}
				}
			}
			/* Scores: a lane's partial dot products, summed over the row's lanes. */
			float s[L::U][GT];
#pragma unroll
			for (int u = 0; u < L::U; u++) {
				float kf[L::EPL];
#pragma unroll
				for (int v = 0; v < L::NV; v++)
					convert16<DT>(kr[u][v], kf + v * L::VEC);
#pragma unroll
				for (int j = 0; j < GT; j++) {
					float x = 0.0f;
#pragma unroll
					for (int e = 0; e < L::EPL; e++)
						x = fmaf(q[j][e], kf[e], x);
					s[u][j] = x;
				}
			}
#pragma unroll
			for (int off = L::LPR / 2; off >= 1; off /= 2)
#pragma unroll
				for (int u = 0; u < L::U; u++)
#pragma unroll
					for (int j = 0; j < GT; j++)
						s[u][j] += __shfl_xor_sync(0xffffffffu, s[u][j], off);
			/* Online softmax, one rescale per step and head. */
			float p[L::U][GT];
#pragma unroll
			for (int j = 0; j < GT; j++) {
				float mx = m[j];
#pragma unroll
				for (int u = 0; u < L::U; u++) {
					s[u][j] = ok[u] ? s[u][j] * ks[u] : -INFINITY;
					mx = fmaxf(mx, s[u][j]);
				}
				/* mx is -inf only while no token has been seen: all weights 0 */
				const float sc = mx == -INFINITY ? 1.0f : ex2(m[j] - mx);
				float sum = 0.0f;
#pragma unroll
				for (int u = 0; u < L::U; u++) {
					float w = mx == -INFINITY ? 0.0f : ex2(s[u][j] - mx);
					sum += w;
					p[u][j] = w * vs[u];
				}
				l[j] = l[j] * sc + sum;
				m[j] = mx;
#pragma unroll
				for (int e = 0; e < L::EPL; e++)
					acc[j][e] *= sc;
			}
#pragma unroll
			for (int u = 0; u < L::U; u++) {
				float vf[L::EPL];
#pragma unroll
				for (int v = 0; v < L::NV; v++)
					convert16<DT>(vr[u][v], vf + v * L::VEC);
#pragma unroll
				for (int j = 0; j < GT; j++)
#pragma unroll
					for (int e = 0; e < L::EPL; e++)
						acc[j][e] = fmaf(p[u][j], vf[e], acc[j][e]);
			}
		}
	}

	/* Merge the row groups of each warp (lanes LPR, 2 LPR, ... apart). */
#pragma unroll
	for (int off = L::LPR; off < 32; off *= 2)
#pragma unroll
		for (int j = 0; j < GT; j++) {
			const float mo = __shfl_xor_sync(0xffffffffu, m[j], off);
			const float lo = __shfl_xor_sync(0xffffffffu, l[j], off);
			const float mn = fmaxf(m[j], mo);
			const float wa = m[j] == -INFINITY ? 0.0f : ex2(m[j] - mn);
			const float wb = mo == -INFINITY ? 0.0f : ex2(mo - mn);
			l[j] = l[j] * wa + lo * wb;
			m[j] = mn;
#pragma unroll
			for (int e = 0; e < L::EPL; e++) {
				const float ao = __shfl_xor_sync(0xffffffffu, acc[j][e], off);
				acc[j][e] = acc[j][e] * wa + ao * wb;
			}
		}
	/* ... then the warps, through shared memory. */
	if (lane < L::LPR) {
#pragma unroll
		for (int j = 0; j < GT; j++) {
#pragma unroll
			for (int v = 0; v < L::NV; v++)
#pragma unroll
				for (int e = 0; e < L::VEC; e++)
					s_acc[warp][j][(v * L::LPR + col) * L::VEC + e] = acc[j][v * L::VEC + e];
			if (lane == 0) {
				s_m[warp][j] = m[j];
				s_l[warp][j] = l[j];
			}
		}
	}
	__syncthreads();
	for (int i = threadIdx.x; i < GT * D; i += NTHREADS) {
		const int j = i / D, c = i % D;
		if (j >= nh)
			continue;
		finish_row<NWARPS, D>(a, &s_acc[0][0][0], &s_m[0][0], &s_l[0][0], GT, b, split, hq0, j, c);
	}
}

/* One CTA per (sequence, query head), one thread per column:
 * o = sum_s O_s 2^(m_s - M) / sum_s l_s 2^(m_s - M). */
template <int D> __global__ void __launch_bounds__(D) merge_kernel(const dev_args a)
{
	const int b = blockIdx.x / a.h_q, hq = blockIdx.x % a.h_q, c = threadIdx.x;
	float M = -INFINITY;
	for (int s = 0; s < a.splits; s++)
		M = fmaxf(M, a.part_ml[2 * (((long long)b * a.splits + s) * a.h_q + hq)]);
	float Ls = 0.0f, O = 0.0f;
	if (M != -INFINITY)
		for (int s = 0; s < a.splits; s++) {
			const long long slot = ((long long)b * a.splits + s) * a.h_q + hq;
			const float ms = a.part_ml[2 * slot];
			const float wt = ms == -INFINITY ? 0.0f : ex2(ms - M);
			Ls += a.part_ml[2 * slot + 1] * wt;
			O += a.part_o[slot * D + c] * wt;
		}
	a.o[((long long)b * a.h_q + hq) * D + c] = Ls > 0.0f ? O / Ls * a.v_scale : 0.0f;
}

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
 * loads are issued before tile i's math.  Each warp takes 16 tokens of a
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

template <int DT, int D> struct tc_layout {
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
	static constexpr int SMEM = TC_STAGES * STAGE_BYTES > MERGE_BYTES ? TC_STAGES * STAGE_BYTES
									  : MERGE_BYTES;
	static constexpr bool BF16 = DT == KVB_DTYPE_BF16; /* else fp16 mma */
	static_assert(DT != KVB_DTYPE_FP32, "fp32 KV stays on the CUDA-core kernel");
	static_assert(TC_THREADS % CPR == 0 && TC_TT % RPP == 0, "copy passes");
	static_assert(SMEM <= 227 * 1024, "shared memory per block");
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

template <int DT, int D, bool POW2>
__global__ void __launch_bounds__(TC_THREADS) decode_tc_kernel(const dev_args a)
{
	using L = tc_layout<DT, D>;
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
	for (int s = 0; s < TC_STAGES - 1; s++) {
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
		/* the tile TC_STAGES - 1 ahead goes out before this one's math */
		const int ahead = i + TC_STAGES - 1;
		if (ahead < ntiles)
			tc_issue<DT, D, POW2>(a, smem + (ahead % TC_STAGES) * L::STAGE_BYTES, table, h,
					      c0 + ahead * TC_TT, c1);
		cp_async_commit();
		cp_async_wait<TC_STAGES - 1>(); /* tile i's copies (this thread's) landed */
		__syncthreads();                /* ... and every thread's */

		const unsigned char *ks = smem + (i % TC_STAGES) * L::STAGE_BYTES;
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
		/* P: one exponential per score; the A operand of P V. */
		float p[2][4];
#pragma unroll
		for (int nt = 0; nt < 2; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const float mk = m[e >> 1];
				const float w = mk == -INFINITY ? 0.0f : ex2(sc[nt][e] - mk);
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
		__syncthreads(); /* stage i % STAGES is free for tile i + STAGES */
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

/* ------------------------------------------------------------- dispatch */

typedef void (*kernel_fn)(dev_args);

template <int DT, int D> kernel_fn pick_gt(int gt)
{
	switch (gt) {
	case 1: return decode_kernel<DT, D, 1>;
	case 2: return decode_kernel<DT, D, 2>;
	case 4: return decode_kernel<DT, D, 4>;
	default:
		if constexpr (kv_elem<DT>::bytes >= 2)
			return decode_kernel<DT, D, 8>;
		else
			return decode_kernel<DT, D, 4>;
	}
}

template <int DT> kernel_fn pick_d(int d, int gt)
{
	switch (d) {
	case 64: return pick_gt<DT, 64>(gt);
	case 128: return pick_gt<DT, 128>(gt);
	case 256: return pick_gt<DT, 256>(gt);
	default: return nullptr;
	}
}

kernel_fn pick_kernel(int dt, int d, int gt)
{
	switch (dt) {
	case KVB_DTYPE_FP32: return pick_d<KVB_DTYPE_FP32>(d, gt);
	case KVB_DTYPE_FP16: return pick_d<KVB_DTYPE_FP16>(d, gt);
	case KVB_DTYPE_BF16: return pick_d<KVB_DTYPE_BF16>(d, gt);
	case KVB_DTYPE_FP8: return pick_d<KVB_DTYPE_FP8>(d, gt);
	case KVB_DTYPE_INT8: return pick_d<KVB_DTYPE_INT8>(d, gt);
	default: return nullptr;
	}
}

kernel_fn pick_merge(int d)
{
	switch (d) {
	case 64: return merge_kernel<64>;
	case 128: return merge_kernel<128>;
	case 256: return merge_kernel<256>;
	default: return nullptr;
	}
}

/* The tensor-core kernel takes every cache of 16- or 8-bit KV, MHA too
 * (reports/cuda-design.md: by the review's count it issues fewer
 * instructions per byte than the CUDA-core kernel even with 15 of its 16
 * rows empty); fp32 KV stays on the CUDA-core kernel.  `force` 'c' or 't'
 * picks one (the KVBENCH_CUDA_KERNEL variable, to time both on a GPU). */
inline bool use_tc(int g, enum kvb_dtype dt, char force = 0)
{
	(void)g;
	if (dt == KVB_DTYPE_FP32 || force == 'c')
		return false;
	return true;
}

template <int DT, int D> kernel_fn pick_tc_p(bool pow2)
{
	if constexpr (DT == KVB_DTYPE_FP32)
		return nullptr;
	else
		return pow2 ? decode_tc_kernel<DT, D, true> : decode_tc_kernel<DT, D, false>;
}

template <int DT> kernel_fn pick_tc_d(int d, bool pow2)
{
	switch (d) {
	case 64: return pick_tc_p<DT, 64>(pow2);
	case 128: return pick_tc_p<DT, 128>(pow2);
	case 256: return pick_tc_p<DT, 256>(pow2);
	default: return nullptr;
	}
}

template <int DT> int tc_smem(int d)
{
	if constexpr (DT == KVB_DTYPE_FP32)
		return 0;
	else
		return d == 64 ? tc_layout<DT, 64>::SMEM : d == 128 ? tc_layout<DT, 128>::SMEM
					     : tc_layout<DT, 256>::SMEM;
}

/* The tensor-core kernel for a dtype and head dim, with P a power of two
 * (shifts) or not (divisions); its dynamic shared memory in *smem. */
inline kernel_fn pick_tc(int dt, int d, bool pow2, int *smem)
{
	switch (dt) {
	case KVB_DTYPE_FP16: *smem = tc_smem<KVB_DTYPE_FP16>(d); return pick_tc_d<KVB_DTYPE_FP16>(d, pow2);
	case KVB_DTYPE_BF16: *smem = tc_smem<KVB_DTYPE_BF16>(d); return pick_tc_d<KVB_DTYPE_BF16>(d, pow2);
	case KVB_DTYPE_FP8: *smem = tc_smem<KVB_DTYPE_FP8>(d); return pick_tc_d<KVB_DTYPE_FP8>(d, pow2);
	case KVB_DTYPE_INT8: *smem = tc_smem<KVB_DTYPE_INT8>(d); return pick_tc_d<KVB_DTYPE_INT8>(d, pow2);
	default: *smem = 0; return nullptr;
	}
}

/* Heads per CTA for a group of g: the smallest instantiated tile that holds
 * the group, at most 8 (4 for 8-bit KV, whose lanes hold twice the
 * elements). */
int heads_per_cta(int g, enum kvb_dtype dt)
{
	const int cap = kvb_dtype_bytes(dt) >= 2 ? 8 : 4;
	int gt = 1;
	while (gt < g && gt < cap)
		gt *= 2;
	return gt;
}

/* The scalar fields of a launch's arguments for this cache, with head
 * tiles of gt (the pointers are the caller's: device memory, or host
 * memory under the emulation). */
inline void args_shape(const struct kvb_paged_kv *kv, int gt, dev_args *a)
{
	const struct kvb_shape *s = &kv->shape;
	const int g = s->h_q / s->h_kv;
	a->v_scale = s->dtype == KVB_DTYPE_FP8 ? kv->v_scale : 1.0f;
	a->q_scale = kv->sm_scale * LOG2E * (s->dtype == KVB_DTYPE_FP8 ? kv->k_scale : 1.0f);
	a->max_blocks = kv->max_blocks;
	a->h_q = s->h_q;
	a->h_kv = s->h_kv;
	a->g = g;
	a->P = s->block_size;
	a->p_shift = -1;
	for (int k = 0; k < 31; k++)
		if ((1 << k) == s->block_size)
			a->p_shift = k;
	a->tiles = (g + gt - 1) / gt;
}

/* The split of a launch: when the (sequence, KV head, head tile) units are
 * fewer than `wave` CTAs (what the GPU holds at once), each sequence is cut
 * into chunks of at least MIN_CHUNK tokens, a whole number of TILEs, so
 * that about one wave covers the tokens.  *splits 1 and *chunk 0 mean no
 * split. */
inline void plan_splits(const int32_t *lens, int64_t batch, int h_kv, int tiles, int64_t wave,
			int *splits, int *chunk)
{
	int64_t tokens = 0, max_len = 0;
	for (int64_t b = 0; b < batch; b++) {
		tokens += lens[b];
		max_len = max_len > lens[b] ? max_len : lens[b];
	}
	const int64_t units = batch * h_kv * tiles;
	*splits = 1;
	*chunk = 0;
	if (units < wave && max_len > MIN_CHUNK) {
		int64_t c = (tokens * h_kv * tiles + wave - 1) / wave;
		c = c > MIN_CHUNK ? c : MIN_CHUNK;
		c = (c + TILE - 1) / TILE * TILE;
		const int64_t n = (max_len + c - 1) / c;
		if (n > 1) {
			*splits = (int)n;
			*chunk = (int)c;
		}
	}
}

} /* namespace */

#endif
