/* decode-cuda.cu: the CUDA backend of the decode, the GPU's streaming
 * ceiling and its capacity run.  Built when configure finds nvcc:
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Ikernels -c kernels/decode-cuda.cu
 *
 * Legend as in decode.h: B, H_q, H_kv, g = H_q / H_kv, d, P.
 *
 * The kernels themselves are in decode-cuda-kernels.cuh (compiled here
 * for the GPU, and by tests/check-cuda-emu.cc on the host under the
 * emulation of cuda-emu.h); this file holds their launch, the split
 * planning's inputs, the streaming ceiling and the capacity run.
 * Every CUDA call and launch goes through CUDA_CHECK; failures return a
 * status and leave a message for kvb_cuda_error(). */
#include "decode.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "decode-cuda-kernels.cuh"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {


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
	int smem_bytes; /* dynamic shared memory of the kernel (tensor-core: its stages) */
	bool tc;        /* the tensor-core kernel, else the CUDA-core one */
	int stages;     /* tensor-core: its cp.async pipeline's depth (3, or 2) */
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
	const int g = s->h_q / s->h_kv;
	const char *force = getenv("KVBENCH_CUDA_KERNEL"); /* cuda-core | tensor-core */
	int smem_limit = 0, stages = 0;
	{
		/* before the declarations CUDA_CHECK's goto would cross */
		cudaError_t e = cudaSetDevice(0);
		if (e == cudaSuccess)
			e = cudaDeviceGetAttribute(&smem_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
		if (e != cudaSuccess) {
			set_error("cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin): %s",
				  cudaGetErrorString(e));
			free(dc);
			return KVB_CUDA_FAILED;
		}
	}
	bool tc = use_tc(g, s->dtype, force && *force == 'c' ? 'c' : 0);
	if (tc) {
		/* 3 stages, else 2, else (too little shared memory on this
		 * GPU) the CUDA-core kernel */
		dc->kernel = pick_tc(s->dtype, s->d, (s->block_size & (s->block_size - 1)) == 0,
				     smem_limit, &dc->smem_bytes, &stages);
		tc = dc->kernel != nullptr;
	}
	dc->tc = tc;
	dc->stages = stages;
	const int gt = tc ? TC_ROWS : heads_per_cta(g, s->dtype);
	const size_t pool = (size_t)kv->num_blocks * s->h_kv * s->block_size * s->d *
			    kvb_dtype_bytes(s->dtype);
	const size_t nq = (size_t)kv->batch * s->h_q * s->d;
	dev_args &a = dc->a;
	dc->d = s->d;
	dc->batch = kv->batch;
	dc->o_bytes = nq * sizeof(float);
	if (!tc)
		dc->kernel = pick_kernel(s->dtype, s->d, gt);
	dc->merge = pick_merge(s->d);

	CUDA_CHECK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
	CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
	if (dc->smem_bytes > 48 * 1024)
		CUDA_CHECK(cudaFuncSetAttribute(dc->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
						dc->smem_bytes));
	CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dc->kernel, NTHREADS,
								 dc->smem_bytes));
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
	a.tables = dc->tables;
	a.lens = dc->lens;
	a.q = dc->q;
	a.o = dc->o;
	args_shape(kv, gt, &a);

	/* Split when it shortens the step by whole waves (plan_splits): a
	 * wave is what the GPU holds at once, SMs x CTAs per SM. */
	plan_splits(kv->seq_lens, kv->batch, s->h_kv, a.tiles, (int64_t)sm * std::max(per_sm, 1),
		    &a.splits, &a.chunk);
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

const char *kvb_cuda_decode_kernel(const struct kvb_cuda_decode *dc)
{
	return !dc->tc ? "cuda-core" : dc->stages == 2 ? "tensor-core-2stage" : "tensor-core";
}

void kvb_cuda_decode_split(const struct kvb_cuda_decode *dc, int *splits, int *chunk_tokens)
{
	*splits = dc->a.splits;
	*chunk_tokens = dc->a.chunk;
}

static int launch(struct kvb_cuda_decode *dc)
{
	int st = KVB_CUDA_OK;
	dc->kernel<<<dc->grid_ctas, NTHREADS, dc->smem_bytes>>>(dc->a);
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
