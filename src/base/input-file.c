/* input-file.c: open a regular file for reading without blocking on a FIFO
 * or a device, and remember every input by device and inode.  See
 * input-file.h. */
#include "base/input-file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct id {
	dev_t dev;
	ino_t ino;
};

/* The inputs opened so far: a handful per command, searched linearly. */
static struct id *inputs;
static size_t ninputs, cap_inputs;

bool kvp_input_note(dev_t dev, ino_t ino)
{
	if (kvp_input_is_input(dev, ino))
		return true;
	if (ninputs == cap_inputs) {
		size_t cap = cap_inputs ? cap_inputs * 2 : 16;
		struct id *n = realloc(inputs, cap * sizeof *n);
		if (!n)
			return false;
		inputs = n;
		cap_inputs = cap;
	}
	inputs[ninputs++] = (struct id){dev, ino};
	return true;
}

bool kvp_input_is_input(dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < ninputs; i++)
		if (inputs[i].dev == dev && inputs[i].ino == ino)
			return true;
	return false;
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
