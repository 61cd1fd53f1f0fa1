/* The configuration file: parsing, errors with FILE:LINE, merging, device patterns. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "conffile.h"

/* Parse text as the file "f.conf": the return value, the message in err. */
static int parse(struct conffile *c, const char *text, char *err, size_t len) {
        err[0] = '\0';
        return conffile_parse(c, "f.conf", text, strlen(text), NULL, err, len);
}

/* Parse text that must fail with exactly the message want. */
static void parse_fails(const char *text, const char *want) {
        struct conffile c;
        char err[512];

        assert_int_equal(parse(&c, text, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, want);
        conffile_done(&c);
}

static void test_values(void **state) {
        static const char text[] =
                "# wiped.conf\n"
                "\n"
                "threads = 4\n"
                "   buffers=32   \n"
                "io-size = 4M\n"
                "queue-depth = 0\n"
                "max-rate = 200MB/s\n"
                "socket = /run/w.sock\n"
                "state-dir = /var/lib/w\n"
                "socket-group = disk\n"
                "\t# an indented comment\n"
                "method = zero\n"
                "verify = sample=5\n"
                "cipher = chacha20\n"
                "chunk-size = 128M\n"
                "checkpoint-interval = 2.5\n"
                "checkpoint-bytes = 1G\n"
                "resume = manual\n"
                "history-max-age = 30\n"
                "max-bad = 4K\n"
                "client-timeout = 30\n"
                "keystream-backend = aes-128-ctr:gcrypt,chacha20:openssl\n"
                "worker-policy = idle\n"
                "worker-nice = 19\n"
                "purge-fallback = zeroout\n"
                "hidden-area = ignore\n"
                "allow = /dev/disk/by-id/usb-*\n"
                "deny = /dev/sda*\n"
                "allow = /dev/loop*\r\n"
                "metrics-listen = [::1]:9137\n"
                "metrics-textfile = /var/lib/prometheus/node-exporter/wiped.prom\n"
                "metrics-interval = 2.5\n"
                "metrics-ended-max-age = 3600\n"
                "status-socket = none\n"
                "job-end-hook = /etc/wiped/hook \"$WIPED_JOB\" # a comment is part of it\n"
                "hook-timeout = 120\n"
                "hook-max-running = 2\n"
                "policy-dir = /etc/w/policies.d\n"
                "policy-events = kernel\n"
                "destination = reuse (internal)\n"
                "operator-name = Ana Müller\n"
                "operator-title = Technician\n"
                "operator-organization = IT Asset Services\n"
                "operator-location = Hamburg, bay 3\n"
                "operator-contact = ana@example.org\n"
                "verifier-name = Ben Okafor\n"
                "verifier-title = Supervisor\n"
                "verifier-organization = IT Asset Services\n"
                "verifier-location = Hamburg\n"
                "verifier-contact = +49 40 1234\n"
                "report-url = https://collector.example/reports\n"
                "report-header = Authorization: Bearer x\n"
                "report-ca-file = /etc/wiped/ca.pem\n"
                "report-client-cert = /etc/wiped/client.pem\n"
                "report-client-key = /etc/wiped/client.key\n"
                "report-timeout = 10\n"
                "report-retry-max-interval = 600\n"
                "smartctl = /usr/sbin/smartctl\n"
                "smart-timeout = 10\n"
                "smart-policy = refuse\n"
                "deny = /dev/nvme0n1";  /* no newline at the end */
        struct conffile c;
        char err[512], buf[128];

        (void) state;
        assert_int_equal(parse(&c, text, err, sizeof(err)), 0);
        assert_int_equal(c.threads, 4);
        assert_int_equal(c.buffers, 32);
        assert_int_equal(c.io_size, 4u << 20);
        assert_true(c.set[CONFFILE_QUEUE_DEPTH]);
        assert_int_equal(c.queue_depth, 0);
        assert_int_equal(c.max_rate, 200000000);
        assert_string_equal(c.socket, "/run/w.sock");
        assert_string_equal(c.state_dir, "/var/lib/w");
        assert_string_equal(c.socket_group, "disk");
        assert_string_equal(c.status_socket, "none");
        assert_string_equal(c.method, "zero");
        assert_string_equal(c.verify, "sample=5");
        assert_int_equal(c.cipher, KEYSTREAM_CHACHA20);
        assert_int_equal(c.chunk_size, 128u << 20);
        assert_true(c.checkpoint_interval == 2.5);
        assert_int_equal(c.checkpoint_bytes, 1u << 30);
        assert_true(c.resume_manual);
        assert_int_equal(c.history_max_age_days, 30);
        assert_int_equal(c.line[CONFFILE_HISTORY_MAX_AGE], 19);
        assert_int_equal(c.max_bad, 4096);
        assert_int_equal(c.client_timeout, 30);
        assert_string_equal(c.keystream_backend, "aes-128-ctr:gcrypt,chacha20:openssl");
        assert_int_equal(c.worker_policy, CONFFILE_POLICY_IDLE);
        assert_int_equal(c.worker_nice, 19);
        assert_string_equal(c.purge_fallback, "zeroout");
        assert_int_equal(c.line[CONFFILE_PURGE_FALLBACK], 25);
        assert_string_equal(c.hidden_area, "ignore");
        assert_int_equal(c.line[CONFFILE_HIDDEN_AREA], 26);
        assert_string_equal(c.job_end_hook, "/etc/wiped/hook \"$WIPED_JOB\" # a comment is part of it");
        assert_int_equal(c.hook_timeout, 120);
        assert_int_equal(c.hook_max_running, 2);
        assert_true(conffile_key_reloads(CONFFILE_JOB_END_HOOK));
        assert_string_equal(c.metrics_listen, "[::1]:9137");
        assert_string_equal(c.metrics_textfile, "/var/lib/prometheus/node-exporter/wiped.prom");
        assert_true(c.metrics_interval == 2.5);
        assert_true(c.metrics_ended_max_age == 3600);
        assert_int_equal(c.n_allow, 2);
        assert_string_equal(c.allow[0], "/dev/disk/by-id/usb-*");
        assert_string_equal(c.allow[1], "/dev/loop*");
        assert_null(c.allow[2]);
        assert_int_equal(c.n_deny, 2);
        assert_string_equal(c.deny[1], "/dev/nvme0n1");
        assert_string_equal(c.policy_dir, "/etc/w/policies.d");
        assert_string_equal(c.policy_events, "kernel");
        assert_true(conffile_key_reloads(CONFFILE_POLICY_DIR));
        assert_false(conffile_key_reloads(CONFFILE_POLICY_EVENTS));
        /* The sanitization record's defaults: text as written, reloaded for new jobs. */
        assert_string_equal(c.destination, "reuse (internal)");
        assert_string_equal(c.operator_person[0], "Ana Müller");
        assert_string_equal(c.operator_person[3], "Hamburg, bay 3");
        assert_string_equal(c.verifier_person[4], "+49 40 1234");
        assert_true(conffile_key_reloads(CONFFILE_OPERATOR_NAME));
        assert_true(conffile_key_reloads(CONFFILE_VERIFIER_CONTACT));
        assert_string_equal(c.smartctl, "/usr/sbin/smartctl");
        assert_int_equal(c.smart_timeout, 10);
        assert_string_equal(c.smart_policy, "refuse");
        assert_true(conffile_key_reloads(CONFFILE_SMART_POLICY));
        assert_int_equal(c.line[CONFFILE_THREADS], 3);
        assert_int_equal(c.line[CONFFILE_BUFFERS], 4);
        assert_int_equal(c.line[CONFFILE_ALLOW], 27);
        for (unsigned k = 0; k < _CONFFILE_KEY_MAX; k++)
                assert_true(c.set[k]);
        assert_string_equal(conffile_format(&c, CONFFILE_IO_SIZE, buf, sizeof(buf)), "4194304");
        assert_string_equal(conffile_format(&c, CONFFILE_CIPHER, buf, sizeof(buf)), "chacha20");
        assert_string_equal(conffile_format(&c, CONFFILE_CHUNK_SIZE, buf, sizeof(buf)), "134217728");
        assert_string_equal(conffile_format(&c, CONFFILE_CHECKPOINT_INTERVAL, buf, sizeof(buf)), "2.5");
        assert_string_equal(conffile_format(&c, CONFFILE_CHECKPOINT_BYTES, buf, sizeof(buf)), "1073741824");
        assert_string_equal(conffile_format(&c, CONFFILE_RESUME, buf, sizeof(buf)), "manual");
        assert_string_equal(conffile_format(&c, CONFFILE_HISTORY_MAX_AGE, buf, sizeof(buf)), "30");
        assert_string_equal(conffile_format(&c, CONFFILE_MAX_BAD, buf, sizeof(buf)), "4096");
        assert_string_equal(conffile_format(&c, CONFFILE_CLIENT_TIMEOUT, buf, sizeof(buf)), "30");
        assert_string_equal(conffile_format(&c, CONFFILE_WORKER_POLICY, buf, sizeof(buf)), "idle");
        assert_string_equal(conffile_format(&c, CONFFILE_WORKER_NICE, buf, sizeof(buf)), "19");
        assert_string_equal(conffile_format(&c, CONFFILE_PURGE_FALLBACK, buf, sizeof(buf)), "zeroout");
        assert_string_equal(conffile_format(&c, CONFFILE_ALLOW, buf, sizeof(buf)), "/dev/disk/by-id/usb-*, /dev/loop*");
        conffile_done(&c);
        assert_null(c.socket);
        conffile_done(NULL);
}

static void test_empty(void **state) {
        struct conffile c;
        char err[512], buf[16];

        (void) state;
        assert_int_equal(parse(&c, "", err, sizeof(err)), 0);
        for (unsigned k = 0; k < _CONFFILE_KEY_MAX; k++)
                assert_false(c.set[k]);
        assert_string_equal(conffile_format(&c, CONFFILE_METHOD, buf, sizeof(buf)), "(none)");
        assert_string_equal(conffile_format(&c, CONFFILE_DENY, buf, sizeof(buf)), "(none)");
        conffile_done(&c);
        assert_int_equal(parse(&c, "# only\n\n   \n\t\n", err, sizeof(err)), 0);
        conffile_done(&c);
}

static void test_errors(void **state) {
        (void) state;
        parse_fails("threads = 2\nthread = 3\n", "f.conf:2: unknown key \"thread\"; did you mean threads?");
        parse_fails("\n\nthreads = 2\nbuffers = 4\nthreads = 3\n",
                    "f.conf:5: duplicate key \"threads\" (first set on line 3)");
        parse_fails("threads = 0\n", "f.conf:1: threads = 0: invalid thread count (1..256)");
        parse_fails("threads = 257\n", "f.conf:1: threads = 257: invalid thread count (1..256)");
        parse_fails("threads = -1\n", "f.conf:1: threads = -1: invalid thread count (1..256)");
        parse_fails("threads = 4 # four\n", "f.conf:1: threads = 4 # four: invalid thread count (1..256)");
        parse_fails("buffers = 1025\n", "f.conf:1: buffers = 1025: invalid buffer count (1..1024)");
        parse_fails("queue-depth = 257\n", "f.conf:1: queue-depth = 257: invalid queue depth (0..256)");
        parse_fails("io-size = 1000\n", "f.conf:1: io-size = 1000: invalid I/O size (4K..64M, multiple of 4K)");
        parse_fails("io-size = 128M\n", "f.conf:1: io-size = 128M: invalid I/O size (4K..64M, multiple of 4K)");
        parse_fails("max-rate = fast\n",
                    "f.conf:1: max-rate = fast: invalid rate (e.g. 200M for 200 MB/s, 0 for none)");
        parse_fails("chunk-size = 512K\n",
                    "f.conf:1: chunk-size = 512K: invalid chunk size (1M..1G, multiple of 1M)");
        parse_fails("chunk-size = 2G\n", "f.conf:1: chunk-size = 2G: invalid chunk size (1M..1G, multiple of 1M)");
        parse_fails("chunk-size = 1536K\n",
                    "f.conf:1: chunk-size = 1536K: invalid chunk size (1M..1G, multiple of 1M)");
        parse_fails("checkpoint-interval = 0.05\n",
                    "f.conf:1: checkpoint-interval = 0.05: invalid interval (seconds, 0.1..3600)");
        parse_fails("checkpoint-interval = 3600.5\n",
                    "f.conf:1: checkpoint-interval = 3600.5: invalid interval (seconds, 0.1..3600)");
        parse_fails("checkpoint-interval = 5s\n",
                    "f.conf:1: checkpoint-interval = 5s: invalid interval (seconds, 0.1..3600)");
        parse_fails("checkpoint-interval = 1e2\n",
                    "f.conf:1: checkpoint-interval = 1e2: invalid interval (seconds, 0.1..3600)");
        parse_fails("checkpoint-interval = .5\n",
                    "f.conf:1: checkpoint-interval = .5: invalid interval (seconds, 0.1..3600)");
        parse_fails("checkpoint-interval = 1.\n",
                    "f.conf:1: checkpoint-interval = 1.: invalid interval (seconds, 0.1..3600)");
        parse_fails("checkpoint-interval = 1.2.3\n",
                    "f.conf:1: checkpoint-interval = 1.2.3: invalid interval (seconds, 0.1..3600)");
        parse_fails("checkpoint-interval = nan\n",
                    "f.conf:1: checkpoint-interval = nan: invalid interval (seconds, 0.1..3600)");
        parse_fails("checkpoint-bytes = 1023K\n", "f.conf:1: checkpoint-bytes = 1023K: invalid size (1M..1T)");
        parse_fails("checkpoint-bytes = 2T\n", "f.conf:1: checkpoint-bytes = 2T: invalid size (1M..1T)");
        parse_fails("resume = yes\n", "f.conf:1: resume = yes: unknown resume mode (auto, manual)");
        parse_fails("resume = Manual\n",
                    "f.conf:1: resume = Manual: unknown resume mode (auto, manual); did you mean manual?");
        parse_fails("history-max-age = 36501\n",
                    "f.conf:1: history-max-age = 36501: invalid age (days, 0..36500; 0: forever)");
        parse_fails("max-bad = lots\n", "f.conf:1: max-bad = lots: invalid size of bad sectors (0..1P)");
        parse_fails("client-timeout = 0\n", "f.conf:1: client-timeout = 0: invalid timeout (seconds, 1..3600)");
        /* The main thread waits for smartctl at a submit or probe: never as long as the
         * service's watchdog (WatchdogSec=3min, pinged every 90 s) would take for a hang. */
        parse_fails("smart-timeout = 61\n", "f.conf:1: smart-timeout = 61: invalid timeout (seconds, 1..60)");
        parse_fails("keystream-backend = fast\n", "f.conf:1: keystream-backend = fast: unknown keystream backend "
                    "(auto, openssl, gcrypt, or CIPHER:BACKEND,... as aes-128-ctr:gcrypt)");
        parse_fails("keystream-backend = aes:gcrypt\n", "f.conf:1: keystream-backend = aes:gcrypt: unknown keystream "
                    "backend (auto, openssl, gcrypt, or CIPHER:BACKEND,... as aes-128-ctr:gcrypt)");
        parse_fails("client-timeout = 3601\n", "f.conf:1: client-timeout = 3601: invalid timeout (seconds, 1..3600)");
        parse_fails("history-max-age = 7d\n",
                    "f.conf:1: history-max-age = 7d: invalid age (days, 0..36500; 0: forever)");
        parse_fails("resume = auto\nresume = manual\n", "f.conf:2: duplicate key \"resume\" (first set on line 1)");
        parse_fails("method = shred\n", "f.conf:1: method = shred: unknown method (see wipectl methods)");
        parse_fails("cipher = rot13\n", "f.conf:1: cipher = rot13: unknown cipher (auto, aes-128-ctr, chacha20)");
        parse_fails("deny = sda\n",
                    "f.conf:1: deny = sda: not an absolute path pattern (like /dev/disk/by-id/usb-*)");
        parse_fails("socket = run/w.sock\n", "f.conf:1: socket = run/w.sock: not an absolute path");
        parse_fails("state-dir = .\n", "f.conf:1: state-dir = .: not an absolute path");
        parse_fails("status-socket = off\n",
                    "f.conf:1: status-socket = off: not an absolute path, nor none (no read-only socket)");
        parse_fails("socket-group = a b\n", "f.conf:1: socket-group = a b: invalid group name");
        parse_fails("method =\n", "f.conf:1: method: no value");
        parse_fails("# c\nthreads 4\n", "f.conf:2: expected \"key = value\", got \"threads 4\"");
        parse_fails(" = 4\n", "f.conf:1: expected \"key = value\": no key before '='");
        parse_fails("[wiped]\n", "f.conf:1: expected \"key = value\", got \"[wiped]\"");
        parse_fails("Threads = 4\n", "f.conf:1: unknown key \"Threads\"; did you mean threads?");
}

/* An unknown key or word names the closest known one, when it is close. */
static void test_suggest(void **state) {
        static const char *const words[] = { "auto", "manual" };
        struct conffile c;
        char err[1024];

        (void) state;
        /* '_' for '-', case, a missing, an extra, a wrong and two swapped letters. */
        assert_string_equal(conffile_key_suggest("max_rate"), "max-rate");
        assert_string_equal(conffile_key_suggest("STATE_DIR"), "state-dir");
        assert_string_equal(conffile_key_suggest("maxrate"), "max-rate");
        assert_string_equal(conffile_key_suggest("io-sizes"), "io-size");
        assert_string_equal(conffile_key_suggest("methd"), "method");
        assert_string_equal(conffile_key_suggest("mehtod"), "method");
        assert_string_equal(conffile_key_suggest("checkpoint_intervall"), "checkpoint-interval");
        assert_string_equal(conffile_key_suggest("deyn"), "deny");
        /* Too far, or too short to tell. */
        assert_null(conffile_key_suggest("speed"));
        assert_null(conffile_key_suggest("rate"));
        assert_null(conffile_key_suggest("x"));
        assert_null(conffile_key_suggest(""));
        assert_null(conffile_key_suggest("a-key-much-longer-than-any-key-wiped-knows-of-and-then-some-more"));
        assert_string_equal(conffile_suggest("Auto", words, 2), "auto");
        assert_string_equal(conffile_suggest("manaul", words, 2), "manual");
        assert_null(conffile_suggest("never", words, 2));

        parse_fails("max_rate = 200M\n", "f.conf:1: unknown key \"max_rate\"; did you mean max-rate?");
        parse_fails("speed = 200M\n", "f.conf:1: unknown key \"speed\"");
        parse_fails("worker-policy = idel\n", "f.conf:1: worker-policy = idel: unknown scheduling policy "
                    "(other, batch, idle); did you mean idle?");
        parse_fails("cipher = chacha\n",
                    "f.conf:1: cipher = chacha: unknown cipher (auto, aes-128-ctr, chacha20); did you mean chacha20?");
        parse_fails("hidden-area = restor\n", "f.conf:1: hidden-area = restor: unknown hidden-area policy "
                    "(restore, refuse, ignore); did you mean restore?");
        parse_fails("cipher = rc4\n", "f.conf:1: cipher = rc4: unknown cipher (auto, aes-128-ctr, chacha20)");

        /* Every problem of a file, one line each, in order; the good lines are read. */
        assert_int_equal(parse(&c, "thread = 2\nbuffers = 8\nio-size = 3\nfoo\nresume = Auto\n", err, sizeof(err)),
                         -EINVAL);
        assert_string_equal(err, "f.conf:1: unknown key \"thread\"; did you mean threads?\n"
                                 "f.conf:3: io-size = 3: invalid I/O size (4K..64M, multiple of 4K)\n"
                                 "f.conf:4: expected \"key = value\", got \"foo\"\n"
                                 "f.conf:5: resume = Auto: unknown resume mode (auto, manual); did you mean auto?");
        assert_true(c.set[CONFFILE_BUFFERS]);
        assert_int_equal(c.buffers, 8);
        conffile_done(&c);
        /* A short buffer cuts the list, terminated. */
        assert_int_equal(parse(&c, "thread = 2\nthread = 3\n", err, 20), -EINVAL);
        assert_int_equal(strlen(err), 19);
        conffile_done(&c);
}

/* The bounds of the chunk, checkpoint and history keys are accepted, and their values read. */
static void test_bounds(void **state) {
        static const char low[] = "chunk-size = 1M\ncheckpoint-interval = 0.1\ncheckpoint-bytes = 1048576\n"
                                  "resume = auto\nhistory-max-age = 0\n",
                          high[] = "chunk-size = 1GiB\ncheckpoint-interval = 3600\ncheckpoint-bytes = 1T\n"
                                   "history-max-age = 36500\n";
        struct conffile c;
        char err[512], buf[32];

        (void) state;
        assert_int_equal(parse(&c, low, err, sizeof(err)), 0);
        assert_int_equal(c.chunk_size, 1u << 20);
        assert_true(c.checkpoint_interval == 0.1);
        assert_int_equal(c.checkpoint_bytes, 1u << 20);
        assert_true(c.set[CONFFILE_RESUME]);
        assert_false(c.resume_manual);
        assert_true(c.set[CONFFILE_HISTORY_MAX_AGE]);
        assert_int_equal(c.history_max_age_days, 0);
        assert_string_equal(conffile_format(&c, CONFFILE_CHECKPOINT_INTERVAL, buf, sizeof(buf)), "0.1");
        assert_string_equal(conffile_format(&c, CONFFILE_RESUME, buf, sizeof(buf)), "auto");
        conffile_done(&c);
        assert_int_equal(parse(&c, high, err, sizeof(err)), 0);
        assert_int_equal(c.chunk_size, 1u << 30);
        assert_true(c.checkpoint_interval == 3600);
        assert_int_equal(c.checkpoint_bytes, 1ull << 40);
        assert_int_equal(c.history_max_age_days, 36500);
        assert_false(c.set[CONFFILE_RESUME]);
        conffile_done(&c);
}

/* worker-policy and worker-nice: every policy by its chrt(1) name, the kernel's values behind
 * them, the nice bounds; anything else refused with the choices in the message. */
static void test_priority(void **state) {
        static const struct {
                const char *name;
                enum conffile_policy policy;
                int sched;
        } policies[] = {
                { "other", CONFFILE_POLICY_OTHER, SCHED_OTHER },
                { "batch", CONFFILE_POLICY_BATCH, SCHED_BATCH },
                { "idle", CONFFILE_POLICY_IDLE, SCHED_IDLE },
        };
        struct conffile c = {}, empty = {};
        enum conffile_policy p;
        char msg[128], buf[32], err[512];

        (void) state;
        for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
                assert_int_equal(conffile_policy_from_name(policies[i].name, &p), 0);
                assert_int_equal(p, policies[i].policy);
                assert_int_equal((int) p, policies[i].sched);
                assert_string_equal(conffile_policy_name(p), policies[i].name);
                assert_int_equal(conffile_set(&c, CONFFILE_WORKER_POLICY, policies[i].name, msg, sizeof(msg)), 0);
                assert_int_equal(c.worker_policy, policies[i].policy);
                assert_string_equal(conffile_format(&c, CONFFILE_WORKER_POLICY, buf, sizeof(buf)), policies[i].name);
        }
        /* Unset, the policy reads as the normal one. */
        assert_int_equal(empty.worker_policy, CONFFILE_POLICY_OTHER);
        assert_string_equal(conffile_format(&empty, CONFFILE_WORKER_POLICY, buf, sizeof(buf)), "other");
        assert_null(conffile_policy_name((enum conffile_policy) SCHED_FIFO));
        assert_int_equal(conffile_policy_from_name("fifo", &p), -EINVAL);
        assert_int_equal(conffile_policy_from_name("", &p), -EINVAL);
        assert_int_equal(conffile_set(&c, CONFFILE_WORKER_NICE, "0", msg, sizeof(msg)), 0);
        assert_int_equal(c.worker_nice, 0);
        assert_int_equal(conffile_set(&c, CONFFILE_WORKER_NICE, "19", msg, sizeof(msg)), 0);
        assert_int_equal(c.worker_nice, 19);
        assert_int_equal(conffile_set(&c, CONFFILE_WORKER_NICE, "20", msg, sizeof(msg)), -EINVAL);
        assert_string_equal(msg, "invalid nice value (0..19)");
        assert_int_equal(c.worker_nice, 19);
        conffile_done(&c);

        assert_int_equal(parse(&c, "worker-policy = batch\nworker-nice = 10\n", err, sizeof(err)), 0);
        assert_int_equal(c.worker_policy, CONFFILE_POLICY_BATCH);
        assert_int_equal(c.worker_nice, 10);
        assert_int_equal(c.line[CONFFILE_WORKER_NICE], 2);
        conffile_done(&c);
        parse_fails("worker-nice = 20\n", "f.conf:1: worker-nice = 20: invalid nice value (0..19)");
        parse_fails("worker-nice = -5\n", "f.conf:1: worker-nice = -5: invalid nice value (0..19)");
        parse_fails("worker-nice = +5\n", "f.conf:1: worker-nice = +5: invalid nice value (0..19)");
        parse_fails("worker-nice = low\n", "f.conf:1: worker-nice = low: invalid nice value (0..19)");
        parse_fails("worker-policy = fifo\n",
                    "f.conf:1: worker-policy = fifo: unknown scheduling policy (other, batch, idle)");
        parse_fails("worker-policy = Batch\n",
                    "f.conf:1: worker-policy = Batch: unknown scheduling policy (other, batch, idle); "
                    "did you mean batch?");
        parse_fails("worker-policy = SCHED_BATCH\n",
                    "f.conf:1: worker-policy = SCHED_BATCH: unknown scheduling policy (other, batch, idle)");
        parse_fails("worker-policy = normal\n",
                    "f.conf:1: worker-policy = normal: unknown scheduling policy (other, batch, idle)");
        parse_fails("worker-policy = idle\nworker-policy = batch\n",
                    "f.conf:2: duplicate key \"worker-policy\" (first set on line 1)");
}

/* metrics-listen: a numeric address and a port, IPv6 in brackets; metrics-textfile: a .prom file. */
static void test_metrics_keys(void **state) {
        static const char *const good[] = { "127.0.0.1:9137", "0.0.0.0:1", "[::1]:9137", "[::]:65535",
                                            "[fe80::1]:80" };
        static const char *const bad[] = { "", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                                           "localhost:9137", "::1:9137", "[::1]9137", "[::1]:", "[127.0.0.1]:80",
                                           "127.0.0.1:+80", "127.0.0.1:80x", "1.2.3:80", ":9137" };
        static const char *const bad_files[] = { "wiped.prom", "/var/wiped.txt", "/var/.prom", "/.prom", "/x.prom/" };
        struct sockaddr_storage ss;
        struct conffile c = {};
        unsigned len = 0;
        char msg[128];

        (void) state;
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
                assert_int_equal(conffile_set(&c, CONFFILE_METRICS_LISTEN, good[i], msg, sizeof(msg)), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(conffile_set(&c, CONFFILE_METRICS_LISTEN, bad[i], msg, sizeof(msg)), -EINVAL);
        for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++)
                assert_int_equal(conffile_set(&c, CONFFILE_METRICS_TEXTFILE, bad_files[i], msg, sizeof(msg)), -EINVAL);
        assert_int_equal(conffile_listen_parse("[::1]:9137", &ss, &len), 0);
        assert_int_equal(ss.ss_family, AF_INET6);
        assert_int_equal(len, sizeof(struct sockaddr_in6));
        assert_int_equal(ntohs(((struct sockaddr_in6 *) &ss)->sin6_port), 9137);
        assert_int_equal(conffile_listen_parse("127.0.0.1:80", &ss, &len), 0);
        assert_int_equal(ss.ss_family, AF_INET);
        assert_int_equal(len, sizeof(struct sockaddr_in));
        assert_int_equal(ntohs(((struct sockaddr_in *) &ss)->sin_port), 80);
        assert_int_equal(((struct sockaddr_in *) &ss)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
        assert_false(conffile_key_reloads(CONFFILE_METRICS_LISTEN));
        assert_false(conffile_key_reloads(CONFFILE_METRICS_TEXTFILE));
        assert_true(conffile_key_reloads(CONFFILE_METRICS_INTERVAL));
        assert_true(conffile_key_reloads(CONFFILE_METRICS_ENDED_MAX_AGE));
        conffile_done(&c);
}

/* hidden-area: restore, refuse or ignore, nothing else. */
static void test_hidden_area(void **state) {
        static const char *const good[] = { "restore", "refuse", "ignore" };
        static const char *const bad[] = { "Restore", "keep", "", "restore,refuse", "0" };
        struct conffile c = {};
        char msg[128];

        (void) state;
        assert_true(conffile_key_reloads(CONFFILE_HIDDEN_AREA));
        assert_string_equal(conffile_key_name(CONFFILE_HIDDEN_AREA), "hidden-area");
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                assert_int_equal(conffile_set(&c, CONFFILE_HIDDEN_AREA, good[i], msg, sizeof(msg)), 0);
                assert_string_equal(c.hidden_area, good[i]);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(conffile_set(&c, CONFFILE_HIDDEN_AREA, bad[i], msg, sizeof(msg)), -EINVAL);
                assert_string_equal(c.hidden_area, "ignore");
        }
        assert_string_equal(msg, "unknown hidden-area policy (restore, refuse, ignore)");
        conffile_done(&c);
}

/* purge-fallback: "refuse", or a pass the daemon writes or has the block layer do; never another
 * firmware erase (purge falls back to it because the drive has none). */
static void test_purge_fallback(void **state) {
        static const char *const good[] = { "refuse", "random", "zero", "zeroout", "one", "0x924924" };
        static const char *const bad[] = {
                "sanitize", "sanitize-crypto", "sanitize-block", "sanitize-overwrite", "nvme-format",
                "ata-secure-erase", "purge", "bogus", "Refuse", "refused", "none", "random,zero", "0x5",
        };
        static const char msg_want[] = "invalid purge fallback (refuse, or a pass: random, zero, zeroout, ...)";
        struct conffile c = {}, empty = {};
        char msg[128], buf[64], err[512], text[128], want[256];

        (void) state;
        assert_true(conffile_key_reloads(CONFFILE_PURGE_FALLBACK));
        assert_false(conffile_key_is_list(CONFFILE_PURGE_FALLBACK));
        assert_string_equal(conffile_key_name(CONFFILE_PURGE_FALLBACK), "purge-fallback");
        assert_false(empty.set[CONFFILE_PURGE_FALLBACK]);
        assert_null(empty.purge_fallback);
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                if (conffile_set(&c, CONFFILE_PURGE_FALLBACK, good[i], msg, sizeof(msg)) != 0)
                        fail_msg("purge-fallback = %s: refused (%s)", good[i], msg);
                assert_true(c.set[CONFFILE_PURGE_FALLBACK]);
                assert_string_equal(c.purge_fallback, good[i]);
                assert_string_equal(conffile_format(&c, CONFFILE_PURGE_FALLBACK, buf, sizeof(buf)), good[i]);
                snprintf(text, sizeof(text), "threads = 2\npurge-fallback = %s\n", good[i]);
                conffile_done(&c);
                assert_int_equal(parse(&c, text, err, sizeof(err)), 0);
                assert_string_equal(c.purge_fallback, good[i]);
                assert_int_equal(c.line[CONFFILE_PURGE_FALLBACK], 2);
        }
        /* A refused value leaves the one set before. */
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                msg[0] = '\0';
                if (conffile_set(&c, CONFFILE_PURGE_FALLBACK, bad[i], msg, sizeof(msg)) != -EINVAL)
                        fail_msg("purge-fallback = %s: accepted", bad[i]);
                assert_string_equal(msg, msg_want);
                assert_string_equal(c.purge_fallback, good[sizeof(good) / sizeof(good[0]) - 1]);
                snprintf(text, sizeof(text), "purge-fallback = %s\n", bad[i]);
                snprintf(want, sizeof(want), "f.conf:1: purge-fallback = %s: %s", bad[i], msg_want);
                parse_fails(text, want);
        }
        conffile_done(&c);
        parse_fails("purge-fallback =\n", "f.conf:1: purge-fallback: no value");
        parse_fails("purge-fallback = zero\npurge-fallback = random\n",
                    "f.conf:2: duplicate key \"purge-fallback\" (first set on line 1)");
}

static void test_nul(void **state) {
        static const char text[] = "threads = 2\nbuf\0fers = 3\n";
        struct conffile c;
        char err[512];

        (void) state;
        assert_int_equal(conffile_parse(&c, "f.conf", text, sizeof(text) - 1, NULL, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "f.conf:2: contains a NUL byte");
        conffile_done(&c);
}

static int check_verify(enum conffile_key key, const char *value, char *msg, size_t len) {
        if (key == CONFFILE_VERIFY && strcmp(value, "none") != 0 && strcmp(value, "last") != 0) {
                snprintf(msg, len, "unknown verification");
                return -EINVAL;
        }
        return 0;
}

static void test_check(void **state) {
        static const char good[] = "verify = last\nthreads = 1\n", bad[] = "threads = 1\nverify = most\n";
        struct conffile c;
        char err[512];

        (void) state;
        assert_int_equal(conffile_parse(&c, "f.conf", good, strlen(good), check_verify, err, sizeof(err)), 0);
        assert_string_equal(c.verify, "last");
        conffile_done(&c);
        assert_int_equal(conffile_parse(&c, "f.conf", bad, strlen(bad), check_verify, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "f.conf:2: verify = most: unknown verification");
        conffile_done(&c);
}

static void test_merge(void **state) {
        struct conffile file, cmdline = {}, a, b;
        char err[512], msg[128];

        (void) state;
        assert_int_equal(parse(&file, "threads = 4\nbuffers = 8\nmethod = zero\ndeny = /dev/sd*\n", err, sizeof(err)), 0);
        assert_int_equal(conffile_set(&cmdline, CONFFILE_THREADS, "2", msg, sizeof(msg)), 0);
        assert_int_equal(conffile_set(&cmdline, CONFFILE_SOCKET, "rel.sock", msg, sizeof(msg)), 0);
        assert_int_equal(conffile_set(&cmdline, CONFFILE_THREADS, "x", msg, sizeof(msg)), -EINVAL);
        assert_string_equal(msg, "invalid thread count (1..256)");
        assert_int_equal(cmdline.threads, 2);
        assert_int_equal(conffile_set(&cmdline, CONFFILE_CHECKPOINT_INTERVAL, "0.5", msg, sizeof(msg)), 0);
        assert_int_equal(conffile_set(&cmdline, CONFFILE_RESUME, "manual", msg, sizeof(msg)), 0);
        assert_int_equal(conffile_set(&cmdline, CONFFILE_CHUNK_SIZE, "3M", msg, sizeof(msg)), 0);
        assert_int_equal(conffile_set(&cmdline, CONFFILE_HISTORY_MAX_AGE, "-1", msg, sizeof(msg)), -EINVAL);
        assert_string_equal(msg, "invalid age (days, 0..36500; 0: forever)");
        assert_int_equal(conffile_merge(&file, &cmdline), 0);
        assert_int_equal(file.threads, 2);                     /* the command line wins */
        assert_true(file.checkpoint_interval == 0.5);
        assert_true(file.resume_manual);
        assert_int_equal(file.chunk_size, 3u << 20);
        assert_false(file.set[CONFFILE_HISTORY_MAX_AGE]);
        assert_int_equal(file.buffers, 8);                     /* the file's where it says nothing */
        assert_string_equal(file.socket, "rel.sock");
        assert_string_equal(file.method, "zero");
        assert_int_equal(file.n_deny, 1);

        assert_int_equal(parse(&a, "method = zero\ndeny = /dev/sd*\nthreads = 2\n", err, sizeof(err)), 0);
        assert_int_equal(parse(&b, "deny = /dev/sd*\nmethod = zero\nthreads = 3\ndeny = /dev/vd*\n", err, sizeof(err)), 0);
        assert_true(conffile_same(&a, &file, CONFFILE_METHOD));
        assert_true(conffile_same(&a, &file, CONFFILE_DENY));
        assert_true(conffile_same(&a, &file, CONFFILE_THREADS));
        assert_false(conffile_same(&a, &b, CONFFILE_THREADS));
        assert_false(conffile_same(&a, &b, CONFFILE_DENY));
        assert_true(conffile_same(&a, &b, CONFFILE_ALLOW));
        assert_false(conffile_same(&a, &cmdline, CONFFILE_SOCKET));
        assert_false(conffile_same(&a, &cmdline, CONFFILE_CHECKPOINT_INTERVAL));
        assert_false(conffile_same(&a, &cmdline, CONFFILE_RESUME));
        assert_true(conffile_same(&a, &b, CONFFILE_CHECKPOINT_BYTES));
        assert_true(conffile_same(&cmdline, &file, CONFFILE_CHUNK_SIZE));
        /* A list replaces the whole list. */
        assert_int_equal(conffile_merge(&a, &b), 0);
        assert_true(conffile_same(&a, &b, CONFFILE_DENY));
        assert_int_equal(a.n_deny, 2);
        conffile_done(&file);
        conffile_done(&cmdline);
        conffile_done(&a);
        conffile_done(&b);
}

/* The record keys: text of at most 256 bytes without control characters. */
static void test_record_keys(void **state) {
        struct conffile c = {};
        char msg[128], big[300];

        (void) state;
        assert_int_equal(conffile_set(&c, CONFFILE_OPERATOR_NAME, "Ana Müller", msg, sizeof(msg)), 0);
        assert_string_equal(c.operator_person[0], "Ana Müller");
        assert_int_equal(conffile_set(&c, CONFFILE_VERIFIER_CONTACT, "a\x1b[31mb", msg, sizeof(msg)), -EINVAL);
        assert_non_null(strstr(msg, "control characters"));
        memset(big, 'x', sizeof(big));
        big[256] = '\0';
        assert_int_equal(conffile_set(&c, CONFFILE_DESTINATION, big, msg, sizeof(msg)), 0);
        big[256] = 'x';
        big[257] = '\0';
        assert_int_equal(conffile_set(&c, CONFFILE_DESTINATION, big, msg, sizeof(msg)), -EINVAL);
        conffile_done(&c);
}

static void test_keys(void **state) {
        enum conffile_key k;

        (void) state;
        for (unsigned i = 0; i < _CONFFILE_KEY_MAX; i++) {
                assert_int_equal(conffile_key_from_name(conffile_key_name((enum conffile_key) i), &k), 0);
                assert_int_equal(k, i);
        }
        assert_int_equal(conffile_key_from_name("io_size", &k), -ENOENT);
        assert_true(conffile_key_is_list(CONFFILE_ALLOW));
        assert_true(conffile_key_is_list(CONFFILE_DENY));
        assert_false(conffile_key_is_list(CONFFILE_METHOD));
        /* What a reload changes: what is read per submit or tick, never the pool or the socket. */
        assert_true(conffile_key_reloads(CONFFILE_METHOD));
        assert_true(conffile_key_reloads(CONFFILE_DENY));
        assert_true(conffile_key_reloads(CONFFILE_CLIENT_TIMEOUT));
        assert_false(conffile_key_reloads(CONFFILE_THREADS));
        assert_false(conffile_key_reloads(CONFFILE_SOCKET_GROUP));
        assert_false(conffile_key_reloads(CONFFILE_KEYSTREAM_BACKEND));
        assert_false(conffile_key_reloads(CONFFILE_WORKER_POLICY));
        assert_false(conffile_key_reloads(CONFFILE_WORKER_NICE));
        assert_false(conffile_key_reloads(_CONFFILE_KEY_MAX));
        assert_null(conffile_key_name(_CONFFILE_KEY_MAX));
}

/* Every key round-trips: a value set, formatted and read again (by conffile_set() and from a file
 * of "key = formatted value" lines) is the same value; and merge copies every key. */
static void test_roundtrip(void **state) {
        static const char *const samples[_CONFFILE_KEY_MAX] = {
                [CONFFILE_THREADS] = "4", [CONFFILE_BUFFERS] = "32", [CONFFILE_IO_SIZE] = "4M",
                [CONFFILE_QUEUE_DEPTH] = "64", [CONFFILE_MAX_RATE] = "200MB/s", [CONFFILE_SOCKET] = "/run/w.sock",
                [CONFFILE_STATE_DIR] = "/var/lib/w", [CONFFILE_SOCKET_GROUP] = "disk", [CONFFILE_METHOD] = "zero",
                [CONFFILE_VERIFY] = "sample=5", [CONFFILE_CIPHER] = "chacha20", [CONFFILE_CHUNK_SIZE] = "128M",
                [CONFFILE_CHECKPOINT_INTERVAL] = "2.5", [CONFFILE_CHECKPOINT_BYTES] = "1G",
                [CONFFILE_RESUME] = "manual", [CONFFILE_HISTORY_MAX_AGE] = "30", [CONFFILE_MAX_BAD] = "4K",
                [CONFFILE_CLIENT_TIMEOUT] = "30", [CONFFILE_WORKER_POLICY] = "batch", [CONFFILE_WORKER_NICE] = "10",
                [CONFFILE_PURGE_FALLBACK] = "zeroout", [CONFFILE_HIDDEN_AREA] = "refuse",
                [CONFFILE_KEYSTREAM_BACKEND] = "gcrypt",
                [CONFFILE_ALLOW] = "/dev/loop*", [CONFFILE_DENY] = "/dev/sd*",
                [CONFFILE_STATUS_SOCKET] = "/run/w-status.sock",
                [CONFFILE_JOB_END_HOOK] = "/usr/local/bin/led --job \"$WIPED_JOB\"", [CONFFILE_HOOK_TIMEOUT] = "30",
                [CONFFILE_HOOK_MAX_RUNNING] = "2",
                [CONFFILE_POLICY_DIR] = "/etc/w/policies.d", [CONFFILE_POLICY_EVENTS] = "udev",
                [CONFFILE_METRICS_LISTEN] = "127.0.0.1:9137", [CONFFILE_METRICS_TEXTFILE] = "/run/w.prom",
                [CONFFILE_METRICS_INTERVAL] = "10", [CONFFILE_METRICS_ENDED_MAX_AGE] = "86400",
                [CONFFILE_DESTINATION] = "resale", [CONFFILE_OPERATOR_NAME] = "A. Person",
                [CONFFILE_OPERATOR_TITLE] = "Technician", [CONFFILE_OPERATOR_ORGANIZATION] = "Org",
                [CONFFILE_OPERATOR_LOCATION] = "Site 1", [CONFFILE_OPERATOR_CONTACT] = "a@example.org",
                [CONFFILE_VERIFIER_NAME] = "B. Person", [CONFFILE_VERIFIER_TITLE] = "Supervisor",
                [CONFFILE_VERIFIER_ORGANIZATION] = "Org", [CONFFILE_VERIFIER_LOCATION] = "Site 2",
                [CONFFILE_VERIFIER_CONTACT] = "b@example.org",
                [CONFFILE_REPORT_URL] = "https://c.example/r", [CONFFILE_REPORT_HEADER] = "X-Site: 3",
                [CONFFILE_REPORT_CA_FILE] = "/etc/w/ca.pem", [CONFFILE_REPORT_CLIENT_CERT] = "/etc/w/c.pem",
                [CONFFILE_REPORT_CLIENT_KEY] = "/etc/w/c.key", [CONFFILE_REPORT_TIMEOUT] = "5",
                [CONFFILE_REPORT_RETRY_MAX_INTERVAL] = "60",
                [CONFFILE_SMARTCTL] = "none", [CONFFILE_SMART_TIMEOUT] = "5", [CONFFILE_SMART_POLICY] = "ignore",
        };
        struct conffile a = {}, b = {}, empty = {}, merged = {}, file;
        char msg[128], buf[128], text[4096] = "", err[512];
        size_t used = 0;

        (void) state;
        for (enum conffile_key k = 0; k < _CONFFILE_KEY_MAX; k++) {
                assert_non_null(samples[k]);
                assert_int_equal(conffile_set(&a, k, samples[k], msg, sizeof(msg)), 0);
                assert_true(a.set[k]);
                assert_false(conffile_same(&a, &empty, k));    /* every sample differs from zero */
                conffile_format(&a, k, buf, sizeof(buf));
                assert_int_equal(conffile_set(&b, k, buf, msg, sizeof(msg)), 0);
                assert_true(conffile_same(&a, &b, k));
                used += (size_t) snprintf(text + used, sizeof(text) - used, "%s = %s\n", conffile_key_name(k), buf);
                assert_true(used < sizeof(text));
        }
        assert_int_equal(parse(&file, text, err, sizeof(err)), 0);
        assert_int_equal(conffile_merge(&merged, &a), 0);
        for (enum conffile_key k = 0; k < _CONFFILE_KEY_MAX; k++) {
                assert_true(conffile_same(&a, &file, k));
                assert_int_equal(file.line[k], k + 1);
                assert_true(conffile_same(&a, &merged, k));
                assert_true(merged.set[k]);
        }
        assert_int_equal(conffile_set(&a, _CONFFILE_KEY_MAX, "1", msg, sizeof(msg)), -EINVAL);
        assert_string_equal(msg, "unknown key");
        conffile_done(&a);
        conffile_done(&b);
        conffile_done(&file);
        conffile_done(&merged);
        for (enum conffile_key k = 0; k < _CONFFILE_KEY_MAX; k++)
                assert_true(conffile_same(&a, &empty, k));     /* done leaves every key zero */
}

static void test_match(void **state) {
        char *links[] = { "/dev/disk/by-id/usb-Kingston_123", "/dev/disk/by-path/pci-0000:00:14.0-usb-0:1:1.0", NULL };
        struct conffile c;
        const char *pat;
        char err[512];

        (void) state;
        assert_int_equal(parse(&c, "", err, sizeof(err)), 0);
        assert_int_equal(conffile_match_device(&c, "/dev/sdb", links, &pat), CONFFILE_ALLOWED);
        assert_null(pat);
        conffile_done(&c);

        assert_int_equal(parse(&c, "allow = /dev/disk/by-id/usb-*\nallow = /dev/loop*\n", err, sizeof(err)), 0);
        assert_int_equal(conffile_match_device(&c, "/dev/sdb", links, &pat), CONFFILE_ALLOWED);
        assert_int_equal(conffile_match_device(&c, "/dev/sdb", NULL, &pat), CONFFILE_NOT_ALLOWED);
        assert_int_equal(conffile_match_device(&c, "/dev/loop3", NULL, NULL), CONFFILE_ALLOWED);
        conffile_done(&c);

        /* Deny wins over allow; '*' does not cross '/'. */
        assert_int_equal(parse(&c, "allow = /dev/*\ndeny = /dev/disk/by-path/*usb*\n", err, sizeof(err)), 0);
        assert_int_equal(conffile_match_device(&c, "/dev/sdb", links, &pat), CONFFILE_DENIED);
        assert_string_equal(pat, "/dev/disk/by-path/*usb*");
        assert_int_equal(conffile_match_device(&c, "/dev/sdc", NULL, &pat), CONFFILE_ALLOWED);
        assert_int_equal(conffile_match_device(&c, "/dev/mapper/x", NULL, &pat), CONFFILE_NOT_ALLOWED);
        conffile_done(&c);

        assert_int_equal(parse(&c, "deny = /dev/sd[a-c]\ndeny = /dev/nvme0n?\n", err, sizeof(err)), 0);
        assert_int_equal(conffile_match_device(&c, "/dev/sdb", NULL, &pat), CONFFILE_DENIED);
        assert_string_equal(pat, "/dev/sd[a-c]");
        assert_int_equal(conffile_match_device(&c, "/dev/sdb1", NULL, &pat), CONFFILE_ALLOWED);
        assert_int_equal(conffile_match_device(&c, "/dev/nvme0n1", NULL, &pat), CONFFILE_DENIED);
        assert_string_equal(pat, "/dev/nvme0n?");
        conffile_done(&c);
}

static void test_load(void **state) {
        char path[] = "/tmp/test-config.XXXXXX", err[512];
        struct conffile c;
        FILE *f;
        int fd;

        (void) state;
        fd = mkstemp(path);
        assert_true(fd >= 0);
        f = fdopen(fd, "w");
        assert_non_null(f);
        fputs("threads = 3\nmethod = random-zero\nbogus = 1\n", f);
        fclose(f);
        assert_int_equal(conffile_load(&c, path, NULL, err, sizeof(err)), -EINVAL);
        assert_true(strncmp(err, path, strlen(path)) == 0);
        assert_string_equal(err + strlen(path), ":3: unknown key \"bogus\"");
        conffile_done(&c);

        f = fopen(path, "w");
        assert_non_null(f);
        fputs("threads = 3\nmethod = random-zero\n", f);
        fclose(f);
        assert_int_equal(conffile_load(&c, path, NULL, err, sizeof(err)), 0);
        assert_int_equal(c.threads, 3);
        assert_string_equal(c.method, "random-zero");
        conffile_done(&c);

        /* Too large: one byte over the limit. */
        f = fopen(path, "w");
        assert_non_null(f);
        for (unsigned i = 0; i <= CONFFILE_SIZE_MAX; i++)
                fputc('\n', f);
        fclose(f);
        assert_int_equal(conffile_load(&c, path, NULL, err, sizeof(err)), -EFBIG);
        conffile_done(&c);
        assert_int_equal(truncate(path, CONFFILE_SIZE_MAX), 0);
        assert_int_equal(conffile_load(&c, path, NULL, err, sizeof(err)), 0);
        conffile_done(&c);

        unlink(path);
        assert_int_equal(conffile_load(&c, path, NULL, err, sizeof(err)), -ENOENT);
        assert_true(strstr(err, "No such file or directory") != NULL);
        conffile_done(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_values),
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_suggest),
                cmocka_unit_test(test_bounds),
                cmocka_unit_test(test_priority),
                cmocka_unit_test(test_hidden_area),
                cmocka_unit_test(test_metrics_keys),
                cmocka_unit_test(test_purge_fallback),
                cmocka_unit_test(test_nul),
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_merge),
                cmocka_unit_test(test_keys),
                cmocka_unit_test(test_record_keys),
                cmocka_unit_test(test_roundtrip),
                cmocka_unit_test(test_match),
                cmocka_unit_test(test_load),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
