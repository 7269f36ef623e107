// What the emulated driver's device files are to a program: `devices`, run under `wavejit exec --driver kfd`.
// It prints stat and access of /dev/kfd before any device is open; then, for /dev/dri/renderD128 and /dev/kfd,
// whether each way of asking says the file is a character device, and its number; whether stat of the path and
// fstat of a descriptor name one file; what access says; and what an ioctl of a type neither KFD's ('K') nor
// DRM's ('d') gets (a terminal's TCGETS).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

static void show(const char* how, const char* path, const struct stat* st) {
  printf("%s %s: %s %u:%u size %lld\n", how, path, S_ISCHR(st->st_mode) ? "chr" : "not chr", major(st->st_rdev),
         minor(st->st_rdev), (long long)st->st_size);
}

int main(void) {
  struct stat early;
  if (stat("/dev/kfd", &early) != 0) return 7;
  show("stat before open", "/dev/kfd", &early);
  printf("access before open /dev/kfd: rw %d\n", access("/dev/kfd", R_OK | W_OK));
  const char* paths[] = {"/dev/dri/renderD128", "/dev/kfd"};
  for (int i = 0; i < 2; i++) {
    const char* path = paths[i];
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      printf("open %s: %s\n", path, strerror(errno));
      return 1;
    }
    struct stat by_fd, by_path, st;
    if (fstat(fd, &by_fd) != 0) return 2;
    show("fstat", path, &by_fd);
    if (fstatat(fd, "", &st, AT_EMPTY_PATH) != 0) return 3;
    show("fstatat", path, &st);
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx) != 0) return 4;
    printf("statx %s: %s %u:%u\n", path, S_ISCHR(sx.stx_mode) ? "chr" : "not chr", sx.stx_rdev_major,
           sx.stx_rdev_minor);
    if (stat(path, &by_path) != 0) {
      printf("stat %s: %s\n", path, strerror(errno));
      return 5;
    }
    show("stat", path, &by_path);
    if (lstat(path, &st) != 0) return 6;
    show("lstat", path, &st);
    printf("stat and fstat name one file: %s\n",
           by_path.st_dev == by_fd.st_dev && by_path.st_ino == by_fd.st_ino ? "yes" : "no");
    printf("access %s: rw %d, x %d\n", path, access(path, R_OK | W_OK), access(path, X_OK));
    struct termios t;
    int r = ioctl(fd, TCGETS, &t);
    printf("ioctl TCGETS on %s: %d (%s)\n", path, r, r < 0 ? strerror(errno) : "no error");
    close(fd);
  }
  struct stat st;
  int r = stat("/dev/dri/renderD129", &st);
  printf("stat /dev/dri/renderD129: %d (%s)\n", r, r < 0 ? strerror(errno) : "no error");
  return 0;
}
