/* io: atomic file replacement. A writer fills a temporary file in the target's directory and
 * renames it over the target only once everything is written and synced, so readers see the
 * old file or the new one, never a half-written one.
 *
 * The temporary is named "<target>.tmp-<pid>-XXXXXX". A process killed while writing leaves it
 * behind (a checkpoint's is as large as the checkpoint); the next writer of the same target
 * removes those whose process no longer exists. */
#include "io/io_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes "<base>.tmp-<pid>-XXXXXX" in `dir` for every pid that is not a running process. */
static void remove_stale(const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    if (!d) return;
    size_t nb = strlen(base);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strncmp(name, base, nb) != 0 || strncmp(name + nb, ".tmp-", 5) != 0) continue;
        char *end;
        long pid = strtol(name + nb + 5, &end, 10);
        if (end == name + nb + 5 || *end != '-' || strlen(end + 1) != 6 || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        char full[2048];
        snprintf(full, sizeof full, "%s/%s", dir, name);
        unlink(full);
    }
    closedir(d);
}

splat_status splat__atomic_open(splat_atomic_file *f, const char *path, splat_error *err)
{
    SPLAT_ASSERT(f && path);
    memset(f, 0, sizeof *f);
    char suffix[40];
    snprintf(suffix, sizeof suffix, ".tmp-%ld-XXXXXX", (long)getpid());
    size_t n = strlen(path), ns = strlen(suffix);
    if (n == 0 || path[n - 1] == '/' || n + ns + 1 > sizeof f->tmp_path)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: not a usable file path", path);
    memcpy(f->path, path, n + 1);
    memcpy(f->tmp_path, path, n);
    memcpy(f->tmp_path + n, suffix, ns + 1);
    {
        char dir[sizeof f->path];
        memcpy(dir, path, n + 1);
        char *slash = strrchr(dir, '/');
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        if (slash == dir) slash[1] = 0;
        else if (slash) *slash = 0;
        else strcpy(dir, ".");
        remove_stale(dir, base);
    }
    int fd = mkstemp(f->tmp_path);
    if (fd < 0) {
        int e = errno;
        f->tmp_path[0] = 0;
        return splat__fail(err, SPLAT_ERR_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(e));
    }
    /* mkstemp makes the file private (0600); the result should read like any other output. */
    (void)fchmod(fd, 0644);
    f->fp = fdopen(fd, "wb");
    if (!f->fp) {
        int e = errno;
        close(fd);
        unlink(f->tmp_path);
        f->tmp_path[0] = 0;
        return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open a temporary file: %s", path, strerror(e));
    }
    return SPLAT_OK;
}

splat_status splat__atomic_write(splat_atomic_file *f, const void *data, size_t n, splat_error *err)
{
    if (n == 0) return SPLAT_OK;
    if (fwrite(data, 1, n, (FILE *)f->fp) != n)
        return splat__fail(err, SPLAT_ERR_IO, "%s: write error: %s", f->path, strerror(errno));
    return SPLAT_OK;
}

splat_status splat__atomic_finish(splat_atomic_file *f, splat_error *err)
{
    SPLAT_ASSERT(f && f->fp);
    FILE *fp = f->fp;
    f->fp = NULL;
    const char *what = NULL;
    int e = 0;
    if (fflush(fp) != 0 || ferror(fp)) what = "write error", e = errno;
    else if (fsync(fileno(fp)) != 0) what = "fsync failed", e = errno;
    if (fclose(fp) != 0 && !what) what = "close failed", e = errno;
    if (what) {
        unlink(f->tmp_path);
        f->tmp_path[0] = 0;
        return splat__fail(err, SPLAT_ERR_IO, "%s: %s: %s", f->path, what, strerror(e));
    }
    return SPLAT_OK;
}

splat_status splat__atomic_publish(splat_atomic_file *f, splat_error *err)
{
    SPLAT_ASSERT(f && !f->fp && f->tmp_path[0]);
    if (rename(f->tmp_path, f->path) != 0) {
        int e = errno;
        unlink(f->tmp_path);
        f->tmp_path[0] = 0;
        return splat__fail(err, SPLAT_ERR_IO, "%s: cannot rename the temporary file over it: %s", f->path, strerror(e));
    }
    f->tmp_path[0] = 0;
    /* Make the rename itself durable; a failure here leaves a correct file, so it is ignored. */
    char dir[sizeof f->path];
    memcpy(dir, f->path, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = 0;
    else if (slash) *slash = 0;
    else strcpy(dir, ".");
    int dfd = open(dir, O_RDONLY);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return SPLAT_OK;
}

splat_status splat__atomic_commit(splat_atomic_file *f, splat_error *err)
{
    splat_status st = splat__atomic_finish(f, err);
    return st == SPLAT_OK ? splat__atomic_publish(f, err) : st;
}

void splat__atomic_abort(splat_atomic_file *f)
{
    if (!f) return;
    if (f->fp) fclose((FILE *)f->fp);
    f->fp = NULL;
    if (f->tmp_path[0]) unlink(f->tmp_path);
    f->tmp_path[0] = 0;
}
