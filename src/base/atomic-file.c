/* atomic-file.c: write a file through a temporary file beside it, fsync and
 * rename; stream to a device, FIFO or the process's own stdout instead of
 * renaming over it; refuse a target that is one of the command's inputs;
 * remove the temporaries when a signal ends the process.  See
 * atomic-file.h. */
#include "base/atomic-file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
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

/* ------------------------------------------------ removal on a signal
 * The temporaries being written, in slots a signal handler can read without
 * a lock: a slot is set only once its string is whole and cleared before the
 * string is freed.  The handler only calls unlink and raise (both
 * async-signal-safe); SA_RESETHAND gives the signal its default action back,
 * so the raise ends the process as the signal would have. */

#define TMP_SLOTS 64
static char *volatile tmp_slots[TMP_SLOTS];
static const int cleanup_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

static void on_signal(int sig)
{
	int saved = errno;
	for (int i = 0; i < TMP_SLOTS; i++) {
		char *p = tmp_slots[i];
		if (p)
			unlink(p);
	}
	errno = saved;
	raise(sig);
}

/* Once per process: the handler for each cleanup signal still at its
 * default (an ignored SIGINT in a background job stays ignored, a
 * program's own handler stays its own). */
static void install_handlers(void)
{
	static int installed;
	if (installed)
		return;
	installed = 1;
	for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
		struct sigaction old, sa;
		if (sigaction(cleanup_signals[i], NULL, &old) != 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESETHAND;
		sigaction(cleanup_signals[i], &sa, NULL);
	}
}

/* The slot now holding `tmp`, or -1 when all are taken (the file is then
 * simply not removed on a signal). */
static int tmp_register(char *tmp)
{
	install_handlers();
	for (int i = 0; i < TMP_SLOTS; i++)
		if (!tmp_slots[i]) {
			tmp_slots[i] = tmp;
			return i;
		}
	return -1;
}

static void tmp_unregister(int slot)
{
	if (slot >= 0 && slot < TMP_SLOTS)
		tmp_slots[slot] = NULL;
}

int kvp_afile_pending(void)
{
	int n = 0;
	for (int i = 0; i < TMP_SLOTS; i++)
		n += tmp_slots[i] != NULL;
	return n;
}

/* ------------------------------------------------------------ writing */

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
	tmp_unregister(a->slot);
	free(a->path);
	free(a->tmp);
	a->f = NULL;
	a->path = a->tmp = NULL;
	a->slot = -1;
}

/* The standard descriptor (1 or 2) that writes to the file `sb` is, or -1. */
static int std_fd_of(const struct stat *sb)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat fs;
		if (fstat(fd, &fs) == 0 && fs.st_dev == sb->st_dev && fs.st_ino == sb->st_ino)
			return fd;
	}
	return -1;
}

/* a->f on `fd` (owned), streaming: no temporary, no rename. */
static kvp_status open_stream(struct kvp_afile *a, int fd, const char *path,
			      struct kvp_error *err)
{
	if (fd < 0)
		return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL, "cannot write: %s",
				     strerror(errno));
	a->path = strdup(path);
	a->f = a->path ? fdopen(fd, "w") : NULL;
	if (!a->f) {
		close(fd);
		clear(a);
		return kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL, "out of memory");
	}
	return KVP_STATUS_OK;
}

kvp_status kvp_afile_open(struct kvp_afile *a, const char *path, struct kvp_error *err)
{
	memset(a, 0, sizeof *a);
	a->slot = -1;
	kvp_status st = refuse_input(path, err);
	if (st)
		return st;
	/* what the path names now decides how it is written (atomic-file.h) */
	struct stat lsb, sb;
	if (lstat(path, &lsb) == 0) {
		/* a link is followed only to see what it leads to; a link to a
		 * file (or to nothing) is replaced below like a file */
		if (!S_ISLNK(lsb.st_mode) || stat(path, &sb) != 0)
			sb = lsb;
		int fd = std_fd_of(&sb);
		if (fd >= 0) {
			/* what was printed there goes first */
			fflush(fd == 1 ? stdout : stderr);
			return open_stream(a, fcntl(fd, F_DUPFD_CLOEXEC, 3), path, err);
		}
		if (S_ISDIR(sb.st_mode) || S_ISBLK(sb.st_mode) || S_ISSOCK(sb.st_mode))
			return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL,
					     "%s, not a file to write", kvp_input_kind(sb.st_mode));
		if (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)) {
			fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
			struct stat now;
			if (fd >= 0 && (fstat(fd, &now) != 0 || S_ISREG(now.st_mode))) {
				close(fd); /* it became a file meanwhile: never truncate it here */
				return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL,
						     "changed while being opened; not writing");
			}
			return open_stream(a, fd, path, err);
		}
	}
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
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
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
		st = kvp_error_set(err, KVP_STATUS_IO, a->path, 0, 0, NULL, "cannot write: %s",
				   strerror(e));
		clear(a);
		return st;
	}
	a->slot = tmp_register(a->tmp);
	/* a file replaced keeps its permissions */
	if (stat(a->path, &sb) == 0 && S_ISREG(sb.st_mode))
		(void)fchmod(fd, sb.st_mode & 07777);
	a->f = fdopen(fd, "w");
	if (!a->f) {
		close(fd);
		unlink(a->tmp);
		clear(a);
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
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
	if (!e && a->tmp && fsync(fileno(a->f)) != 0)
		e = errno; /* a device, FIFO or stdout: nothing to sync */
	if (fclose(a->f) != 0 && !e)
		e = errno ? errno : EIO;
	a->f = NULL;
	kvp_status st = KVP_STATUS_OK;
	if (e)
		st = kvp_error_set(err, KVP_STATUS_IO, a->path, 0, 0, NULL, "cannot write: %s",
				   strerror(e));
	else if (a->tmp && !(st = refuse_input(a->path, err)) && rename(a->tmp, a->path) != 0)
		st = kvp_error_set(err, KVP_STATUS_IO, a->path, 0, 0, NULL, "cannot write: %s",
				   strerror(errno));
	if (st && a->tmp)
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
