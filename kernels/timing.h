/* timing.h: the decode harness's clocks and its one comparison for sorting
 * timings (kernels/timing.c). */
#ifndef KVB_TIMING_H
#define KVB_TIMING_H

/* Seconds on the monotonic clock (for intervals only). */
double kvb_now_s(void);
/* Seconds of CPU time the calling thread has used. */
double kvb_thread_cpu_s(void);
/* qsort comparison of doubles, ascending. */
int kvb_cmp_double(const void *a, const void *b);

#endif
