/* wipectl: global options, the command table, and usage messages. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "cleanup.h"
#include "vocab.h"
#include "wipectl.h"

/* Every command, in the order "wipectl --help" lists them (tmux's cmd_table). */
static const struct cmd_entry *const cmd_table[] = {
        &cmd_devices_entry,
        &cmd_policies_entry,
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

/* The global options: main() parses those before the command name, cmd_getopt() those after it.
 * Commands get a const pointer to it. */
static struct wipectl_options main_opts;
/* The command being run, NULL while main() parses the global options. */
static const struct cmd_entry *main_entry;

/* The first error of this run, for the JSON error object (wipectl(1) "JSON OUTPUT"). */
static struct {
        char message[1024];             /* as printed after "wipectl: "; "" when there was none */
        int errnum;                     /* positive errno it stands for, 0 when unknown */
        int status;                     /* the exit status it leads to, 0 when not yet known */
} main_error;
/* A JSON document, or a JSON line of watch, went to stdout: the error object does not follow it. */
static bool main_json_printed;

/* Record the message of an error, unless one is recorded already: the first is the cause. */
static void main_error_record(const char *fmt, va_list ap) {
        if (!main_error.message[0])
                vsnprintf(main_error.message, sizeof(main_error.message), fmt, ap);
}

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
        va_start(ap, fmt);
        main_error_record(fmt, ap);
        va_end(ap);
}

void wipectl_error_note(int errnum, int status) {
        if (!main_error.message[0] || main_error.status != 0)
                return;
        main_error.errnum = errnum < 0 ? -errnum : errnum;
        main_error.status = status;
}

struct json_object *wipectl_error_json(int status) {
        _cleanup_json_ struct json_object *o = NULL;

        if (status == 0)
                status = main_error.status;
        if (status == 0)
                return NULL;
        o = json_object_new_object();
        if (!o ||
            json_object_object_add(o, "message", json_object_new_string(main_error.message[0] ? main_error.message :
                                                                        "failed")) < 0 ||
            json_object_object_add(o, "errno", main_error.errnum ?
                                   json_object_new_string(protocol_errno_name(main_error.errnum)) : NULL) < 0 ||
            json_object_object_add(o, "exit_status", json_object_new_int(status)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

void wipectl_json_printed(void) {
        main_json_printed = true;
}

int wipectl_print_event(const char *line) {
        int r;

        /* The daemon's event object with the format version first: {"format_version":2,"event":..}. */
        if (line[0] == '{' && line[1] != '}')
                r = printf("{\"format_version\":%d,%s\n", WIPECTL_JSON_FORMAT, line + 1);
        else
                r = printf("%s\n", line);
        main_json_printed = true;
        return r < 0 ? EOF : 0;
}

void cmd_usage(const struct cmd_entry *entry, FILE *f) {
        fprintf(f, "Usage: wipectl %s [OPTIONS]%s%s\n%s.\n", entry->name, *entry->args ? " " : "", entry->args,
                entry->summary);
        fprintf(f, "\nOptions:\n");
        if (entry->help)
                fputs(entry->help, f);
        fprintf(f,
                "  -J, --json           print one JSON object instead of text, errors included\n"
                "  -q, --quiet          print nothing on stdout but --json's object: errors and the\n"
                "                       exit status only\n"
                "  --bytes              show sizes in text as byte counts\n"
                "  --socket PATH        the daemon's socket\n"
                "  -h, --help           show this help\n"
                "Options and operands come in any order; \"--\" ends the options.\n");
}

int cmd_usage_error(const struct cmd_entry *entry, const char *fmt, ...) {
        char message[sizeof(main_error.message)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);
        /* One line, recorded as the error (wipectl_error()), and the hint below it. */
        wipectl_error("%s: %s", entry->name, message);
        wipectl_error_note(0, WIPECTL_EXIT_USAGE);
        fprintf(stderr, "Try 'wipectl %s --help'.\n", entry->name);
        return WIPECTL_EXIT_USAGE;
}

/* A usage error of the command line before the command: "wipectl: MESSAGE" and a hint; returns
 * WIPECTL_EXIT_USAGE. */
static int main_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int main_usage_error(const char *fmt, ...) {
        char message[sizeof(main_error.message)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);
        wipectl_error("%s", message);
        wipectl_error_note(0, WIPECTL_EXIT_USAGE);
        fprintf(stderr, "Try 'wipectl --help'.\n");
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
        while ((opt = cmd_getopt(argc, argv, ":h", options)) >= 0) {
                if (flag && opt == flag->val) {
                        *set = true;
                        continue;
                }
                return cmd_option_other(self, argv, opt);
        }
        /* -J, or --json before the command, for a command that has --json as its own flag. */
        if (flag == &cmd_json_option && main_opts.json)
                *set = true;
        return -1;
}

/* Values of the global options, above any value a command's own options use. */
enum {
        MAIN_OPT_SOCKET = 0x1000,
        MAIN_OPT_JSON,
        MAIN_OPT_BYTES,
        MAIN_OPT_QUIET,
        MAIN_OPT_HELP,
        MAIN_OPT_VERSION,
};

/* The global options that cmd_getopt() accepts among a command's own. */
static const struct option main_global_options[] = {
        { "socket", required_argument, NULL, MAIN_OPT_SOCKET },
        { "json", no_argument, NULL, MAIN_OPT_JSON },
        { "bytes", no_argument, NULL, MAIN_OPT_BYTES },
        { "quiet", no_argument, NULL, MAIN_OPT_QUIET },
        { "version", no_argument, NULL, MAIN_OPT_VERSION },
};
#define MAIN_GLOBAL_OPTIONS (sizeof(main_global_options) / sizeof(main_global_options[0]))
#define MAIN_GLOBAL_SHORT "JqV"        /* -J (--json), -q (--quiet), -V (--version) */

/* Take one global option (its value c, its argument arg); 0, or WIPECTL_EXIT_USAGE after the
 * error was reported. */
static int main_global_option(int c, const char *arg) {
        switch (c) {
        case MAIN_OPT_SOCKET:
                if (!*arg) {
                        if (main_entry)
                                return cmd_usage_error(main_entry, "--socket: empty path");
                        return main_usage_error("--socket: empty path");
                }
                main_opts.socket_path = arg;
                return 0;
        case 'J':
        case MAIN_OPT_JSON:
                main_opts.json = true;
                return 0;
        case MAIN_OPT_BYTES:
                main_opts.bytes = true;
                output_raw_bytes = true;
                return 0;
        case 'q':
        case MAIN_OPT_QUIET:
                main_opts.quiet = true;
                return 0;
        case 'V':
        case MAIN_OPT_VERSION:
                /* Anywhere on the line, as the other global options: the version, nothing else. */
                printf("wipectl %s\n", PACKAGE_VERSION);
                exit(wipectl_exit(WIPECTL_EXIT_OK));
        default:
                return -1;
        }
}

/* --quiet without --json, once the options are parsed: stdout goes to /dev/null, so that neither
 * text nor progress is printed, whatever the command; errors stay on stderr. */
static int main_apply_quiet(void) {
        _cleanup_close_ int fd = -1;

        if (!main_opts.quiet || main_opts.json)
                return 0;
        if (fflush(stdout) == EOF)
                return -EIO;
        fd = open("/dev/null", O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
                return -errno;
        return 0;
}

int cmd_getopt(int argc, char **argv, const char *optstring, const struct option *longopts) {
        static const struct option *merged_for;
        static struct option *merged;
        static char shorts[64];
        int c, r;

        if (merged_for != longopts || !merged) {
                size_t n = 0;

                while (longopts[n].name)
                        n++;
                free(merged);
                merged = calloc(n + MAIN_GLOBAL_OPTIONS + 1, sizeof(*merged));
                if (!merged) {
                        wipectl_error("%s: out of memory", main_entry ? main_entry->name : "wipectl");
                        exit(WIPECTL_EXIT_FAILURE);
                }
                /* The command's own first: getopt_long takes the first of two equal names. */
                memcpy(merged, longopts, n * sizeof(*merged));
                memcpy(merged + n, main_global_options, sizeof(main_global_options));
                snprintf(shorts, sizeof(shorts), "%s" MAIN_GLOBAL_SHORT, optstring);
                merged_for = longopts;
        }
        while ((c = getopt_long(argc, argv, shorts, merged, NULL)) >= 0) {
                r = main_global_option(c, optarg);
                /* The options of every wait, for a command whose table has WATCH_LONG_OPTIONS. */
                if (r < 0 && (c == WATCH_ARG_RECONNECT || c == WATCH_ARG_PROGRESS)) {
                        r = watch_option(main_entry, c, optarg);
                        r = r < 0 ? 0 : r;
                }
                if (r < 0)
                        return c;
                if (r > 0)
                        exit(wipectl_exit(r));
        }
        if ((r = main_apply_quiet()) < 0) {
                wipectl_error("/dev/null: %s", strerror(-r));
                exit(wipectl_exit(WIPECTL_EXIT_FAILURE));
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
                "Usage: wipectl [OPTIONS] COMMAND [ARGS]\n"
                "Control wiped, the daemon that wipes block devices.\n"
                "\n"
                "Options (before or after the command):\n"
                "  --socket PATH  the daemon's socket (default: $WIPED_SOCKET, else %s)\n"
                "  -J, --json     print one JSON object instead of text, errors included\n"
                "  -q, --quiet    print nothing on stdout but --json's object: errors and the exit\n"
                "                 status only\n"
                "  --bytes        show sizes in text as byte counts, not IEC units (1.00 GiB)\n"
                "  -h, --help     show this help\n"
                "  -V, --version  show the version of wipectl\n"
                "\n"
                "Commands:\n",
                PROTOCOL_SOCKET_DEFAULT);
        for (size_t i = 0; cmd_table[i]; i++)
                fprintf(f, "  %-8s %s\n", cmd_table[i]->name, cmd_table[i]->summary);
        fprintf(f, "  %-8s %s\n", "help", "Show this help, or that of a command");
        fprintf(f, "\n\"wipectl help COMMAND\" describes a command; wipectl(1) has the details.\n");
}

static const struct cmd_entry *main_find_command(const char *name) {
        for (size_t i = 0; cmd_table[i]; i++)
                if (strcmp(cmd_table[i]->name, name) == 0)
                        return cmd_table[i];
        return NULL;
}

/* Whether the command line asks for JSON: "--json" or "-J" anywhere before "--". Only for a usage
 * error met before the parse reached the option. */
static bool main_wants_json(int argc, char **argv) {
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0)
                        break;
                if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-J") == 0)
                        return true;
        }
        return false;
}

static int main_argc;
static char **main_argv;

int wipectl_exit(int status) {
        bool json = main_opts.json || (status == WIPECTL_EXIT_USAGE && main_wants_json(main_argc, main_argv));

        /* With --json, a command that ends in an error before it printed its object prints the error
         * as the object (smartctl --json): stdout is never empty, nor a document without the error. */
        if (json && status != WIPECTL_EXIT_OK && !main_json_printed) {
                _cleanup_json_ struct json_object *o = json_object_new_object();
                struct json_object *error = wipectl_error_json(status);
                const char *s = NULL;

                if (o && error && json_object_object_add(o, "format_version", json_object_new_int(WIPECTL_JSON_FORMAT)) == 0 &&
                    json_object_object_add(o, "error", error) == 0)
                        s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
                else
                        json_object_put(error);
                if (s)
                        puts(s);
                main_json_printed = true;
        }
        if (fflush(stdout) == EOF && status == WIPECTL_EXIT_OK)
                return WIPECTL_EXIT_FAILURE;
        return status;
}

/* wipectl help [COMMAND]: the help of wipectl or of one command, on stdout. */
static int main_help(int argc, char **argv) {
        const struct cmd_entry *entry;

        if (argc < 2) {
                main_usage(stdout);
                return WIPECTL_EXIT_OK;
        }
        if (argc > 2)
                return main_usage_error("help: one command at a time");
        entry = main_find_command(argv[1]);
        if (!entry && strcmp(argv[1], "help") == 0) {
                main_usage(stdout);
                return WIPECTL_EXIT_OK;
        }
        if (!entry)
                return main_usage_error("help: %s: unknown command", argv[1]);
        cmd_usage(entry, stdout);
        return WIPECTL_EXIT_OK;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, MAIN_OPT_SOCKET },
                { "json", no_argument, NULL, MAIN_OPT_JSON },
                { "bytes", no_argument, NULL, MAIN_OPT_BYTES },
                { "quiet", no_argument, NULL, MAIN_OPT_QUIET },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        const struct cmd_entry *entry;
        const char *env = getenv("WIPED_SOCKET");
        int c, r;

        main_argc = argc;
        main_argv = argv;
        main_opts.socket_path = env && *env ? env : PROTOCOL_SOCKET_DEFAULT;

        /* Options errors are reported here, naming the command. */
        opterr = 0;
        /* "+": stop at the command name; the command parses the rest, the global options among its
         * own (cmd_getopt()). */
        while ((c = getopt_long(argc, argv, "+:hVJq", options, NULL)) >= 0) {
                r = main_global_option(c, optarg);
                if (r > 0)
                        return wipectl_exit(r);
                if (r == 0)
                        continue;
                switch (c) {
                case 'h':
                        main_usage(stdout);
                        return wipectl_exit(WIPECTL_EXIT_OK);
                case 'V':
                        printf("wipectl %s\n", PACKAGE_VERSION);
                        return wipectl_exit(WIPECTL_EXIT_OK);
                case ':':
                        return wipectl_exit(main_usage_error("option '%s' needs an argument", argv[optind - 1]));
                default:
                        if (optopt > 0 && optopt < 0x100)
                                return wipectl_exit(main_usage_error("unknown option '-%c'", optopt));
                        return wipectl_exit(main_usage_error("unknown option '%s'", argv[optind - 1]));
                }
        }

        if (optind >= argc)
                return wipectl_exit(main_usage_error("no command given"));
        if (strcmp(argv[optind], "help") == 0)
                return wipectl_exit(main_help(argc - optind, argv + optind));
        entry = main_find_command(argv[optind]);
        if (!entry)
                return wipectl_exit(main_usage_error("%s: unknown command", argv[optind]));

        main_entry = entry;
        argc -= optind;
        argv += optind;
        optind = 0; /* glibc: start over for the command's own getopt_long */
        return wipectl_exit(entry->exec(entry, &main_opts, argc, argv));
}
