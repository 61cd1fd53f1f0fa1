/* The PDF certificate of sanitization (pdf.h): cairo draws the A4 pages into memory, pango lays
 * out every piece of text (UTF-8, DejaVu Sans through fontconfig), libqrencode makes the QR code
 * of the report ID, drawn as rectangles. Every value is confined to its box: wrapped to a fixed
 * number of lines and ellipsized after them, so that no report, however long its fields, runs off
 * its page; each certificate is exactly one page, which makes "page N of M" known in advance. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cairo.h>
#include <cairo-pdf.h>
#include <pango/pangocairo.h>
#include <qrencode.h>
#include <openssl/evp.h>

#include "atomicfile.h"
#include "cleanup.h"
#include "sign.h"
#include "pdf.h"
#include "wipectl.h"

/* A4 in points, and the frame of the content. */
#define PAGE_W 595.28
#define PAGE_H 841.89
#define MARGIN 40.0
#define CONTENT_W (PAGE_W - 2 * MARGIN)
#define FOOTER_Y (PAGE_H - 28.0)        /* baseline box of the footer */
#define BOTTOM (PAGE_H - 40.0)          /* content never goes below this */
#define LABEL_W 84.0                    /* label column of a field row */
#define QR_SIZE 116.0                   /* the QR code with its quiet zone, points */
#define QR_QUIET 4                      /* quiet zone, modules (ISO/IEC 18004) */
#define ROW_H 11.0                      /* a row of the summary table */
#define PASSES_SHOWN 4                  /* passes listed on a certificate; the report has them all */

#define FONT "DejaVu Sans"
#define FONT_MONO "DejaVu Sans Mono"

struct rgb {
        double r, g, b;
};
static const struct rgb BLACK = { 0, 0, 0 }, GREY = { 0.45, 0.45, 0.45 }, RULE = { 0.7, 0.7, 0.7 };
static const struct rgb GREEN = { 0.05, 0.45, 0.15 }, AMBER = { 0.65, 0.4, 0.0 }, RED = { 0.75, 0.08, 0.08 };

/* One document being drawn. */
struct pdf {
        cairo_t *cr;
        PangoLayout *layout;            /* reused for every piece of text */
        const struct pdf_options *o;
        int page;                       /* of the page being drawn, from 1 */
        int pages;                      /* in the document */
};

/* The PDF's bytes, as cairo hands them over. */
struct pdf_buffer {
        char *data;
        size_t len, size;
        bool failed;                    /* out of memory */
};

static cairo_status_t pdf_buffer_write(void *closure, const unsigned char *data, unsigned int len) {
        struct pdf_buffer *b = closure;

        if (b->len + len > b->size) {
                size_t size = b->size ? b->size : 65536;
                char *p;

                while (size < b->len + len)
                        size *= 2;
                p = realloc(b->data, size);
                if (!p) {
                        b->failed = true;
                        return CAIRO_STATUS_WRITE_ERROR;
                }
                b->data = p;
                b->size = size;
        }
        memcpy(b->data + b->len, data, len);
        b->len += len;
        return CAIRO_STATUS_SUCCESS;
}

/* ---- fields of a report ---- */

/* Member key of o as a string (a number as its JSON text); NULL when absent, null, or o is not an
 * object. Also NULL for an empty string: nothing recorded. */
static const char *pdf_str(struct json_object *o, const char *key) {
        struct json_object *v = NULL;
        const char *s;

        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) || !v)
                return NULL;
        if (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array))
                return NULL;
        s = json_object_get_string(v);
        return s && *s ? s : NULL;
}

/* Member key of o when it is an object, else NULL. */
static struct json_object *pdf_obj(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_object))
                return NULL;
        return v;
}

/* Member key of o when it is an array, else NULL. */
static struct json_object *pdf_arr(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
                return NULL;
        return v;
}

/* Whether member key of o is a number (or a number's text would be wrong: "not recorded"). */
static bool pdf_has_num(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        return o && json_object_object_get_ex(o, key, &v) &&
               (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double));
}

/* The same for UNIX seconds in member key of o; NULL when absent. */
static const char *pdf_time(struct json_object *o, const char *key, char *buf, size_t n) {
        if (!pdf_has_num(o, key))
                return NULL;
        return pdf_format_time((time_t) output_get_double(o, key, 0), buf, n);
}

/* The first by-id link of an identity (a string or an array of them). */
static const char *pdf_by_id(struct json_object *identity) {
        struct json_object *a = pdf_arr(identity, "by_id");

        if (a && json_object_array_length(a) > 0)
                return json_object_get_string(json_object_array_get_idx(a, 0));
        return pdf_str(identity, "by_id");
}

/* ---- drawing ---- */

/* Text as pango gets it: valid UTF-8 (bad bytes replaced), control characters and the other line
 * and paragraph separators (NEL, U+2028, U+2029) as spaces so that a note cannot start paragraphs
 * of its own (the line limit counts a paragraph's lines: 60 paragraphs would push the signature
 * and its QR code off the page). The explicit bidirectional embeddings, overrides and isolates
 * (U+202A-U+202E, U+2066-U+2069) as U+FFFD: they would show a field's characters in another
 * order than they are ("TAG-<RLO>1234" as "TAG-4321"); right-to-left script still reads as it
 * should without them. */
static char *pdf_clean(const char *s) {
        char *t = g_utf8_make_valid(s, -1);
        GString *g = g_string_sized_new(strlen(t));

        for (const char *p = t; *p; p = g_utf8_next_char(p)) {
                gunichar u = g_utf8_get_char(p);

                if (u < 0x20 || u == 0x7f || u == 0x85 || u == 0x2028 || u == 0x2029)
                        u = ' ';
                else if ((u >= 0x202a && u <= 0x202e) || (u >= 0x2066 && u <= 0x2069))
                        u = 0xfffd;
                g_string_append_unichar(g, u);
        }
        g_free(t);
        return g_string_free(g, FALSE);
}

/* Draw text at (x, y) in a box w wide, in font (a pango description string), colour c, at most
 * lines lines (ellipsized at the end of the last; 0: no limit), right-aligned when right. Returns
 * the height drawn, points. */
static double pdf_text(struct pdf *p, double x, double y, double w, const char *font, const struct rgb *c,
                       const char *text, int lines, bool right) {
        PangoFontDescription *fd = pango_font_description_from_string(font);
        char *clean = pdf_clean(text ? text : "");
        int width, height;

        pango_layout_set_font_description(p->layout, fd);
        pango_font_description_free(fd);
        pango_layout_set_width(p->layout, (int) (w * PANGO_SCALE));
        pango_layout_set_wrap(p->layout, PANGO_WRAP_WORD_CHAR);
        pango_layout_set_ellipsize(p->layout, lines > 0 ? PANGO_ELLIPSIZE_END : PANGO_ELLIPSIZE_NONE);
        pango_layout_set_height(p->layout, lines > 0 ? -lines : -1);
        pango_layout_set_alignment(p->layout, right ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_LEFT);
        pango_layout_set_text(p->layout, clean, -1);
        g_free(clean);
        cairo_set_source_rgb(p->cr, c->r, c->g, c->b);
        cairo_move_to(p->cr, x, y);
        pango_cairo_show_layout(p->cr, p->layout);
        pango_layout_get_size(p->layout, &width, &height);
        return (double) height / PANGO_SCALE;
}

static void pdf_rule(struct pdf *p, double x, double y, double w, double width, const struct rgb *c) {
        cairo_set_source_rgb(p->cr, c->r, c->g, c->b);
        cairo_set_line_width(p->cr, width);
        cairo_move_to(p->cr, x, y);
        cairo_line_to(p->cr, x + w, y);
        cairo_stroke(p->cr);
}

/* A column of field rows being filled. */
struct pdf_col {
        double x, w, y;
};

/* A section heading across the column. */
static void pdf_heading(struct pdf *p, struct pdf_col *c, const char *title) {
        c->y += 5;
        c->y += pdf_text(p, c->x, c->y, c->w, FONT " Bold 11", &BLACK, title, 1, false);
        pdf_rule(p, c->x, c->y + 0.5, c->w, 0.6, &RULE);
        c->y += 3;
}

/* A row "Label   value", the value wrapped to at most lines lines; PDF_NOT_RECORDED in grey when
 * value is NULL. mono: the value in the monospaced font (hashes, commands). */
static void pdf_row_font(struct pdf *p, struct pdf_col *c, const char *label, const char *value, int lines, bool mono) {
        double h1, h2;

        h1 = pdf_text(p, c->x, c->y, LABEL_W - 4, FONT " Bold 8", &GREY, label, 2, false);
        h2 = pdf_text(p, c->x + LABEL_W, c->y, c->w - LABEL_W, value ? (mono ? FONT_MONO " 7.5" : FONT " 8.5") :
                      FONT " Italic 8.5", value ? &BLACK : &GREY, value ? value : PDF_NOT_RECORDED, lines, false);
        c->y += (h1 > h2 ? h1 : h2) + 1.2;
}

static void pdf_row(struct pdf *p, struct pdf_col *c, const char *label, const char *value, int lines) {
        pdf_row_font(p, c, label, value, lines, false);
}

/* The footer of the page being drawn: "wiped VERSION — page N of M", and when it was made. */
static void pdf_footer(struct pdf *p) {
        char line[128], at[32];

        pdf_rule(p, MARGIN, FOOTER_Y - 3, CONTENT_W, 0.5, &RULE);
        snprintf(line, sizeof(line), "%s %s — page %d of %d", PACKAGE_NAME, PACKAGE_VERSION, p->page, p->pages);
        pdf_text(p, MARGIN, FOOTER_Y, CONTENT_W / 2, FONT " 7.5", &GREY, line, 1, false);
        snprintf(line, sizeof(line), "generated %s", pdf_format_time(p->o->generated_at, at, sizeof(at)));
        pdf_text(p, MARGIN + CONTENT_W / 2, FOOTER_Y, CONTENT_W / 2, FONT " 7.5", &GREY, line, 1, true);
}

/* Begin a page: the content is clipped to its frame, so nothing can reach the footer. */
static void pdf_page_begin(struct pdf *p) {
        p->page++;
        cairo_save(p->cr);
        cairo_rectangle(p->cr, MARGIN - 2, MARGIN - 2, CONTENT_W + 4, BOTTOM - MARGIN + 2);
        cairo_clip(p->cr);
}

static void pdf_page_end(struct pdf *p) {
        cairo_restore(p->cr);
        pdf_footer(p);
        cairo_show_page(p->cr);
}

/* The QR code of text at (x, y), size points square with its quiet zone. 0 or -ENOMEM/-EINVAL. */
static int pdf_qr(struct pdf *p, double x, double y, double size, const char *text) {
        QRcode *qr = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1);
        double m;

        if (!qr)
                return errno ? -errno : -EINVAL;
        m = size / (qr->width + 2 * QR_QUIET);
        cairo_set_source_rgb(p->cr, 1, 1, 1);
        cairo_rectangle(p->cr, x, y, size, size);
        cairo_fill(p->cr);
        cairo_set_source_rgb(p->cr, 0, 0, 0);
        for (int r = 0; r < qr->width; r++)
                for (int col = 0; col < qr->width; col++)
                        if (qr->data[r * qr->width + col] & 1)
                                cairo_rectangle(p->cr, x + (col + QR_QUIET) * m, y + (r + QR_QUIET) * m, m, m);
        /* One fill of every module: no hairline seams between neighbours. */
        cairo_fill(p->cr);
        QRcode_free(qr);
        return 0;
}

/* ---- what a report says, in words ---- */

/* The overall status and its colour; "not recorded" for reports made before it existed. */
static const char *pdf_status(struct json_object *rep, const struct rgb **c) {
        const char *s = pdf_str(rep, "overall_status");

        if (!s) {
                *c = &GREY;
                return NULL;
        }
        *c = strcmp(s, "erased") == 0 ? &GREEN : strcmp(s, "not erased") == 0 ? &RED : &AMBER;
        return s;
}

/* A SMART snapshot in one line: "PASSED; 1234 h powered on; reallocated 0; ...". */
static const char *pdf_smart(struct json_object *rep, const char *key, char *buf, size_t n) {
        static const struct {
                const char *key, *fmt;
        } nums[] = {
                { "power_on_hours", "%s h powered on" },
                { "reallocated_sectors", "reallocated sectors %s" },
                { "pending_sectors", "pending sectors %s" },
                { "offline_uncorrectable", "offline uncorrectable %s" },
                { "nvme_percentage_used", "NVMe used %s%%" },
                { "nvme_media_errors", "NVMe media errors %s" },
                { "nvme_critical_warning", "NVMe critical warning %s" },
                { "temperature_c", "%s °C" },
        };
        struct json_object *s = pdf_obj(rep, key), *passed = NULL, *available = NULL;
        char at[32];
        size_t k = 0;

        if (!s)
                return NULL;
        json_object_object_get_ex(s, "available", &available);
        if (!json_object_get_boolean(available)) {
                snprintf(buf, n, "not available%s%s", pdf_str(s, "reason") ? ": " : "", pdf_str(s, "reason") ?: "");
                return buf;
        }
        json_object_object_get_ex(s, "passed", &passed);
        k += (size_t) snprintf(buf, n, "overall health %s",
                               json_object_is_type(passed, json_type_boolean) ?
                               (json_object_get_boolean(passed) ? "PASSED" : "FAILED") : "unknown");
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]) && k < n; i++) {
                char v[64];

                if (!pdf_has_num(s, nums[i].key))
                        continue;
                k += (size_t) snprintf(buf + k, n - k, "; ");
                if (k >= n)
                        break;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
                snprintf(v, sizeof(v), nums[i].fmt, json_object_get_string(json_object_object_get(s, nums[i].key)));
#pragma GCC diagnostic pop
                k += (size_t) snprintf(buf + k, n - k, "%s", v);
        }
        if (k < n && (pdf_str(s, "tool") || pdf_time(s, "checked_at", at, sizeof(at))))
                snprintf(buf + k, n - k, " (%s%s%s)", pdf_str(s, "tool") ?: "", pdf_str(s, "tool") &&
                         pdf_time(s, "checked_at", at, sizeof(at)) ? " at " : "",
                         pdf_time(s, "checked_at", at, sizeof(at)) ?: "");
        return buf;
}

/* A pass in one line: "1: random, aes-128-ctr, key fingerprint 3fa2..., verified passed (last, 100.00%)". */
static const char *pdf_pass(struct json_object *pass, size_t i, char *buf, size_t n) {
        struct json_object *v = pdf_obj(pass, "verified");
        size_t k;

        k = (size_t) snprintf(buf, n, "%" PRId64 ": %s", output_get_int(pass, "pass", (int64_t) i + 1),
                              pdf_str(pass, "pattern") ?: "?");
        if (k < n && pdf_str(pass, "cipher"))
                k += (size_t) snprintf(buf + k, n - k, ", %s", pdf_str(pass, "cipher"));
        if (k < n && pdf_str(pass, "key_fingerprint"))
                k += (size_t) snprintf(buf + k, n - k, ", key fingerprint %s", pdf_str(pass, "key_fingerprint"));
        if (k < n && pdf_obj(pass, "firmware"))
                k += (size_t) snprintf(buf + k, n - k, ", firmware erase");
        if (k < n && v)
                snprintf(buf + k, n - k, ", verified %s (%s, %.2f%%)", pdf_str(v, "result") ?: "?",
                         pdf_str(v, "mode") ?: "?", output_get_double(v, "coverage_percent", 0));
        else if (k < n)
                snprintf(buf + k, n - k, ", not verified");
        return buf;
}

/* A person block (operator or verifier) with lines for a wet signature and the date. */
static void pdf_person(struct pdf *p, struct pdf_col *c, const char *title, struct json_object *person) {
        pdf_heading(p, c, title);
        pdf_row(p, c, "Name", pdf_str(person, "name"), 1);
        pdf_row(p, c, "Title", pdf_str(person, "title"), 1);
        pdf_row(p, c, "Organization", pdf_str(person, "organization"), 1);
        pdf_row(p, c, "Location", pdf_str(person, "location"), 1);
        pdf_row(p, c, "Contact", pdf_str(person, "contact"), 1);
        c->y += 13;
        pdf_rule(p, c->x + LABEL_W, c->y, c->w - LABEL_W - 70, 0.6, &BLACK);
        pdf_rule(p, c->x + c->w - 60, c->y, 60, 0.6, &BLACK);
        pdf_text(p, c->x, c->y - 9, LABEL_W, FONT " Bold 8", &GREY, "Signature", 1, false);
        c->y += 1;
        pdf_text(p, c->x + c->w - 60, c->y, 60, FONT " 7", &GREY, "Date", 1, false);
        c->y += 9;
}

/* The certificate of one report: one page. */
static int pdf_certificate(struct pdf *p, struct json_object *rep, const char *hash) {
        struct json_object *identity = pdf_obj(rep, "identity"), *host = pdf_obj(rep, "host");
        struct json_object *dmi = pdf_obj(host, "dmi"), *san = pdf_obj(rep, "sanitization");
        struct json_object *sig = pdf_obj(rep, "signature"), *passes = pdf_arr(rep, "passes");
        struct json_object *ver = pdf_obj(rep, "verification"), *exc = pdf_arr(rep, "exceptions");
        const char *status;
        char a[1200], b[1400], file[512], key[512];
        const struct rgb *sc;
        struct pdf_col c, l, r;
        double y0, qx;
        size_t np = passes ? json_object_array_length(passes) : 0;
        int64_t job = output_get_int(rep, "job", -1);

        pdf_page_begin(p);
        c = (struct pdf_col) { MARGIN, CONTENT_W, MARGIN };
        pdf_text(p, MARGIN, c.y, CONTENT_W, FONT " Bold 24", &BLACK, "Certificate of Sanitization", 1, false);
        snprintf(a, sizeof(a), "job %" PRId64, job);
        pdf_text(p, MARGIN, c.y + 8, CONTENT_W, FONT " 10", &GREY, a, 1, true);
        c.y += 26;
        c.y += pdf_text(p, MARGIN, c.y, CONTENT_W, FONT " 7.5", &GREY,
                        "Record of media sanitization (NIST SP 800-88 Rev. 1, IEEE 2883-2022) made from the signed "
                        "report of wiped; the signed report file is the record of authority.", 2, false) + 4;

        /* The outcome first, large. */
        status = pdf_status(rep, &sc);
        cairo_set_source_rgb(p->cr, sc->r, sc->g, sc->b);
        cairo_set_line_width(p->cr, 1.5);
        y0 = c.y;
        c.y += 5;
        snprintf(a, sizeof(a), "Overall status: %s", status ? status : PDF_NOT_RECORDED);
        for (char *s = a + strlen("Overall status: "); status && *s; s++)
                *s = (char) (*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);
        c.y += pdf_text(p, MARGIN + 8, c.y, CONTENT_W - 16, FONT " Bold 18", sc, a, 1, false);
        a[0] = 0;
        for (size_t i = 0, k = 0; exc && i < json_object_array_length(exc) && k < sizeof(a); i++)
                k += (size_t) snprintf(a + k, sizeof(a) - k, "%s%s", i ? "; " : "Exceptions: ",
                                       json_object_get_string(json_object_array_get_idx(exc, i)));
        if (!a[0])
                snprintf(a, sizeof(a), "%s", !status ? "This report predates the overall status; the job's state "
                         "follows." : exc ? "No exceptions." : "Exceptions: " PDF_NOT_RECORDED);
        snprintf(b, sizeof(b), "Job state: %s. %s", pdf_str(rep, "state") ?: "?", a);
        c.y += pdf_text(p, MARGIN + 8, c.y + 1, CONTENT_W - 16, FONT " 9", &BLACK, b, 3, false) + 6;
        cairo_set_source_rgb(p->cr, sc->r, sc->g, sc->b);
        cairo_rectangle(p->cr, MARGIN, y0, CONTENT_W, c.y - y0);
        cairo_stroke(p->cr);
        c.y += 2;

        /* Media on the left, host and health on the right. */
        l = (struct pdf_col) { MARGIN, CONTENT_W / 2 - 8, c.y };
        r = (struct pdf_col) { MARGIN + CONTENT_W / 2 + 8, CONTENT_W / 2 - 8, c.y };
        pdf_heading(p, &l, "Media");
        pdf_row(p, &l, "Asset tag", pdf_str(rep, "asset_tag"), 2);
        pdf_row(p, &l, "Customer", pdf_str(rep, "customer"), 2);
        pdf_row_font(p, &l, "Batch", pdf_str(rep, "batch"), 1, true);
        pdf_row(p, &l, "Media type", pdf_str(rep, "media_type"), 1);
        pdf_row(p, &l, "Manufacturer", pdf_str(rep, "manufacturer"), 1);
        pdf_row(p, &l, "Model", pdf_str(identity, "model"), 2);
        pdf_row(p, &l, "Serial number", pdf_str(identity, "serial"), 2);
        pdf_row_font(p, &l, "WWN", pdf_str(identity, "wwn"), 1, true);
        if (pdf_has_num(rep, "size_bytes"))
                output_size_exact(a, sizeof(a), (uint64_t) output_get_int(rep, "size_bytes", 0));
        pdf_row(p, &l, "Size", pdf_has_num(rep, "size_bytes") ? a : NULL, 1);
        pdf_row(p, &l, "Device node", pdf_str(rep, "node"), 1);
        /* The path the job was given, when it was another name of the node (a by-id link). */
        if (pdf_str(rep, "device") && pdf_str(rep, "node") && strcmp(pdf_str(rep, "device"), pdf_str(rep, "node")) != 0)
                pdf_row(p, &l, "Given as", pdf_str(rep, "device"), 2);
        pdf_row(p, &l, "By-id link", pdf_by_id(identity), 2);

        pdf_heading(p, &r, "Host");
        pdf_row(p, &r, "Hostname", pdf_str(host, "hostname"), 1);
        pdf_row_font(p, &r, "Machine ID", pdf_str(host, "machine_id"), 1, true);
        pdf_row(p, &r, "DMI vendor", pdf_str(dmi, "vendor"), 2);
        pdf_row(p, &r, "DMI product", pdf_str(dmi, "product"), 2);
        pdf_row_font(p, &r, "DMI serial", pdf_str(dmi, "serial"), 2, true);
        pdf_row_font(p, &r, "DMI UUID", pdf_str(dmi, "uuid"), 2, true);
        pdf_heading(p, &r, "Drive health (SMART)");
        pdf_row(p, &r, "Before", pdf_smart(rep, "smart_before", a, sizeof(a)), 4);
        pdf_row(p, &r, "After", pdf_smart(rep, "smart_after", a, sizeof(a)), 4);
        c.y = l.y > r.y ? l.y : r.y;

        /* What was done. */
        pdf_heading(p, &c, "Sanitization");
        l = (struct pdf_col) { MARGIN, CONTENT_W / 2 - 8, c.y };
        r = (struct pdf_col) { MARGIN + CONTENT_W / 2 + 8, CONTENT_W / 2 - 8, c.y };
        pdf_row(p, &l, "Category", pdf_str(san, "category") ?: pdf_str(rep, "nist_category"), 1);
        pdf_row(p, &l, "Technique", pdf_str(san, "technique"), 1);
        pdf_row(p, &l, "Method", pdf_str(san, "method") ?: pdf_str(rep, "method"), 1);
        pdf_row(p, &l, "Tool", pdf_str(san, "tool") ?: pdf_str(rep, "tool"), 1);
        pdf_row(p, &l, "Destination", pdf_str(rep, "destination"), 2);
        pdf_row(p, &l, "Started", pdf_time(rep, "started_at", a, sizeof(a)), 1);
        pdf_row(p, &l, "Ended", pdf_time(rep, "ended_at", a, sizeof(a)), 1);
        pdf_row(p, &l, "Duration", pdf_has_num(rep, "duration_s") ?
                pdf_format_duration(output_get_double(rep, "duration_s", 0), a, sizeof(a)) : NULL, 1);
        pdf_row(p, &r, "Verification", pdf_str(san, "verification_method"), 1);
        pdf_row(p, &r, "Result", pdf_str(san, "verification_result") ?: pdf_str(ver, "result"), 1);
        if (ver)
                snprintf(b, sizeof(b), "%.2f%% of the device (%s)", output_get_double(ver, "coverage_percent", 0),
                         output_size(a, sizeof(a), (uint64_t) output_get_int(ver, "coverage_bytes", 0)));
        pdf_row(p, &r, "Coverage", ver ? b : NULL, 1);
        pdf_row(p, &r, "Job state", pdf_str(rep, "state"), 1);
        if (pdf_has_num(rep, "bad_bytes"))
                snprintf(b, sizeof(b), "%" PRId64 " bytes skipped%s", output_get_int(rep, "bad_bytes", 0),
                         pdf_arr(rep, "bad_ranges") && json_object_array_length(pdf_arr(rep, "bad_ranges")) ?
                         " (ranges in the report)" : "");
        pdf_row(p, &r, "Bad sectors", pdf_has_num(rep, "bad_bytes") ? b : NULL, 1);
        {
                struct json_object *errors = pdf_arr(rep, "errors");
                size_t ne = errors ? json_object_array_length(errors) : 0;

                struct json_object *e = ne > 0 ? json_object_array_get_idx(errors, 0) : NULL;

                /* The errors of a report are {"code","message"}; the first, and how many more. */
                if (ne > 0)
                        snprintf(b, sizeof(b), "%s (%s)%s", pdf_str(e, "message") ?: "?", pdf_str(e, "code") ?: "?",
                                 ne > 1 ? "; more in the report" : "");
                pdf_row(p, &r, "Errors", !errors ? NULL : ne == 0 ? "none" : b, 3);
        }
        pdf_row(p, &r, "SMART policy", pdf_str(rep, "smart_policy"), 1);
        c.y = l.y > r.y ? l.y : r.y;
        for (size_t i = 0; i < np && i < PASSES_SHOWN; i++) {
                pdf_pass(json_object_array_get_idx(passes, i), i, a, sizeof(a));
                pdf_row(p, &c, i == 0 ? "Passes" : "", a, 2);
        }
        if (np > PASSES_SHOWN) {
                snprintf(a, sizeof(a), "... and %zu more: see the signed report", np - PASSES_SHOWN);
                pdf_row(p, &c, "", a, 1);
        } else if (np == 0)
                pdf_row(p, &c, "Passes", NULL, 1);
        if (pdf_str(rep, "caveat"))
                pdf_row(p, &c, "Caveat", pdf_str(rep, "caveat"), 3);
        pdf_row(p, &c, "Note", pdf_str(rep, "note"), 4);

        /* The people, with room for their signatures. */
        l = (struct pdf_col) { MARGIN, CONTENT_W / 2 - 8, c.y };
        r = (struct pdf_col) { MARGIN + CONTENT_W / 2 + 8, CONTENT_W / 2 - 8, c.y };
        pdf_person(p, &l, "Performed by", pdf_obj(rep, "operator"));
        pdf_person(p, &r, "Verified by", pdf_obj(rep, "verifier"));
        c.y = l.y > r.y ? l.y : r.y;

        /* The signature, how to check it, and the QR code of the report ID. */
        pdf_heading(p, &c, "Digital signature of the report");
        y0 = c.y;
        qx = MARGIN + CONTENT_W - QR_SIZE;
        l = (struct pdf_col) { MARGIN, CONTENT_W - QR_SIZE - 10, c.y };
        pdf_row(p, &l, "Algorithm", pdf_str(sig, "algorithm"), 1);
        pdf_row_font(p, &l, "Key ID", pdf_str(sig, "key_id"), 1, true);
        pdf_row_font(p, &l, "Public key", pdf_str(sig, "public_key"), 1, true);
        if (pdf_str(rep, "report_file"))
                snprintf(file, sizeof(file), "%s", pdf_str(rep, "report_file"));
        else
                snprintf(file, sizeof(file), "/var/lib/wiped/reports/%" PRId64 ".json", job);
        pdf_row_font(p, &l, "Report file", file, 2, true);
        pdf_format_key_path(p->o, file, key, sizeof(key));
        pdf_row_font(p, &l, "Report SHA-256", hash, 2, true);
        snprintf(a, sizeof(a), "wipectl report --check %s --key %s", file, key);
        pdf_row_font(p, &l, "Check signature", a, 3, true);
        snprintf(a, sizeof(a), "sha256sum %s", file);
        pdf_row_font(p, &l, "Check hash", a, 2, true);
        pdf_text(p, l.x, l.y + 1, l.w, FONT " 7", &GREY,
                 "The QR code holds the report SHA-256 (its report ID): the SHA-256 of the report file's bytes, "
                 "64 lower-case hex digits. The key file is a copy of the signing host's " SIGN_PUB_FILE
                 " whose key ID is the one above; wipectl report --check exits 0 when the signature is valid.", 3,
                 false);
        if (pdf_qr(p, qx, y0, QR_SIZE, hash) < 0) {
                pdf_page_end(p);
                return -ENOMEM;
        }
        /* The hash under its code, in two halves that fit its width. */
        {
                PangoFontDescription *fd = pango_font_description_from_string(FONT_MONO " 5.8");
                int w, h;

                snprintf(a, sizeof(a), "%.32s\n%s", hash, strlen(hash) > 32 ? hash + 32 : "");
                pango_layout_set_font_description(p->layout, fd);
                pango_font_description_free(fd);
                pango_layout_set_width(p->layout, -1);
                pango_layout_set_height(p->layout, -1);
                pango_layout_set_ellipsize(p->layout, PANGO_ELLIPSIZE_NONE);
                pango_layout_set_alignment(p->layout, PANGO_ALIGN_LEFT);
                pango_layout_set_text(p->layout, a, -1);
                pango_layout_get_size(p->layout, &w, &h);
                cairo_set_source_rgb(p->cr, 0, 0, 0);
                cairo_move_to(p->cr, qx + (QR_SIZE - (double) w / PANGO_SCALE) / 2, y0 + QR_SIZE);
                pango_cairo_show_layout(p->cr, p->layout);
        }
        pdf_page_end(p);
        return 0;
}

/* ---- the batch summary ---- */

static const char *const summary_header[] = { "Job", "Device", "Serial", "Asset tag", "Size", "Method", "Overall status",
                                              "Ended (UTC)" };
/* "erased with exceptions" and an ISO 8601 time fit their columns whole (87 points at 7.5). */
static const double summary_width[] = { 28, 62, 76, 58, 48, 58, 93, 92 };
#define SUMMARY_COLUMNS (sizeof(summary_width) / sizeof(summary_width[0]))
#define SUMMARY_TOP_FIRST (MARGIN + 150.0)      /* the table's header on the first page */
#define SUMMARY_TOP (MARGIN + 30.0)             /* on the pages after */

/* Rows of the table on the first summary page, and on each page after it. */
static size_t summary_rows(bool first) {
        return (size_t) ((BOTTOM - (first ? SUMMARY_TOP_FIRST : SUMMARY_TOP) - ROW_H - 4) / ROW_H);
}

static size_t summary_pages(size_t n) {
        size_t first = summary_rows(true), other = summary_rows(false);

        return n <= first ? 1 : 1 + (n - first + other - 1) / other;
}

static void summary_row(struct pdf *p, double y, const char *const *cells, bool header, const struct rgb *status) {
        double x = MARGIN;

        for (size_t i = 0; i < SUMMARY_COLUMNS; i++) {
                pdf_text(p, x, y, summary_width[i] - 4, header ? FONT " Bold 8" : FONT " 7.5",
                         i == 6 && status ? status : header ? &GREY : &BLACK, cells[i] ? cells[i] : PDF_NOT_RECORDED, 1,
                         false);
                x += summary_width[i];
        }
}

static void pdf_summary(struct pdf *p, struct json_object *const *reports, size_t n) {
        static const char *const statuses[] = { "erased", "erased with exceptions", "not erased" };
        size_t count[4] = {}, row = 0;
        double first = -1, last = -1, y;
        const char *host = NULL, *batch = NULL;
        bool hosts = false, batches = false;
        char a[512], t1[32], t2[32];
        struct pdf_col c;

        for (size_t i = 0; i < n; i++) {
                const char *s = pdf_str(reports[i], "overall_status"), *h = pdf_str(pdf_obj(reports[i], "host"), "hostname");
                const char *bt = pdf_str(reports[i], "batch");
                double st = output_get_double(reports[i], "started_at", -1), en = output_get_double(reports[i], "ended_at", -1);
                size_t k = 3;

                for (size_t j = 0; s && j < 3; j++)
                        if (strcmp(s, statuses[j]) == 0)
                                k = j;
                count[k]++;
                if (st >= 0 && (first < 0 || st < first))
                        first = st;
                if (en > last)
                        last = en;
                if (h && host && strcmp(h, host) != 0)
                        hosts = true;
                host = host ? host : h;
                if (!bt || (batch && strcmp(bt, batch) != 0))
                        batches = true;
                batch = batch ? batch : bt;
        }

        pdf_page_begin(p);
        c = (struct pdf_col) { MARGIN, CONTENT_W, MARGIN };
        c.y += pdf_text(p, MARGIN, c.y, CONTENT_W, FONT " Bold 24", &BLACK, "Sanitization Summary", 1, false) + 4;
        pdf_text(p, MARGIN, c.y, CONTENT_W, FONT " 8.5", &GREY,
                 p->o->summary_only ? "One line per drive; each drive's signed report is the record of authority." :
                 "One line per drive; each drive's certificate follows, and its signed report is the record of authority.",
                 2, false);
        c.y += 16;
        pdf_heading(p, &c, "Batch");
        snprintf(a, sizeof(a), "%zu", n);
        pdf_row(p, &c, "Drives", a, 1);
        if (first >= 0 && last >= 0)
                snprintf(a, sizeof(a), "%s to %s", pdf_format_time((time_t) first, t1, sizeof(t1)),
                         pdf_format_time((time_t) last, t2, sizeof(t2)));
        pdf_row(p, &c, "Time range", first >= 0 && last >= 0 ? a : NULL, 1);
        snprintf(a, sizeof(a), "%s%s", host ? host : "?", hosts ? " and others (see each certificate)" : "");
        pdf_row(p, &c, "Host", host ? a : NULL, 1);
        pdf_row(p, &c, "Batch", batches ? (batch ? "several (see each certificate)" : NULL) : batch, 1);
        snprintf(a, sizeof(a), "erased: %zu    erased with exceptions: %zu    not erased: %zu    not recorded: %zu",
                 count[0], count[1], count[2], count[3]);
        pdf_row(p, &c, "Overall status", a, 1);

        y = SUMMARY_TOP_FIRST;
        for (size_t page = 0; row < n || page == 0; page++) {
                size_t rows = summary_rows(page == 0);

                if (page > 0) {
                        pdf_page_begin(p);
                        pdf_text(p, MARGIN, MARGIN, CONTENT_W, FONT " Bold 14", &BLACK, "Sanitization Summary (continued)", 1,
                                 false);
                        y = SUMMARY_TOP;
                }
                summary_row(p, y, summary_header, true, NULL);
                pdf_rule(p, MARGIN, y + ROW_H, CONTENT_W, 0.6, &RULE);
                y += ROW_H + 3;
                for (size_t k = 0; k < rows && row < n; k++, row++) {
                        struct json_object *rep = reports[row], *identity = pdf_obj(rep, "identity");
                        char job[32], size[32], ended[32], status[64];
                        const struct rgb *sc;
                        const char *cells[SUMMARY_COLUMNS] = {
                                job, pdf_str(rep, "node"), pdf_str(identity, "serial"), pdf_str(rep, "asset_tag"),
                                pdf_has_num(rep, "size_bytes") ?
                                        output_size(size, sizeof(size), (uint64_t) output_get_int(rep, "size_bytes", 0)) : NULL,
                                pdf_str(rep, "method"), NULL, pdf_time(rep, "ended_at", ended, sizeof(ended)),
                        };

                        /* Reports older than the overall status: their job's state, marked as such. */
                        cells[6] = pdf_status(rep, &sc);
                        if (!cells[6]) {
                                snprintf(status, sizeof(status), "%s (job state)", pdf_str(rep, "state") ?: "?");
                                cells[6] = status;
                        }
                        snprintf(job, sizeof(job), "%" PRId64, output_get_int(rep, "job", -1));
                        /* Every other row shaded, so that a long table reads across. */
                        if (k % 2) {
                                cairo_set_source_rgb(p->cr, 0.94, 0.94, 0.94);
                                cairo_rectangle(p->cr, MARGIN, y - 1.5, CONTENT_W, ROW_H);
                                cairo_fill(p->cr);
                        }
                        summary_row(p, y, cells, false, sc);
                        y += ROW_H;
                }
                pdf_page_end(p);
        }
}

/* ---- the document ---- */

int pdf_report_hash(struct json_object *report, char out[PDF_HASH_SIZE]) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        text = report_render(report, &n);
        if (!text)
                return -ENOMEM;
        return report_id(text, n, out);
}

/* Draw the document into b. 0 or -errno. */
static int pdf_render(struct pdf_buffer *b, struct json_object *const *reports, const char *const *report_ids, size_t n,
                      const struct pdf_options *o) {
        cairo_surface_t *surface;
        cairo_font_options_t *fopts;
        PangoFontMap *fontmap;
        PangoContext *context;
        struct pdf p = { .o = o };
        bool summary = n > 1 || o->summary_only;
        int r = 0;

        surface = cairo_pdf_surface_create_for_stream(pdf_buffer_write, b, PAGE_W, PAGE_H);
        if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
                cairo_surface_destroy(surface);
                return -ENOMEM;
        }
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE,
                                       summary ? "Sanitization summary and certificates" : "Certificate of Sanitization");
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, PACKAGE_NAME " " PACKAGE_VERSION);
        p.cr = cairo_create(surface);
        /* A font map of our own, not pango's process-wide one, freed below. (What fontconfig
         * caches stays until exit: pango sorts fonts on threads of its own, which may still hold
         * it, so FcFini() here would race them.) */
        fontmap = pango_cairo_font_map_new();
        context = pango_font_map_create_context(fontmap);
        pango_cairo_update_context(p.cr, context);
        p.layout = pango_layout_new(context);
        /* Font sizes in points of the page: pango-cairo assumes 96 dpi unless told. */
        pango_cairo_context_set_resolution(pango_layout_get_context(p.layout), 72.0);
        /* Glyph advances as the font has them, neither hinted nor rounded to whole points (a
         * screen's pixels): a page is no screen, and rounded text runs a tenth wider. */
        fopts = cairo_font_options_create();
        cairo_font_options_set_hint_metrics(fopts, CAIRO_HINT_METRICS_OFF);
        cairo_font_options_set_hint_style(fopts, CAIRO_HINT_STYLE_NONE);
        pango_cairo_context_set_font_options(pango_layout_get_context(p.layout), fopts);
        cairo_font_options_destroy(fopts);
        pango_context_set_round_glyph_positions(pango_layout_get_context(p.layout), FALSE);
        pango_layout_context_changed(p.layout);
        pango_layout_context_changed(p.layout);
        p.pages = (int) ((summary ? summary_pages(n) : 0) + (o->summary_only ? 0 : n));

        if (summary)
                pdf_summary(&p, reports, n);
        for (size_t i = 0; !o->summary_only && i < n && r == 0; i++) {
                char hash[PDF_HASH_SIZE];

                if (report_ids && report_ids[i])
                        snprintf(hash, sizeof(hash), "%s", report_ids[i]);
                else
                        r = pdf_report_hash(reports[i], hash);
                if (r == 0)
                        r = pdf_certificate(&p, reports[i], hash);
        }
        g_object_unref(p.layout);
        g_object_unref(context);
        g_object_unref(fontmap);
        cairo_destroy(p.cr);
        cairo_surface_finish(surface);
        if (r == 0 && (b->failed || cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS))
                r = b->failed ? -ENOMEM : -EIO;
        cairo_surface_destroy(surface);
        return r;
}

int pdf_write(const char *path, struct json_object *const *reports, const char *const *report_ids, size_t n,
              const struct pdf_options *o) {
        struct pdf_buffer b = {};
        char *dir = NULL, *base = NULL;
        int r, dfd;

        if (n == 0)
                return -EINVAL;
        r = pdf_render(&b, reports, report_ids, n, o);
        if (r < 0)
                goto out;
        if (strcmp(path, "-") == 0) {
                if (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout) == EOF)
                        r = -EIO;
                goto out;
        }
        dir = strdup(path);
        base = strdup(path);
        if (!dir || !base) {
                r = -ENOMEM;
                goto out;
        }
        dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = -errno;
                goto out;
        }
        r = atomic_write_at(dfd, basename(base), b.data, b.len, 0644, false);
        close(dfd);
out:
        free(dir);
        free(base);
        free(b.data);
        return r;
}
