/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one way the library writes a file (model files, CSV, .npy).
 *
 * - A regular file (or a new one) is written to a temporary file beside it,
 *   flushed, fsync'd and renamed over it: a reader sees the old file or the
 *   new one, never half of one, and on any error the old file stays. The
 *   new file keeps the mode of the one it replaces; a new file gets 0666
 *   less the umask, as any program's new file (the temporary file is
 *   opened with that mode, so the kernel applies the umask).
 * - A symbolic link is followed: the file it points to is replaced and the
 *   link stays.
 * - Anything else that exists (a device such as /dev/null or /dev/full, a
 *   FIFO, a socket) is written directly, since renaming over it would
 *   replace it with a regular file; every write error is reported (ENOSPC
 *   from a full device), and there is no atomicity to promise.
 *
 * The temporary files of the writes in progress are also listed in a fixed
 * table of names, so that a program's signal handler can remove them with
 * rfx_temporaries_remove(), which is async-signal-safe: it reads the table
 * through atomic flags and calls unlink() alone.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

enum { PATH_MAX_SHOWN = 400 };

static rfx_status output_error(const rfx__output *o, const char *what, int err)
{
    char buf[128], q[RFX__QUOTE_SIZE(PATH_MAX_SHOWN)];
    if (strerror_r(err ? err : EIO, buf, sizeof buf) != 0)
        snprintf(buf, sizeof buf, "error %d", err);
    return rfx__error(RFX_EIO, "%s: cannot %s: %s",
                      rfx__quote(o->shown, strlen(o->shown), PATH_MAX_SHOWN, q, sizeof q), what,
                      buf);
}

/* ---- the table of temporary files, for signal handlers ------------------ */

enum { TRACK_SLOTS = 16, TRACK_PATH = 4096 };
enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };

/* A slot is taken (FREE -> BUSY) by one writer, filled, then published
 * (READY); the handler unlinks only READY names. A temporary name longer
 * than TRACK_PATH, or a 17th concurrent write, is not listed. */
static struct {
    int state;
    char path[TRACK_PATH];
} tracked[TRACK_SLOTS];

/* List name; the slot, or -1 when it cannot be listed. */
static int track(const char *name)
{
    size_t len = strlen(name);
    if (len >= TRACK_PATH) return -1;
    for (int i = 0; i < TRACK_SLOTS; i++) {
        int expected = SLOT_FREE;
        if (!__atomic_compare_exchange_n(&tracked[i].state, &expected, SLOT_BUSY, 0,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            continue;
        memcpy(tracked[i].path, name, len + 1);
        __atomic_store_n(&tracked[i].state, SLOT_READY, __ATOMIC_RELEASE);
        return i;
    }
    return -1;
}

static void untrack(int slot)
{
    if (slot >= 0) __atomic_store_n(&tracked[slot].state, SLOT_FREE, __ATOMIC_RELEASE);
}

void rfx_temporaries_remove(void)
{
    for (int i = 0; i < TRACK_SLOTS; i++)
        if (__atomic_load_n(&tracked[i].state, __ATOMIC_ACQUIRE) == SLOT_READY)
            unlink(tracked[i].path);
}

/* A fresh temporary name beside target: target.tmp.PID.N, opened with
 * O_EXCL (so a name taken by another process or thread is skipped). The
 * name is listed (*slot) before the file exists, so that no moment leaves
 * an unlisted file behind. */
static int open_temporary(const char *target, char **name, int *slot)
{
    static unsigned long counter; /* distinct names; a race only retries */
    size_t len = strlen(target) + 64;
    char *t = malloc(len);
    if (!t) return -ENOMEM;
    for (int tries = 0; tries < 1000; tries++) {
        unsigned long k = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
        snprintf(t, len, "%s.tmp.%ld.%lu", target, (long)getpid(), k);
        *slot = track(t);
        int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *name = t;
            return fd;
        }
        int e = errno;
        untrack(*slot);
        *slot = -1;
        if (e != EEXIST) {
            free(t);
            return -e;
        }
    }
    free(t);
    return -EEXIST;
}

rfx_status rfx__output_open(const char *path, rfx__output *o)
{
    memset(o, 0, sizeof *o);
    o->shown = path;
    o->slot = -1;
    struct stat lsb, sb;
    /* a symbolic link: write the file it names, keep the link */
    if (lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
        char *real = realpath(path, NULL);
        if (real) o->target = real;
    }
    if (!o->target) {
        o->target = strdup(path);
        if (!o->target) return rfx__error(RFX_ENOMEM, "cannot allocate a file name");
    }
    int exists = stat(o->target, &sb) == 0;
    if (exists && S_ISDIR(sb.st_mode)) {
        rfx_status st = output_error(o, "write it", EISDIR);
        rfx__output_abort(o);
        return st;
    }
    if (exists && !S_ISREG(sb.st_mode)) { /* a device, FIFO or socket: directly */
        o->fp = fopen(o->target, "wb");
        if (!o->fp) {
            rfx_status st = output_error(o, "open it for writing", errno);
            rfx__output_abort(o);
            return st;
        }
        o->direct = 1;
        return RFX_OK;
    }
    int fd = open_temporary(o->target, &o->tmp, &o->slot);
    if (fd < 0) {
        rfx_status st = fd == -ENOMEM
                            ? rfx__error(RFX_ENOMEM, "cannot allocate a file name")
                            : output_error(o, "create a temporary file beside it", -fd);
        rfx__output_abort(o);
        return st;
    }
    if (exists && fchmod(fd, sb.st_mode & 07777) != 0) {
        rfx_status st = output_error(o, "set the mode of the temporary file", errno);
        close(fd);
        rfx__output_abort(o);
        return st;
    }
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        rfx_status st = output_error(o, "open the temporary file", errno);
        close(fd);
        rfx__output_abort(o);
        return st;
    }
    return RFX_OK;
}

rfx_status rfx__output_commit(rfx__output *o)
{
    int err = 0;
    if (ferror(o->fp) || fflush(o->fp) != 0) err = errno ? errno : EIO;
    /* durable before the rename; a device or FIFO may not sync (EINVAL) */
    if (!err && fsync(fileno(o->fp)) != 0 && !(o->direct && (errno == EINVAL || errno == EROFS)))
        err = errno;
    if (fclose(o->fp) != 0 && !err) err = errno ? errno : EIO;
    o->fp = NULL;
    if (err) {
        rfx_status st = output_error(o, "write", err);
        rfx__output_abort(o);
        return st;
    }
    if (!o->direct && rename(o->tmp, o->target) != 0) {
        rfx_status st = output_error(o, "rename the temporary file to it", errno);
        rfx__output_abort(o);
        return st;
    }
    untrack(o->slot);
    o->slot = -1;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return RFX_OK;
}

void rfx__output_abort(rfx__output *o)
{
    if (o->fp) fclose(o->fp);
    if (o->tmp) remove(o->tmp);
    untrack(o->slot);
    o->slot = -1;
    free(o->tmp);
    free(o->target);
    o->fp = NULL;
    o->tmp = o->target = NULL;
}
