/* atomic-file.c: write a file through a temporary file beside it, fsync and
 * rename; refuse a target that is one of the command's inputs.  See
 * atomic-file.h. */
#include "base/atomic-file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/input-file.h"

/* 64 unpredictable bits: getrandom, else a mix of the clock, the pid and a
 * counter (the O_EXCL open stays the guarantee either way). */
static uint64_t random_u64(void)
{
	uint64_t v;
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v)
		return v;
	static uint64_t counter;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 16) ^
	    ++counter * 0x9e3779b97f4a7c15ULL;
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	return v ^ (v >> 33);
}

/* USAGE when `path` exists and is one of the command's inputs. */
static kvp_status refuse_input(const char *path, struct kvp_error *err)
{
	struct stat sb;
	if (stat(path, &sb) == 0 && kvp_input_is_input(sb.st_dev, sb.st_ino))
		return kvp_error_set(err, KVP_STATUS_USAGE, path, 0, 0, NULL,
				     "is one of this command's inputs; not writing over it");
	return KVP_STATUS_OK;
}

static void clear(struct kvp_afile *a)
{
	free(a->path);
	free(a->tmp);
	a->f = NULL;
	a->path = a->tmp = NULL;
}

kvp_status kvp_afile_open(struct kvp_afile *a, const char *path, struct kvp_error *err)
{
	memset(a, 0, sizeof *a);
	kvp_status st = refuse_input(path, err);
	if (st)
		return st;
	/* DIR/.BASE.XXXXXXXXXXXXXXXX.tmp: hidden, in the target's folder */
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dlen;
	if (!*base)
		return kvp_error_set(err, KVP_STATUS_USAGE, path, 0, 0, NULL, "not a file name");
	size_t size = strlen(path) + 2 + 16 + 5;
	a->path = strdup(path);
	a->tmp = malloc(size);
	if (!a->path || !a->tmp) {
		clear(a);
		return kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL, "out of memory");
	}
	int fd = -1, e = 0;
	/* at most 200 bytes of the name: the temporary name (22 more) must stay
	 * within NAME_MAX (255) whenever the target's name does */
	int blen = strlen(base) > 200 ? 200 : (int)strlen(base);
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		snprintf(a->tmp, size, "%.*s.%.*s.%016llx.tmp", (int)dlen, path, blen, base,
			 (unsigned long long)random_u64());
		fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		e = errno;
		if (fd < 0 && e != EEXIST)
			break;
	}
	if (fd < 0) {
		clear(a);
		return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL, "cannot write: %s",
				     strerror(e));
	}
	/* a file replaced keeps its permissions */
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		(void)fchmod(fd, sb.st_mode & 07777);
	a->f = fdopen(fd, "w");
	if (!a->f) {
		close(fd);
		unlink(a->tmp);
		clear(a);
		return kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL, "out of memory");
	}
	return KVP_STATUS_OK;
}

kvp_status kvp_afile_commit(struct kvp_afile *a, struct kvp_error *err)
{
	if (!a->f) {
		clear(a);
		return kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL, "no file open");
	}
	int e = 0;
	errno = 0;
	if (fflush(a->f) != 0 || ferror(a->f))
		e = errno ? errno : EIO;
	if (!e && fsync(fileno(a->f)) != 0)
		e = errno;
	if (fclose(a->f) != 0 && !e)
		e = errno ? errno : EIO;
	a->f = NULL;
	kvp_status st = KVP_STATUS_OK;
	if (e)
		st = kvp_error_set(err, KVP_STATUS_IO, a->path, 0, 0, NULL, "cannot write: %s",
				   strerror(e));
	else if (!(st = refuse_input(a->path, err)) && rename(a->tmp, a->path) != 0)
		st = kvp_error_set(err, KVP_STATUS_IO, a->path, 0, 0, NULL, "cannot write: %s",
				   strerror(errno));
	if (st)
		unlink(a->tmp);
	clear(a);
	return st;
}

void kvp_afile_abort(struct kvp_afile *a)
{
	if (a->f)
		fclose(a->f);
	if (a->tmp)
		unlink(a->tmp);
	clear(a);
}
