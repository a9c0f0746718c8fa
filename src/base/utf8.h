/* utf8.h: UTF-8 as the writers need it: how long the valid sequence at a
 * byte is, and where to cut a string without splitting one.
 *
 * Stance: names come from files kvplan did not write, so any byte may appear.
 * The JSON, XML and TAP writers walk their input with kvp_utf8_next and
 * replace a byte that starts no valid sequence (a stray continuation byte, an
 * overlong form, a surrogate, a code point past U+10FFFF, a sequence cut
 * short) with U+FFFD, so what they write is valid UTF-8 whatever they read. */
#ifndef KVP_UTF8_H
#define KVP_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The replacement character U+FFFD in UTF-8. */
#define KVP_UTF8_REPLACEMENT "\xef\xbf\xbd"

/* The length (1-4) of the valid UTF-8 sequence starting at s, with its code
 * point in *cp; 0 when s[0] starts none (or is the terminating NUL). */
size_t kvp_utf8_next(const char *s, uint32_t *cp);

/* The code point at *s, moving *s past it.  A byte that starts no valid
 * sequence reads as U+FFFD, one byte long, with *valid false: the writers
 * then write KVP_UTF8_REPLACEMENT instead of copying the bytes [at, *s).
 * *s must not be at the terminating NUL. */
uint32_t kvp_utf8_take(const char **s, int *valid);

/* Cut s (in place) before a sequence left incomplete at its end, as
 * snprintf leaves one when it truncates. */
void kvp_utf8_trim(char *s);

#endif
