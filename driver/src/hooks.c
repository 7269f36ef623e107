/* The libc entry points the emulated driver interposes (LD_PRELOAD), written in C because `open` and `ioctl` are
 * variadic. Each asks the driver (Rust, src/hooks.rs) first; what is not the driver's goes on to the next
 * definition (the sysfs preload of `wavejit exec`, then libc).
 *
 *   open*, openat*   /dev/kfd and /dev/dri/renderD<N> of an emulated GPU open the driver's device files
 *   ioctl            on those files is the driver's; on any other file, the system's
 *   the stat family  a device file of the driver is the character device it stands for (src/files.rs: the render
 *                    node (226, N), /dev/kfd (235, 0)): mode crw-rw-rw-, its st_rdev, no size. By descriptor
 *                    (fstat, fstatat and statx with AT_EMPTY_PATH) the answer is the file's own with these fields
 *                    changed. By path (stat, lstat, fstatat, statx) it is fstat's of the device while the driver
 *                    runs, and before, so that a stat starts no GPU, /dev/null's with the device's number; access
 *                    allows reads and writes. glibc 2.33 and later call these by their own names (fstat64 is
 *                    fstat's alias under _FILE_OFFSET_BITS=64); binaries built against older ones call the
 *                    __fxstat family, still exported, which is interposed as well.
 *
 * Everything else (mmap of the device files, dup, close, fork) is the kernel's own: the device files are real
 * memory files. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

/* Returned by the driver for what is not its own. */
#define WJ_PASS (-2)

int wj_open(const char *path, int flags);
int wj_ioctl(int fd, unsigned long request, void *arg);
int wj_device_number(unsigned long dev, unsigned long ino, unsigned *major, unsigned *minor);
int wj_device_path(const char *path, unsigned *major, unsigned *minor);

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* The next definition of `name`; one only old binaries use (__fxstat...) is found by its base version. */
static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    return f != NULL ? f : dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
}

#define NEXT(name, type) \
    static __typeof__(type) next_##name; \
    if (next_##name == NULL) next_##name = (type)next(#name)

#define OPEN_LIKE(name)                                                      \
    int name(const char *path, int flags, ...) {                             \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_arg(flags, ap);                                   \
        va_end(ap);                                                          \
        int r = wj_open(path, flags);                                        \
        if (r != WJ_PASS) return r;                                          \
        NEXT(name, int (*)(const char *, int, ...));                         \
        return next_##name(path, flags, mode);                               \
    }

#define OPENAT_LIKE(name)                                                    \
    int name(int dir, const char *path, int flags, ...) {                    \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_arg(flags, ap);                                   \
        va_end(ap);                                                          \
        int r = wj_open(path, flags);                                        \
        if (r != WJ_PASS) return r;                                          \
        NEXT(name, int (*)(int, const char *, int, ...));                    \
        return next_##name(dir, path, flags, mode);                          \
    }

OPEN_LIKE(open)
OPEN_LIKE(open64)
OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)

int __open_2(const char *path, int flags) {
    int r = wj_open(path, flags);
    if (r != WJ_PASS) return r;
    NEXT(__open_2, int (*)(const char *, int));
    return next___open_2(path, flags);
}
int __open64_2(const char *path, int flags) {
    int r = wj_open(path, flags);
    if (r != WJ_PASS) return r;
    NEXT(__open64_2, int (*)(const char *, int));
    return next___open64_2(path, flags);
}
int __openat_2(int dir, const char *path, int flags) {
    int r = wj_open(path, flags);
    if (r != WJ_PASS) return r;
    NEXT(__openat_2, int (*)(int, const char *, int));
    return next___openat_2(dir, path, flags);
}
int __openat64_2(int dir, const char *path, int flags) {
    int r = wj_open(path, flags);
    if (r != WJ_PASS) return r;
    NEXT(__openat64_2, int (*)(int, const char *, int));
    return next___openat64_2(dir, path, flags);
}

int ioctl(int fd, unsigned long request, ...) {
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    int r = wj_ioctl(fd, request, arg);
    if (r != WJ_PASS) return r;
    NEXT(ioctl, int (*)(int, unsigned long, ...));
    return next_ioctl(fd, request, arg);
}

/* The stat family. struct stat64 is struct stat on the 64-bit targets the driver is built for. */
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "struct stat64 is struct stat");

/* A stat of one of the driver's files made the character device's. */
static void as_device(struct stat *st) {
    unsigned major, minor;
    if (!S_ISREG(st->st_mode) || !wj_device_number(st->st_dev, st->st_ino, &major, &minor)) return;
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = makedev(major, minor);
    st->st_size = 0;
    st->st_blocks = 0;
    st->st_blksize = 4096;
}

static void statx_as_device(struct statx *st) {
    unsigned major, minor;
    if (!S_ISREG(st->stx_mode) ||
        !wj_device_number(makedev(st->stx_dev_major, st->stx_dev_minor), st->stx_ino, &major, &minor))
        return;
    st->stx_mode = S_IFCHR | 0666;
    st->stx_rdev_major = major;
    st->stx_rdev_minor = minor;
    st->stx_size = 0;
    st->stx_blocks = 0;
    st->stx_blksize = 4096;
}

/* The stat of the device file `fd` (closed here), or -1 when it did not open. */
static int device_stat(int fd, struct stat *st) {
    if (fd < 0) return -1;
    int r = fstat(fd, st);
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

/* stat of `path` when it names a device of the driver, else WJ_PASS. While the driver runs, the answer is the
 * device file's own (stat and fstat of a descriptor name one file); before it runs, it is /dev/null's stat (a
 * character device of devtmpfs) with the device's number, so that a stat starts no GPU. */
static int path_stat(const char *path, struct stat *st) {
    unsigned major, minor;
    int r = wj_device_path(path, &major, &minor);
    if (r == WJ_PASS || r < 0) return r;
    if (r == 1) return device_stat(wj_open(path, O_RDONLY | O_CLOEXEC), st);
    NEXT(fstatat, int (*)(int, const char *, struct stat *, int));
    if (next_fstatat(AT_FDCWD, "/dev/null", st, 0) != 0) return -1;
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = makedev(major, minor);
    return 0;
}

/* access to `path` when it names a device of the driver, else WJ_PASS: reads and writes are allowed
 * (crw-rw-rw-), execution is not */
static int path_access(const char *path, int mode) {
    unsigned major, minor;
    int r = wj_device_path(path, &major, &minor);
    if (r == WJ_PASS || r < 0) return r;
    if (mode & X_OK) {
        errno = EACCES;
        return -1;
    }
    return 0;
}

int fstat(int fd, struct stat *st) {
    NEXT(fstat, int (*)(int, struct stat *));
    int r = next_fstat(fd, st);
    if (r == 0) as_device(st);
    return r;
}
int fstat64(int fd, struct stat64 *st) { return fstat(fd, (struct stat *)st); }

int __fxstat(int ver, int fd, struct stat *st) {
    NEXT(__fxstat, int (*)(int, int, struct stat *));
    int r = next___fxstat(ver, fd, st);
    if (r == 0) as_device(st);
    return r;
}
int __fxstat64(int ver, int fd, struct stat64 *st) { return __fxstat(ver, fd, (struct stat *)st); }

/* stat and lstat by path: the device's stat for a device path (never a link), else the next answer */
#define PATH_STAT(name)                                                      \
    int name(const char *path, struct stat *st) {                            \
        int d = path_stat(path, st);                                         \
        if (d != WJ_PASS) return d;                                          \
        NEXT(name, int (*)(const char *, struct stat *));                    \
        int r = next_##name(path, st);                                       \
        if (r == 0) as_device(st);                                           \
        return r;                                                            \
    }
PATH_STAT(stat)
PATH_STAT(lstat)
int stat64(const char *path, struct stat64 *st) { return stat(path, (struct stat *)st); }
int lstat64(const char *path, struct stat64 *st) { return lstat(path, (struct stat *)st); }

#define PATH_XSTAT(name)                                                     \
    int name(int ver, const char *path, struct stat *st) {                   \
        int d = path_stat(path, st);                                         \
        if (d != WJ_PASS) return d;                                          \
        NEXT(name, int (*)(int, const char *, struct stat *));               \
        int r = next_##name(ver, path, st);                                  \
        if (r == 0) as_device(st);                                           \
        return r;                                                            \
    }
PATH_XSTAT(__xstat)
PATH_XSTAT(__lxstat)
int __xstat64(int ver, const char *path, struct stat64 *st) { return __xstat(ver, path, (struct stat *)st); }
int __lxstat64(int ver, const char *path, struct stat64 *st) { return __lxstat(ver, path, (struct stat *)st); }

/* by descriptor (AT_EMPTY_PATH) or by path */
int fstatat(int dir, const char *path, struct stat *st, int flags) {
    int d = path_stat(path, st);
    if (d != WJ_PASS) return d;
    NEXT(fstatat, int (*)(int, const char *, struct stat *, int));
    int r = next_fstatat(dir, path, st, flags);
    if (r == 0) as_device(st);
    return r;
}
int fstatat64(int dir, const char *path, struct stat64 *st, int flags) {
    return fstatat(dir, path, (struct stat *)st, flags);
}
int __fxstatat(int ver, int dir, const char *path, struct stat *st, int flags) {
    int d = path_stat(path, st);
    if (d != WJ_PASS) return d;
    NEXT(__fxstatat, int (*)(int, int, const char *, struct stat *, int));
    int r = next___fxstatat(ver, dir, path, st, flags);
    if (r == 0) as_device(st);
    return r;
}
int __fxstatat64(int ver, int dir, const char *path, struct stat64 *st, int flags) {
    return __fxstatat(ver, dir, path, (struct stat *)st, flags);
}

int statx(int dir, const char *path, int flags, unsigned mask, struct statx *st) {
    NEXT(statx, int (*)(int, const char *, int, unsigned, struct statx *));
    unsigned major, minor;
    int d = wj_device_path(path, &major, &minor);
    if (d < 0 && d != WJ_PASS) return -1;
    if (d == WJ_PASS) {
        int r = next_statx(dir, path, flags, mask, st);
        if (r == 0) statx_as_device(st);
        return r;
    }
    /* as path_stat: the device file while the driver runs, else /dev/null with the device's number */
    int fd = d == 1 ? wj_open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (d == 1 && fd < 0) return -1;
    int r = fd >= 0 ? next_statx(fd, "", AT_EMPTY_PATH, mask, st) : next_statx(AT_FDCWD, "/dev/null", 0, mask, st);
    int e = errno;
    if (fd >= 0) close(fd);
    errno = e;
    if (r != 0) return r;
    if (fd >= 0) {
        statx_as_device(st);
    } else {
        st->stx_mode = S_IFCHR | 0666;
        st->stx_rdev_major = major;
        st->stx_rdev_minor = minor;
    }
    return 0;
}

#define ACCESS_LIKE(name)                                                    \
    int name(const char *path, int mode) {                                   \
        int d = path_access(path, mode);                                     \
        if (d != WJ_PASS) return d;                                          \
        NEXT(name, int (*)(const char *, int));                              \
        return next_##name(path, mode);                                      \
    }
ACCESS_LIKE(access)
ACCESS_LIKE(euidaccess)
ACCESS_LIKE(eaccess)

int faccessat(int dir, const char *path, int mode, int flags) {
    int d = path_access(path, mode);
    if (d != WJ_PASS) return d;
    NEXT(faccessat, int (*)(int, const char *, int, int));
    return next_faccessat(dir, path, mode, flags);
}
