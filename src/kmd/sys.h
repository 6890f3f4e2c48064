/* SPDX-License-Identifier: MIT */
/*
 * sys.h - the syscall seam (STYLE 2.4): every open/close/ioctl/mmap/munmap/madvise issued
 * by kmd/rm and kmd/nvgpu goes through one of these tables, so the emulator
 * (emu) can stand in for the kernel. Semantics are POSIX: -1 / MAP_FAILED and
 * errno on failure.
 */
#ifndef SYS_H
#define SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sys {
    int (*open)(void *ctx, const char *path, int flags);
    int (*close)(void *ctx, int fd);
    int (*ioctl)(void *ctx, int fd, unsigned long request, void *arg);
    void *(*mmap)(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t offset);
    int (*munmap)(void *ctx, void *addr, size_t len);
    void *ctx;
    /* Optional (NULL: advice not given): madvise on memory the kmd mapped itself. */
    int (*madvise)(void *ctx, void *addr, size_t len, int advice);
};

/* The real kernel. */
extern const struct sys sys_os;

#endif /* SYS_H */
