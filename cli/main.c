/* wipectl: global options, the command table, and usage messages. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "vocab.h"
#include "wipectl.h"

/* Every command, in the order "wipectl --help" lists them (tmux's cmd_table). */
static const struct cmd_entry *const cmd_table[] = {
        &cmd_devices_entry,
        &cmd_probe_entry,
        &cmd_wipe_entry,
        &cmd_methods_entry,
        &cmd_verify_entry,
        &cmd_status_entry,
        &cmd_list_entry,
        &cmd_watch_entry,
        &cmd_wait_entry,
        &cmd_cancel_entry,
        &cmd_pause_entry,
        &cmd_resume_entry,
        &cmd_forget_entry,
        &cmd_report_entry,
        &cmd_version_entry,
        NULL,
};

void wipectl_error(const char *fmt, ...) {
        va_list ap;

        /* A live view gives the terminal back first, or the message would vanish with it. */
        view_release();
        fflush(stdout);
        fputs("wipectl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

void cmd_usage(const struct cmd_entry *entry, FILE *f) {
        fprintf(f, "Usage: wipectl [--socket PATH] [--json] [--bytes] %s%s%s\n%s.\n", entry->name,
                *entry->args ? " " : "", entry->args, entry->summary);
        fprintf(f, "\nOptions:\n");
        if (entry->help)
                fputs(entry->help, f);
        fprintf(f, "  --help               show this help\n");
}

int cmd_usage_error(const struct cmd_entry *entry, const char *fmt, ...) {
        va_list ap;

        fputs("wipectl: ", stderr);
        fprintf(stderr, "%s: ", entry->name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'wipectl %s --help'.\n", entry->name);
        return WIPECTL_EXIT_USAGE;
}

/* Report getopt_long's '?' or ':' result c as a usage error; returns WIPECTL_EXIT_USAGE. */
static int cmd_option_error(const struct cmd_entry *entry, char **argv, int c) {
        if (optopt > 0 && optopt < 0x100)
                return cmd_usage_error(entry, c == ':' ? "option '-%c' needs an argument" : "unknown option '-%c'", optopt);
        return cmd_usage_error(entry, c == ':' ? "option '%s' needs an argument" : "unknown option '%s'",
                               argv[optind - 1]);
}

int cmd_option_other(const struct cmd_entry *entry, char **argv, int c) {
        if (c == 'h') {
                cmd_usage(entry, stdout);
                return WIPECTL_EXIT_OK;
        }
        return cmd_option_error(entry, argv, c);
}

/* val above any char: "--json=x" is then reported by name (cmd_option_other()). */
const struct option cmd_json_option = { "json", no_argument, NULL, 0x100 };

int cmd_options(const struct cmd_entry *self, int argc, char **argv, const struct option *flag, bool *set) {
        const struct option help = { "help", no_argument, NULL, 'h' };
        struct option options[3] = { help, {}, {} };
        int opt;

        if (flag) {
                options[0] = *flag;
                options[1] = help;
        }
        while ((opt = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                if (flag && opt == flag->val) {
                        *set = true;
                        continue;
                }
                return cmd_option_other(self, argv, opt);
        }
        return -1;
}

int wipectl_parse_job_id(const char *s, int64_t *ret) {
        unsigned long long v;
        char *end = NULL;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        /* Job ids travel as JSON numbers; stay within what every JSON reader holds exactly. */
        if (errno != 0 || *end != '\0' || v > (1ULL << 53))
                return -EINVAL;
        *ret = (int64_t) v;
        return 0;
}

int cmd_operand_jobs(const struct cmd_entry *self, int argc, char **argv, int64_t **ret, size_t *n) {
        _cleanup_free_ int64_t *ids = NULL;
        size_t count = (size_t) (argc - optind);

        *ret = NULL;
        *n = 0;
        if (count == 0)
                return -1;
        ids = calloc(count, sizeof(*ids));
        if (!ids) {
                wipectl_error("%s: out of memory", self->name);
                return WIPECTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < count; i++)
                if (wipectl_parse_job_id(argv[optind + (int) i], &ids[i]) < 0)
                        return cmd_usage_error(self, "%s: not a job id", argv[optind + (int) i]);
        *ret = TAKE_PTR(ids);
        *n = count;
        return -1;
}

int cmd_operand_job(const struct cmd_entry *self, int argc, char **argv, int64_t *id) {
        if (argc - optind != 1)
                return cmd_usage_error(self, argc - optind < 1 ? "no job given" : "one job at a time");
        if (wipectl_parse_job_id(argv[optind], id) < 0)
                return cmd_usage_error(self, "%s: not a job id", argv[optind]);
        return -1;
}

int wipectl_parse_seed(const char *s, uint64_t *ret) {
        unsigned long long v;
        char *end = NULL;

        /* strtoull would take a sign, spaces and "0x"; a seed is plain decimal digits. */
        if (!s || !*s || strspn(s, "0123456789") != strlen(s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0')
                return -EINVAL;
        *ret = (uint64_t) v;
        return 0;
}

static void main_usage(FILE *f) {
        fprintf(f,
                "Usage: wipectl [--socket PATH] [--json] [--bytes] COMMAND [ARGS]\n"
                "Control wiped, the daemon that wipes block devices.\n"
                "\n"
                "Options:\n"
                "  --socket PATH  the daemon's socket (default: $WIPED_SOCKET, else %s)\n"
                "  --json         print the result as JSON instead of text\n"
                "  --bytes        show sizes in text as byte counts, not IEC units (1.00 GiB)\n"
                "  --help         show this help\n"
                "  --version      show the version of wipectl\n"
                "\n"
                "Commands:\n",
                PROTOCOL_SOCKET_DEFAULT);
        for (size_t i = 0; cmd_table[i]; i++)
                fprintf(f, "  %-8s %s\n", cmd_table[i]->name, cmd_table[i]->summary);
        fprintf(f, "\n\"wipectl COMMAND --help\" describes a command; wipectl(1) has the details.\n");
}

static const struct cmd_entry *main_find_command(const char *name) {
        for (size_t i = 0; cmd_table[i]; i++)
                if (strcmp(cmd_table[i]->name, name) == 0)
                        return cmd_table[i];
        return NULL;
}

int main(int argc, char **argv) {
        enum { ARG_SOCKET = 0x100, ARG_JSON, ARG_BYTES, ARG_VERSION };
        static const struct option options[] = {
                { "socket", required_argument, NULL, ARG_SOCKET },
                { "json", no_argument, NULL, ARG_JSON },
                { "bytes", no_argument, NULL, ARG_BYTES },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        struct wipectl_options opts = { .socket_path = PROTOCOL_SOCKET_DEFAULT };
        const struct cmd_entry *entry;
        const char *env = getenv("WIPED_SOCKET");
        int c;

        if (env && *env)
                opts.socket_path = env;

        /* Options errors are reported here, naming the command. */
        opterr = 0;
        /* "+": stop at the command name; the command parses the rest. */
        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0)
                switch (c) {
                case ARG_SOCKET:
                        if (!*optarg) {
                                wipectl_error("--socket: empty path");
                                return WIPECTL_EXIT_USAGE;
                        }
                        opts.socket_path = optarg;
                        break;
                case ARG_JSON:
                        opts.json = true;
                        break;
                case ARG_BYTES:
                        opts.bytes = true;
                        break;
                case 'h':
                        main_usage(stdout);
                        return WIPECTL_EXIT_OK;
                case ARG_VERSION:
                        printf("wipectl %s\n", PACKAGE_VERSION);
                        return WIPECTL_EXIT_OK;
                case ':':
                        wipectl_error("option '%s' needs an argument", argv[optind - 1]);
                        fprintf(stderr, "Try 'wipectl --help'.\n");
                        return WIPECTL_EXIT_USAGE;
                default:
                        if (optopt > 0 && optopt < 0x100)
                                wipectl_error("unknown option '-%c'", optopt);
                        else
                                wipectl_error("unknown option '%s'", argv[optind - 1]);
                        fprintf(stderr, "Try 'wipectl --help'.\n");
                        return WIPECTL_EXIT_USAGE;
                }

        if (optind >= argc) {
                wipectl_error("no command given");
                fprintf(stderr, "Try 'wipectl --help'.\n");
                return WIPECTL_EXIT_USAGE;
        }
        entry = main_find_command(argv[optind]);
        if (!entry) {
                wipectl_error("%s: unknown command", argv[optind]);
                fprintf(stderr, "Try 'wipectl --help'.\n");
                return WIPECTL_EXIT_USAGE;
        }

        output_raw_bytes = opts.bytes;
        argc -= optind;
        argv += optind;
        optind = 0; /* glibc: start over for the command's own getopt_long */
        return entry->exec(entry, &opts, argc, argv);
}
