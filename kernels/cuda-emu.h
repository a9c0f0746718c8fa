/* cuda-emu.h: a host emulation of the CUDA features kvbench's kernels use,
 * so that the kernel source itself (decode-cuda-kernels.cuh, compiled by
 * the host C++ compiler with KVB_CUDA_EMULATE) runs in `make check` on a
 * machine without a GPU.  Each CUDA thread is a fiber (ucontext for its
 * stack, _setjmp/_longjmp to switch); the CTAs of a grid run one after
 * another on one OS thread.
 *
 * What it emulates, from the CUDA C++ and PTX ISA documents:
 *   - __syncthreads(): every thread of the CTA that has not exited waits;
 *   - __shfl_xor_sync / __shfl_sync with the full mask: the 32 lanes of a
 *     warp meet, each reads its partner's value of that same call;
 *   - cp.async (16 bytes, optionally zero-filled), commit_group and
 *     wait_group N: the copy lands only when its thread waits for its
 *     group (the latest moment the PTX ISA allows), so a read of shared
 *     memory before the wait sees the old bytes and fails the test;
 *   - ldmatrix .x4 .trans (the lanes' row addresses gathered);
 *   - __byte_perm (prmt) and __ldg;
 *   - mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: the fragments of
 *     the 32 lanes are gathered and D = A B + C computed in fp32 from the
 *     PTX ISA's fragment layouts (groupID = lane >> 2, threadID_in_group =
 *     lane % 4; A: row groupID (+8 for a2,a3,a6,a7), col 2 tig + (i & 1)
 *     (+8 for a4..a7); B: row 2 tig + (i & 1) (+8 for b2,b3), col groupID;
 *     C/D: row groupID (+8 for c2,c3), col 2 tig + (i & 1));
 *   - ex2.approx as exp2f; __ldcs as a plain load.
 * A warp collective reached by only some lanes of a warp, or a barrier
 * reached while other threads wait in a collective, aborts the test with
 * a message: on the GPU that is a hang or undefined behaviour.
 *
 * What it cannot show: races between threads (a fiber runs until it
 * reaches a barrier or a collective, so unsynchronised shared memory
 * accesses happen in one fixed order), memory-model effects, bank
 * conflicts, register pressure, occupancy or any timing.  Those need the
 * GPU (compute-sanitizer racecheck, ptxas -v, the timed run). */
#ifndef KVB_CUDA_EMU_H
#define KVB_CUDA_EMU_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <setjmp.h>
#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
/* One copy per kernel instantiation, shared by the CTA's fibers; CTAs run
 * one after another, and the launcher poisons it between CTAs. */
#define __shared__ static

namespace kvb_emu {

enum fiber_state { RUNNABLE, AT_BARRIER, AT_WARP, DONE };

struct pending_copy {
	void *dst;
	unsigned char bytes[16];
	int size, group;
};

struct fiber {
	ucontext_t uc;
	jmp_buf jb;
	char *stack;
	int state, started;
	unsigned warp_gen;              /* this lane's warp collectives so far */
	std::vector<pending_copy> copies;
	int groups_committed;
};

enum { MAX_THREADS = 1024, SLOT_WORDS = 8, STACK_BYTES = 256 * 1024 };

struct machine {
	fiber f[MAX_THREADS];
	int nthreads;
	jmp_buf sched;
	ucontext_t sched_uc;
	fiber *cur;
	std::function<void()> body;
	/* a warp collective's payload per lane, double-buffered by parity */
	uint32_t slot[2][MAX_THREADS][SLOT_WORDS];
	unsigned long long switches;
};

inline machine *g_machine;

[[noreturn]] inline void fail(const char *what)
{
	fprintf(stderr, "cuda-emu: %s (thread %d)\n", what,
		g_machine && g_machine->cur ? (int)(g_machine->cur - g_machine->f) : -1);
	abort();
}

inline void yield_as(int state)
{
	machine *m = g_machine;
	fiber *f = m->cur;
	f->state = state;
	if (!_setjmp(f->jb))
		_longjmp(m->sched, 1);
}

inline void trampoline()
{
	machine *m = g_machine;
	m->body();
	m->cur->state = DONE;
	_longjmp(m->sched, 1);
}

} /* namespace kvb_emu */

/* The built-in variables: set by the launcher before each fiber runs. */
inline uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace kvb_emu {

/* Run fiber f until it yields or exits; alone in its function so that no
 * caller's local lives across the _setjmp. */
__attribute__((noinline)) inline void resume(machine *m, fiber *f)
{
	if (!_setjmp(m->sched)) {
		if (!f->started) {
			f->started = 1;
			swapcontext(&m->sched_uc, &f->uc);
		} else {
			_longjmp(f->jb, 1);
		}
	}
}

/* Run `body` as a grid of `grid` CTAs of `block` threads (1-D). */
inline void launch(int grid, int block, const std::function<void()> &body, size_t shared_poison_bytes,
		   void *shared_poison)
{
	if (block < 1 || block > MAX_THREADS || block % 32)
		fail("a block must be 32..1024 threads, whole warps");
	static machine *m = new machine();
	g_machine = m;
	m->body = body;
	m->nthreads = block;
	blockDim = dim3((unsigned)block, 1, 1);
	gridDim = dim3((unsigned)grid, 1, 1);
	for (int i = 0; i < block; i++)
		if (!m->f[i].stack && !(m->f[i].stack = (char *)malloc(STACK_BYTES)))
			fail("out of memory for fiber stacks");
	for (int c = 0; c < grid; c++) {
		blockIdx = make_uint3((unsigned)c, 0, 0);
		if (shared_poison)
			memset(shared_poison, 0xff, shared_poison_bytes); /* NaN floats */
		for (int i = 0; i < block; i++) {
			fiber *f = &m->f[i];
			f->state = RUNNABLE;
			f->started = 0;
			f->warp_gen = 0;
			f->copies.clear();
			f->groups_committed = 0;
			getcontext(&f->uc);
			f->uc.uc_stack.ss_sp = f->stack;
			f->uc.uc_stack.ss_size = STACK_BYTES;
			f->uc.uc_link = nullptr;
			makecontext(&f->uc, trampoline, 0);
		}
		for (;;) {
			int runnable = 0, done = 0, at_bar = 0;
			for (int i = 0; i < block; i++) {
				fiber *f = &m->f[i];
				if (f->state != RUNNABLE)
					continue;
				runnable++;
				m->cur = f;
				threadIdx = make_uint3((unsigned)i, 0, 0);
				m->switches++;
				resume(m, f);
			}
			m->cur = nullptr;
			for (int i = 0; i < block; i++) {
				done += m->f[i].state == DONE;
				at_bar += m->f[i].state == AT_BARRIER;
			}
			if (done == block)
				break;
			/* warps whose live lanes all wait in a collective go on */
			int released = 0;
			for (int w = 0; w < block / 32; w++) {
				int waiting = 0, live = 0;
				for (int l = 0; l < 32; l++) {
					int s = m->f[w * 32 + l].state;
					live += s != DONE;
					waiting += s == AT_WARP;
				}
				if (waiting && waiting != 32)
					fail(waiting == live ? "a warp collective after some lanes exited"
							     : "a warp collective not reached by every lane "
							       "(divergence or a lane at a barrier)");
				if (waiting == 32) {
					for (int l = 0; l < 32; l++)
						m->f[w * 32 + l].state = RUNNABLE;
					released++;
				}
			}
			if (released)
				continue;
			if (at_bar && at_bar == block - done) {
				for (int i = 0; i < block; i++)
					if (m->f[i].state == AT_BARRIER)
						m->f[i].state = RUNNABLE;
				continue;
			}
			if (!runnable)
				fail("deadlock: threads wait at a barrier while others wait in a warp "
				     "collective");
		}
	}
	g_machine = nullptr;
}

/* A warp collective: this lane's `n` words in, all 32 lanes' words out
 * (row l of `all` is lane l's). */
inline const uint32_t (*warp_exchange(const uint32_t *words, int n))[SLOT_WORDS]
{
	machine *m = g_machine;
	fiber *f = m->cur;
	const int tid = (int)(f - m->f), warp0 = tid & ~31;
	const int par = f->warp_gen & 1;
	memcpy(m->slot[par][tid], words, (size_t)n * sizeof *words);
	f->warp_gen++;
	yield_as(AT_WARP);
	return (const uint32_t(*)[SLOT_WORDS])m->slot[par][warp0];
}

template <class T> inline T shfl_from(T v, int src_of_lane_xor, int src_lane, bool xor_mode)
{
	static_assert(sizeof(T) == 4, "32-bit shuffles");
	uint32_t w;
	memcpy(&w, &v, 4);
	const int lane = (int)(threadIdx.x & 31);
	const uint32_t(*all)[SLOT_WORDS] = warp_exchange(&w, 1);
	const int src = (xor_mode ? lane ^ src_of_lane_xor : src_lane) & 31;
	memcpy(&v, &all[src][0], 4);
	return v;
}

} /* namespace kvb_emu */

/* ------------------------------------------------------------- intrinsics */

inline void __syncthreads()
{
	kvb_emu::yield_as(kvb_emu::AT_BARRIER);
}

template <class T> inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask)
{
	if (mask != 0xffffffffu)
		kvb_emu::fail("only full-warp shuffles are emulated");
	return kvb_emu::shfl_from(v, lane_mask, 0, true);
}

template <class T> inline T __shfl_sync(unsigned mask, T v, int src_lane)
{
	if (mask != 0xffffffffu)
		kvb_emu::fail("only full-warp shuffles are emulated");
	return kvb_emu::shfl_from(v, 0, src_lane, false);
}

inline float __uint_as_float(unsigned u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

inline unsigned __float_as_uint(float f)
{
	unsigned u;
	memcpy(&u, &f, 4);
	return u;
}

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }

inline uint4 __ldcs(const uint4 *p) { return *p; }
template <class T> inline T __ldg(const T *p) { return *p; }

/* prmt.b32 (default mode): byte i of the result is byte s_i of {y, x}
 * (x bytes 0-3, y bytes 4-7), s_i the selector's nibble i. */
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
	const unsigned long long xy = (unsigned long long)y << 32 | x;
	unsigned r = 0;
	for (int i = 0; i < 4; i++)
		r |= (unsigned)((xy >> (8 * ((s >> (4 * i)) & 7))) & 0xffu) << (8 * i);
	return r;
}

namespace kvb_emu {

/* cp.async.{cg,ca}.shared.global [dst], [src], size, src_bytes (0 or
 * size): the source is read now (the kernel must not change it), the
 * destination written when the group is waited for. */
inline void cp_async(void *dst, const void *src, int size, bool valid)
{
	fiber *f = g_machine->cur;
	pending_copy c;
	if (((uintptr_t)dst | (uintptr_t)src) % (uintptr_t)size)
		fail("cp.async: an address not aligned to the copy's size");
	c.dst = dst;
	c.size = size;
	c.group = f->groups_committed;
	if (valid)
		memcpy(c.bytes, src, (size_t)size);
	else
		memset(c.bytes, 0, (size_t)size); /* src-size 0: zero-filled */
	f->copies.push_back(c);
}

inline void cp_async16(void *dst, const void *src, bool valid)
{
	cp_async(dst, src, 16, valid);
}

/* The dynamic shared memory of a launch (extern __shared__). */
enum { DYN_SHARED_BYTES = 232448 }; /* sm_90's 227 KiB per block */
inline unsigned char *dyn_shared()
{
	alignas(128) static unsigned char buf[DYN_SHARED_BYTES];
	return buf;
}

/* ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16: lane i gives the row
 * address of matrix i / 8, row i % 8 (8 16-bit elements); each lane gets,
 * of matrix j, in register j, the elements (row 2 (lane % 4) + {0, 1},
 * column lane / 4): the 8x8 matrices transposed. */
inline void ldmatrix_x4_trans(uint32_t r[4], const void *row_addr)
{
	uint32_t words[2];
	const uintptr_t p = (uintptr_t)row_addr;
	if (p % 16)
		fail("ldmatrix: a row address not aligned to 16 bytes");
	words[0] = (uint32_t)p;
	words[1] = (uint32_t)(p >> 32);
	const uint32_t(*all)[SLOT_WORDS] = warp_exchange(words, 2);
	const int lane = (int)(threadIdx.x & 31);
	for (int j = 0; j < 4; j++) {
		uint16_t e[2];
		for (int h = 0; h < 2; h++) {
			const int src = j * 8 + 2 * (lane % 4) + h; /* the row's lane */
			const uintptr_t a = (uintptr_t)all[src][0] | (uintptr_t)all[src][1] << 32;
			memcpy(&e[h], (const void *)(a + 2 * (lane / 4)), 2);
		}
		r[j] = (uint32_t)e[0] | (uint32_t)e[1] << 16;
	}
}

/* cp.async.commit_group */
inline void cp_async_commit()
{
	g_machine->cur->groups_committed++;
}

/* cp.async.wait_group n: every group but the newest n has landed. */
inline void cp_async_wait(int n)
{
	fiber *f = g_machine->cur;
	const int upto = f->groups_committed - n; /* groups [0, upto) land */
	std::vector<pending_copy> keep;
	for (const pending_copy &c : f->copies)
		if (c.group < upto)
			memcpy(c.dst, c.bytes, (size_t)c.size);
		else
			keep.push_back(c);
	f->copies.swap(keep);
}

/* One 16-bit element of a packed pair as float: bf16 or fp16. */
template <bool BF16> inline float half_of(uint32_t w, int hi)
{
	const uint16_t h = (uint16_t)(hi ? w >> 16 : w & 0xffffu);
	if (BF16)
		return __uint_as_float((uint32_t)h << 16);
	__half_raw r;
	r.x = h;
	return __half2float(__half(r));
}

/* mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32 */
template <bool BF16> inline void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2],
					      const float c[4])
{
	uint32_t mine[6] = {a[0], a[1], a[2], a[3], b[0], b[1]};
	float cc[4] = {c[0], c[1], c[2], c[3]};
	const uint32_t(*all)[SLOT_WORDS] = warp_exchange(mine, 6);
	const int lane = (int)(threadIdx.x & 31), gid = lane >> 2, tig = lane & 3;
	for (int i = 0; i < 4; i++) {
		const int row = gid + 8 * (i / 2), col = 2 * tig + (i & 1);
		float s = cc[i];
		for (int k = 0; k < 16; k++) {
			/* A(row, k): lane (row % 8) * 4 + (k % 8) / 2, register
			 * (row >= 8) + 2 (k >= 8), half k & 1 */
			const int la = (row % 8) * 4 + (k % 8) / 2;
			const int ra = (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0);
			/* B(k, col): lane col * 4 + (k % 8) / 2, register k >= 8 */
			const int lb = col * 4 + (k % 8) / 2;
			const int rb = 4 + (k >= 8 ? 1 : 0);
			s += half_of<BF16>(all[la][ra], k & 1) * half_of<BF16>(all[lb][rb], k & 1);
		}
		d[i] = s;
	}
}

} /* namespace kvb_emu */

#endif
