/* engine-name.c: the serving engines' names as the options and files spell
 * them (--engine, a scenario's engine:, --emit), and which of them kvplan
 * models the time of but not the memory. */
#include "memory/budget.h"

#include <stdbool.h>
#include <strings.h>

static const char *const engine_names[] = {"generic", "vllm", "sglang", "trtllm", "llamacpp"};

bool kvp_engine_parse(const char *s, enum kvp_engine *out)
{
	for (int i = 0; i < 5; i++)
		if (strcasecmp(s, engine_names[i]) == 0) {
			*out = (enum kvp_engine)i;
			return true;
		}
	if (strcasecmp(s, "llama.cpp") == 0) {
		*out = KVP_ENGINE_LLAMACPP;
		return true;
	}
	if (strcasecmp(s, "tensorrt-llm") == 0 || strcasecmp(s, "trt-llm") == 0) {
		*out = KVP_ENGINE_TRTLLM;
		return true;
	}
	return false;
}

const char *kvp_engine_name(enum kvp_engine e) { return engine_names[e]; }

bool kvp_engine_time_only(enum kvp_engine e) { return e == KVP_ENGINE_LLAMACPP; }
