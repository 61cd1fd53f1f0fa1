/* The collector's URL and headers, the backoff between attempts and what an answer means: pure
 * functions, so that the unit tests reach them without a network. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "collector.h"

int collector_url_parse(const char *url, char *host, size_t host_len, bool *credentials) {
        const char *auth, *end, *at;
        size_t n;

        if (!url)
                return -EINVAL;
        for (const char *p = url; *p; p++)
                if ((unsigned char) *p <= ' ' || *p == 0x7f)
                        return -EINVAL;
        if (strncasecmp(url, "http://", 7) == 0)
                auth = url + 7;
        else if (strncasecmp(url, "https://", 8) == 0)
                auth = url + 8;
        else
                return -EINVAL;
        n = strcspn(auth, "/?#");
        end = auth + n;
        /* user:password@host: the last '@' of the authority ends the credentials. */
        at = NULL;
        for (const char *p = auth; p < end; p++)
                if (*p == '@')
                        at = p;
        if (at)
                auth = at + 1;
        if (auth == end || *auth == ':')
                return -EINVAL;
        if (credentials)
                *credentials = at != NULL;
        if (host && host_len > 0) {
                n = (size_t) (end - auth);
                if (n >= host_len)
                        n = host_len - 1;
                memcpy(host, auth, n);
                host[n] = 0;
        }
        return 0;
}

bool collector_url_valid(const char *url) {
        return collector_url_parse(url, NULL, 0, NULL) == 0;
}

/* RFC 9110's tchar. */
static bool is_tchar(char c) {
        return isalnum((unsigned char) c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

bool collector_header_valid(const char *line) {
        static const char *const ours[] = { "Content-Type", "Content-Length", "Transfer-Encoding", "Host",
                                            "Idempotency-Key" };
        size_t n = 0;
        const char *v;

        if (!line)
                return false;
        while (is_tchar(line[n]))
                n++;
        if (n == 0 || line[n] != ':')
                return false;
        for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
                if (strlen(ours[i]) == n && strncasecmp(line, ours[i], n) == 0)
                        return false;
        if (n >= 8 && strncasecmp(line, "X-Wiped-", 8) == 0)
                return false;
        v = line + n + 1;
        while (*v == ' ' || *v == '\t')
                v++;
        if (!*v)
                return false;
        for (; *v; v++)
                if (((unsigned char) *v < ' ' && *v != '\t') || *v == 0x7f)
                        return false;
        return true;
}

double collector_backoff(unsigned n, double max, double r) {
        double d = COLLECTOR_BACKOFF_FIRST;

        for (unsigned i = 1; i < n && d < max; i++)
                d *= 2;
        if (d > max)
                d = max;
        if (r < 0 || r >= 1)
                r = 0;
        return d * (1.0 - 0.25 * r);
}

enum collector_outcome collector_outcome_of(long status) {
        if ((status >= 200 && status < 300) || status == 409)
                return COLLECTOR_DELIVERED;
        if (status >= 400 && status < 500 && status != 408 && status != 429)
                return COLLECTOR_REJECTED;
        return COLLECTOR_RETRY;
}
