/* sign-report: sign a report object with a wiped host key, as the daemon signs its reports, for the
 * tests of what reads reports (the PDF certificate of a report with every field of the record).
 *
 *   sign-report STATE_DIR < REPORT.json > SIGNED.json
 *
 * Reads one JSON object on stdin, signs it with STATE_DIR/host-key.pem (report_sign(): any
 * "signature" member is replaced) and writes report_render() of it: a file that "wipectl report
 * --check" accepts. Exit status 0, 1 on any failure (the reason on stderr), 2 usage. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>

#include "sign.h"

int main(int argc, char **argv) {
        struct json_object *o;
        EVP_PKEY *key = NULL;
        char *text = NULL, *out;
        size_t len = 0;
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: sign-report STATE_DIR < REPORT.json > SIGNED.json\n");
                return 2;
        }
        r = report_read_fd(STDIN_FILENO, &text, &len);
        if (r < 0) {
                fprintf(stderr, "sign-report: stdin: %s\n", strerror(-r));
                return 1;
        }
        o = json_tokener_parse(text);
        free(text);
        if (!o || !json_object_is_type(o, json_type_object)) {
                fprintf(stderr, "sign-report: stdin: not a JSON object\n");
                json_object_put(o);
                return 1;
        }
        r = sign_key_load_or_create(argv[1], &key, NULL);
        if (r == 0)
                r = report_sign(o, key);
        EVP_PKEY_free(key);
        out = r == 0 ? report_render(o, &len) : NULL;
        json_object_put(o);
        if (!out) {
                fprintf(stderr, "sign-report: %s: cannot sign: %s\n", argv[1], strerror(r < 0 ? -r : ENOMEM));
                return 1;
        }
        r = fwrite(out, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : 1;
        free(out);
        return r;
}
