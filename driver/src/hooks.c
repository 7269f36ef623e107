/* The libc entry points the emulated driver interposes (LD_PRELOAD), written in C because `open` and `ioctl` are
 * variadic. Each asks the driver (Rust, src/hooks.rs) first; what is not the driver's goes on to the next
 * definition (the sysfs preload of `wavejit exec`, then libc).
 *
 *   open*, openat*   /dev/kfd and /dev/dri/renderD<N> of an emulated GPU open the driver's device files
 *   ioctl            on those files is the driver's; on any other file, the system's
 *
 * Everything else (mmap of the device files, dup, close, fstat, fork) is the kernel's own: the device files are
 * real memory files. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/types.h>

/* Returned by the driver for what is not its own. */
#define WJ_PASS (-2)

int wj_open(const char *path, int flags);
int wj_ioctl(int fd, unsigned long request, void *arg);

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define NEXT(name, type) \
    static __typeof__(type) next_##name; \
    if (next_##name == NULL) next_##name = (type)dlsym(RTLD_NEXT, #name)

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
