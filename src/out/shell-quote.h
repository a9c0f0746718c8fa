/* shell-quote.h: the one writer of text that a POSIX shell will read (the
 * engine command lines of `kvplan size --emit`).
 *
 * Stance: a model id or GPU name comes from a file kvplan did not write.  An
 * argument is always single-quoted (inside single quotes a shell expands
 * nothing: no $( ), no backquote, no glob), a ' inside written '\''; a
 * comment line holds no line break or control character, so it cannot end
 * early and start a command. */
#ifndef KVP_SHELL_QUOTE_H
#define KVP_SHELL_QUOTE_H

#include <stdio.h>

/* `s` as one single-quoted shell word ('' for an empty or NULL s). */
void kvp_sh_word(FILE *f, const char *s);

/* `s` as the text of a comment already opened with '#': line breaks and
 * other control characters as '?'. */
void kvp_sh_comment(FILE *f, const char *s);

#endif
