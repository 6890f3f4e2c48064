/* SPDX-License-Identifier: MIT */
/*
 * hcq_sys.h - the syscall seam (STYLE 2.4): every open/close/ioctl/mmap/munmap issued
 * by iface/rm and iface/nvgpu goes through one of these tables, so the emulator
 * (iface/emu) can stand in for the kernel. Semantics are POSIX: -1 / MAP_FAILED and
 * errno on failure.
 */
#ifndef HCQ_SYS_H
#define HCQ_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct hcq_sys {
    int (*open)(void *ctx, const char *path, int flags);
    int (*close)(void *ctx, int fd);
    int (*ioctl)(void *ctx, int fd, unsigned long request, void *arg);
    void *(*mmap)(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t offset);
    int (*munmap)(void *ctx, void *addr, size_t len);
    void *ctx;
};

/* The real kernel. */
extern const struct hcq_sys hcq_sys_os;

#endif /* HCQ_SYS_H */
