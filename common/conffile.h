/* The configuration file of wiped (wiped(8) CONFIGURATION): "key = value" lines, "#" comment
 * lines and blank lines; the keys are the daemon's long option names. Pure: text in, settings
 * out, errors as "FILE:LINE: message"; never logs. The same struct holds the command line's
 * settings, so that the two merge key by key. (Not "config.h": that name is autoconf's.) */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keystream.h"

enum conffile_key {
        CONFFILE_THREADS,
        CONFFILE_BUFFERS,
        CONFFILE_IO_SIZE,
        CONFFILE_QUEUE_DEPTH,
        CONFFILE_MAX_RATE,
        CONFFILE_SOCKET,
        CONFFILE_STATE_DIR,
        CONFFILE_SOCKET_GROUP,
        CONFFILE_STATUS_SOCKET,
        CONFFILE_METHOD,
        CONFFILE_VERIFY,
        CONFFILE_CIPHER,
        CONFFILE_CHUNK_SIZE,
        CONFFILE_CHECKPOINT_INTERVAL,
        CONFFILE_CHECKPOINT_BYTES,
        CONFFILE_RESUME,
        CONFFILE_HISTORY_MAX_AGE,
        CONFFILE_MAX_BAD,
        CONFFILE_CLIENT_TIMEOUT,
        CONFFILE_KEYSTREAM_BACKEND,
        CONFFILE_WORKER_POLICY,
        CONFFILE_WORKER_NICE,
        CONFFILE_PURGE_FALLBACK,
        CONFFILE_HIDDEN_AREA,
        CONFFILE_JOB_END_HOOK,          /* a shell command run when a job ends (wiped(8) HOOKS) */
        CONFFILE_HOOK_TIMEOUT,
        CONFFILE_HOOK_MAX_RUNNING,
        CONFFILE_METRICS_LISTEN,
        CONFFILE_METRICS_TEXTFILE,
        CONFFILE_METRICS_INTERVAL,
        CONFFILE_METRICS_ENDED_MAX_AGE,
        CONFFILE_ALLOW,                 /* a list: one pattern per line, may be repeated */
        CONFFILE_DENY,                  /* a list */
        CONFFILE_POLICY_DIR,            /* the bay policies' directory, or "none" */
        CONFFILE_POLICY_EVENTS,         /* where device events come from: auto, udev, kernel */
        /* The sanitization record's defaults (wiped(8) "REPORTS"): free text, a job may override. */
        CONFFILE_DESTINATION,
        CONFFILE_OPERATOR_NAME,
        CONFFILE_OPERATOR_TITLE,
        CONFFILE_OPERATOR_ORGANIZATION,
        CONFFILE_OPERATOR_LOCATION,
        CONFFILE_OPERATOR_CONTACT,
        CONFFILE_VERIFIER_NAME,
        CONFFILE_VERIFIER_TITLE,
        CONFFILE_VERIFIER_ORGANIZATION,
        CONFFILE_VERIFIER_LOCATION,
        CONFFILE_VERIFIER_CONTACT,
        CONFFILE_REPORT_URL,            /* the collector reports are delivered to (wiped(8) DELIVERY) */
        CONFFILE_REPORT_HEADER,         /* a list: "Name: value" headers of each delivery */
        CONFFILE_REPORT_CA_FILE,
        CONFFILE_REPORT_CLIENT_CERT,
        CONFFILE_REPORT_CLIENT_KEY,
        CONFFILE_REPORT_TIMEOUT,
        CONFFILE_REPORT_RETRY_MAX_INTERVAL,
        CONFFILE_SMARTCTL,              /* smartmontools' smartctl: a path, a name in PATH, or "none" */
        CONFFILE_SMART_TIMEOUT,         /* seconds a smartctl run may take */
        CONFFILE_SMART_POLICY,          /* a drive that fails its health check: ignore, flag, refuse */
        _CONFFILE_KEY_MAX,
};

/* Bounds of the values (the daemon checks at build time that they are its own). */
#define CONFFILE_THREADS_MAX 256
#define CONFFILE_BUFFERS_MAX 1024
#define CONFFILE_QUEUE_DEPTH_MAX 256
#define CONFFILE_IO_SIZE_MAX (64u << 20)
#define CONFFILE_CHUNK_SIZE_MIN (1ull << 20)    /* and its multiple */
#define CONFFILE_CHUNK_SIZE_MAX (1ull << 30)
#define CONFFILE_CHECKPOINT_INTERVAL_MIN 0.1    /* seconds */
#define CONFFILE_CHECKPOINT_INTERVAL_MAX 3600.0
#define CONFFILE_CHECKPOINT_BYTES_MIN (1ull << 20)
#define CONFFILE_CHECKPOINT_BYTES_MAX (1ull << 40)
#define CONFFILE_HISTORY_MAX_AGE_MAX 36500      /* days */
#define CONFFILE_MAX_BAD_MAX (1ull << 50)
#define CONFFILE_CLIENT_TIMEOUT_MAX 3600        /* seconds */
#define CONFFILE_WORKER_NICE_MAX 19             /* the lowest priority there is */
#define CONFFILE_HOOK_TIMEOUT_MAX 86400         /* seconds */
#define CONFFILE_HOOK_MAX_RUNNING_MAX 64
#define CONFFILE_PATTERNS_MAX 1024      /* allow and deny lines together */
#define CONFFILE_SIZE_MAX (1u << 20)    /* bytes of a file */
#define CONFFILE_METRICS_INTERVAL_MIN 1.0       /* seconds */
#define CONFFILE_METRICS_INTERVAL_MAX 3600.0
#define CONFFILE_METRICS_ENDED_MAX_AGE_MAX (30.0 * 86400) /* seconds */
#define CONFFILE_RECORD_TEXT_MAX 256    /* bytes of destination, operator-* and verifier-* values */
#define CONFFILE_REPORT_TIMEOUT_MAX 3600.0      /* seconds */
#define CONFFILE_REPORT_RETRY_MAX 86400.0       /* seconds */
#define CONFFILE_SMART_TIMEOUT_MAX 60           /* seconds: below the watchdog's 90 s ping interval */

/* worker-policy: the scheduling policy of the worker threads (sched(7)); the values are the
 * kernel's, so that the zero value is the normal one. */
enum conffile_policy {
        CONFFILE_POLICY_OTHER = SCHED_OTHER,    /* "other": the normal time sharing, by nice value */
        CONFFILE_POLICY_BATCH = SCHED_BATCH,    /* "batch": the same share, but never preempts on waking */
        CONFFILE_POLICY_IDLE = SCHED_IDLE,      /* "idle": below nice 19, preempted by any other thread */
};

/* Settings of one source (a file, or the command line). A key that is not set has a zero value. */
struct conffile {
        bool set[_CONFFILE_KEY_MAX];    /* given by this source */
        unsigned line[_CONFFILE_KEY_MAX]; /* the file's line that set it (first one for a list); 0: none */
        unsigned threads;               /* 1..CONFFILE_THREADS_MAX */
        unsigned buffers;               /* 1..CONFFILE_BUFFERS_MAX */
        uint32_t io_size;               /* 4K..64M, multiple of 4K */
        unsigned queue_depth;           /* 0..CONFFILE_QUEUE_DEPTH_MAX (0: from the device) */
        uint64_t max_rate;              /* bytes/s, 0: none */
        char *socket, *state_dir;       /* paths (absolute in a file) */
        char *socket_group;             /* a group name or number */
        char *status_socket;            /* the read-only socket: an absolute path, or "none" */
        char *method;                   /* a name method_find() knows */
        char *purge_fallback;           /* "refuse", or a pass that is not a firmware erase */
        char *hidden_area;              /* "restore", "refuse" or "ignore" */
        char *verify;                   /* as written: the caller's check decides (none, sample=PCT...) */
        enum keystream_cipher cipher;
        uint64_t chunk_size;            /* bytes per chunk of a new job: 1M..1G, multiple of 1M */
        double checkpoint_interval;     /* seconds, 0.1..3600: the longest time between checkpoints */
        uint64_t checkpoint_bytes;      /* 1M..1T: bytes completed that also call for a checkpoint */
        bool resume_manual;             /* resume = manual: unfinished jobs wait for wipectl resume */
        unsigned history_max_age_days;  /* 0..CONFFILE_HISTORY_MAX_AGE_MAX, 0: keep ended jobs forever */
        uint64_t max_bad;               /* bytes of bad sectors a job may skip before it fails */
        unsigned client_timeout;        /* 1..CONFFILE_CLIENT_TIMEOUT_MAX seconds */
        char *keystream_backend;        /* keystream_backend_spec_parse()'s syntax; NULL: auto */
        enum conffile_policy worker_policy;
        unsigned worker_nice;           /* 0..CONFFILE_WORKER_NICE_MAX: the workers' nice value */
        char *job_end_hook;             /* run with /bin/sh -c when a job ends; NULL: none */
        unsigned hook_timeout;          /* 1..CONFFILE_HOOK_TIMEOUT_MAX seconds */
        unsigned hook_max_running;      /* 1..CONFFILE_HOOK_MAX_RUNNING_MAX hooks at once */
        char *metrics_listen;           /* ADDR:PORT of the /metrics endpoint (numeric), NULL: none */
        char *metrics_textfile;         /* the node_exporter textfile (absolute, *.prom), NULL: none */
        double metrics_interval;        /* seconds between rewrites of the textfile */
        double metrics_ended_max_age;   /* seconds an ended job stays in the metrics */
        char **allow, **deny;           /* fnmatch(3) patterns, absolute; NULL-terminated or NULL */
        char *policy_dir;               /* policy-dir: absolute, or "none"; NULL: the default */
        char *policy_events;            /* policy-events: "auto", "udev" or "kernel"; NULL: auto */
        size_t n_allow, n_deny;
        char *destination;              /* the record's destination (reuse, resale...), NULL: none */
        char *operator_person[5];       /* operator-name, -title, -organization, -location, -contact */
        char *verifier_person[5];       /* verifier-*, the same five */
        /* Delivery to a collector (wiped(8) DELIVERY); read at start only. */
        char *report_url;               /* http:// or https://; NULL: no delivery */
        char **report_header;           /* "Name: value" lines, NULL-terminated or NULL */
        size_t n_report_header;
        char *report_ca_file, *report_client_cert, *report_client_key;  /* absolute paths, NULL: none */
        double report_timeout;          /* seconds a whole request may take */
        double report_retry_max_interval; /* seconds: the longest wait between attempts */
        char *smartctl;                 /* smartctl: a path, a program name, or "none" */
        unsigned smart_timeout;         /* 1..CONFFILE_SMART_TIMEOUT_MAX seconds */
        char *smart_policy;             /* "ignore", "flag" or "refuse" */
};

struct sockaddr_storage;
/* metrics-listen's syntax: a numeric IPv4 address and port (127.0.0.1:9137) or a bracketed IPv6
 * one ([::1]:9137), port 1..65535, into *ss (may be NULL: a check only). 0 or -EINVAL. */
int conffile_listen_parse(const char *value, struct sockaddr_storage *ss, unsigned *ss_len);

/* "other", "batch", "idle"; NULL for another value. */
const char *conffile_policy_name(enum conffile_policy p);
/* The policy of a name; -EINVAL when there is none. */
int conffile_policy_from_name(const char *name, enum conffile_policy *ret);

/* A check the caller adds for a key (the verify syntax, whether a group exists): 0, or -EINVAL
 * with the reason in msg. Called after the built-in check of every value of a file. */
typedef int (*conffile_check_fn)(enum conffile_key key, const char *value, char *msg, size_t len);

/* "threads", "io-size", ...: the key's name in a file and as a long option. */
const char *conffile_key_name(enum conffile_key key);
/* The key of a name; -ENOENT when there is none. */
int conffile_key_from_name(const char *name, enum conffile_key *ret);
/* The known key closest to name (a slip of the keyboard: "max_rate", "thread", "Threads"), for a
 * "did you mean"; NULL when none is close. */
const char *conffile_key_suggest(const char *name);
/* The one of n candidates closest to word by edit distance ('_' and '-' alike, case ignored, two
 * neighbours swapped count one), when it is close: at most 1 edit for a word of up to 4
 * characters, else 2, and fewer than half the word's length; else NULL. */
const char *conffile_suggest(const char *word, const char *const *candidates, size_t n);
/* Whether a key may be given more than once (allow, deny). */
bool conffile_key_is_list(enum conffile_key key);
/* Whether a running daemon takes a new value of key on reload (SIGHUP); the others need a restart
 * (wiped(8) "CONFIGURATION"). */
bool conffile_key_reloads(enum conffile_key key);

/* Check value and set key to it in c (a list key appends; a scalar is replaced, duplicates being
 * conffile_parse()'s business). Returns 0, -EINVAL with the reason in msg ("invalid thread count
 * (1..256)": the caller names the value), or -ENOMEM. */
int conffile_set(struct conffile *c, enum conffile_key key, const char *value, char *msg, size_t len);
/* Parse len bytes of text, the file called name, into *c (initialised here; conffile_done() it in
 * any case). check may be NULL. Returns 0, -EINVAL with "NAME:LINE: message" in err (an unknown
 * key, with the closest known one; a bad value; a duplicate scalar key; a line that is not
 * "key = value"), or -ENOMEM. The parse goes on past a bad line: err holds every problem of the
 * file, one line each, joined by '\n' (cut at err_len); c holds the good lines. */
int conffile_parse(struct conffile *c, const char *name, const char *text, size_t len, conffile_check_fn check,
                   char *err, size_t err_len);
/* Read the file at path and parse it as conffile_parse() does. -ENOENT (or another -errno of
 * open/read) with "PATH: reason" in err when it cannot be read; -EFBIG when it is larger than
 * CONFFILE_SIZE_MAX. */
int conffile_load(struct conffile *c, const char *path, conffile_check_fn check, char *err, size_t err_len);
/* Every key set in src replaces the one in dst (a list replaces the whole list). 0 or -ENOMEM. */
int conffile_merge(struct conffile *dst, const struct conffile *src);
/* Whether a and b hold the same value for key (whether set or not: an unset key is zero). */
bool conffile_same(const struct conffile *a, const struct conffile *b, enum conffile_key key);
/* The value of key as it would be written in a file ("1M" is written 1048576; a list as its
 * patterns joined by ", "; "(none)" when unset). Returns buf. */
char *conffile_format(const struct conffile *c, enum conffile_key key, char *buf, size_t n);
void conffile_done(struct conffile *c);

enum conffile_match {
        CONFFILE_ALLOWED,
        CONFFILE_DENIED,                /* a deny pattern matched: *pattern names it */
        CONFFILE_NOT_ALLOWED,           /* allow patterns exist and none matched */
};

/* Whether the device at node (its resolved path) with the symlinks links (NULL-terminated, may be
 * NULL) may be used: deny patterns first (any match of the node or of a link denies), then, when
 * there are allow patterns, one must match the node or a link. Patterns are fnmatch(3) globs with
 * FNM_PATHNAME: '*' does not cross a '/'. *pattern (may be NULL) gets the deny pattern. */
enum conffile_match conffile_match_device(const struct conffile *c, const char *node, char *const *links,
                                          const char **pattern);
