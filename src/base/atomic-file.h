/* atomic-file.h: the one way kvplan writes a file.
 *
 * Stance: a reader sees the old file or the new one, never half of one, and
 * a failed write leaves the old file as it was.  The bytes go to a temporary
 * file in the target's own folder (so the rename stays on one file system)
 * under an unpredictable name, created with O_CREAT|O_EXCL|O_NOFOLLOW (never
 * through a planted symlink, never over someone else's file); at commit the
 * stream is flushed, fsync'd and closed with every error checked, then
 * renamed over the target.  A target that is one of the command's own inputs
 * (same device and inode as a file opened through input-file.h, e.g.
 * `kvplan check F --update-baseline F`) is refused before and again just
 * before the rename. */
#ifndef KVP_ATOMIC_FILE_H
#define KVP_ATOMIC_FILE_H

#include <stdio.h>

#include "base/error.h"

struct kvp_afile {
	FILE *f;     /* write here between open and commit */
	char *path;  /* the target */
	char *tmp;   /* the temporary file beside it */
};

/* Start writing `path`: a->f is a new temporary file beside it.  USAGE when
 * the target is one of the command's inputs; IO when the temporary file
 * cannot be created (the message names the target).  On failure *a is
 * cleared and nothing is left behind. */
kvp_status kvp_afile_open(struct kvp_afile *a, const char *path, struct kvp_error *err);

/* Flush, fsync, close and rename over the target.  On any failure (a full
 * disk, an I/O error, the target became an input) the temporary file is
 * removed, the target is untouched and IO (USAGE) is returned.  *a is
 * cleared either way. */
kvp_status kvp_afile_commit(struct kvp_afile *a, struct kvp_error *err);

/* Give up: close and remove the temporary file; the target is untouched.
 * Safe on a cleared or failed struct. */
void kvp_afile_abort(struct kvp_afile *a);

#endif
