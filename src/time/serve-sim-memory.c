/* serve-sim-memory.c: the caller's memory model (kvp_serve_memory) in the
 * loop of serve-sim.c: each step's view for on_step, lazy decoding, and in
 * test builds the recount of every running request.
 *
 * Lazy decoding (struct serve_lazy in serve-sim-private.h): with a linear
 * growth the decoding requests at the head of the running order are not
 * touched in a step.  All of them take a token each, so a clock gives each
 * one's computed tokens (c = clock - base), the count of those whose base
 * is the clock's residue mod the period P says how many cross into a new
 * unit of growth (c a multiple of P), and a min-heap by the clock of the
 * step each finishes in (c = prompt + output - 2 at its start: it samples
 * its last token) says which leave, in running order by the order of their
 * joining.  A step that would preempt, or whose lazy decodes outnumber its
 * tokens, writes them out as explicit requests first, so the schedule is
 * the plain loop's step for step.  What a lazy request holds when written
 * out is what it held on joining plus step_units per boundary crossed since:
 * exactly what the loop added, so the units in use stay conserved; test
 * builds check each against the memory model's own held and measure.
 *
 * Legend: P = step_period, c = computed tokens, n = lazy requests. */
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "time/serve-sim-private.h"

kvp_status serve_lazy_init(struct sim *s)
{
	struct serve_lazy *z = &s->lz;
	const struct kvp_serve_memory *m = s->mem;
	*z = (struct serve_lazy){.head = SERVE_NIL, .tail = SERVE_NIL, .clock = (uint64_t)1 << 62};
	if (!m || !m->step_period || !s->o->no_itl)
		return KVP_STATUS_OK;
	z->cnt = calloc(m->step_period, sizeof *z->cnt);
	if (!z->cnt)
		return KVP_STATUS_NOMEM;
	z->on = true;
	z->period = m->step_period;
	z->units = m->step_units;
	z->measure_tok = m->step_measure;
	return KVP_STATUS_OK;
}

void serve_lazy_free(struct sim *s)
{
	free(s->lz.cnt);
	free(s->lz.heap);
}

static bool ev_less(const struct serve_lazy_ev *a, const struct serve_lazy_ev *b)
{
	return a->key < b->key || (a->key == b->key && a->order < b->order);
}

static bool heap_push(struct serve_lazy *z, struct serve_lazy_ev e)
{
	if (z->nh == z->caph) {
		size_t cap = z->caph ? 2 * z->caph : 256;
		struct serve_lazy_ev *h = realloc(z->heap, cap * sizeof *h);
		if (!h)
			return false;
		z->heap = h;
		z->caph = cap;
	}
	size_t i = z->nh++;
	while (i && ev_less(&e, &z->heap[(i - 1) / 2])) {
		z->heap[i] = z->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	z->heap[i] = e;
	return true;
}

static void heap_pop(struct serve_lazy *z)
{
	struct serve_lazy_ev e = z->heap[--z->nh];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= z->nh)
			break;
		if (c + 1 < z->nh && ev_less(&z->heap[c + 1], &z->heap[c]))
			c++;
		if (!ev_less(&z->heap[c], &e))
			break;
		z->heap[i] = z->heap[c];
		i = c;
	}
	if (z->nh)
		z->heap[i] = e;
}

/* Slot i out of the lazy set, its state written out at c computed tokens
 * (the step's start, or its end for one that finished). */
static void lazy_remove(struct sim *s, uint32_t i, uint64_t c)
{
	struct serve_lazy *z = &s->lz;
	struct sreq *r = &s->req[i];
	uint64_t now = z->clock - r->base;   /* at this step's start */
	if (r->lz_prev != SERVE_NIL)
		s->req[r->lz_prev].lz_next = r->lz_next;
	else
		z->head = r->lz_next;
	if (r->lz_next != SERVE_NIL)
		s->req[r->lz_next].lz_prev = r->lz_prev;
	else
		z->tail = r->lz_prev;
	z->cnt[r->base % z->period]--;
	z->n--;
	z->measure -= r->measure + (now - r->comp) * z->measure_tok;
	/* the units the loop added at each boundary crossed since it joined */
	r->held += z->units * (kvp_cdiv(c, z->period) - kvp_cdiv(r->comp, z->period));
	r->comp = c;
	r->gen = c + 1 - r->prompt;   /* decoding: c + 1 = prompt + gen */
	r->sched = 0;
}

void serve_lazy_schedule(struct sim *s, uint64_t *budget)
{
	struct serve_lazy *z = &s->lz;
	if (!z->n)
		return;
	uint64_t grow = (uint64_t)z->cnt[z->clock % z->period] * z->units;
	if (z->n <= *budget && grow <= s->num_blocks - s->used) {
		s->used += grow;
		*budget -= z->n;
		return;
	}
	/* written out before the explicit ones (the run list holds every slot) */
	size_t n = z->n;
	memmove(s->run + n, s->run, s->nrun * sizeof *s->run);
	size_t k = 0;
	for (uint32_t i = z->head; i != SERVE_NIL;) {
		uint32_t next = s->req[i].lz_next;
		lazy_remove(s, i, z->clock - s->req[i].base);
		s->run[k++] = i;
		i = next;
	}
	s->nrun += n;
	z->nh = 0;
}

uint32_t serve_lazy_pop_done(struct sim *s)
{
	struct serve_lazy *z = &s->lz;
	if (!z->nh || z->heap[0].key != z->clock)
		return SERVE_NIL;
	uint32_t i = z->heap[0].slot;
	heap_pop(z);
	lazy_remove(s, i, z->clock - s->req[i].base + 1);
	return i;
}

void serve_lazy_advance(struct sim *s)
{
	struct serve_lazy *z = &s->lz;
	z->measure += z->n * z->measure_tok;
	z->clock++;
}

static uint64_t measure_of(const struct sim *s, const struct sreq *r, uint64_t c)
{
	if (!s->mem->measure)
		return 0;
	struct kvp_serve_view v = {r->id, r->prompt, r->output, c, r->prefix};
	return s->mem->measure(s->mem->ctx, &v);
}

kvp_status serve_lazy_promote(struct sim *s)
{
	struct serve_lazy *z = &s->lz;
	if (!z->on)
		return KVP_STATUS_OK;
	size_t k = 0;
	for (; k < s->nrun; k++) {
		uint32_t i = s->run[k];
		struct sreq *r = &s->req[i];
		if (!(r->gen >= 1 && r->comp + 1 == r->prompt + r->gen))
			break;
		/* it finishes in the step that starts at c = prompt + output - 2 */
		r->base = z->clock - r->comp;
		if (!heap_push(z, (struct serve_lazy_ev){r->base + r->prompt + r->output - 2,
							 z->order++, i}))
			return KVP_STATUS_NOMEM;
		r->measure = measure_of(s, r, r->comp);
		z->measure += r->measure;
		r->lz_prev = z->tail;
		r->lz_next = SERVE_NIL;
		if (z->tail != SERVE_NIL)
			s->req[z->tail].lz_next = i;
		else
			z->head = i;
		z->tail = i;
		z->cnt[r->base % z->period]++;
		z->n++;
	}
	if (k) {
		memmove(s->run, s->run + k, (s->nrun - k) * sizeof *s->run);
		s->nrun -= k;
	}
	return KVP_STATUS_OK;
}

void serve_memory_on_step(struct sim *s)
{
	const struct serve_lazy *z = &s->lz;
	uint64_t m = z->measure + z->n * z->measure_tok;   /* a token each this step */
	for (size_t k = 0; k < s->nrun; k++) {
		const struct sreq *r = &s->req[s->run[k]];
		m += measure_of(s, r, r->comp + r->sched);
	}
	if (s->refs)
		m += s->mem->shared_measure;
	s->mem->on_step(s->mem->ctx, serve_running(s), s->used, m, s->refused);
}

/* What r holds and measures at c tokens, from the memory model. */
static void recount_one(const struct sim *s, const struct sreq *r, uint64_t c, uint64_t *held,
			uint64_t *measure, uint64_t *carriers)
{
	struct kvp_serve_view v = {r->id, r->prompt, r->output, c, r->prefix};
	*held += s->mem->held(s->mem->ctx, &v);
	*measure += measure_of(s, r, c);
	*carriers += r->prefix && s->mem->shared_tokens;
}

bool serve_memory_recount(const struct sim *s)
{
	const struct serve_lazy *z = &s->lz;
	uint64_t held = 0, measure = 0, carriers = 0, kept = 0;
	size_t n = 0;
	for (uint32_t i = z->head; i != SERVE_NIL; i = s->req[i].lz_next, n++) {
		const struct sreq *r = &s->req[i];
		uint64_t c = z->clock - r->base + 1;   /* after this step's token */
		recount_one(s, r, c, &held, &measure, &carriers);
		kept += r->held + z->units * (kvp_cdiv(c, z->period) - kvp_cdiv(r->comp, z->period));
	}
	/* the lazy ones' measures, summed in aggregate, against each one's */
	if (n != z->n || measure != z->measure + z->n * z->measure_tok)
		return false;
	for (size_t k = 0; k < s->nrun; k++) {
		const struct sreq *r = &s->req[s->run[k]];
		recount_one(s, r, r->comp + r->sched, &held, &measure, &carriers);
		kept += r->held;
	}
	return carriers == s->refs && held == kept &&
	       held + (s->refs ? s->mem->shared_units : 0) + s->pinned == s->used;
}
