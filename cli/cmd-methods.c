/* wipectl methods: the named wipe methods of common/method.c, listed without asking the daemon
 * (both programs are built from the same table). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cleanup.h"
#include "method.h"
#include "wipectl.h"

/* One method as {"name","passes":[...],"description","legacy"}, the passes in their canonical
 * names. NULL on ENOMEM or on a table entry that does not parse. */
static struct json_object *cmd_methods_one(const struct method *m) {
        _cleanup_json_ struct json_object *o = json_object_new_object();
        _cleanup_free_ struct pass *passes = NULL;
        struct json_object *a;
        size_t n = 0;

        if (!o || json_object_object_add(o, "name", json_object_new_string(m->name)) < 0 ||
            pass_list_parse(m->passes, &passes, &n) < 0)
                return NULL;
        a = output_pass_array(passes, n);
        if (!a || json_object_object_add(o, "passes", a) < 0) {
                json_object_put(a);
                return NULL;
        }
        if (json_object_object_add(o, "description", json_object_new_string(m->description)) < 0 ||
            json_object_object_add(o, "legacy", json_object_new_boolean(m->legacy)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* {"methods":[...]} in the table's order. NULL on failure. */
static struct json_object *cmd_methods_build(void) {
        _cleanup_json_ struct json_object *o = json_object_new_object();
        struct json_object *a = json_object_new_array();
        const struct method *table;
        size_t n;

        if (!o || !a || json_object_object_add(o, "methods", a) < 0) {
                json_object_put(a);
                return NULL;
        }
        table = method_table(&n);
        for (size_t i = 0; i < n; i++) {
                struct json_object *m = cmd_methods_one(&table[i]);

                if (!m || json_object_array_add(a, m) < 0) {
                        json_object_put(m);
                        return NULL;
                }
        }
        return TAKE_PTR(o);
}

static int cmd_methods_exec(const struct cmd_entry *self, const struct wipectl_options *opts, int argc,
                            char **argv) {
        _cleanup_json_ struct json_object *result = NULL;
        bool json = opts->json;
        int r;

        /* --json before the command, or as its own option (cmd_options()). */
        r = cmd_options(self, argc, argv, &cmd_json_option, &json);
        if (r >= 0)
                return r;
        if (optind < argc)
                return cmd_usage_error(self, "unexpected argument '%s'", argv[optind]);

        result = cmd_methods_build();
        if (!result) {
                wipectl_error("methods: out of memory or a bad method table");
                return WIPECTL_EXIT_FAILURE;
        }
        return output_print(OUTPUT_METHODS, result, json);
}

const struct cmd_entry cmd_methods_entry = {
        .name = "methods",
        .args = "[--json]",
        .summary = "List the wipe methods and their passes",
        .help = "  --json               print {\"methods\":[{\"name\",\"passes\",\"description\",\"legacy\"}...]}\n",
        .exec = cmd_methods_exec,
};
