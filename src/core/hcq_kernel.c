/* SPDX-License-Identifier: MIT */
/*
 * hcq_kernel.c - the registry of built-in kernels (hcq_kernel.h): core keeps the list of
 * descriptor tables and answers hcq_kernel_find/at from it; the kernel library (src/ops)
 * registers its tables when the program loads (ops_registry.c). So the dependency points
 * down (ops -> core) and core links without src/ops (docs/architecture.md §2).
 * Layer: core.
 *
 * Tables are appended once and never removed: readers walk them without a lock (the count
 * is published with release order after the slot is written).
 */
#include "hcq_kernel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static const struct hcq_kernel_desc *kernel_tables[HCQ_KERNEL_TABLES_MAX];
static _Atomic uint32_t kernel_table_count;
static pthread_mutex_t kernel_lock = PTHREAD_MUTEX_INITIALIZER;

bool
hcq_kernel_register(const struct hcq_kernel_desc *table)
{
    if (!table)
        return false;
    bool ok = true;
    pthread_mutex_lock(&kernel_lock);
    uint32_t n = atomic_load_explicit(&kernel_table_count, memory_order_relaxed);
    bool known = false;
    for (uint32_t t = 0; t < n; t++)
        known |= kernel_tables[t] == table;
    if (!known) {
        if (n < HCQ_KERNEL_TABLES_MAX) {
            kernel_tables[n] = table;
            atomic_store_explicit(&kernel_table_count, n + 1, memory_order_release);
        } else {
            ok = false;
        }
    }
    pthread_mutex_unlock(&kernel_lock);
    return ok;
}

const struct hcq_kernel_desc *
hcq_kernel_at(uint32_t i)
{
    uint32_t n = atomic_load_explicit(&kernel_table_count, memory_order_acquire);
    for (uint32_t t = 0; t < n; t++)
        for (const struct hcq_kernel_desc *d = kernel_tables[t]; d->name; d++)
            if (i-- == 0)
                return d;
    return NULL;
}

const struct hcq_kernel_desc *
hcq_kernel_find(const char *name)
{
    if (!name)
        return NULL;
    uint32_t n = atomic_load_explicit(&kernel_table_count, memory_order_acquire);
    for (uint32_t t = 0; t < n; t++)
        for (const struct hcq_kernel_desc *d = kernel_tables[t]; d->name; d++)
            if (!strcmp(d->name, name))
                return d;
    return NULL;
}
