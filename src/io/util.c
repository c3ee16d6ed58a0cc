/* io: whole-file reads, JSON with positioned errors, paths. */
#include "io/io_util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

long long splat__file_size(FILE *fp)
{
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return (long long)st.st_size;
}

splat_status splat__read_file(const char *path, size_t max_size, char **data, size_t *size, splat_error *err)
{
    *data = NULL;
    *size = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return splat__fail(err, SPLAT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    splat_status st = SPLAT_OK;
    char *buf = NULL;
    long long n = splat__file_size(fp);
    if (n < 0) {
        st = splat__fail(err, SPLAT_ERR_IO, "%s: not a regular file", path);
        goto done;
    }
    if ((unsigned long long)n > max_size) {
        st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: file is %lld bytes, more than the %zu this reader accepts",
                         path, n, max_size);
        goto done;
    }
    buf = splat__malloc((size_t)n + 1);
    if (!buf) {
        st = splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory for %lld bytes", path, n);
        goto done;
    }
    if (fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        st = splat__fail(err, SPLAT_ERR_IO, "%s: read error", path);
        goto done;
    }
    buf[n] = 0;
    *data = buf;
    *size = (size_t)n;
    buf = NULL;
done:
    splat__free(buf);
    fclose(fp);
    return st;
}

/* What the token at (or just before) text[at] is, when it is a non-finite number some writers put
 * in JSON (Python's json module does unless allow_nan=False): NaN, Infinity, -Infinity. */
static const char *non_finite_token(const char *text, size_t n, size_t at)
{
    size_t a = at < n ? at : n;
    while (a > 0 && (isalnum((unsigned char)text[a - 1]) || text[a - 1] == '-' || text[a - 1] == '+')) a--;
    while (a < n && isspace((unsigned char)text[a])) a++;
    size_t b = a;
    while (b < n && (isalnum((unsigned char)text[b]) || text[b] == '-' || text[b] == '+')) b++;
    static const char *const names[] = {"NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "inf", "-inf"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (b - a == strlen(names[k]) && strncasecmp(text + a, names[k], b - a) == 0) return names[k];
    return NULL;
}

/* How deep in lists and objects text[at] is (brackets inside strings do not count). */
static size_t json_depth(const char *text, size_t at)
{
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < at; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = false;
        } else if (c == '"') in_string = true;
        else if (c == '[' || c == '{') depth++;
        else if ((c == ']' || c == '}') && depth) depth--;
    }
    return depth;
}

splat_status splat__json_read(const char *path, cJSON **root, splat_error *err)
{
    *root = NULL;
    char *text;
    size_t n;
    splat_status st = splat__read_file(path, (size_t)1 << 30, &text, &n, err);
    if (st != SPLAT_OK) return st;
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(text, n, &end, false);
    if (!*root) {
        /* cJSON reports where it stopped; turn that into a line and column. */
        size_t at = end && end >= text && end <= text + n ? (size_t)(end - text) : 0;
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at; i++) {
            if (text[i] == '\n') line++, col = 1;
            else col++;
        }
        const char *nonfinite = non_finite_token(text, n, at);
        if (at < n && (text[at] == '[' || text[at] == '{') && json_depth(text, at) >= CJSON_NESTING_LIMIT)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: JSON nested more than %d deep at line %zu, column %zu (the "
                             "parser's limit)", path, CJSON_NESTING_LIMIT, line, col);
        else if (nonfinite)
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: JSON syntax error at line %zu, column %zu: %s is not a JSON "
                             "number (a non-finite value; Python's json module writes one unless allow_nan=False)",
                             path, line, col, nonfinite);
        else
            st = splat__fail(err, SPLAT_ERR_FORMAT, "%s: JSON syntax error at line %zu, column %zu", path, line, col);
    }
    splat__free(text);
    return st;
}

char *splat__path_join(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    bool slash = na > 0 && a[na - 1] != '/';
    char *p = splat__malloc(na + slash + nb + 1);
    if (!p) return NULL;
    memcpy(p, a, na);
    if (slash) p[na] = '/';
    memcpy(p + na + slash, b, nb + 1);
    return p;
}

bool splat__is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool splat__is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
