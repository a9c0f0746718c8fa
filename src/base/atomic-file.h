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
 * before the rename.
 *
 * What the path already names decides how it is written:
 *  - nothing, or a regular file: the temporary file and the rename above;
 *  - the file, pipe or terminal this process's standard output or error goes
 *    to (`--junit /dev/stdout`, `--junit log > log`): written through that
 *    descriptor, in order after what the process printed there; never
 *    renamed over (the rename would leave stdout writing to a removed file)
 *    and never reopened (a reopen with O_TRUNC would cut what was printed);
 *  - a FIFO or a character device: opened in place and streamed to, never
 *    renamed over, so `/dev/null` stays a device; a FIFO waits for its
 *    reader as `>` does;
 *  - a directory, a block device or a socket: an IO error;
 *  - a symbolic link is followed only to see what it leads to: to stdout, a
 *    FIFO or a character device it is written as that node; to a regular
 *    file or to nothing, the link itself is replaced by the new file and its
 *    target is never written (a link planted where kvplan writes, as in a
 *    shared /tmp, cannot aim the write at another file; the price is that a
 *    link kept on purpose becomes a file).
 * The temporary file is removed if the process is ended by SIGTERM, SIGINT,
 * SIGHUP or SIGQUIT before the commit: kvp_afile_open installs a handler for
 * those signals whose disposition is still the default (one that unlinks the
 * registered temporaries, async-signal-safe, then dies of the signal as
 * before). */
#ifndef KVP_ATOMIC_FILE_H
#define KVP_ATOMIC_FILE_H

#include <stdio.h>

#include "base/error.h"

struct kvp_afile {
	FILE *f;     /* write here between open and commit */
	char *path;  /* the target */
	char *tmp;   /* the temporary file beside it; NULL when streaming */
	int slot;    /* its place in the signal-cleanup registry, or -1 */
};

/* Start writing `path`: a->f is a new temporary file beside it (or the node
 * itself, see above).  USAGE when the target is one of the command's inputs;
 * IO when the temporary file cannot be created, the target is a directory,
 * a dangling link or cannot be opened (the message names the target).  On
 * failure *a is cleared and nothing is left behind. */
kvp_status kvp_afile_open(struct kvp_afile *a, const char *path, struct kvp_error *err);

/* Flush, fsync, close and rename over the target.  On any failure (a full
 * disk, an I/O error, the target became an input) the temporary file is
 * removed, the target is untouched and IO (USAGE) is returned.  A stream
 * (a device, FIFO or stdout) is flushed and closed with every error checked;
 * what was written is there.  *a is cleared either way. */
kvp_status kvp_afile_commit(struct kvp_afile *a, struct kvp_error *err);

/* Give up: close and remove the temporary file; the target is untouched.
 * Safe on a cleared or failed struct. */
void kvp_afile_abort(struct kvp_afile *a);

/* The number of temporary files registered for removal on a signal now
 * (for tests: 0 once every kvp_afile is committed or aborted). */
int kvp_afile_pending(void);

#endif
