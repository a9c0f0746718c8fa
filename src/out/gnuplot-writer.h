/* gnuplot-writer.h: the one writer of gnuplot text — scripts (.gp) and the
 * quoted strings of data files (.dat).  Nothing else in kvplan prints into a
 * .gp file.
 *
 * Stance: a name from a profile, a config folder, a results file or --name is
 * hostile until quoted.  gnuplot runs `...` (backquotes) inside double-quoted
 * strings and expands @macros outside strings, so every piece of input text
 * reaches a script as a single-quoted string ('it''s': a quote is doubled; no
 * substitution happens inside), a line break as the concatenation
 * '...'."\n".'...', and other control characters as '?' (a terminal would
 * obey them when --term dumb draws).  File stems are reduced to letters,
 * digits, '.', '_' and '-' (kvp_gp_stem) so a file name is a plain word in
 * the script and on gnuplot's command line.  The script's fixed syntax goes
 * through kvp_gp_code, whose format may not hold %s or %c: text cannot slip
 * in unquoted. */
#ifndef KVP_GNUPLOT_WRITER_H
#define KVP_GNUPLOT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Fixed script syntax: printf with numbers only.  A format holding %s or %c
 * is a bug (asserted): text goes through kvp_gp_string/kvp_gp_file. */
void kvp_gp_code(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* `s` as a gnuplot string expression: single-quoted, ' doubled; a line break
 * (a newline, or the two characters backslash-n that kvplan's labels use for
 * one) as '."\n".'; other control characters (below 0x20, 0x7f) as '?'.
 * NULL writes ''. */
void kvp_gp_string(FILE *f, const char *s);

/* The file name STEM.EXT as a single-quoted string.  The stem must be one
 * kvp_gp_stem_ok accepts (asserted); ext is kvplan's own ("dat", "png"). */
void kvp_gp_file(FILE *f, const char *stem, const char *ext);

/* `s` as the text of a comment already opened with '#': on one line, no
 * backquote (as '), no control character (as '?'), no backslash (as '/': a
 * comment ending in one would continue onto the next line of the script). */
void kvp_gp_comment(FILE *f, const char *s);

/* `s` as one double-quoted column of a .dat file: '"' as ', a line break as a
 * space, other control characters as '?'; the two characters backslash-n stay
 * (gnuplot draws a line break for them in tic labels). */
void kvp_gp_dat_string(FILE *f, const char *s);

/* True when `s` is a safe file stem: 1 to 200 bytes of [A-Za-z0-9._-],
 * starting with a letter, digit or '_' (never '.', '..', or an option to
 * gnuplot). */
bool kvp_gp_stem_ok(const char *s);

/* Reduce `name` to a safe stem in out[size] (size >= 2): each other byte
 * becomes '_', a leading '.' or '-' becomes '_', an empty name "plot".
 * Returns false (out still a safe stem, cut) when it did not fit. */
bool kvp_gp_stem(char *out, size_t size, const char *name);

#endif
