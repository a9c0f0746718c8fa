/* decode-cuda-core.cuh: the CUDA-core decode kernels of the CUDA backend (the
 * attention step and the merge of split partials); the tensor-core GQA
 * kernel is decode-cuda-tc.cuh's, the launch arithmetic
 * decode-cuda-kernels.cuh's.  Compiled by nvcc inside decode-cuda.cu, and by
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
#ifndef KVB_DECODE_CUDA_CORE_CUH
#define KVB_DECODE_CUDA_CORE_CUH

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
	float v_shift; /* int8, tensor-core kernel: an integer k, the weights
			* taken as 2^k exp2(s - m) so that weight x V scale,
			* rounded to fp16, sits near 1 (args_shape) */
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

} /* namespace */

#endif
