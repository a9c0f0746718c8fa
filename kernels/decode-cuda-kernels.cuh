/* decode-cuda-kernels.cuh: the decode kernels of the CUDA backend and the
 * host arithmetic that picks and shapes their launch.  Compiled by nvcc
 * inside decode-cuda.cu, and by the host C++ compiler with KVB_CUDA_EMULATE
 * under cuda-emu.h, which runs this same source on fibers in `make check`
 * (tests/check-cuda-emu.cc).  The kernels themselves: decode-cuda-core.cuh
 * (CUDA cores, and the design's stance) and decode-cuda-tc.cuh (tensor
 * cores). */
#ifndef KVB_DECODE_CUDA_KERNELS_CUH
#define KVB_DECODE_CUDA_KERNELS_CUH

#include "decode-cuda-tc.cuh"

namespace {

/* ------------------------------------------------------------- dispatch */

/* Opt-in dynamic shared memory per block (CUDA C Programming Guide,
 * "Features and Technical Specifications" per compute capability). */
constexpr int SMEM_SM90 = 232448; /* 227 KiB: sm_90, sm_100 */
constexpr int SMEM_SM80 = 166912; /* 163 KiB: sm_80, sm_87 */
constexpr int SMEM_SM89 = 101376; /* 99 KiB: sm_86, sm_89 */

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

/* The tensor-core kernel with ST stages, and its dynamic shared memory.
 * Two-stage variants are built only where three stages pass the smallest
 * per-block limit of the GPUs kvbench targets (sm_86/89: 99 KiB): 16-bit
 * KV at d 128 and 256, 8-bit at d 256; elsewhere ST 2 gives nullptr. */
template <int DT, int D, int ST> kernel_fn pick_tc_s(bool pow2, int *smem)
{
	if constexpr (DT == KVB_DTYPE_FP32) {
		*smem = 0;
		return nullptr;
	} else if constexpr (ST == 2 && tc_layout<DT, D, 3>::SMEM <= SMEM_SM89) {
		*smem = 0;
		return nullptr;
	} else {
		*smem = tc_layout<DT, D, ST>::SMEM;
		return pow2 ? decode_tc_kernel<DT, D, true, ST> : decode_tc_kernel<DT, D, false, ST>;
	}
}

template <int DT, int ST> kernel_fn pick_tc_d(int d, bool pow2, int *smem)
{
	switch (d) {
	case 64: return pick_tc_s<DT, 64, ST>(pow2, smem);
	case 128: return pick_tc_s<DT, 128, ST>(pow2, smem);
	case 256: return pick_tc_s<DT, 256, ST>(pow2, smem);
	default: *smem = 0; return nullptr;
	}
}

template <int ST> kernel_fn pick_tc_st(int dt, int d, bool pow2, int *smem)
{
	switch (dt) {
	case KVB_DTYPE_FP16: return pick_tc_d<KVB_DTYPE_FP16, ST>(d, pow2, smem);
	case KVB_DTYPE_BF16: return pick_tc_d<KVB_DTYPE_BF16, ST>(d, pow2, smem);
	case KVB_DTYPE_FP8: return pick_tc_d<KVB_DTYPE_FP8, ST>(d, pow2, smem);
	case KVB_DTYPE_INT8: return pick_tc_d<KVB_DTYPE_INT8, ST>(d, pow2, smem);
	default: *smem = 0; return nullptr;
	}
}

/* The tensor-core kernel for a dtype and head dim, with P a power of two
 * (shifts) or not (divisions), whose dynamic shared memory (*smem) fits
 * smem_limit, the device's opt-in bytes per block: 3 stages where they
 * fit (sm_90: 227 KiB, every shape), else 2 (sm_80's 163 KiB at 16-bit d
 * 256; sm_86/89's 99 KiB at 16-bit d 128 and 8-bit d 256), else nullptr:
 * the caller then takes the CUDA-core kernel (sm_86/89 at 16-bit d 256,
 * whose 2 stages need 132 KiB).  *stages gets the count. */
inline kernel_fn pick_tc(int dt, int d, bool pow2, int smem_limit, int *smem, int *stages)
{
	kernel_fn k = pick_tc_st<3>(dt, d, pow2, smem);
	*stages = 3;
	if (k && *smem <= smem_limit)
		return k;
	k = pick_tc_st<2>(dt, d, pow2, smem);
	*stages = 2;
	if (k && *smem <= smem_limit)
		return k;
	*smem = 0;
	*stages = 0;
	return nullptr;
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

/* int8's V scales normalised by a power of two, on the host, once per
 * cache: the tensor-core kernel rounds weight x V scale to fp16 (the A
 * operand of P V), whose normal range is 2^-14 .. 65504, so scales of
 * 1e-4 lost most of their bits and 1e-6 came out as zeros.  With the
 * largest scale s = f 2^e (f in [0.5, 1)), k = -e makes every weight x
 * scale at most 1; the kernel takes its weights as 2^k exp2(x - m), the
 * sum l with them, so 2^k cancels in O / l exactly (and in the split
 * merge, every partial carrying the same 2^k) and costs one subtraction
 * per row and tile, none per score.  NaN scales (the slots past each
 * length) are skipped; 0 for other dtypes. */
inline float int8_v_shift(const struct kvb_paged_kv *kv)
{
	const struct kvb_shape *s = &kv->shape;
	if (s->dtype != KVB_DTYPE_INT8 || !kv->v_scales)
		return 0.0f;
	const int64_t n = (int64_t)kv->num_blocks * s->h_kv * s->block_size;
	float mx = 0.0f;
	for (int64_t i = 0; i < n; i++) {
		const float v = fabsf(kv->v_scales[i]);
		mx = v > mx ? v : mx; /* false for NaN */
	}
	if (!(mx > 0.0f) || mx == INFINITY)
		return 0.0f;
	int e = 0;
	(void)frexpf(mx, &e);
	e = e < -100 ? -100 : e > 100 ? 100 : e; /* 2^k stays a normal float */
	return (float)-e;
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
	a->v_shift = int8_v_shift(kv);
}

/* The split of a launch, wave-aware (the way FlashAttention's
 * num_splits_heuristic and FlashMLA's scheduler think of it): the grid is
 * B x n x H_kv x tiles CTAs, each sequence cut into n chunks of c tokens (c
 * = ceil(max_len / n) rounded up to TILE, at least MIN_CHUNK; a chunk past
 * a sequence's end exits at once).  `wave` CTAs run at a time, so with
 * chunks of equal work the step takes about ceil(busy CTAs / wave) x (c +
 * SPLIT_CTA_TOKENS) token-times, busy counting only chunks with tokens and
 * SPLIT_CTA_TOKENS a CTA's fixed cost (Q, the pipeline's ramp, the
 * epilogue: about 2 us, the time of ~100 int8 tokens at a CTA's share of
 * the bandwidth); n > 1 also writes partials and runs the merge, taken as
 * 2 % more.  The n with the least time wins, the smaller on a tie.  So a grid just under one wave
 * (fp8 GQA-8 at B 64: 512 CTAs on 528 slots) is no longer cut into a
 * second, mostly empty round of 512-token chunks, and a grid of 1.29
 * waves (int8 GQA-4 at B 64 on 396 slots) is cut into balanced chunks
 * that fill the waves.  *splits 1 and *chunk 0 mean no split. */
constexpr int SPLIT_CTA_TOKENS = 128;

inline void plan_splits(const int32_t *lens, int64_t batch, int h_kv, int tiles, int64_t wave,
			int *splits, int *chunk)
{
	int64_t max_len = 0;
	for (int64_t b = 0; b < batch; b++)
		max_len = max_len > lens[b] ? max_len : lens[b];
	*splits = 1;
	*chunk = 0;
	if (wave < 1 || max_len <= MIN_CHUNK)
		return;
	const int64_t per_unit = (int64_t)h_kv * tiles;
	double best = 0;
	int64_t best_n = 1, best_c = 0;
	const int64_t n_max = (max_len + MIN_CHUNK - 1) / MIN_CHUNK;
	for (int64_t n = 1; n <= n_max && n <= 256; n++) {
		int64_t c = n == 1 ? max_len : (max_len + n - 1) / n;
		if (n > 1) {
			c = c > MIN_CHUNK ? c : MIN_CHUNK;
			c = (c + TILE - 1) / TILE * TILE;
			if ((max_len + c - 1) / c < n)
				continue; /* the same cut as a smaller n */
		}
		int64_t busy = 0;
		for (int64_t b = 0; b < batch; b++)
			busy += lens[b] > 0 ? (lens[b] + c - 1) / c : 0;
		busy *= per_unit;
		const double t = (double)((busy + wave - 1) / wave) * (double)(c + SPLIT_CTA_TOKENS) *
				 (n > 1 ? 1.02 : 1.0);
		if (n == 1 || t < best) {
			best = t;
			best_n = n;
			best_c = c;
		}
	}
	if (best_n > 1) {
		*splits = (int)best_n;
		*chunk = (int)best_c;
	}
}

} /* namespace */

#endif
