/* Splitting a device into chunks: the unit of scheduling (and later of checkpointing and
 * verification). Pure arithmetic, no I/O. */
#pragma once

#include <stdint.h>

#define CHUNK_SIZE_DEFAULT (64ULL << 20)  /* 64 MiB */
#define CHUNK_IO_DEFAULT   (1ULL << 20)   /* size of one write, 1 MiB */

struct chunk_plan {
        uint64_t total;         /* device size in bytes */
        uint64_t chunk_size;    /* bytes per chunk; multiple of io_size */
        uint32_t io_size;       /* bytes per write; multiple of sector */
        uint32_t sector;        /* logical sector size: every offset and length is a multiple */
        uint64_t n_chunks;      /* ceil(total / chunk_size) */
};

/* Fill *p for a device of total bytes with the given logical sector size. chunk_size and
 * io_size of 0 pick the defaults; both are rounded to multiples of the sector size (io_size)
 * and of io_size (chunk_size), and io_size never exceeds chunk_size. Returns 0, or -EINVAL when
 * total is 0 or not a multiple of sector, or sector is not a power of two in [512, 65536]. */
int chunk_plan_init(struct chunk_plan *p, uint64_t total, uint32_t sector, uint64_t chunk_size, uint32_t io_size);

/* Byte range of chunk i (i < n_chunks): offset and length; the last chunk may be shorter. */
void chunk_range(const struct chunk_plan *p, uint64_t i, uint64_t *offset, uint64_t *len);
