/* libFuzzer target: a job record file as the daemon reads it from STATE_DIR/jobs/ID.json at start
 * (tests/fuzz/README.md). The bytes are decoded by state_record_decode() without the checksum
 * check (a fuzzer cannot forge the SHA-256 in the record, and the check is all that stands
 * before the parser), then turned into a job by job_from_record() with no pool (the defaults), as
 * job_load_all() does, and freed again. Links the daemon's objects except daemon/main.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "daemon/daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct json_object *rec = NULL;
        struct job *job;
        char err[256] = "";
        char *buf;

        /* The decoder changes the text in place (the checksum is zeroed): a copy of exactly size
         * bytes, so that AddressSanitizer sees any read past the end. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        if (size)
                memcpy(buf, data, size);
        if (state_record_decode(buf, size, false /* skip checksum */, &rec, err, sizeof(err)) == 0) {
                job = job_from_record(rec, NULL, err, sizeof(err));
                if (job)
                        job_destroy(job);
                else if (!err[0])
                        abort();        /* the contract: a refused record names its reason */
                state_record_cleanse(rec);
                json_object_put(rec);
        }
        free(buf);
        return 0;
}
