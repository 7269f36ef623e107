/* Loaded by `wavejit exec` (LD_PRELOAD) into the program it runs: ROCm tools such as rocminfo open /dev/kfd
 * themselves before hsa_init to check for a GPU driver. Opening it is redirected to /dev/null, so the check
 * passes without a driver, a device node or any change to the system. Every other path is opened unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>

static const char *redirect(const char *path) {
    return (path != NULL && strcmp(path, "/dev/kfd") == 0) ? "/dev/null" : path;
}

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_LIKE(name)                                                      \
    int name(const char *path, int flags, ...) {                             \
        static int (*real)(const char *, int, ...);                          \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_arg(flags, ap);                                   \
        va_end(ap);                                                          \
        if (real == NULL) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name); \
        return real(redirect(path), flags, mode);                           \
    }

#define OPENAT_LIKE(name)                                                    \
    int name(int dir, const char *path, int flags, ...) {                    \
        static int (*real)(int, const char *, int, ...);                     \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_arg(flags, ap);                                   \
        va_end(ap);                                                          \
        if (real == NULL) real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #name); \
        return real(dir, redirect(path), flags, mode);                      \
    }

OPEN_LIKE(open)
OPEN_LIKE(open64)
OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)
