/* decode-cuda.cu: the CUDA backend of the decode, the GPU's streaming
 * ceiling and its capacity run.  Built when configure finds nvcc:
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Ikernels -c kernels/decode-cuda.cu
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
 * Every CUDA call and launch goes through CUDA_CHECK; failures return a
 * status and leave a message for kvb_cuda_error(). */
#include "decode.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int NWARPS = 4;
constexpr int NTHREADS = NWARPS * 32;
constexpr int TILE = 256;      /* tokens whose block ids are staged at once */
constexpr int MIN_CHUNK = 256; /* fewest tokens a split chunk gets */
constexpr float LOG2E = 1.4426950408889634f;

char g_error[512];

void set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(g_error, sizeof g_error, fmt, ap);
	va_end(ap);
}

/* After every CUDA call and kernel launch; needs `int st` and an `out:` label. */
#define CUDA_CHECK(call)                                                              \
	do {                                                                          \
		cudaError_t e_ = (call);                                              \
		if (e_ != cudaSuccess) {                                              \
			set_error("%s:%d: %s: %s", __FILE__, __LINE__, #call,          \
				  cudaGetErrorString(e_));                            \
			st = e_ == cudaErrorMemoryAllocation ? KVB_CUDA_NOMEM          \
							      : KVB_CUDA_FAILED;       \
			goto out;                                                     \
		}                                                                     \
	} while (0)
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

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

template <> __device__ __forceinline__ void convert16<KVB_DTYPE_INT8>(const uint4 &r, float *f)
{
	const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int k = 0; k < 4; k++)
			f[4 * i + k] = (float)(signed char)((w[i] >> (8 * k)) & 0xffu);
}

/* 2^x; 2^-inf = 0.  Relative error 2^-22 (PTX ex2.approx). */
__device__ __forceinline__ float ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
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

template <int DT, int D, int GT>
__global__ void __launch_bounds__(NTHREADS) decode_kernel(const dev_args a)
{
	using L = layout<DT, D, GT>;
	__shared__ int32_t sids[TILE + 1];
	__shared__ float s_acc[NWARPS][GT][D];
	__shared__ float s_m[NWARPS][GT], s_l[NWARPS][GT];

	long long bid = blockIdx.x;
	const int tile = (int)(bid % a.tiles);
	bid /= a.tiles;
	const int h = (int)(bid % a.h_kv);
	bid /= a.h_kv;
	const int split = (int)(bid % a.splits);
	const int b = (int)(bid / a.splits);
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
		float M = -INFINITY;
#pragma unroll
		for (int w = 0; w < NWARPS; w++)
			M = fmaxf(M, s_m[w][j]);
		float Ls = 0.0f, O = 0.0f;
		if (M != -INFINITY)
#pragma unroll
			for (int w = 0; w < NWARPS; w++) {
				const float wt = s_m[w][j] == -INFINITY ? 0.0f : ex2(s_m[w][j] - M);
				Ls += s_l[w][j] * wt;
				O += s_acc[w][j][c] * wt;
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

/* A read of `bytes` that evicts what L2 held (a sum, so it is not removed). */
__global__ void flush_kernel(const uint4 *__restrict__ p, size_t n, unsigned *sink)
{
	unsigned x = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint4 v = p[i];
		x ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (x == 0x9e3779b9u) /* practically never: keeps the loads */
		*sink = x;
}

} /* namespace */

struct kvb_cuda_decode {
	dev_args a;
	kernel_fn kernel, merge;
	int grid_ctas;
	int d;
	int64_t batch;
	size_t o_bytes;
	void *k_pool, *v_pool;
	float *k_scales, *v_scales, *q, *o, *part_o, *part_ml;
	int32_t *tables, *lens;
	uint4 *flush;
	size_t flush_n;
	unsigned *sink;
	cudaEvent_t ev0, ev1;
	int events;
};

extern "C" {

const char *kvb_cuda_error(void)
{
	return g_error;
}

int kvb_cuda_probe(struct kvb_cuda_info *info)
{
	int st = KVB_CUDA_OK, n = 0;
	cudaDeviceProp p;
	size_t free_b = 0, total_b = 0;
	memset(info, 0, sizeof *info);
	int drv = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	/* The runtime says "insufficient driver" both with no driver at all
	 * (no libcuda) and with one older than the toolkit; the driver's
	 * version tells them apart: 0 when none is installed. */
	if (e == cudaErrorInsufficientDriver && cudaDriverGetVersion(&drv) == cudaSuccess &&
	    drv > 0) {
		set_error("%s: the driver runs CUDA %d.%d, kvbench was built with %d.%d",
			  cudaGetErrorString(e), drv / 1000, drv % 1000 / 10, CUDART_VERSION / 1000,
			  CUDART_VERSION % 1000 / 10);
		(void)cudaGetLastError();
		return KVB_CUDA_OLD_DRIVER;
	}
	if (e != cudaSuccess || n == 0) {
		set_error("%s", e == cudaErrorInsufficientDriver ? "no NVIDIA driver on this machine"
				: e != cudaSuccess ? cudaGetErrorString(e) : "no device");
		(void)cudaGetLastError();
		return KVB_CUDA_NO_DEVICE;
	}
	CUDA_CHECK(cudaSetDevice(0));
	CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
	CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
	CUDA_CHECK(cudaDriverGetVersion(&info->driver_version));
	CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
	snprintf(info->name, sizeof info->name, "%s", p.name);
	info->cc_major = p.major;
	info->cc_minor = p.minor;
	info->sm_count = p.multiProcessorCount;
	info->l2_bytes = p.l2CacheSize;
	CUDA_CHECK(cudaDeviceGetAttribute(&info->mem_clock_khz, cudaDevAttrMemoryClockRate, 0));
	CUDA_CHECK(cudaDeviceGetAttribute(&info->bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, 0));
	info->total_bytes = total_b;
	info->free_bytes = free_b;
	/* bytes per second: 2 transfers per clock over the bus (XQA's dramSolRatio) */
	info->datasheet_gbps = 2.0 * (info->bus_width_bits / 8.0) * info->mem_clock_khz * 1e3 / 1e9;
out:
	return st;
}

int kvb_cuda_supports(const struct kvb_shape *s)
{
	return kvb_shape_check(s) == 0 && (s->d == 64 || s->d == 128 || s->d == 256);
}

void kvb_cuda_decode_free(struct kvb_cuda_decode *dc)
{
	if (!dc)
		return;
	cudaFree(dc->k_pool);
	cudaFree(dc->v_pool);
	cudaFree(dc->k_scales);
	cudaFree(dc->v_scales);
	cudaFree(dc->q);
	cudaFree(dc->o);
	cudaFree(dc->part_o);
	cudaFree(dc->part_ml);
	cudaFree(dc->tables);
	cudaFree(dc->lens);
	cudaFree(dc->flush);
	cudaFree(dc->sink);
	if (dc->events) {
		cudaEventDestroy(dc->ev0);
		cudaEventDestroy(dc->ev1);
	}
	free(dc);
}

int kvb_cuda_decode_create(const struct kvb_paged_kv *kv, const float *q,
			   struct kvb_cuda_decode **out)
{
	const struct kvb_shape *s = &kv->shape;
	int st = KVB_CUDA_OK;
	int sm = 0, l2 = 0, per_sm = 0;
	struct kvb_cuda_decode *dc = NULL;
	*out = NULL;
	if (!kvb_cuda_supports(s)) {
		set_error("the CUDA kernels cover head dims 64, 128 and 256, not %d", s->d);
		return KVB_CUDA_UNSUPPORTED;
	}
	dc = (struct kvb_cuda_decode *)calloc(1, sizeof *dc);
	if (!dc) {
		set_error("out of host memory");
		return KVB_CUDA_NOMEM;
	}
	const int g = s->h_q / s->h_kv, gt = heads_per_cta(g, s->dtype);
	const size_t pool = (size_t)kv->num_blocks * s->h_kv * s->block_size * s->d *
			    kvb_dtype_bytes(s->dtype);
	const size_t nq = (size_t)kv->batch * s->h_q * s->d;
	dev_args &a = dc->a;
	dc->d = s->d;
	dc->batch = kv->batch;
	dc->o_bytes = nq * sizeof(float);
	dc->kernel = pick_kernel(s->dtype, s->d, gt);
	dc->merge = pick_merge(s->d);

	CUDA_CHECK(cudaSetDevice(0));
	CUDA_CHECK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
	CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
	CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dc->kernel, NTHREADS, 0));
	CUDA_CHECK(cudaMalloc(&dc->k_pool, pool));
	CUDA_CHECK(cudaMalloc(&dc->v_pool, pool));
	CUDA_CHECK(cudaMemcpy(dc->k_pool, kv->k_pool, pool, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemcpy(dc->v_pool, kv->v_pool, pool, cudaMemcpyHostToDevice));
	if (s->dtype == KVB_DTYPE_INT8) {
		const size_t ns = (size_t)kv->num_blocks * s->h_kv * s->block_size * sizeof(float);
		CUDA_CHECK(cudaMalloc(&dc->k_scales, ns));
		CUDA_CHECK(cudaMalloc(&dc->v_scales, ns));
		CUDA_CHECK(cudaMemcpy(dc->k_scales, kv->k_scales, ns, cudaMemcpyHostToDevice));
		CUDA_CHECK(cudaMemcpy(dc->v_scales, kv->v_scales, ns, cudaMemcpyHostToDevice));
	}
	CUDA_CHECK(cudaMalloc(&dc->q, nq * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&dc->o, nq * sizeof(float)));
	CUDA_CHECK(cudaMemcpy(dc->q, q, nq * sizeof(float), cudaMemcpyHostToDevice));
	{
		const size_t nt = (size_t)kv->batch * kv->max_blocks * sizeof(int32_t);
		CUDA_CHECK(cudaMalloc(&dc->tables, nt));
		CUDA_CHECK(cudaMalloc(&dc->lens, (size_t)kv->batch * sizeof(int32_t)));
		CUDA_CHECK(cudaMemcpy(dc->tables, kv->block_tables, nt, cudaMemcpyHostToDevice));
		CUDA_CHECK(cudaMemcpy(dc->lens, kv->seq_lens, (size_t)kv->batch * sizeof(int32_t),
				      cudaMemcpyHostToDevice));
	}

	a.k_pool = dc->k_pool;
	a.v_pool = dc->v_pool;
	a.k_scales = dc->k_scales;
	a.v_scales = dc->v_scales;
	a.v_scale = s->dtype == KVB_DTYPE_FP8 ? kv->v_scale : 1.0f;
	a.q_scale = kv->sm_scale * LOG2E * (s->dtype == KVB_DTYPE_FP8 ? kv->k_scale : 1.0f);
	a.tables = dc->tables;
	a.lens = dc->lens;
	a.q = dc->q;
	a.o = dc->o;
	a.max_blocks = kv->max_blocks;
	a.h_q = s->h_q;
	a.h_kv = s->h_kv;
	a.g = g;
	a.P = s->block_size;
	a.p_shift = -1;
	for (int k = 0; k < 31; k++)
		if ((1 << k) == s->block_size)
			a.p_shift = k;
	a.tiles = (g + gt - 1) / gt;

	/* Split when the units do not fill the GPU once: cut the tokens so
	 * that about one wave of CTAs covers them, by tokens, not by requests. */
	{
		int64_t tokens = 0, max_len = 0;
		for (int32_t b = 0; b < kv->batch; b++) {
			tokens += kv->seq_lens[b];
			max_len = std::max<int64_t>(max_len, kv->seq_lens[b]);
		}
		const int64_t units = (int64_t)kv->batch * s->h_kv * a.tiles;
		const int64_t wave = (int64_t)sm * std::max(per_sm, 1);
		a.splits = 1;
		a.chunk = 0;
		if (units < wave && max_len > MIN_CHUNK) {
			int64_t chunk = (tokens * s->h_kv * a.tiles + wave - 1) / wave;
			chunk = std::max<int64_t>(chunk, MIN_CHUNK);
			chunk = (chunk + TILE - 1) / TILE * TILE;
			const int64_t splits = (max_len + chunk - 1) / chunk;
			if (splits > 1) {
				a.splits = (int)splits;
				a.chunk = (int)chunk;
			}
		}
	}
	if (a.splits > 1) {
		const size_t slots = (size_t)kv->batch * a.splits * s->h_q;
		CUDA_CHECK(cudaMalloc(&dc->part_o, slots * s->d * sizeof(float)));
		CUDA_CHECK(cudaMalloc(&dc->part_ml, slots * 2 * sizeof(float)));
		a.part_o = dc->part_o;
		a.part_ml = dc->part_ml;
	}
	{
		const long long ctas = (long long)kv->batch * a.splits * s->h_kv * a.tiles;
		if (ctas > 0x7fffffffLL) {
			set_error("%lld CTAs: more than one launch holds", ctas);
			st = KVB_CUDA_UNSUPPORTED;
			goto out;
		}
		dc->grid_ctas = (int)ctas;
	}
	/* twice the L2, at least 64 MiB, read before each timed run */
	dc->flush_n = std::max<size_t>((size_t)2 * l2, (size_t)64 << 20) / sizeof(uint4);
	CUDA_CHECK(cudaMalloc(&dc->flush, dc->flush_n * sizeof(uint4)));
	CUDA_CHECK(cudaMemset(dc->flush, 1, dc->flush_n * sizeof(uint4)));
	CUDA_CHECK(cudaMalloc(&dc->sink, sizeof(unsigned)));
	CUDA_CHECK(cudaEventCreate(&dc->ev0));
	CUDA_CHECK(cudaEventCreate(&dc->ev1));
	dc->events = 1;
	*out = dc;
	return KVB_CUDA_OK;
out:
	kvb_cuda_decode_free(dc);
	return st;
}

void kvb_cuda_decode_split(const struct kvb_cuda_decode *dc, int *splits, int *chunk_tokens)
{
	*splits = dc->a.splits;
	*chunk_tokens = dc->a.chunk;
}

static int launch(struct kvb_cuda_decode *dc)
{
	int st = KVB_CUDA_OK;
	dc->kernel<<<dc->grid_ctas, NTHREADS>>>(dc->a);
	LAUNCH_CHECK();
	if (dc->a.splits > 1) {
		dc->merge<<<(unsigned)(dc->batch * dc->a.h_q), dc->d>>>(dc->a);
		LAUNCH_CHECK();
	}
out:
	return st;
}

int kvb_cuda_decode_run(struct kvb_cuda_decode *dc, float *o)
{
	int st = KVB_CUDA_OK;
	CUDA_CHECK(cudaMemset(dc->o, 0xff, dc->o_bytes)); /* all-ones: NaN */
	if (dc->a.splits > 1) {
		const size_t slots = (size_t)dc->batch * dc->a.splits * dc->a.h_q;
		CUDA_CHECK(cudaMemset(dc->part_o, 0xff, slots * dc->d * sizeof(float)));
		CUDA_CHECK(cudaMemset(dc->part_ml, 0xff, slots * 2 * sizeof(float)));
	}
	if ((st = launch(dc)) != KVB_CUDA_OK)
		goto out;
	CUDA_CHECK(cudaDeviceSynchronize());
	CUDA_CHECK(cudaMemcpy(o, dc->o, dc->o_bytes, cudaMemcpyDeviceToHost));
out:
	return st;
}

int kvb_cuda_decode_time(struct kvb_cuda_decode *dc, int warmup, int repeats, double *times_s)
{
	int st = KVB_CUDA_OK;
	const int fgrid = 1024;
	for (int r = 0; r < warmup; r++)
		if ((st = launch(dc)) != KVB_CUDA_OK)
			goto out;
	for (int r = 0; r < repeats; r++) {
		float ms = 0;
		flush_kernel<<<fgrid, 256>>>(dc->flush, dc->flush_n, dc->sink);
		LAUNCH_CHECK();
		CUDA_CHECK(cudaEventRecord(dc->ev0));
		if ((st = launch(dc)) != KVB_CUDA_OK)
			goto out;
		CUDA_CHECK(cudaEventRecord(dc->ev1));
		CUDA_CHECK(cudaEventSynchronize(dc->ev1));
		CUDA_CHECK(cudaEventElapsedTime(&ms, dc->ev0, dc->ev1));
		times_s[r] = ms * 1e-3;
	}
out:
	return st;
}

} /* extern "C" */

/* ------------------------------------------------------------- ceilings */

namespace {

__global__ void read_kernel(const float4 *__restrict__ a, size_t n, float *sink)
{
	float4 s = make_float4(0, 0, 0, 0);
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	for (; i + 3 * stride < n; i += 4 * stride) {
		float4 x0 = __ldcs(a + i), x1 = __ldcs(a + i + stride);
		float4 x2 = __ldcs(a + i + 2 * stride), x3 = __ldcs(a + i + 3 * stride);
		s.x += x0.x + x1.x + x2.x + x3.x;
		s.y += x0.y + x1.y + x2.y + x3.y;
		s.z += x0.z + x1.z + x2.z + x3.z;
		s.w += x0.w + x1.w + x2.w + x3.w;
	}
	for (; i < n; i += stride) {
		float4 x = __ldcs(a + i);
		s.x += x.x;
		s.y += x.y;
		s.z += x.z;
		s.w += x.w;
	}
	const float t = s.x + s.y + s.z + s.w;
	if (t == -1.0f) /* the data is all 1: never, but the sum is kept */
		*sink = t;
}

/* Four independent 16-byte loads in flight per thread before any store:
 * the copy is the ceiling the decode is judged against on the GPU, so it
 * must not be held back by too few bytes in flight. */
__global__ void copy_kernel(float4 *__restrict__ a, const float4 *__restrict__ b, size_t n)
{
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i + 3 * stride < n; i += 4 * stride) {
		float4 x0 = __ldcs(b + i), x1 = __ldcs(b + i + stride);
		float4 x2 = __ldcs(b + i + 2 * stride), x3 = __ldcs(b + i + 3 * stride);
		__stcs(a + i, x0);
		__stcs(a + i + stride, x1);
		__stcs(a + i + 2 * stride, x2);
		__stcs(a + i + 3 * stride, x3);
	}
	for (; i < n; i += stride)
		__stcs(a + i, __ldcs(b + i));
}

__device__ __forceinline__ float4 triad4(float4 x, float4 y, float q)
{
	return make_float4(x.x + q * y.x, x.y + q * y.y, x.z + q * y.z, x.w + q * y.w);
}

__global__ void triad_kernel(float4 *__restrict__ a, const float4 *__restrict__ b,
			     const float4 *__restrict__ c, float q, size_t n)
{
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i + stride < n; i += 2 * stride) {
		float4 x0 = __ldcs(b + i), y0 = __ldcs(c + i);
		float4 x1 = __ldcs(b + i + stride), y1 = __ldcs(c + i + stride);
		__stcs(a + i, triad4(x0, y0, q));
		__stcs(a + i + stride, triad4(x1, y1, q));
	}
	for (; i < n; i += stride)
		__stcs(a + i, triad4(__ldcs(b + i), __ldcs(c + i), q));
}

__global__ void fill_kernel(float4 *a, size_t n, float v)
{
	const size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
		a[i] = make_float4(v, v, v, v);
}

} /* namespace */

extern "C" int kvb_cuda_stream(uint64_t array_bytes, int repeats, struct kvb_ceiling *out)
{
	int st = KVB_CUDA_OK, sm = 0;
	float4 *a = NULL, *b = NULL, *c = NULL;
	float *sink = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	const size_t n = array_bytes / sizeof(float4);
	double best[3] = {1e30, 1e30, 1e30};
	memset(out, 0, sizeof *out);
	if (n == 0) {
		set_error("stream arrays of %llu bytes are too small", (unsigned long long)array_bytes);
		return KVB_CUDA_FAILED;
	}
	CUDA_CHECK(cudaSetDevice(0));
	CUDA_CHECK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
	CUDA_CHECK(cudaMalloc(&a, n * sizeof(float4)));
	CUDA_CHECK(cudaMalloc(&b, n * sizeof(float4)));
	CUDA_CHECK(cudaMalloc(&c, n * sizeof(float4)));
	CUDA_CHECK(cudaMalloc(&sink, sizeof(float)));
	CUDA_CHECK(cudaEventCreate(&e0));
	CUDA_CHECK(cudaEventCreate(&e1));
	{
		const int grid = sm * 8, block = 256;
		fill_kernel<<<grid, block>>>(a, n, 1.0f);
		LAUNCH_CHECK();
		fill_kernel<<<grid, block>>>(b, n, 1.0f);
		LAUNCH_CHECK();
		fill_kernel<<<grid, block>>>(c, n, 1.0f);
		LAUNCH_CHECK();
		for (int r = 0; r <= repeats; r++) /* pass 0: warm-up */
			for (int k = 0; k < 3; k++) {
				float ms = 0;
				CUDA_CHECK(cudaEventRecord(e0));
				if (k == 0)
					read_kernel<<<grid, block>>>(b, n, sink);
				else if (k == 1)
					copy_kernel<<<grid, block>>>(a, b, n);
				else
					triad_kernel<<<grid, block>>>(a, b, c, 3.0f, n);
				LAUNCH_CHECK();
				CUDA_CHECK(cudaEventRecord(e1));
				CUDA_CHECK(cudaEventSynchronize(e1));
				CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
				if (r > 0)
					best[k] = std::min(best[k], ms * 1e-3);
			}
	}
	{
		const double bytes = (double)n * sizeof(float4);
		out->read_gbps = bytes / best[0] / 1e9;
		out->copy_gbps = 2 * bytes / best[1] / 1e9;
		out->triad_gbps = 3 * bytes / best[2] / 1e9;
		out->array_bytes = n * sizeof(float4);
	}
out:
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	cudaFree(sink);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	return st;
}

/* ------------------------------------------------------------- capacity */

extern "C" int kvb_cuda_free_bytes(uint64_t *free_bytes)
{
	int st = KVB_CUDA_OK;
	size_t f = 0, t = 0;
	*free_bytes = 0;
	CUDA_CHECK(cudaMemGetInfo(&f, &t));
	*free_bytes = f;
out:
	return st;
}

extern "C" int kvb_cuda_capacity(uint64_t weights_bytes, uint64_t limit_bytes,
				 uint64_t block_bytes, int64_t *blocks, int *refused)
{
	enum { MAXCHUNKS = 4096 };
	void *chunk[MAXCHUNKS];
	int nchunks = 0, st = KVB_CUDA_OK;
	void *w = NULL;
	uint64_t used = 0;
	uint64_t per = (uint64_t)1 << 30; /* blocks per cudaMalloc: up to 1 GiB */
	*blocks = 0;
	*refused = 0;
	if (block_bytes == 0) {
		set_error("a block of 0 bytes");
		return KVB_CUDA_FAILED;
	}
	CUDA_CHECK(cudaSetDevice(0));
	if (weights_bytes > limit_bytes)
		goto out;
	if (weights_bytes) {
		CUDA_CHECK(cudaMalloc(&w, weights_bytes));
		CUDA_CHECK(cudaMemset(w, 0x5a, weights_bytes));
		used = weights_bytes;
	}
	while (used + block_bytes <= limit_bytes && nchunks < MAXCHUNKS) {
		const uint64_t room = limit_bytes - used;
		uint64_t n = std::min(room, per) / block_bytes;
		if (n == 0)
			n = 1;
		void *p = NULL;
		cudaError_t e = cudaMalloc(&p, n * block_bytes);
		if (e == cudaErrorMemoryAllocation) {
			(void)cudaGetLastError(); /* the device is full before the limit */
			if (n == 1) {
				*refused = 1;
				break;
			}
			per = n * block_bytes / 2; /* try smaller pieces for the rest */
			continue;
		}
		CUDA_CHECK(e);
		chunk[nchunks++] = p;
		CUDA_CHECK(cudaMemset(p, 0xa5, n * block_bytes));
		used += n * block_bytes;
		*blocks += (int64_t)n;
	}
	if (nchunks == MAXCHUNKS && used + block_bytes <= limit_bytes)
		*refused = 1; /* out of chunk slots: short of the limit all the same */
	CUDA_CHECK(cudaDeviceSynchronize());
out:
	for (int i = 0; i < nchunks; i++)
		cudaFree(chunk[i]);
	cudaFree(w);
	return st;
}
