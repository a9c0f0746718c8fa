/* input-file.h: open a file kvplan reads, and remember it.
 *
 * Stance: kvplan reads regular files only.  A path that names a directory, a
 * FIFO, a device or a socket is refused by name ("a directory, not a regular
 * file"), never with "no such file", and never by blocking: the file is
 * opened with O_NONBLOCK (a FIFO with no writer would otherwise wait for
 * ever) and checked with fstat before a byte is read.  Every file opened here
 * is remembered by device and inode for the life of the process, so the
 * atomic writer (atomic-file.h) can refuse to write over one of the
 * command's own inputs (`kvplan check F --update-baseline F`). */
#ifndef KVP_INPUT_FILE_H
#define KVP_INPUT_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/error.h"

/* Open `path` for reading as a stdio stream (blocking reads restored).
 * IO when nothing is there ("no such file"), when it cannot be opened, or
 * when it is not a regular file (the message names what it is).  The caller fcloses *out. */
kvp_status kvp_input_open(const char *path, FILE **out, struct kvp_error *err);

/* Remember (dev, ino) as an input of this command; false when memory runs
 * out (the file is then simply not protected). */
bool kvp_input_note(dev_t dev, ino_t ino);

/* Whether (dev, ino) is a file this process opened as an input. */
bool kvp_input_is_input(dev_t dev, ino_t ino);

/* What a file of mode `mode` is, for a message: "a directory", "a FIFO",
 * "a character device", "a block device", "a socket", "not a regular file". */
const char *kvp_input_kind(mode_t mode);

#endif
