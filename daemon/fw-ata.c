/* ATA: what the drive can do to erase (firmware.h). Placeholder until the ATA module lands. */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>

#include "daemon.h"
#include "firmware.h"

int fw_ata_probe(int fd, struct fw_ata_caps *c, char **err) {
        (void) fd;
        (void) c;
        *err = NULL;
        return -EOPNOTSUPP;
}

struct json_object *fw_ata_json(const struct fw_ata_caps *c) {
        (void) c;
        return json_object_new_object();
}
