/* SCSI: what the device can do to erase (firmware.h). Placeholder until the SCSI module lands. */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>

#include "daemon.h"
#include "firmware.h"

int fw_scsi_is_ata(int fd) {
        (void) fd;
        return -ENOTTY;
}

int fw_scsi_probe(int fd, struct fw_scsi_caps *c, char **err) {
        (void) fd;
        (void) c;
        *err = NULL;
        return -EOPNOTSUPP;
}

struct json_object *fw_scsi_json(const struct fw_scsi_caps *c) {
        (void) c;
        return json_object_new_object();
}
