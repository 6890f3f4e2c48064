/* SPDX-License-Identifier: MIT */
/*
 * hcq_sys_os.c - the real kernel behind struct hcq_sys (hcq_sys.h): thin wrappers over
 * open/close/ioctl/mmap/munmap, so iface/rm and iface/nvgpu run unchanged on the
 * emulator's table. Layer: iface.
 */
#include "hcq_sys.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static int
hcq_sys_os_open(void *ctx, const char *path, int flags)
{
    (void)ctx;
    return open(path, flags);
}

static int
hcq_sys_os_close(void *ctx, int fd)
{
    (void)ctx;
    return close(fd);
}

static int
hcq_sys_os_ioctl(void *ctx, int fd, unsigned long request, void *arg)
{
    (void)ctx;
    return ioctl(fd, request, arg);
}

static void *
hcq_sys_os_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    (void)ctx;
    return mmap(addr, len, prot, flags, fd, offset);
}

static int
hcq_sys_os_munmap(void *ctx, void *addr, size_t len)
{
    (void)ctx;
    return munmap(addr, len);
}

const struct hcq_sys hcq_sys_os = {
    .open = hcq_sys_os_open,
    .close = hcq_sys_os_close,
    .ioctl = hcq_sys_os_ioctl,
    .mmap = hcq_sys_os_mmap,
    .munmap = hcq_sys_os_munmap,
    .ctx = NULL,
};
