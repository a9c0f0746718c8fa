/* fuzz-shell.c: libFuzzer target for the shell writer (src/out/shell-quote.h,
 * the command lines of `kvplan size --emit`).  The input (cut at the first
 * NUL) as a word must read back, by this target's own reader of POSIX
 * quoting ('...' runs and \' between them), as exactly the input with
 * nothing outside single quotes but escaped quotes, so the shell expands
 * nothing; as a comment it must stay on one line.  Build: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-text.h"
#include "out/shell-quote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	if (!s)
		return 0;
	struct ft_out o;
	ft_write(kvp_sh_word, s, &o);
	char *back = malloc(o.len + 1);
	if (!back)
		abort();
	size_t k = 0, i = 0;
	bool quoted = false;
	for (; i < o.len; i++) {
		char c = o.buf[i];
		if (quoted) {
			if (c == '\'')
				quoted = false;
			else
				back[k++] = c;
		} else if (c == '\'') {
			quoted = true;
		} else {
			/* outside quotes only \' may appear */
			FUZZ_ASSERT(c == '\\' && i + 1 < o.len && o.buf[i + 1] == '\'', "unquoted text");
			back[k++] = '\'';
			i++;
		}
	}
	back[k] = 0;
	FUZZ_ASSERT(!quoted, "an open quote");
	FUZZ_ASSERT(o.len >= 2 && o.buf[0] == '\'', "a word that does not start quoted");
	FUZZ_ASSERT(strcmp(back, s) == 0, "the word does not read back");
	free(back);
	free(o.buf);
	ft_write(kvp_sh_comment, s, &o);
	for (size_t j = 0; j < o.len; j++)
		FUZZ_ASSERT((unsigned char)o.buf[j] >= 0x20 && o.buf[j] != 0x7f, "comment breaks its line");
	free(o.buf);
	free(s);
	return 0;
}
