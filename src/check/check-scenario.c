/* check-scenario.c: one scenario of an expectations file read: `defaults:`
 * and each scenario walked with a key table (one handler per key), unknown
 * keys refused with a suggestion, inputs recorded for the report.  Errors
 * carry file:line:col.  The file around them (the document, names kept
 * unique, read whole or one scenario at a time) is check-file.c. */
#include "check/check-private.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "read/profile.h"
#include "base/suggest.h"
#include "base/units.h"
#include "base/yaml-walk.h"

/* ------------------------------------------------------------ scenarios */

/* What a scenario's keys write while it is walked, in slots of fixed size;
 * pack() then keeps exactly the bytes written in one block per scenario. */
struct scratch_input {
	char key[32];
	char value[512];
	int line, col;
};
struct scratch {
	struct scratch_input in[KVP_CHECK_INPUTS_MAX];
	size_t n;
	char model[512], gpu[512], workload[512];
};

struct walk {
	const struct kvp_doc *doc;
	char dir[512];          /* the file's directory, "" for the current one */
	bool defaults;          /* walking `defaults:` */
	struct scratch *cur;    /* the scenario (or defaults) being walked */
};

typedef kvp_status (*key_fn)(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err);

static kvp_status input_record(const struct walk *w, const struct kvp_node *v,
			       struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	char buf[512];
	kvp_status st = KVP_STATUS_OK;
	if (v->type == KVP_NODE_SEQ) {
		/* a list as written, "[1, 8, 32]" */
		size_t len = (size_t)snprintf(buf, sizeof buf, "[");
		for (size_t i = 0; i < v->n && !st && len < sizeof buf; i++) {
			char item[128];
			if (!(st = kvp_node_str(w->doc, v->items[i], key, item, sizeof item, err)))
				len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
							i ? ", " : "", item);
		}
		if (!st && len + 1 >= sizeof buf)
			return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "list too long");
		if (!st)
			snprintf(buf + len, sizeof buf - len, "]");
	} else {
		st = kvp_node_str(w->doc, v, key, buf, sizeof buf, err);
	}
	if (st)
		return st;
	(void)s;
	struct scratch *c = w->cur;
	size_t i;
	for (i = 0; i < c->n; i++)
		if (strcmp(c->in[i].key, key) == 0)
			break;
	if (i == KVP_CHECK_INPUTS_MAX)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "too many inputs");
	if (i == c->n)
		c->n++;
	snprintf(c->in[i].key, sizeof c->in[i].key, "%s", key);
	struct scratch_input *in = &c->in[i];
	snprintf(in->value, sizeof in->value, "%s", buf);
	in->line = v->line;
	in->col = v->col;
	return KVP_STATUS_OK;
}

/* A profile reference: a name, or a path, taken relative to the
 * expectations file when it exists there. */
static kvp_status key_profile(const struct walk *w, const struct kvp_node *v,
			      struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(w->doc, v, key, KVP_NODE_SCALAR, err);
	if (st || (st = input_record(w, v, s, key, err)))
		return st;
	char *dst = strcmp(key, "model") == 0 ? w->cur->model
		    : strcmp(key, "workload") == 0 ? w->cur->workload : w->cur->gpu;
	const char *val = v->value;
	size_t size = sizeof w->cur->model;
	/* never cut: a cut name or path would load another profile */
	if (strlen(val) >= size)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "longer than %zu bytes", size - 1);
	snprintf(dst, size, "%s", val);
	if (val[0] != '/' && (strchr(val, '/') || strstr(val, ".yaml") || strstr(val, ".json")) &&
	    w->dir[0]) {
		char joined[1100]; /* dir (< 512) + '/' + val (< 512): whole */
		snprintf(joined, sizeof joined, "%s/%s", w->dir, val);
		struct stat sb; /* there, without opening it (a FIFO would block) */
		if (stat(joined, &sb) == 0) {
			if (strlen(joined) >= size)
				return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
						     "path too long");
			memcpy(dst, joined, strlen(joined) + 1);
		}
	}
	return KVP_STATUS_OK;
}

static kvp_status key_command(const struct walk *w, const struct kvp_node *v,
			      struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	const struct kvp_check_command *c = kvp_check_command_find(v->value);
	if (!c)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "unknown command '%s' (budget, frag, perf)", v->value);
	snprintf(s->command, sizeof s->command, "%s", c->name);
	s->run = c->run;
	return KVP_STATUS_OK;
}

static kvp_status key_engine(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (!st && !kvp_engine_parse(v->value, &s->opts.engine))
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				   "unknown engine '%s' (generic, vllm, sglang, trtllm, llamacpp)", v->value);
	return st;
}

static kvp_status key_dtype(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	bool kv = strcmp(key, "kv_dtype") == 0;
	enum kvp_dtype dt;
	if (!kvp_dtype_parse(v->value, &dt))
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "unknown dtype '%s'",
				     v->value);
	if (kv && !kvp_dtype_info(dt)->kv_ok)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "%s is not a KV cache format", v->value);
	if (!kv && dt != KVP_DTYPE_AUTO && dt != KVP_DTYPE_BF16 && dt != KVP_DTYPE_FP16 &&
	    dt != KVP_DTYPE_FP32)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "%s is not a serving dtype (auto, bf16, fp16, fp32)", v->value);
	*(kv ? &s->opts.kv_dtype : &s->opts.dtype) = dt;
	return KVP_STATUS_OK;
}

/* Whole numbers: their bounds and where they go (32 or 64 bits). */
#define SC(member) offsetof(struct kvp_check_scenario, member), \
	sizeof(((struct kvp_check_scenario *)0)->member)
static const struct count_key {
	const char *key;
	uint64_t min, max;
	size_t off, size;
} count_keys[] = {
	{"tp", 1, 1u << 20, SC(opts.par.tp)},
	{"pp", 1, 1u << 20, SC(opts.par.pp)},
	{"dp", 1, 1u << 20, SC(opts.par.dp)},
	{"ep", 1, 1u << 20, SC(opts.par.ep)},
	{"num_gpus", 1, 1u << 20, SC(opts.par.gpus)},
	{"block_size", 1, 1u << 20, SC(opts.block_size)},
	{"max_num_seqs", 1, UINT32_MAX, SC(opts.max_num_seqs)},
	{"batch", 1, UINT64_MAX, SC(opts.batch)},
	{"requests", 1, UINT64_MAX, SC(frag.opts.requests)},   /* frag's */
	{"seed", 0, UINT64_MAX, SC(frag.opts.seed)},
	{"warmup", 0, UINT64_MAX, SC(frag.opts.warmup)},
};
#undef SC

static kvp_status key_count(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	uint64_t n;
	if (!st)
		st = kvp_node_u64(w->doc, v, key, &n, err);
	if (st)
		return st;
	const struct count_key *c = count_keys;
	while (strcmp(c->key, key) != 0)
		c++;
	if (n < c->min || n > c->max)
		return c->max == UINT64_MAX
			       ? kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
					       "must be at least %llu, got %s",
					       (unsigned long long)c->min, v->value)
			       : kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
					       "must be between %llu and %llu, got %s",
					       (unsigned long long)c->min, (unsigned long long)c->max,
					       v->value);
	char *dst = (char *)s + c->off;
	if (c->size == sizeof(uint32_t)) {
		uint32_t u = (uint32_t)n;
		memcpy(dst, &u, sizeof u);
	} else {
		memcpy(dst, &n, sizeof n);
	}
	if (strcmp(key, "warmup") == 0)
		s->frag.opts.has_warmup = true;
	return KVP_STATUS_OK;
}

static kvp_status key_tokens(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	uint64_t n;
	int rc = kvp_parse_tokens(v->value, &n);
	if (rc == -2)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_OVERFLOW, key, "%s is too large",
				     v->value);
	if (rc || n == 0)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "expected a positive token count such as 8192 or 128k, got '%s'",
				     v->value);
	static const struct { const char *key; size_t off; bool perf; } dst[] = {
		{"context", offsetof(struct kvp_check_scenario, opts.context), false},
		{"max_batched_tokens", offsetof(struct kvp_check_scenario, opts.max_batched_tokens), false},
		{"prompt", offsetof(struct kvp_check_scenario, perf.prompt), true},
		{"output", offsetof(struct kvp_check_scenario, perf.output), true},
		{"prefix", offsetof(struct kvp_check_scenario, perf.prefix), true},
		{"max_len", offsetof(struct kvp_check_scenario, frag.opts.max_len), false},
		{"max_tokens", offsetof(struct kvp_check_scenario, frag.opts.max_tokens), false},
	};
	for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++) {
		if (strcmp(dst[i].key, key) != 0)
			continue;
		if (dst[i].perf && n > (1ULL << 40))   /* kvplan perf's bound */
			return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
					     "too many tokens (at most 2^40)");
		*(uint64_t *)((char *)s + dst[i].off) = n;
	}
	return KVP_STATUS_OK;
}

static kvp_status key_utilization(const struct walk *w, const struct kvp_node *v,
				  struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	double *dst = strcmp(key, "decode_bw_efficiency") == 0 ? &s->perf.decode_bw_efficiency
		      : strcmp(key, "prefill_flops_efficiency") == 0
			      ? &s->perf.prefill_flops_efficiency
			      : &s->opts.utilization;
	if (!st && kvp_parse_fraction(v->value, dst))
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				   "expected a fraction in (0, 1] such as 0.9 or 90%%, got '%s'",
				   v->value);
	return st;
}

static kvp_status key_bytes(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	struct kvp_budget_opts *o = &s->opts;
	uint64_t *dst = &o->gpu_memory_bytes;
	bool *has = &o->has_gpu_memory;
	if (strcmp(key, "weights_bytes") == 0)
		dst = &o->weights_bytes, has = &o->has_weights;
	else if (strcmp(key, "activation_bytes") == 0)
		dst = &o->activation_bytes, has = &o->has_activation;
	else if (strcmp(key, "overhead_bytes") == 0)
		dst = &o->overhead_bytes, has = &o->has_overhead;
	if (!st)
		st = kvp_node_bytes(w->doc, v, key, dst, err);
	if (!st && has == &o->has_gpu_memory && *dst == 0)
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "must be positive");
	*has = st == KVP_STATUS_OK;
	return st;
}

static kvp_status key_flag(const struct walk *w, const struct kvp_node *v,
			   struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	return st ? st : kvp_node_bool(w->doc, v, key, &s->opts.hybrid_off, err);
}

/* batch: one number, or for perf a list ([1, 8, 32]) of distinct numbers. */
static kvp_status key_batch(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	if (v->type != KVP_NODE_SEQ) {
		s->perf.nbatch = 0;
		return key_count(w, v, s, key, err);
	}
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	if (v->n == 0 || v->n > KVP_PERF_MAX_BATCHES)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "a list of 1 to %d batches", KVP_PERF_MAX_BATCHES);
	for (size_t i = 0; i < v->n; i++) {
		const struct kvp_node *it = v->items[i];
		uint64_t n;
		if ((st = kvp_node_u64(w->doc, it, key, &n, err)))
			return st;
		if (n < 1)
			return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
					     "must be at least 1, got %s", it->value);
		for (size_t j = 0; j < i; j++)
			if (s->perf.batches[j] == n)
				return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
						     "%s is listed twice: each batch names one row",
						     it->value);
		s->perf.batches[i] = n;
	}
	s->perf.nbatch = v->n;
	s->opts.batch = s->perf.batches[0];
	return KVP_STATUS_OK;
}

/* A string checked by the library's own parser, kept as written. */
static kvp_status key_spec(const struct walk *w, const struct kvp_node *v,
			   struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	struct kvp_error e = {0};
	struct kvp_link link;
	struct kvp_offload off;
	char *dst = s->perf.host_link;
	size_t size = sizeof s->perf.host_link;
	if (strcmp(key, "kv_offload") == 0) {
		dst = s->perf.kv_offload;
		size = sizeof s->perf.kv_offload;
		kvp_link_preset("pcie4x16", &link);   /* any host link: only the syntax counts */
		st = kvp_offload_parse(v->value, &link, &off, &e);
	} else if (strcmp(key, "host_link") == 0) {
		st = kvp_link_parse(v->value, key, &link, &e);
	} else {
		bool first = strcmp(v->value, "first-fit") == 0, best = strcmp(v->value, "best-fit") == 0,
		     both = strcmp(v->value, "both") == 0;
		if (!first && !best && !both)
			return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
					     "expected first-fit, best-fit or both, got '%s'", v->value);
		s->frag.opts.fit[0] = first || both;
		s->frag.opts.fit[1] = best || both;
		return KVP_STATUS_OK;
	}
	if (st)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "%s", e.msg);
	if (strlen(v->value) >= size)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "too long");
	snprintf(dst, size, "%s", v->value);
	return KVP_STATUS_OK;
}

static kvp_status key_share(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	double d;
	if (!st)
		st = kvp_node_double(w->doc, v, key, &d, err);
	if (!st && !(d >= 0 && d <= 1))
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				   "expected a share in [0, 1], got %s", v->value);
	if (!st)
		s->perf.offload_fraction = d;
	return st;
}

/* block_sizes: one size or a list, each 1 to KVP_FRAG_MAX_BLOCK tokens, distinct. */
static kvp_status key_blocks(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	size_t n = v->type == KVP_NODE_SEQ ? v->n : 1;
	if (n == 0 || n > KVP_FRAG_MAX_BLOCK_SIZES)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "a list of 1 to %d block sizes", KVP_FRAG_MAX_BLOCK_SIZES);
	for (size_t i = 0; i < n; i++) {
		const struct kvp_node *it = v->type == KVP_NODE_SEQ ? v->items[i] : v;
		uint64_t b;
		if ((st = kvp_node_u64(w->doc, it, key, &b, err)))
			return st;
		if (b < 1 || b > KVP_FRAG_MAX_BLOCK)
			return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
					     "must be between 1 and %u tokens, got %s", KVP_FRAG_MAX_BLOCK,
					     it->value);
		for (size_t j = 0; j < i; j++)
			if (s->frag.opts.block_sizes[j] == b)
				return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
						     "%s is listed twice: each block size names one row",
						     it->value);
		s->frag.opts.block_sizes[i] = (uint32_t)b;
	}
	s->frag.opts.nblock = n;
	return KVP_STATUS_OK;
}

/* policies: one policy or a list of them, the rows frag runs. */
static kvp_status key_policies(const struct walk *w, const struct kvp_node *v,
			       struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	struct kvp_frag_opts *o = &s->frag.opts;
	size_t n = v->type == KVP_NODE_SEQ ? v->n : 1;
	if (n == 0)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "empty list");
	memset(o->policy, 0, sizeof o->policy);
	o->has_policies = true;
	for (size_t i = 0; i < n; i++) {
		const struct kvp_node *it = v->type == KVP_NODE_SEQ ? v->items[i] : v;
		int p = 0;
		while (p < KVP_FRAG_POLICY_COUNT &&
		       strcmp(it->value, kvp_frag_policy_name((enum kvp_frag_policy)p)) != 0)
			p++;
		if (p == KVP_FRAG_POLICY_COUNT)
			return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
					     "unknown policy '%s' (contiguous-max, contiguous-request, "
					     "paged, paged-shared)", it->value);
		o->policy[p] = true;
	}
	return KVP_STATUS_OK;
}

static kvp_status key_name(const struct walk *w, const struct kvp_node *v,
			   struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = kvp_node_str(w->doc, v, key, s->name, sizeof s->name, err);
	if (!st && !s->name[0])
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "must not be empty");
	return st;
}

static kvp_status key_expect(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(w->doc, v, key, KVP_NODE_SEQ, err);
	if (st)
		return st;
	if (v->n == 0)
		return KVP_STATUS_OK;
	s->asserts = calloc(v->n, sizeof *s->asserts);
	if (!s->asserts)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_NOMEM, key, "out of memory");
	for (size_t i = 0; i < v->n; i++) {
		if ((st = kvp_check_assert_parse(w->doc, v->items[i], &s->asserts[i], err)))
			return st;
		s->nasserts++;
	}
	return KVP_STATUS_OK;
}

/* The keys of a scenario: the common ones (command NULL), then each
 * command's own.  `defaults` may hold any command's keys; a scenario takes
 * those its command reads. */
static const struct key {
	const char *name;
	key_fn fn;
	bool scenario_only;     /* not in defaults */
	const char *command;    /* read by this command only; NULL: by all */
} keys[] = {
	{"name", key_name, true, NULL},
	{"command", key_command, false, NULL},
	{"model", key_profile, false, NULL},
	{"gpu", key_profile, false, NULL},
	{"engine", key_engine, false, NULL},
	{"tp", key_count, false, NULL},
	{"pp", key_count, false, NULL},
	{"dp", key_count, false, NULL},
	{"ep", key_count, false, NULL},
	{"num_gpus", key_count, false, NULL},
	{"dtype", key_dtype, false, NULL},
	{"kv_dtype", key_dtype, false, NULL},
	{"block_size", key_count, false, NULL},
	{"utilization", key_utilization, false, NULL},
	{"context", key_tokens, false, NULL},
	{"batch", key_batch, false, NULL},
	{"max_batched_tokens", key_tokens, false, NULL},
	{"max_num_seqs", key_count, false, NULL},
	{"weights_bytes", key_bytes, false, NULL},
	{"activation_bytes", key_bytes, false, NULL},
	{"overhead_bytes", key_bytes, false, NULL},
	{"gpu_memory", key_bytes, false, NULL},
	{"disable_hybrid_kv", key_flag, false, NULL},
	{"expect", key_expect, true, NULL},
	/* kvplan perf */
	{"prompt", key_tokens, false, "perf"},
	{"output", key_tokens, false, "perf"},
	{"kv_offload", key_spec, false, "perf"},
	{"host_link", key_spec, false, "perf"},
	{"offload_fraction", key_share, false, "perf"},
	{"prefix", key_tokens, false, "perf"},
	{"decode_bw_efficiency", key_utilization, false, "perf"},
	{"prefill_flops_efficiency", key_utilization, false, "perf"},
	/* kvplan frag */
	{"workload", key_profile, false, "frag"},
	{"block_sizes", key_blocks, false, "frag"},
	{"requests", key_count, false, "frag"},
	{"seed", key_count, false, "frag"},
	{"warmup", key_count, false, "frag"},
	{"max_len", key_tokens, false, "frag"},
	{"max_tokens", key_tokens, false, "frag"},
	{"allocator", key_spec, false, "frag"},
	{"policies", key_policies, false, "frag"},
};

static const struct key *key_find(const char *name)
{
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* Keys whose value may be a list (or a mapping, for expect); every other
 * key's handler reads a scalar, so anything else is refused before it runs. */
static bool key_takes_list(const struct key *key)
{
	return key->fn == key_batch || key->fn == key_blocks || key->fn == key_policies ||
	       key->fn == key_expect;
}

static kvp_status scenario_walk(const struct walk *w, const struct kvp_node *map,
				struct kvp_check_scenario *s, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(w->doc, map, w->defaults ? "defaults" : "scenarios",
					KVP_NODE_MAP, err);
	if (st)
		return st;
	/* the command first: it decides which command keys are known */
	const struct kvp_node *cmd = kvp_map_get(map, "command");
	if (cmd && ((st = kvp_node_expect(w->doc, cmd, "command", KVP_NODE_SCALAR, err)) ||
		    (st = key_command(w, cmd, s, "command", err))))
		return st;
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->value;
		const struct kvp_node *v = map->items[i];
		if (v == cmd)
			continue;
		const struct key *key = key_find(k);
		if (!key) {
			const char *names[sizeof keys / sizeof keys[0] + 1];
			for (size_t j = 0; j < sizeof keys / sizeof keys[0]; j++)
				names[j] = keys[j].name;
			names[sizeof keys / sizeof keys[0]] = "command";
			char near[256];
			kvp_suggest_text(k, names, sizeof names / sizeof names[0], "", near, sizeof near);
			return kvp_node_fail(w->doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "unknown key%s", near);
		}
		if (w->defaults && key->scenario_only)
			return kvp_node_fail(w->doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "belongs in a scenario, not in defaults");
		if (!w->defaults && key->command && strcmp(key->command, s->command) != 0)
			return kvp_node_fail(w->doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "is a key of %s scenarios; this one runs %s (command: %s)",
					     key->command, s->command, key->command);
		if (kvp_node_is_null(v))
			return kvp_node_fail(w->doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "has no value");
		if (!key_takes_list(key) &&
		    (st = kvp_node_expect(w->doc, v, k, KVP_NODE_SCALAR, err)))
			return st;
		if ((st = key->fn(w, v, s, k, err)))
			return st;
	}
	return KVP_STATUS_OK;
}

/* After a scenario's keys: keep the inputs its command reads (not those
 * from defaults for another command) and the model, gpu and workload in one
 * block of exactly their bytes.  false when memory runs out. */
static bool pack(const struct scratch *c, struct kvp_check_scenario *s)
{
	bool keep[KVP_CHECK_INPUTS_MAX];
	size_t n = 0, bytes = strlen(c->model) + strlen(c->gpu) + strlen(c->workload) + 3;
	for (size_t i = 0; i < c->n; i++) {
		const struct key *key = key_find(c->in[i].key);
		keep[i] = !key || !key->command || strcmp(key->command, s->command) == 0;
		if (keep[i]) {
			n++;
			bytes += strlen(c->in[i].key) + strlen(c->in[i].value) + 2;
		}
	}
	struct kvp_check_input *in = malloc(n * sizeof *in + bytes);
	if (!in)
		return false;
	char *p = (char *)(in + n);
#define PUT(dst, src)                                  \
	do {                                           \
		size_t len_ = strlen(src) + 1;         \
		memcpy(p, (src), len_);                \
		(dst) = p;                             \
		p += len_;                             \
	} while (0)
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (!keep[i])
			continue;
		PUT(in[k].key, c->in[i].key);
		PUT(in[k].value, c->in[i].value);
		in[k].line = c->in[i].line;
		in[k].col = c->in[i].col;
		k++;
	}
	PUT(s->model, c->model);
	PUT(s->gpu, c->gpu);
	PUT(s->frag.workload, c->workload);
#undef PUT
	s->inputs = in;
	s->ninputs = n;
	return true;
}

/* After a scenario's keys (and pack): check what needs several keys together. */
static kvp_status scenario_finish(const struct kvp_doc *doc, const struct kvp_node *m,
				  const struct kvp_check_scenario *s, struct kvp_error *err)
{
	const struct kvp_check_input *in;
	if (strcmp(s->command, "perf") != 0 && s->perf.nbatch > 1) {
		in = kvp_check_input_get(s, "batch");
		return kvp_error_set(err, KVP_STATUS_INVALID, doc->path, in->line, in->col, "batch",
				     "a list of batches is for perf scenarios; %s takes one",
				     s->command);
	}
	if (strcmp(s->command, "perf") == 0) {
		if (!s->gpu[0])
			return kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "gpu",
					     "missing in perf scenario '%s': latency needs the GPU's "
					     "bandwidth and FLOP/s (gpu_memory only replaces its memory)",
					     s->name);
		if ((in = kvp_check_input_get(s, "offload_fraction")) &&
		    !kvp_check_input_get(s, "kv_offload"))
			return kvp_error_set(err, KVP_STATUS_INVALID, doc->path, in->line, in->col,
					     "offload_fraction", "needs kv_offload");
	}
	if (strcmp(s->command, "frag") == 0 && !s->frag.workload[0])
		return kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "workload",
				     "missing in frag scenario '%s': a profile name or a path",
				     s->name);
	return KVP_STATUS_OK;
}

/* The walk of one document's scenarios: the walker's state, the defaults
 * every scenario starts from and the scratch one is walked in (one of each
 * per file, however many scenarios it has). */
struct kvp_check_walk {
	struct walk w;
	struct kvp_check_scenario tmpl;    /* what defaults set */
	struct scratch defaults, cur;
};

kvp_status kvp_check_walk_new(const struct kvp_doc *doc, const struct kvp_node *defs,
			      struct kvp_check_walk **out, struct kvp_error *err)
{
	*out = NULL;
	const char *slash = strrchr(doc->path, '/');
	/* the folder relative paths are read from, whole: a cut one would
	 * name another folder (or the current one) */
	if (slash && (size_t)(slash - doc->path) >= sizeof ((struct walk *)0)->dir)
		return kvp_error_set(err, KVP_STATUS_INVALID, doc->path, 0, 0, NULL,
				     "the file's folder is longer than %zu bytes",
				     sizeof ((struct walk *)0)->dir - 1);
	struct kvp_check_walk *k = calloc(1, sizeof *k);
	if (!k)
		return kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL, "out of memory");
	k->w.doc = doc;
	if (slash)
		snprintf(k->w.dir, sizeof k->w.dir, "%.*s", (int)(slash - doc->path), doc->path);
	struct kvp_check_scenario *tmpl = &k->tmpl;
	snprintf(tmpl->command, sizeof tmpl->command, "budget");
	tmpl->run = kvp_check_command_find("budget")->run;
	tmpl->opts.par.tp = tmpl->opts.par.pp = 1;
	tmpl->perf.offload_fraction = -1;
	kvp_frag_opts_init(&tmpl->frag.opts);
	if (defs) {
		k->w.defaults = true;
		k->w.cur = &k->defaults;
		kvp_status st = scenario_walk(&k->w, defs, tmpl, err);
		k->w.defaults = false;
		if (st) {
			free(k);
			return st;
		}
	}
	*out = k;
	return KVP_STATUS_OK;
}

void kvp_check_walk_free(struct kvp_check_walk *k)
{
	free(k);
}

kvp_status kvp_check_walk_scenario(struct kvp_check_walk *k, const struct kvp_node *m,
				   struct kvp_check_scenario *s, struct kvp_error *err)
{
	const struct kvp_doc *doc = k->w.doc;
	struct scratch *cur = &k->cur, *defaults = &k->defaults;
	*s = k->tmpl;
	s->line = m->line;
	s->col = m->col;
	/* the defaults' inputs (only those set) and profiles, then the scenario's */
	memcpy(cur->in, defaults->in, defaults->n * sizeof cur->in[0]);
	cur->n = defaults->n;
	memcpy(cur->model, defaults->model, sizeof cur->model);
	memcpy(cur->gpu, defaults->gpu, sizeof cur->gpu);
	memcpy(cur->workload, defaults->workload, sizeof cur->workload);
	k->w.cur = cur;
	kvp_status st = scenario_walk(&k->w, m, s, err);
	if (st)
		return st;
	if (!pack(cur, s))
		return kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL, "out of memory");
	if (!s->name[0])
		return kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "name",
				     "missing: every scenario needs a name");
	return KVP_STATUS_OK;
}

kvp_status kvp_check_walk_finish(const struct kvp_check_walk *k, const struct kvp_node *m,
				 const struct kvp_check_scenario *s, struct kvp_error *err)
{
	const struct kvp_doc *doc = k->w.doc;
	if (!s->model[0])
		return kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "model",
				     "missing in scenario '%s' (and in defaults)", s->name);
	if (!s->gpu[0] && !s->opts.has_gpu_memory)
		return kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "gpu",
				     "missing in scenario '%s': give gpu or gpu_memory", s->name);
	return scenario_finish(doc, m, s, err);
}

void kvp_check_scenario_clear(struct kvp_check_scenario *s)
{
	free(s->asserts);
	free(s->inputs);
	s->asserts = NULL;
	s->inputs = NULL;
	s->nasserts = s->ninputs = 0;
}


const struct kvp_check_input *kvp_check_input_get(const struct kvp_check_scenario *s,
						  const char *key)
{
	for (size_t i = 0; i < s->ninputs; i++)
		if (strcmp(s->inputs[i].key, key) == 0)
			return &s->inputs[i];
	return NULL;
}

void kvp_check_inputs_format(const struct kvp_check_scenario *s, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "%s", s->command);
	const char *sep = ": ";
	for (size_t i = 0; i < s->ninputs && len < size; i++) {
		if (strcmp(s->inputs[i].key, "command") == 0)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s %s", sep, s->inputs[i].key,
					s->inputs[i].value);
		sep = ", ";
	}
}
