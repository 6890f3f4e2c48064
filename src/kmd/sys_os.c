/* SPDX-License-Identifier: MIT */
/*
 * sys_os.c - the real kernel behind struct sys (sys.h): thin wrappers over
 * open/close/ioctl/mmap/munmap, so kmd/rm and kmd/nvgpu run unchanged on the
 * emulator's table. Layer: kmd.
 */
#include "sys.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static int
sys_os_open(void *ctx, const char *path, int flags)
{
    (void)ctx;
    return open(path, flags);
}

static int
sys_os_close(void *ctx, int fd)
{
    (void)ctx;
    return close(fd);
}

static int
sys_os_ioctl(void *ctx, int fd, unsigned long request, void *arg)
{
    (void)ctx;
    return ioctl(fd, request, arg);
}

static void *
sys_os_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    (void)ctx;
    return mmap(addr, len, prot, flags, fd, offset);
}

static int
sys_os_munmap(void *ctx, void *addr, size_t len)
{
    (void)ctx;
    return munmap(addr, len);
}

static int
sys_os_madvise(void *ctx, void *addr, size_t len, int advice)
{
    (void)ctx;
    return madvise(addr, len, advice);
}

const struct sys sys_os = {
    .open = sys_os_open,
    .close = sys_os_close,
    .ioctl = sys_os_ioctl,
    .mmap = sys_os_mmap,
    .munmap = sys_os_munmap,
    .ctx = NULL,
    .madvise = sys_os_madvise,
};
