/* tap-writer.h: the one writer of input text into a TAP test line (the TAP
 * output of `kvplan check`).
 *
 * Stance: a description stays one line and never starts a directive: '#' is
 * written \# and '\' as \\ (TAP 14's escapes; a TAP 13 reader shows them as
 * they are), a line break as a space, other control characters as '?', bytes
 * that are not UTF-8 as U+FFFD. */
#ifndef KVP_TAP_WRITER_H
#define KVP_TAP_WRITER_H

#include <stdio.h>

/* `s` as (part of) the description of an `ok N - ...` line. */
void kvp_tap_text(FILE *f, const char *s);

#endif
