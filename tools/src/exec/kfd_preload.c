/* Loaded by `wavejit exec` (LD_PRELOAD) into the program it runs, and inherited by its children.
 *
 * 1. ROCm tools such as rocminfo open /dev/kfd themselves before hsa_init to check for a GPU driver. Opening it
 *    is redirected to /dev/null, so the check passes without a driver, a device node or any change to the system.
 * 2. The amdgpu driver's sysfs and the KFD topology are read from the tree `wavejit exec` builds (its path in
 *    WAVEJIT_SYSFS, see src/exec/sysfs.rs): a path under one of the prefixes below becomes the same path under
 *    the tree. rocm-smi (Python, librocm_smi64) reaches these files through calls that do not go through the
 *    `open` symbol: libc's fopen and opendir (and so C++ ifstream, Python's os.listdir), stat and friends
 *    (Python's os.path.isfile), access, readlink (librocm_smi64 reads the PCI address from the link of
 *    /sys/class/drm/cardN), realpath. Each is wrapped here; `cat` run by rocm-smi's shell inherits the preload.
 *
 * Every other path is passed on unchanged. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static const char *const prefixes[] = {
    "/sys/module/amdgpu", "/sys/class/drm", "/sys/class/kfd", "/sys/devices/virtual/kfd", "/sys/devices/wavejit",
};

/* The tree, read once: WAVEJIT_SYSFS. Empty: no sysfs redirection. */
static const char *tree(void) {
    static const char *root;
    static int done;
    if (!done) {
        const char *t = getenv("WAVEJIT_SYSFS");
        root = (t != NULL && t[0] == '/') ? t : "";
        done = 1;
    }
    return root;
}

/* The path to use for `path`: /dev/null for /dev/kfd, the tree's copy of a redirected sysfs path (written into
 * `buf`, PATH_MAX bytes), else `path` itself. */
static const char *redirect(const char *path, char *buf) {
    if (path == NULL) return path;
    if (strcmp(path, "/dev/kfd") == 0) return "/dev/null";
    if (path[0] != '/' || strncmp(path, "/sys/", 5) != 0) return path;
    const char *root = tree();
    if (root[0] == '\0') return path;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(path, prefixes[i], n) == 0 && (path[n] == '\0' || path[n] == '/')) {
            int len = snprintf(buf, PATH_MAX, "%s%s", root, path);
            return (len > 0 && len < PATH_MAX) ? buf : path;
        }
    }
    return path;
}

/* The next definition of `name`; a symbol only old binaries use (__xstat...) is found by its base version. */
static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    return f != NULL ? f : dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
}

#define REAL(name, type) \
    static __typeof__(type) real_##name; \
    if (real_##name == NULL) real_##name = (type)next(#name)

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_LIKE(name)                                                      \
    int name(const char *path, int flags, ...) {                             \
        char buf[PATH_MAX];                                                  \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_arg(flags, ap);                                   \
        va_end(ap);                                                          \
        REAL(name, int (*)(const char *, int, ...));                         \
        return real_##name(redirect(path, buf), flags, mode);               \
    }

#define OPENAT_LIKE(name)                                                    \
    int name(int dir, const char *path, int flags, ...) {                    \
        char buf[PATH_MAX];                                                  \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_arg(flags, ap);                                   \
        va_end(ap);                                                          \
        REAL(name, int (*)(int, const char *, int, ...));                    \
        return real_##name(dir, redirect(path, buf), flags, mode);          \
    }

OPEN_LIKE(open)
OPEN_LIKE(open64)
OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)

/* _FORTIFY_SOURCE's checked forms */
int __open_2(const char *path, int flags) {
    char buf[PATH_MAX];
    REAL(__open_2, int (*)(const char *, int));
    return real___open_2(redirect(path, buf), flags);
}
int __open64_2(const char *path, int flags) {
    char buf[PATH_MAX];
    REAL(__open64_2, int (*)(const char *, int));
    return real___open64_2(redirect(path, buf), flags);
}
int __openat_2(int dir, const char *path, int flags) {
    char buf[PATH_MAX];
    REAL(__openat_2, int (*)(int, const char *, int));
    return real___openat_2(dir, redirect(path, buf), flags);
}
int __openat64_2(int dir, const char *path, int flags) {
    char buf[PATH_MAX];
    REAL(__openat64_2, int (*)(int, const char *, int));
    return real___openat64_2(dir, redirect(path, buf), flags);
}

/* One-path functions whose first argument is the path: FN(path, rest...) */
#define PATH_FIRST(ret, name, params, args)                                  \
    ret name params {                                                        \
        char buf[PATH_MAX];                                                  \
        REAL(name, ret(*) params);                                           \
        path = redirect(path, buf);                                          \
        return real_##name args;                                             \
    }

PATH_FIRST(FILE *, fopen, (const char *path, const char *mode), (path, mode))
PATH_FIRST(FILE *, fopen64, (const char *path, const char *mode), (path, mode))
PATH_FIRST(FILE *, freopen, (const char *path, const char *mode, FILE *f), (path, mode, f))
PATH_FIRST(FILE *, freopen64, (const char *path, const char *mode, FILE *f), (path, mode, f))
PATH_FIRST(DIR *, opendir, (const char *path), (path))
PATH_FIRST(int, stat, (const char *path, struct stat *st), (path, st))
PATH_FIRST(int, stat64, (const char *path, struct stat64 *st), (path, st))
PATH_FIRST(int, lstat, (const char *path, struct stat *st), (path, st))
PATH_FIRST(int, lstat64, (const char *path, struct stat64 *st), (path, st))
PATH_FIRST(int, access, (const char *path, int mode), (path, mode))
PATH_FIRST(int, euidaccess, (const char *path, int mode), (path, mode))
PATH_FIRST(int, eaccess, (const char *path, int mode), (path, mode))
PATH_FIRST(ssize_t, readlink, (const char *path, char *out, size_t len), (path, out, len))
PATH_FIRST(char *, realpath, (const char *path, char *out), (path, out))
PATH_FIRST(char *, canonicalize_file_name, (const char *path), (path))
PATH_FIRST(int, scandir, (const char *path, struct dirent ***list, int (*sel)(const struct dirent *), int (*cmp)(const struct dirent **, const struct dirent **)), (path, list, sel, cmp))
PATH_FIRST(int, scandir64, (const char *path, struct dirent64 ***list, int (*sel)(const struct dirent64 *), int (*cmp)(const struct dirent64 **, const struct dirent64 **)), (path, list, sel, cmp))

/* glibc before 2.33 compiled stat calls into these */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dir, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dir, const char *path, struct stat64 *st, int flags);

#define XSTAT(name, st_type)                                                 \
    int name(int ver, const char *path, st_type *st) {                       \
        char buf[PATH_MAX];                                                  \
        REAL(name, int (*)(int, const char *, st_type *));                   \
        return real_##name(ver, redirect(path, buf), st);                    \
    }
XSTAT(__xstat, struct stat)
XSTAT(__xstat64, struct stat64)
XSTAT(__lxstat, struct stat)
XSTAT(__lxstat64, struct stat64)

int __fxstatat(int ver, int dir, const char *path, struct stat *st, int flags) {
    char buf[PATH_MAX];
    REAL(__fxstatat, int (*)(int, int, const char *, struct stat *, int));
    return real___fxstatat(ver, dir, redirect(path, buf), st, flags);
}
int __fxstatat64(int ver, int dir, const char *path, struct stat64 *st, int flags) {
    char buf[PATH_MAX];
    REAL(__fxstatat64, int (*)(int, int, const char *, struct stat64 *, int));
    return real___fxstatat64(ver, dir, redirect(path, buf), st, flags);
}

int fstatat(int dir, const char *path, struct stat *st, int flags) {
    char buf[PATH_MAX];
    REAL(fstatat, int (*)(int, const char *, struct stat *, int));
    return real_fstatat(dir, redirect(path, buf), st, flags);
}
int fstatat64(int dir, const char *path, struct stat64 *st, int flags) {
    char buf[PATH_MAX];
    REAL(fstatat64, int (*)(int, const char *, struct stat64 *, int));
    return real_fstatat64(dir, redirect(path, buf), st, flags);
}
int statx(int dir, const char *path, int flags, unsigned mask, struct statx *st) {
    char buf[PATH_MAX];
    REAL(statx, int (*)(int, const char *, int, unsigned, struct statx *));
    return real_statx(dir, redirect(path, buf), flags, mask, st);
}
int faccessat(int dir, const char *path, int mode, int flags) {
    char buf[PATH_MAX];
    REAL(faccessat, int (*)(int, const char *, int, int));
    return real_faccessat(dir, redirect(path, buf), mode, flags);
}
ssize_t readlinkat(int dir, const char *path, char *out, size_t len) {
    char buf[PATH_MAX];
    REAL(readlinkat, ssize_t (*)(int, const char *, char *, size_t));
    return real_readlinkat(dir, redirect(path, buf), out, len);
}
