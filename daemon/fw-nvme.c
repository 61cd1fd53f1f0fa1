/* NVMe: what the controller and namespace can do to erase (firmware.h). Placeholder until the
 * NVMe module lands: reports nothing read. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <json-c/json.h>

#include "daemon.h"
#include "firmware.h"

int fw_nvme_probe(int fd, uint32_t nsid, const struct device_identity *id, struct fw_nvme_caps *c, char **err) {
        (void) fd;
        (void) id;
        c->nsid = nsid;
        *err = NULL;
        return -EOPNOTSUPP;
}

void fw_nvme_caps_done(struct fw_nvme_caps *c) {
        free(c->controller);
        for (size_t i = 0; c->namespaces && c->namespaces[i]; i++)
                free(c->namespaces[i]);
        free(c->namespaces);
}

struct json_object *fw_nvme_json(const struct fw_nvme_caps *c) {
        struct json_object *o = json_object_new_object();

        json_object_object_add(o, "nsid", json_object_new_int64(c->nsid));
        return o;
}
