/* Output of wipe methods: pass lists for people (shortened when long), verification modes in
 * words, and the "methods" listing. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cleanup.h"
#include "method.h"
#include "wipectl.h"

#define OUTPUT_METHOD_WIDTH_MAX 100     /* columns the listing wraps at, at most */

/* One run of equal passes in a list. */
struct output_run {
        const char *name;
        size_t count;
};

/* Append run r ("random" or "4x random") to buf at *l, after ", " unless first. */
static void output_run_append(const struct output_run *r, bool first, char *buf, size_t size, size_t *l) {
        int k;

        if (*l >= size)
                return;
        if (r->count > 1)
                k = snprintf(buf + *l, size - *l, "%s%zux %s", first ? "" : ", ", r->count, r->name);
        else
                k = snprintf(buf + *l, size - *l, "%s%s", first ? "" : ", ", r->name);
        if (k > 0)
                *l += (size_t) k;
}

/* Write the first head and last tail runs of runs[n] into buf, with the passes between them
 * counted in a marker; all of them when head + tail >= n. Returns the length it needs. */
static size_t output_runs_format(const struct output_run *runs, size_t n, size_t head, size_t tail, char *buf,
                                 size_t size) {
        size_t l = 0, omitted = 0;

        buf[0] = '\0';
        if (head + tail >= n) {
                for (size_t i = 0; i < n; i++)
                        output_run_append(&runs[i], i == 0, buf, size, &l);
                return l;
        }
        for (size_t i = 0; i < head; i++)
                output_run_append(&runs[i], i == 0, buf, size, &l);
        for (size_t i = head; i < n - tail; i++)
                omitted += runs[i].count;
        if (l < size) {
                int k = snprintf(buf + l, size - l, "%s... %zu more ...", head ? ", " : "", omitted);

                if (k > 0)
                        l += (size_t) k;
        }
        for (size_t i = n - tail; i < n; i++)
                output_run_append(&runs[i], false, buf, size, &l);
        return l;
}

const char *output_pass_summary(const char *const *names, size_t n, size_t width, char *buf, size_t size) {
        _cleanup_free_ struct output_run *runs = NULL;
        size_t nruns = 0, head = 1, tail = 1;

        if (size == 0)
                return buf;
        if (n == 0 || !(runs = calloc(n, sizeof(*runs)))) {
                snprintf(buf, size, "-");
                return buf;
        }
        /* Runs of one pass: "schneier" is zero, one, 5x random. */
        for (size_t i = 0; i < n; i++) {
                if (nruns > 0 && strcmp(runs[nruns - 1].name, names[i]) == 0)
                        runs[nruns - 1].count++;
                else
                        runs[nruns++] = (struct output_run) { .name = names[i], .count = 1 };
        }
        if (width == 0 || output_runs_format(runs, nruns, nruns, 0, buf, size) <= width)
                return buf;
        /* Too long: keep the first and the last runs, then add from either end, alternately,
         * while the line still fits. */
        for (bool front = true;; front = !front) {
                size_t h = head + (front ? 1 : 0), t = tail + (front ? 0 : 1);

                if (h + t >= nruns || output_runs_format(runs, nruns, h, t, buf, size) > width)
                        break;
                head = h;
                tail = t;
        }
        output_runs_format(runs, nruns, head, tail, buf, size);
        return buf;
}

struct json_object *output_pass_array(const struct pass *passes, size_t n) {
        _cleanup_json_ struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++) {
                char name[2 * METHOD_PATTERN_MAX + 3];

                if (json_object_array_add(a, json_object_new_string(pass_name(&passes[i], name, sizeof(name)))) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

const char *output_pass_summary_json(struct json_object *list, size_t width, char *buf, size_t size) {
        _cleanup_free_ const char **names = NULL;
        size_t n;

        if (!list || !json_object_is_type(list, json_type_array) || (n = json_object_array_length(list)) == 0 ||
            !(names = calloc(n, sizeof(*names)))) {
                snprintf(buf, size, "-");
                return buf;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(list, i);

                if (json_object_is_type(e, json_type_string))
                        names[i] = json_object_get_string(e);
                else
                        names[i] = output_get_string(e, "pattern", "?");
        }
        return output_pass_summary(names, n, width, buf, size);
}

const char *output_verify_mode(struct json_object *verify, char *buf, size_t n) {
        const char *mode = output_get_string(verify, "mode", NULL);

        if (!mode)
                snprintf(buf, n, "-");
        else if (output_mode_of(mode) == VERIFY_SAMPLE && output_get_double(verify, "percent", -1) > 0)
                snprintf(buf, n, "sample %g%%", output_get_double(verify, "percent", 0));
        else
                snprintf(buf, n, "%s", mode);
        return buf;
}

/* Print text from column indent on, its words wrapped before column width. */
static void output_wrap(const char *text, size_t indent, size_t width) {
        size_t col = indent;

        printf("%*s", (int) indent, "");
        while (*text) {
                size_t word = strcspn(text, " ");

                if (col > indent && col + 1 + word > width) {
                        printf("\n%*s", (int) indent, "");
                        col = indent;
                } else if (col > indent) {
                        putchar(' ');
                        col++;
                }
                fwrite(text, 1, word, stdout);
                col += word;
                text += word;
                text += strspn(text, " ");
        }
        putchar('\n');
}

void output_methods_text(struct json_object *methods) {
        size_t n = methods && json_object_is_type(methods, json_type_array) ? json_object_array_length(methods) : 0;
        size_t width = 80, name_width = 0;
        struct winsize ws = { 0 };
        bool any_legacy = false;

        if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
                width = ws.ws_col < OUTPUT_METHOD_WIDTH_MAX ? ws.ws_col : OUTPUT_METHOD_WIDTH_MAX;
        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(output_get_string(json_object_array_get_idx(methods, i), "name", "?")) + 2;

                if (l > name_width)
                        name_width = l;
        }
        for (size_t i = 0; i < n; i++) {
                struct json_object *m = json_object_array_get_idx(methods, i), *passes = NULL, *legacy = NULL;
                size_t count = 0;
                char name[64], list[512];
                bool old;

                json_object_object_get_ex(m, "passes", &passes);
                if (passes && json_object_is_type(passes, json_type_array))
                        count = json_object_array_length(passes);
                old = json_object_object_get_ex(m, "legacy", &legacy) && json_object_get_boolean(legacy);
                any_legacy |= old;
                snprintf(name, sizeof(name), "%s%s", output_get_string(m, "name", "?"), old ? " *" : "");
                /* "gutmann *   35 passes  LIST": the list gets what is left of the line. */
                printf("%s%-*s %2zu pass%s  %s\n", i ? "\n" : "", (int) name_width, name, count,
                       count == 1 ? "  " : "es",
                       output_pass_summary_json(passes, width > name_width + 14 ? width - name_width - 14 : 0, list,
                                                sizeof(list)));
                output_wrap(output_get_string(m, "description", ""), 4, width);
        }
        if (any_legacy)
                printf("\n* Legacy: more passes add no security over one pass on modern drives\n"
                       "  (NIST SP 800-88); they only take longer.\n");
        printf("\nCustom: wipectl wipe --passes LIST, 1 to %d passes, each random, zero, one,\n"
               "or 0x and up to %d bytes in hex (a pattern repeated from offset 0).\n",
               METHOD_PASSES_MAX, METHOD_PATTERN_MAX);
}
