/* input-file.c: open a regular file for reading without blocking on a FIFO
 * or a device, and remember every input by device and inode.  See
 * input-file.h. */
#include "base/input-file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct id {
	dev_t dev;
	ino_t ino;
};

/* The inputs opened so far: a handful per command, searched linearly.
 * The one mutable state of the library: the lock lets threads of a
 * program using libkvplan (kvplan.h) load profiles at once; a long-lived
 * process keeps one entry per distinct file it read. */
static struct id *inputs;
static size_t ninputs, cap_inputs;
static pthread_mutex_t inputs_lock = PTHREAD_MUTEX_INITIALIZER;

static bool seen(dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < ninputs; i++)
		if (inputs[i].dev == dev && inputs[i].ino == ino)
			return true;
	return false;
}

bool kvp_input_note(dev_t dev, ino_t ino)
{
	bool ok = true;
	pthread_mutex_lock(&inputs_lock);
	if (seen(dev, ino))
		goto out;
	if (ninputs == cap_inputs) {
		size_t cap = cap_inputs ? cap_inputs * 2 : 16;
		struct id *n = realloc(inputs, cap * sizeof *n);
		if (!n) {
			ok = false;
			goto out;
		}
		inputs = n;
		cap_inputs = cap;
	}
	inputs[ninputs++] = (struct id){dev, ino};
out:
	pthread_mutex_unlock(&inputs_lock);
	return ok;
}

bool kvp_input_is_input(dev_t dev, ino_t ino)
{
	pthread_mutex_lock(&inputs_lock);
	bool found = seen(dev, ino);
	pthread_mutex_unlock(&inputs_lock);
	return found;
}

const char *kvp_input_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

kvp_status kvp_input_open(const char *path, FILE **out, struct kvp_error *err)
{
	*out = NULL;
	/* O_NONBLOCK: a FIFO without a writer opens at once instead of waiting */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		struct stat sb;
		if (e == ENOENT)
			return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL,
					     "cannot open: no such file");
		if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
			return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL,
					     "cannot open: %s, not a regular file", kvp_input_kind(sb.st_mode));
		return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL, "cannot open: %s",
				     strerror(e));
	}
	struct stat sb;
	if (fstat(fd, &sb) != 0) {
		int e = errno;
		close(fd);
		return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL, "cannot open: %s",
				     strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL,
				     "cannot open: %s, not a regular file", kvp_input_kind(sb.st_mode));
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		int e = errno;
		close(fd);
		return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL, "cannot open: %s",
				     strerror(e));
	}
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL, "out of memory");
	}
	kvp_input_note(sb.st_dev, sb.st_ino);
	*out = f;
	return KVP_STATUS_OK;
}
