/* io: atomic file replacement. A writer fills a temporary file in the target's directory and
 * renames it over the target only once everything is written and synced, so readers see the
 * old file or the new one, never a half-written one. */
#include "io/io_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

splat_status splat__atomic_open(splat_atomic_file *f, const char *path, splat_error *err)
{
    SPLAT_ASSERT(f && path);
    memset(f, 0, sizeof *f);
    static const char suffix[] = ".tmp-XXXXXX";
    size_t n = strlen(path);
    if (n == 0 || path[n - 1] == '/' || n + sizeof suffix > sizeof f->tmp_path)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "%s: not a usable file path", path);
    memcpy(f->path, path, n + 1);
    memcpy(f->tmp_path, path, n);
    memcpy(f->tmp_path + n, suffix, sizeof suffix);
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

splat_status splat__atomic_commit(splat_atomic_file *f, splat_error *err)
{
    SPLAT_ASSERT(f && f->fp);
    FILE *fp = f->fp;
    f->fp = NULL;
    const char *what = NULL;
    int e = 0;
    if (fflush(fp) != 0 || ferror(fp)) what = "write error", e = errno;
    else if (fsync(fileno(fp)) != 0) what = "fsync failed", e = errno;
    if (fclose(fp) != 0 && !what) what = "close failed", e = errno;
    if (!what && rename(f->tmp_path, f->path) != 0) what = "cannot rename the temporary file over it", e = errno;
    if (what) {
        unlink(f->tmp_path);
        f->tmp_path[0] = 0;
        return splat__fail(err, SPLAT_ERR_IO, "%s: %s: %s", f->path, what, strerror(e));
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

void splat__atomic_abort(splat_atomic_file *f)
{
    if (!f) return;
    if (f->fp) fclose((FILE *)f->fp);
    f->fp = NULL;
    if (f->tmp_path[0]) unlink(f->tmp_path);
    f->tmp_path[0] = 0;
}
