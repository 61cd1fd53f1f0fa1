/* Chunk plan arithmetic. */
#include "config.h"

#include <errno.h>

#include "chunk.h"

static uint64_t round_up(uint64_t v, uint64_t m) {
        return (v + m - 1) / m * m;
}

int chunk_plan_init(struct chunk_plan *p, uint64_t total, uint32_t sector, uint64_t chunk_size, uint32_t io_size) {
        if (sector < 512 || sector > 65536 || (sector & (sector - 1)) != 0)
                return -EINVAL;
        if (total == 0 || total % sector != 0)
                return -EINVAL;

        if (io_size == 0)
                io_size = CHUNK_IO_DEFAULT;
        if (chunk_size == 0)
                chunk_size = CHUNK_SIZE_DEFAULT;
        if (io_size > (1U << 30) || chunk_size > (1ULL << 40))
                return -EINVAL;

        io_size = (uint32_t) round_up(io_size, sector);
        if (chunk_size < io_size)
                chunk_size = io_size;
        chunk_size = round_up(chunk_size, io_size);

        *p = (struct chunk_plan) {
                .total = total,
                .chunk_size = chunk_size,
                .io_size = io_size,
                .sector = sector,
                .n_chunks = (total + chunk_size - 1) / chunk_size,
        };
        return 0;
}

void chunk_range(const struct chunk_plan *p, uint64_t i, uint64_t *offset, uint64_t *len) {
        uint64_t o = i * p->chunk_size;

        *offset = o;
        *len = o >= p->total ? 0 : (p->total - o < p->chunk_size ? p->total - o : p->chunk_size);
}
