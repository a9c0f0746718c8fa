/* plot-render.c: gnuplot run on a chart's written files, as a separate
 * program found on PATH or named by the caller, from the chart's directory;
 * its absence or failure is a status for the caller to warn about, and the
 * data and script stay. */
#include "plot/plot-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ rendering */

/* Whether the image at `path` ends as a whole file of its format does:
 * gnuplot exits 0 after a short write on a full disk (it does not check its
 * writes), so the exit status alone would pass a cut image.  SVG ends with
 * its root's </svg>, PNG with the IEND chunk (its 12 bytes: length 0,
 * "IEND", CRC ae 42 60 82; PNG spec 11.2.5), PDF with %%EOF in its last
 * bytes (ISO 32000-1, 7.5.5). */
static bool image_whole(const char *path, const char *ext)
{
	unsigned char tail[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	struct stat sb;
	ssize_t n = -1;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		off_t at = sb.st_size > (off_t)sizeof tail ? sb.st_size - (off_t)sizeof tail : 0;
		n = pread(fd, tail, sizeof tail, at);
	}
	close(fd);
	if (n <= 0)
		return false;
	size_t len = (size_t)n;
	if (strcmp(ext, "png") == 0) {
		static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
						       0xae, 0x42, 0x60, 0x82};
		return len >= sizeof iend && memcmp(tail + len - sizeof iend, iend, sizeof iend) == 0;
	}
	while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r' || tail[len - 1] == ' '))
		len--;
	const char *end = strcmp(ext, "svg") == 0 ? "</svg>" : strcmp(ext, "pdf") == 0 ? "%%EOF" : "";
	size_t elen = strlen(end);
	return len >= elen && memcmp(tail + len - elen, end, elen) == 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

kvp_status kvp_plot_render(const struct kvp_plot *p, const char *dir, enum kvp_plot_term term,
			   const char *gnuplot, struct kvp_error *err)
{
	/* the program and image paths in memory of their own size: never cut */
	char *prog = NULL, *image = NULL, script[sizeof p->name + 8];
	const char *ext = kvp_plot_term_ext(term);
	kvp_status st = KVP_STATUS_OK;
	if (!gnuplot || !*gnuplot)
		gnuplot = "gnuplot";
	/* the child runs in DIR: a relative program path must not move with it */
	if (gnuplot[0] != '/' && strchr(gnuplot, '/')) {
		char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL,
					     "cannot find the current directory: %s", strerror(errno));
		prog = kvp_plot_path_join(cwd, gnuplot, NULL);
		free(cwd);
	} else {
		prog = strdup(gnuplot);
	}
	if (!prog || (ext && !(image = kvp_plot_path_join(dir, p->name, ext)))) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	snprintf(script, sizeof script, "%s.gp", p->name);
	struct stat sb;
	if (image && lstat(image, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
		/* a device or FIFO at the image's name is never removed or written */
		st = kvp_error_set(err, KVP_STATUS_IO, image, 0, 0, NULL,
				   "not a regular file; not letting %s write over it", prog);
		goto out;
	}
	if (image)
		unlink(image); /* a stale image must not pass for a new one */

	int errp[2] = {-1, -1}, execp[2] = {-1, -1};
	if (pipe(errp) != 0 || pipe(execp) != 0 || fcntl(execp[1], F_SETFD, FD_CLOEXEC) != 0) {
		close_fd(&errp[0]), close_fd(&errp[1]), close_fd(&execp[0]), close_fd(&execp[1]);
		st = kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL, "pipe: %s", strerror(errno));
		goto out;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close_fd(&errp[0]), close_fd(&errp[1]), close_fd(&execp[0]), close_fd(&execp[1]);
		st = kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		dup2(errp[1], 2);
		close(errp[0]);
		close(execp[0]);
		int e = 0;
		if (chdir(dir) != 0)
			e = errno;
		else
			execlp(prog, prog, script, (char *)NULL);
		if (!e)
			e = errno;
		if (write(execp[1], &e, sizeof e) < 0)
			_exit(126);
		_exit(127);
	}
	close_fd(&errp[1]);
	close_fd(&execp[1]);
	/* keep the tail of what gnuplot says, for the message */
	char said[4096];
	size_t nsaid = 0;
	for (;;) {
		char buf[1024];
		ssize_t n = read(errp[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (nsaid == sizeof said - 1) {
				memmove(said, said + sizeof said / 2, sizeof said / 2 - 1);
				nsaid = sizeof said / 2 - 1;
			}
			said[nsaid++] = buf[i];
		}
	}
	said[nsaid] = 0;
	int exec_errno = 0;
	ssize_t got = read(execp[0], &exec_errno, sizeof exec_errno);
	close_fd(&errp[0]);
	close_fd(&execp[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)sizeof exec_errno) {
		st = kvp_error_set(err, KVP_STATUS_NOT_FOUND, NULL, 0, 0, NULL, "cannot run %s: %s",
				   prog, strerror(exec_errno));
		goto out;
	}
	/* the last non-empty line gnuplot printed */
	while (nsaid && (said[nsaid - 1] == '\n' || said[nsaid - 1] == ' '))
		said[--nsaid] = 0;
	const char *last = strrchr(said, '\n');
	last = last ? last + 1 : said;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		st = kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL, "%s %s failed%s%s", prog,
				   script, *last ? ": " : "", last);
	else if (image && (stat(image, &sb) != 0 || sb.st_size == 0))
		st = kvp_error_set(err, KVP_STATUS_IO, image, 0, 0, NULL, "%s wrote no image%s%s",
				   prog, *last ? ": " : "", last);
	else if (image && !image_whole(image, ext)) {
		/* never left to pass for a chart */
		unlink(image);
		st = kvp_error_set(err, KVP_STATUS_IO, image, 0, 0, NULL,
				   "%s wrote a cut image (a full disk?), removed%s%s", prog,
				   *last ? ": " : "", last);
	}
out:
	free(prog);
	free(image);
	return st;
}
